"""Choosing, per photo, which corpus's style a several-corpora captioner writes in (its `style="auto"`).

A photo is written in the style of the corpus whose training photos it is most like: each corpus's
training photos are summarized by k-means centroids of their unit-normalized pooled backbone
features, and a photo takes the style whose nearest centroid is closest (cosine), less a margin for
every style but the fallback (the broadest corpus): a photo is written as Flickr8k only where it is
clearly like Flickr8k's photos. A Flickr8k-like
photo of people outdoors gets Flickr8k's sentence; a product shot, a dish, a drawing or a room gets
the web corpus's alt-text. `captioner model fit-styles` fits it; the centroids (float16, a few
hundred kB) are saved in the model's config, so the choice is the same on every surface.
"""

from __future__ import annotations

import base64

import numpy as np

__all__ = ["fit_style_centroids", "StyleChooser"]


def _unit(x):
    x = np.asarray(x, np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def fit_style_centroids(pooled_by_style, k=16, seed=0, fallback=None, held_out=None, keep=0.9):
    """{"styles": [...], "k": k, "dim": C, "centroids": base64 of float16 (S * k, C), "margins": {style: m}}
    from {style: pooled features (N, C) of that corpus's training photos}.

    fallback: the style of a photo unlike every corpus (the broadest one, e.g. web): each other style s
    is chosen only where its score beats the fallback's by its margin, the (1 - keep) quantile of that
    difference over `held_out[s]` (s's dev photos' pooled features), so `keep` of them stay in style s
    and a photo only half like s is written in the fallback's style. No fallback: margins 0."""
    from sklearn.cluster import KMeans

    rows = []
    for style, pooled in pooled_by_style.items():
        x = _unit(pooled)
        if len(x) < k:
            raise ValueError(f"fit_style_centroids: {len(x)} {style} photos for {k} centroids")
        rows.append(_unit(KMeans(int(k), n_init=1, random_state=seed).fit(x).cluster_centers_))
    table = np.concatenate(rows).astype(np.float16)
    config = {"styles": list(pooled_by_style), "k": int(k), "dim": int(table.shape[1]),
              "centroids": base64.b64encode(table.tobytes()).decode("ascii"), "margins": {}}
    if fallback is not None:
        if fallback not in pooled_by_style:
            raise ValueError(f"fit_style_centroids: fallback {fallback!r} is not one of {list(pooled_by_style)}")
        chooser = StyleChooser(config)
        f = chooser.styles.index(fallback)
        for i, style in enumerate(chooser.styles):
            if style != fallback:
                x = (held_out or pooled_by_style)[style]
                scores = chooser.scores(x)
                config["margins"][style] = round(max(0.0, float(np.quantile(scores[:, i] - scores[:, f], 1 - keep))), 4)
    return config


class StyleChooser:
    """The saved settings of `fit_style_centroids` -> a style name per photo."""

    def __init__(self, config):
        self.styles = list(config["styles"])
        self.k = int(config["k"])
        table = np.frombuffer(base64.b64decode(config["centroids"]), np.float16).astype(np.float32)
        self.centroids = table.reshape(len(self.styles), self.k, int(config["dim"]))  # (S, k, C)
        # a style is chosen where its score, less its margin, is the highest (`fit_style_centroids`)
        self.margins = np.array([float(config.get("margins", {}).get(s, 0.0)) for s in self.styles], np.float32)

    def scores(self, pooled):
        """(B, S): each photo's cosine similarity to its nearest centroid of each style."""
        s, k, c = self.centroids.shape
        sims = _unit(pooled) @ self.centroids.reshape(s * k, c).T  # (B, S * k): a BLAS matmul, not einsum
        return sims.reshape(len(sims), s, k).max(axis=2)

    def choose_in_graph(self, pooled, style_ids):
        """The same choice inside a TensorFlow graph (the exported SavedModel): pooled (B, C) ->
        int32 (B,) start tokens, `style_ids` the decoder's token id of each of `styles`."""
        import tensorflow as tf

        s, k, c = self.centroids.shape
        unit = tf.math.l2_normalize(tf.cast(pooled, tf.float32), axis=-1)
        sims = tf.reshape(tf.matmul(unit, tf.constant(self.centroids.reshape(s * k, c).T)), [-1, s, k])
        scores = tf.reduce_max(sims, axis=2) - tf.constant(self.margins)  # (B, S)
        return tf.gather(tf.constant(style_ids, tf.int32), tf.argmax(scores, axis=1))

    def choose(self, pooled):
        """[style] of each photo of pooled features (B, C) (the mean of a grid's cells)."""
        return [self.styles[i] for i in (self.scores(pooled) - self.margins).argmax(axis=1)]
