"""The word level of a hierarchical encoder (Yang et al. 2016, HAN; Serban et al. 2016, HRED):
each sentence (or utterance) of word ids -> one vector, by a bidirectional GRU and word attention.

    h_it = [fw_it ; bw_it]                       TextEncoder (the translator's BiGRU)
    alpha_it = softmax_t(u_w^T tanh(W_w h_it + b_w))   AdditiveAttention(use_query=False)
    s_i = sum_t alpha_it h_it

Documents come as (B, S, W) ids, a batch of S sentences of W words, padded with id 0; only the
real sentences (those with a word) are run through the GRU: they are gathered into one
(N, W) batch and the vectors scattered back, so padding sentences cost nothing.
"""

import keras
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention
from captioner.layers.text_encoder import TextEncoder
from captioner.text.vocabulary import PAD_ID


@keras.saving.register_keras_serializable(package="captioner")
class WordEncoder(keras.layers.Layer):
    """tokens (B, S, W) int -> (sentence vectors (B, S, D), word weights (B, S, W),
    sentence mask (B, S) bool); D = 2 * units. Padding words and padding sentences get weight
    0 and a zero vector. 2-D tokens (N, W) (single sentences) give (N, D), (N, W), (N,)."""

    def __init__(self, vocab_size, embedding_dim=50, units=50, attention_units=100, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.embedding_dim = int(embedding_dim)
        self.units = int(units)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.encoder = TextEncoder(self.vocab_size, embedding_dim=self.embedding_dim, units=self.units, cell="gru",
                                   bidirectional=True, num_layers=1, dropout=self.dropout, name="bigru")
        self.attention = AdditiveAttention(self.attention_units, use_query=False, name="word_attention")

    @property
    def output_dim(self):
        return 2 * self.units

    @property
    def embedding(self):
        return self.encoder.embedding

    def build(self, input_shape=None):
        self.encoder.build((None, None))
        self.attention.build(None, (None, None, self.output_dim))
        self.built = True

    def encode_sentences(self, tokens, training=False):
        """tokens (N, W) -> (vectors (N, D), alpha (N, W), mask (N, W))."""
        annotations, mask, _ = self.encoder(tokens, training=training)  # (N, W, D), (N, W)
        vectors, alpha = self.attention(None, self.attention.project_keys(annotations), annotations, mask)
        return vectors, alpha, mask

    def call(self, tokens, training=False):
        tokens = tf.cast(tokens, tf.int32)
        if tokens.shape.rank == 2:
            vectors, alpha, mask = self.encode_sentences(tokens, training)
            return vectors, alpha, tf.reduce_any(mask, axis=-1)
        shape = tf.shape(tokens)  # (B, S, W)
        flat = tf.reshape(tokens, [-1, shape[2]])  # (B*S, W)
        real = tf.reduce_any(tf.not_equal(flat, PAD_ID), axis=-1)  # (B*S,)
        index = tf.cast(tf.where(real), tf.int32)  # (N, 1): the real sentences
        width = tf.maximum(tf.reduce_max(tf.reduce_sum(tf.cast(tf.not_equal(flat, PAD_ID), tf.int32), -1)), 1)
        sentences = tf.gather_nd(flat, index)[:, :width]  # (N, W') cut to the longest real sentence
        vectors, alpha, _ = self.encode_sentences(sentences, training)  # (N, D), (N, W')
        rows = tf.shape(flat)[0]
        vectors = tf.scatter_nd(index, vectors, tf.stack([rows, self.output_dim]))  # (B*S, D)
        alpha = tf.pad(alpha, [[0, 0], [0, shape[2] - width]])
        alpha = tf.scatter_nd(index, alpha, tf.stack([rows, shape[2]]))  # (B*S, W)
        vectors = tf.reshape(vectors, tf.stack([shape[0], shape[1], self.output_dim]))
        alpha = tf.reshape(alpha, shape)
        return vectors, alpha, tf.reshape(real, shape[:2])

    def compute_mask(self, tokens, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "embedding_dim": self.embedding_dim,
                "units": self.units, "attention_units": self.attention_units, "dropout": self.dropout}
