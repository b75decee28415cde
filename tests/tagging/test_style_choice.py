"""Choosing a several-corpora captioner's style per photo: the nearest corpus by k-means centroids,
less a margin for every style but the fallback (fitted so `keep` of that corpus's dev photos keep it);
the same choice in NumPy and in a TensorFlow graph."""

import numpy as np
import pytest

from captioner.tagging.style_choice import StyleChooser, fit_style_centroids


def corpora(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, (60, 8)) + np.eye(8)[0] * 4  # photos of one corpus around axis 0
    b = rng.normal(0, 1, (60, 8)) + np.eye(8)[1] * 4  # the other's around axis 1
    return {"flickr8k": a, "web": b}


def test_the_nearest_corpus_and_a_margin_for_all_but_the_fallback():
    train, dev = corpora(0), corpora(1)
    plain = StyleChooser(fit_style_centroids(train, k=3))
    assert plain.choose(dev["flickr8k"]).count("flickr8k") >= 55 and plain.choose(dev["web"]).count("web") >= 55
    config = fit_style_centroids(train, k=3, fallback="web", held_out=dev, keep=0.5)
    assert set(config["margins"]) == {"flickr8k"} and config["margins"]["flickr8k"] > 0
    chooser = StyleChooser(config)
    kept = chooser.choose(dev["flickr8k"]).count("flickr8k")
    assert 27 <= kept <= 33  # about half keep their style, the rest fall back
    between = (train["flickr8k"][:5] + train["web"][:5]) / 2  # half like each: the fallback
    assert set(chooser.choose(between)) == {"web"}
    graph = chooser.choose_in_graph(dev["flickr8k"].astype(np.float32), [7, 9]).numpy()
    assert [{7: "flickr8k", 9: "web"}[int(t)] for t in graph] == chooser.choose(dev["flickr8k"])
    with pytest.raises(ValueError, match="fallback 'news'"):
        fit_style_centroids(train, k=3, fallback="news")
