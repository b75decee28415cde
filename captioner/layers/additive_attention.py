"""Additive (Bahdanau / Show-Attend-Tell) soft attention."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="captioner")
class AdditiveAttention(keras.layers.Layer):
    """e_i = v^T tanh(W s + U a_i); alpha = softmax(e) over unmasked annotations.

    The key projection `U a` does not depend on the decoder state, so callers compute it
    once per input with `project_keys` and reuse it at every decoding step.
    """

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.query_dense = keras.layers.Dense(units, use_bias=False, name="W")
        self.key_dense = keras.layers.Dense(units, name="U")
        self.score_dense = keras.layers.Dense(1, use_bias=False, name="v")

    def build(self, query_shape, annotation_shape):
        self.query_dense.build(query_shape)
        self.key_dense.build(annotation_shape)
        self.score_dense.build(tuple(annotation_shape[:-1]) + (self.units,))
        self.built = True

    def project_keys(self, annotations):
        return self.key_dense(annotations)  # (batch, regions, units)

    def call(self, query, keys, annotations, mask=None):
        """query (B, S), keys (B, R, units), annotations (B, R, D), mask (B, R) bool.

        Returns context (B, D) and alpha (B, R).
        """
        hidden = tf.tanh(keys + self.query_dense(query)[:, None, :])  # (B, R, units)
        scores = tf.squeeze(self.score_dense(hidden), -1)  # (B, R)
        if mask is not None:
            scores = tf.where(mask, scores, tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype)))
        alpha = tf.nn.softmax(scores, axis=-1)  # (B, R)
        # a batched (1, R) x (R, D) matmul: same sum as einsum("br,brd->bd"), but its gradient
        # runs ~2.5x faster on CPU (oneDNN einsum's backward is slow at these sizes), which
        # matters inside the training recurrence
        context = tf.matmul(alpha[:, None, :], annotations)[:, 0, :]  # (B, D)
        return context, alpha

    def attend_rows(self, query, rows, group_size, keys, annotations, mask=None):
        """`call` for some rows of a (B * group_size)-row layout, memory NOT gathered per row.

        query (M, S) holds rows `rows` (M,) int32 of the B * group_size rows, row
        b * group_size + k belonging to input b (the beam layout of compact beam search);
        keys (B, R, units), annotations (B, R, D), mask (B, R) stay per input. Scores and
        context are computed in the dense (B, group_size) layout and the M rows picked out:
        that avoids copying an (M, R, D) slice of the annotations every step, which costs
        more than the wasted rows. Returns context (M, D) and alpha (M, R), as `call` would
        on the gathered memory.
        """
        batch = tf.shape(keys)[0]
        n = batch * group_size
        at = rows[:, None]  # (M, 1)
        q = self.query_dense(query)  # (M, units)
        q_all = tf.reshape(tf.scatter_nd(at, q, tf.stack([n, self.units])),
                           [batch, group_size, 1, self.units])  # (B, K, 1, units); unused rows 0
        hidden = tf.tanh(keys[:, None, :, :] + q_all)  # (B, K, R, units)
        regions = tf.shape(keys)[1]
        scores = tf.gather(tf.reshape(self.score_dense(hidden), [n, regions]), rows)  # (M, R)
        if mask is not None:
            row_mask = tf.gather(mask, rows // group_size)  # (M, R)
            scores = tf.where(row_mask, scores, tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype)))
        alpha = tf.nn.softmax(scores, axis=-1)  # (M, R)
        alpha_all = tf.reshape(tf.scatter_nd(at, alpha, tf.stack([n, regions])),
                               [batch, group_size, regions])  # (B, K, R)
        context = tf.matmul(alpha_all, annotations)  # (B, K, D): K rows per matmul, not 1
        context = tf.gather(tf.reshape(context, [n, tf.shape(annotations)[-1]]), rows)  # (M, D)
        return context, alpha

    def get_config(self):
        return {**super().get_config(), "units": self.units}
