"""Stacked attention (Yang, He, Gao, Deng, Smola 2016, "Stacked Attention Networks for Image
Question Answering"): the question vector queries the image regions, and the attended image
vector refines the query for the next hop.

    h_A^k = tanh(W_IA^k v_I + (W_QA^k u^{k-1} + b_A^k))      (per region)
    p_I^k = softmax(W_P^k h_A^k + b_P^k)                       (over regions)
    u^k   = sum_i p_i^k v_i + u^{k-1}                          (u^0 = v_Q)

Each hop is the engine's :class:`AdditiveAttention` (e = v^T tanh(W u + U v_i)); the
bias b_P of the paper cancels in the softmax.
"""

import keras
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention


@keras.saving.register_keras_serializable(package="captioner")
class StackedAttention(keras.layers.Layer):
    """query (B, D), regions (N, R, D) -> refined query u^K (B, D), attention maps (B, hops, R).

    ``image_index`` (B,) says which of the N images each query looks at (several questions
    about one image share its regions and their key projections); None means N == B, in order.
    """

    def __init__(self, hops=2, units=256, dim=None, **kwargs):
        super().__init__(**kwargs)
        if hops < 1:
            raise ValueError(f"hops must be >= 1, got {hops}")
        self.hops = int(hops)
        self.units = int(units)
        self.dim = dim
        self.attentions = [AdditiveAttention(self.units, name=f"hop_{k + 1}") for k in range(self.hops)]
        if dim is not None:
            self.build((None, dim), (None, None, dim))

    def build(self, query_shape, regions_shape=None):
        dim = int(query_shape[-1])
        self.dim = dim
        for attention in self.attentions:
            attention.build((None, dim), (None, None, dim))
        self.built = True

    def call(self, query, regions, image_index=None, mask=None):
        u = query  # (B, D)
        values = regions if image_index is None else tf.gather(regions, image_index)  # (B, R, D)
        alphas = []
        for attention in self.attentions:
            keys = attention.project_keys(regions)  # (N, R, units): once per image, not per question
            if image_index is not None:
                keys = tf.gather(keys, image_index)  # (B, R, units)
            context, alpha = attention(u, keys, values, mask)  # (B, D), (B, R)
            u = u + context  # u^k = v~_I^k + u^{k-1}
            alphas.append(alpha)
        return u, tf.stack(alphas, axis=1)  # (B, D), (B, hops, R)

    def get_config(self):
        return {**super().get_config(), "hops": self.hops, "units": self.units, "dim": self.dim}
