"""The upper level of a hierarchical encoder (Yang et al. 2016, HAN): a bidirectional GRU over
the sentence vectors of a document and sentence attention with a learned context vector u_s.

    h_i = [fw_i ; bw_i];  alpha_i = softmax_i(u_s^T tanh(W_s h_i + b_s));  v = sum_i alpha_i h_i

HRED's context encoder (Serban et al. 2016) is the same GRU over utterance vectors; its
annotations h_i are what a decoder attends over.
"""

import keras
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention
from captioner.layers.bidirectional import safe_bidirectional


@keras.saving.register_keras_serializable(package="captioner")
class SentenceEncoder(keras.layers.Layer):
    """vectors (B, S, D_in), mask (B, S) bool -> (document vector (B, D), sentence weights (B, S),
    annotations (B, S, D)); D = 2 * units. Masked sentences get weight 0 and a zero annotation."""

    def __init__(self, input_dim, units=50, attention_units=100, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = int(input_dim)
        self.units = int(units)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.dropout_layer = keras.layers.Dropout(self.dropout)
        self.rnn = safe_bidirectional(keras.layers.GRU(self.units, return_sequences=True), name="bigru")
        self.attention = AdditiveAttention(self.attention_units, use_query=False, name="sentence_attention")

    @property
    def output_dim(self):
        return 2 * self.units

    def build(self, input_shape=None):
        self.rnn.build((None, None, self.input_dim))
        self.attention.build(None, (None, None, self.output_dim))
        self.built = True

    def call(self, vectors, mask=None, training=False):
        if mask is None:
            mask = tf.ones(tf.shape(vectors)[:2], tf.bool)
        mask = tf.cast(mask, tf.bool)
        x = self.dropout_layer(vectors, training=training)
        annotations = self.rnn(x, mask=mask, training=training)  # (B, S, D)
        annotations = annotations * tf.cast(mask, annotations.dtype)[..., None]
        document, alpha = self.attention(None, self.attention.project_keys(annotations), annotations, mask)
        return document, alpha, annotations

    def compute_mask(self, vectors, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "units": self.units,
                "attention_units": self.attention_units, "dropout": self.dropout}
