"""The text encoder of every source-sentence task: word ids -> annotation vectors.

* Bahdanau et al. 2015: one bidirectional GRU; the annotation of word j is the forward and
  backward states concatenated, h_j = [fw_j ; bw_j], and the decoder starts from the backward
  state at the first word (``final["h"]`` is bw_1).
* Sutskever et al. 2014: a deep unidirectional LSTM, optionally reading the source reversed;
  its last top-layer state is the fixed-length summary (``final["h"]``, ``final["c"]``).

Padding (id 0) is masked: it changes neither the states nor the annotations of real words.
"""

import keras
import tensorflow as tf

from captioner.layers.bidirectional import safe_bidirectional
from captioner.text.vocabulary import PAD_ID

CELLS = ("gru", "lstm")


@keras.saving.register_keras_serializable(package="captioner")
class TextEncoder(keras.layers.Layer):
    """tokens (B, S) int -> (annotations (B, S, D), mask (B, S) bool, final {"h", "c"} (B, U)).

    D = 2 * units when bidirectional, else units. With ``reverse_source`` the RNNs read each
    sentence's real words right to left; the annotations are put back in source order, so
    annotation j still belongs to word j.
    """

    def __init__(self, vocab_size, embedding_dim=256, units=256, cell="gru", bidirectional=True,
                 num_layers=1, dropout=0.0, reverse_source=False, **kwargs):
        super().__init__(**kwargs)
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {CELLS}, got {cell!r}")
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.cell = cell
        self.bidirectional = bidirectional
        self.num_layers = num_layers
        self.dropout = dropout
        self.reverse_source = reverse_source
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding")
        self.dropout_layer = keras.layers.Dropout(dropout)
        rnn_cls = keras.layers.GRU if cell == "gru" else keras.layers.LSTM
        self.rnns = []
        for i in range(num_layers):
            rnn = rnn_cls(units, return_sequences=True, return_state=True, name=f"{cell}_{i}")
            if bidirectional:
                rnn = safe_bidirectional(rnn, name=f"bi{cell}_{i}")
            self.rnns.append(rnn)

    @property
    def output_dim(self):
        return self.units * (2 if self.bidirectional else 1)

    def build(self, input_shape=None):
        self.embedding.build((None, None))
        dim = self.embedding_dim
        for rnn in self.rnns:
            rnn.build((None, None, dim))
            dim = self.output_dim
        self.built = True

    def call(self, tokens, training=False):
        tokens = tf.cast(tokens, tf.int32)
        mask = tf.not_equal(tokens, PAD_ID)  # (B, S)
        lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)  # (B,)
        if self.reverse_source:
            tokens = tf.reverse_sequence(tokens, lengths, seq_axis=1, batch_axis=0)  # padding stays at the end
        x = self.dropout_layer(self.embedding(tokens), training=training)  # (B, S, E)
        states = []
        for i, rnn in enumerate(self.rnns):
            outputs = rnn(x, mask=mask, training=training)
            x, states = outputs[0], list(outputs[1:])  # x (B, S, D)
            if i < self.num_layers - 1:
                x = self.dropout_layer(x, training=training)
        x = x * tf.cast(mask, x.dtype)[..., None]  # zero annotations at padding
        if self.reverse_source:
            x = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)  # back to source order
        per_direction = 2 if self.cell == "lstm" else 1
        last = states[-per_direction:]  # the backward RNN's states when bidirectional (state at word 1)
        final = {"h": last[0], "c": last[1] if self.cell == "lstm" else tf.zeros_like(last[0])}
        return x, mask, final

    def compute_mask(self, tokens, mask=None):
        return None

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size, "embedding_dim": self.embedding_dim, "units": self.units,
            "cell": self.cell, "bidirectional": self.bidirectional, "num_layers": self.num_layers,
            "dropout": self.dropout, "reverse_source": self.reverse_source,
        }
