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
    0 and a zero vector. 2-D tokens (N, W) (single sentences) give (N, D), (N, W), (N,).

    ``return_annotations=True`` adds two more outputs: the per-word BiGRU annotations h_it
    (B, S, W, D) and the word mask (B, S, W) bool (zero annotations at padding), for a decoder
    that attends over the words themselves (2-D tokens: (N, W, D), (N, W))."""

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

    def encode_sentences(self, tokens, training=False, return_annotations=False):
        """tokens (N, W) -> (vectors (N, D), alpha (N, W), mask (N, W)) [+ annotations (N, W, D)]."""
        annotations, mask, _ = self.encoder(tokens, training=training)  # (N, W, D), (N, W)
        vectors, alpha = self.attention(None, self.attention.project_keys(annotations), annotations, mask)
        if return_annotations:
            return vectors, alpha, mask, annotations * tf.cast(mask, annotations.dtype)[..., None]
        return vectors, alpha, mask

    def call(self, tokens, training=False, return_annotations=False):
        tokens = tf.cast(tokens, tf.int32)
        if tokens.shape.rank == 2:
            out = self.encode_sentences(tokens, training, return_annotations)
            sentence_mask = tf.reduce_any(out[2], axis=-1)
            return (out[0], out[1], sentence_mask) + ((out[3], out[2]) if return_annotations else ())
        shape = tf.shape(tokens)  # (B, S, W)
        flat = tf.reshape(tokens, [-1, shape[2]])  # (B*S, W)
        real = tf.reduce_any(tf.not_equal(flat, PAD_ID), axis=-1)  # (B*S,)
        index = tf.cast(tf.where(real), tf.int32)  # (N, 1): the real sentences
        width = tf.maximum(tf.reduce_max(tf.reduce_sum(tf.cast(tf.not_equal(flat, PAD_ID), tf.int32), -1)), 1)
        sentences = tf.gather_nd(flat, index)[:, :width]  # (N, W') cut to the longest real sentence
        out = self.encode_sentences(sentences, training, return_annotations)  # (N, D), (N, W'), ...
        vectors, alpha = out[0], out[1]
        rows = tf.shape(flat)[0]
        vectors = tf.scatter_nd(index, vectors, tf.stack([rows, self.output_dim]))  # (B*S, D)
        alpha = tf.pad(alpha, [[0, 0], [0, shape[2] - width]])
        alpha = tf.scatter_nd(index, alpha, tf.stack([rows, shape[2]]))  # (B*S, W)
        vectors = tf.reshape(vectors, tf.stack([shape[0], shape[1], self.output_dim]))
        alpha = tf.reshape(alpha, shape)
        if not return_annotations:
            return vectors, alpha, tf.reshape(real, shape[:2])
        words = tf.pad(out[3], [[0, 0], [0, shape[2] - width], [0, 0]])  # (N, W, D)
        words = tf.scatter_nd(index, words, tf.stack([rows, shape[2], self.output_dim]))  # (B*S, W, D)
        words = tf.reshape(words, tf.stack([shape[0], shape[1], shape[2], self.output_dim]))  # (B, S, W, D)
        word_mask = tf.reshape(tf.not_equal(flat, PAD_ID), shape)  # (B, S, W)
        return vectors, alpha, tf.reshape(real, shape[:2]), words, word_mask

    def compute_mask(self, tokens, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "embedding_dim": self.embedding_dim,
                "units": self.units, "attention_units": self.attention_units, "dropout": self.dropout}
