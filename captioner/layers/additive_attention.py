"""Additive (Bahdanau / Show-Attend-Tell) soft attention, and its query-free form (HAN)."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="captioner")
class AdditiveAttention(keras.layers.Layer):
    """e_i = v^T tanh(W s + U a_i); alpha = softmax(e) over unmasked annotations.

    The key projection `U a` does not depend on the decoder state, so callers compute it
    once per input with `project_keys` and reuse it at every decoding step.

    With ``use_query=False`` there is no decoder state and no W: e_i = v^T tanh(U a_i + b),
    the word and sentence attention of Yang et al. 2016 (HAN), where ``v`` is the learned
    context vector u_w ("which words are informative") and ``U``, ``b`` their W_w, b_w.
    :meth:`pool` computes it in one call.
    """

    def __init__(self, units, use_query=True, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.use_query = bool(use_query)
        self.query_dense = keras.layers.Dense(units, use_bias=False, name="W") if self.use_query else None
        self.key_dense = keras.layers.Dense(units, name="U")
        self.score_dense = keras.layers.Dense(1, use_bias=False, name="v")

    def build(self, query_shape=None, annotations_shape=None):
        # the names match call()'s arguments: Keras passes them by name when a first call builds the layer
        if self.use_query:
            self.query_dense.build(query_shape)
        self.key_dense.build(annotations_shape)
        self.score_dense.build(tuple(annotations_shape[:-1]) + (self.units,))
        self.built = True

    def project_keys(self, annotations):
        return self.key_dense(annotations)  # (batch, regions, units)

    def call(self, query, keys, annotations, mask=None):
        """query (B, S) (None when ``use_query=False``), keys (B, R, units), annotations (B, R, D),
        mask (B, R) bool.

        Returns context (B, D) and alpha (B, R). Masked annotations get weight exactly 0; a
        row with no unmasked annotation gets all zeros (and a zero context).
        """
        if self.use_query:
            keys = keys + self.query_dense(query)[:, None, :]
        hidden = tf.tanh(keys)  # (B, R, units)
        scores = tf.squeeze(self.score_dense(hidden), -1)  # (B, R)
        if mask is not None:
            scores = tf.where(mask, scores, tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype)))
        alpha = tf.nn.softmax(scores, axis=-1)  # (B, R)
        if mask is not None and not self.use_query:  # an all-padding row (a padded sentence): no weight at all
            alpha = alpha * tf.cast(tf.reduce_any(mask, axis=-1, keepdims=True), alpha.dtype)
        # a batched (1, R) x (R, D) matmul: same sum as einsum("br,brd->bd"), but its gradient
        # runs ~2.5x faster on CPU (oneDNN einsum's backward is slow at these sizes), which
        # matters inside the training recurrence
        context = tf.matmul(alpha[:, None, :], annotations)[:, 0, :]  # (B, D)
        return context, alpha

    def pool(self, annotations, mask=None):
        """``use_query=False``: (context (B, D), alpha (B, R)) of annotations (B, R, D)."""
        if self.use_query:
            raise ValueError("pool() is the query-free attention: construct with use_query=False")
        if not self.built:
            self.build(None, annotations.shape)
        return self(None, self.project_keys(annotations), annotations, mask)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "use_query": self.use_query}
