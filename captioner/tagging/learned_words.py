"""Words the captioner's training sentences never taught it, learned from labelled photos.

The lexical classifiers of Deep Compositional Captioning (Hendricks et al. 2016): photos labelled
with a word (a folder of photos of it, or the image-level labels that other photos' captions give,
the "unpaired image data" of the DCC protocol) train a logistic regression per word on the
backbone's features, and a photo it says yes to gets that word as a tag; the one beam search then
puts the word into the caption (`ObjectTagger`'s constraints or bonus). The word must be in the
caption vocabulary: the decoder has an embedding for it, though it may never have been trained to
say it (``captioner train caption --hold-out-words``).

Features (:func:`region_features`): the mean of the regions the decoder attends over (the grid
cells of a photo, the frames of a clip), and per ImageNet class the largest logit of the
backbone's own head over the regions (the head applied to each cell: a hat or a camera that fills
one cell of 81 is washed out in the mean). On the Flickr8k DCC split (6 held-out words) this
feature set had the best 5-fold F1 on the training photos of those cross-validated (mean pooled
0.50, the cells' head logits alone 0.49, mean + the cells' head logits 0.51; ``docs/open_world.md``).

Scales (:func:`word_features`, ``scales``): the same features again from the backbone run on the
photo enlarged to a larger input side (390 px: 13 x 13 cells instead of 9 x 9), concatenated. A hat
or a camera then fills a cell at about the size ImageNet photos show their objects, and the head
names it more often (the 6 held-out words of the issue's rule: mean 5-fold F1 on the training
photos 53.4 -> 55.2, held-out-object F1 on Flickr8k dev 49.4 -> 51.4; ``docs/open_world.md``).
The enlarged photo is the model's own input pixels resized (bilinear), so every path that has the
pixels computes the same features.

Each word's cut-off is the F1-best of 5-fold cross-validated probabilities on the training photos,
folded into the bias so that a tag at probability >= 0.5 is the classifier saying yes. The weights
(standardisation folded in) are saved in the captioner's config: float32, base64.
"""

from __future__ import annotations

import base64

import numpy as np


def region_features(kernel, bias, regions, mask=None):
    """regions (B, R, C) backbone features (grid cells or frames; mask (B, R): 1 for a real one)
    -> float32 (B, C + K): the regions' mean, and per class of the head (kernel (C, K), bias (K,))
    its largest logit over the regions."""
    x = np.asarray(regions, np.float32)
    if x.ndim == 2:
        x = x[:, None, :]
    if x.ndim != 3 or x.shape[-1] != kernel.shape[0]:
        raise ValueError(f"region_features: regions of shape {x.shape}, expected (B, R, {kernel.shape[0]})")
    m = np.ones(x.shape[:2], np.float32) if mask is None else np.asarray(mask, np.float32).reshape(x.shape[:2])
    mean = (x * m[..., None]).sum(1) / np.maximum(m.sum(1, keepdims=True), 1.0)
    logits = x @ kernel + bias  # (B, R, K); a BLAS matmul (np.einsum here was ~18x slower)
    logits = np.where(m[..., None] > 0, logits, -np.inf).max(axis=1)
    logits = np.where(np.isfinite(logits), logits, bias)  # a clip with no frame: the head's bias
    return np.concatenate([mean, logits], axis=1).astype(np.float32)


def word_features(kernel, bias, regions, mask=None, scaled=()):
    """`region_features` of ``regions`` (the decoder's annotations), then of each array of
    ``scaled`` (B, R_s, C): the regions of the backbone run at each of the learned words' larger
    input sides (`PixelModel.scaled_regions`), concatenated -> float32 (B, (C + K) * (1 + len(scaled)))."""
    parts = [region_features(kernel, bias, regions, mask)]
    parts += [region_features(kernel, bias, s) for s in scaled]
    if any(len(p) != len(parts[0]) for p in parts):
        raise ValueError(f"word_features: {len(parts[0])} photos, but scaled regions of {[len(p) for p in parts[1:]]}")
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def feature_count(kernel, scales=()):
    """How many `word_features` a photo has with the head `kernel` (C, K) and these scales."""
    return (kernel.shape[0] + kernel.shape[1]) * (1 + len(scales))


def check_scales(scales):
    """Sorted distinct int input sides (>= 32 px each) -> list; a ValueError on anything else."""
    try:
        out = sorted({int(s) for s in scales})
    except (TypeError, ValueError):
        raise ValueError(f"learned-word scales must be input sides in pixels, got {scales!r}") from None
    if any(s < 32 or s > 2048 for s in out) or len(out) != len(list(scales)):
        raise ValueError(f"learned-word scales must be distinct input sides of 32-2048 pixels, got {list(scales)!r}")
    return out


def encode_weights(weights):
    """float32 (F + 1, W) -> base64 text for the config."""
    return base64.b64encode(np.ascontiguousarray(weights, np.float32).tobytes()).decode("ascii")


def decode_weights(text, features, words):
    """`encode_weights` text -> float32 (features + 1, words); a ValueError when it does not fit."""
    raw = np.frombuffer(base64.b64decode(text.encode("ascii")), np.float32)
    if raw.size != (features + 1) * words:
        raise ValueError(f"ObjectTagger: learned_weights holds {raw.size} numbers, not "
                         f"({features} + 1) x {words} learned words")
    return raw.reshape(features + 1, words).copy()


def probabilities(weights, features):
    """(F + 1, W) weights, (B, F) features -> (B, W) probabilities (>= 0.5: the word's cut-off passed)."""
    logits = features @ weights[:-1] + weights[-1]
    return 1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50)))


def best_cutoff(labels, scores):
    """The probability cut-off with the best F1 of `scores` against 0/1 `labels` (ties: the higher)."""
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], labels[order].astype(np.float64)
    tp = np.cumsum(y)
    predicted = np.arange(1, len(y) + 1)
    f1 = 2 * tp / (predicted + y.sum())
    last = np.r_[s[1:] != s[:-1], True]  # cut only between distinct scores
    f1 = np.where(last, f1, -1.0)
    i = int(np.argmax(f1))
    return float(s[i]), float(f1[i])


def fit_words(features, labels, words, vocabulary, strength=0.002, folds=5, seed=0, scales=()):
    """Learn `words` from labelled photos.

    Args:
        features: (N, F) `word_features` of the photos (with ``scales``: their scaled regions too).
        labels: (N, W) 0/1, photo n shows word w (`words[w]`); each word needs >= `folds` photos of
            it and as many without.
        vocabulary: the caption vocabulary: every word must be in it.
        strength: the inverse L2 strength of the logistic regressions (scikit-learn's ``C``).
        scales: the larger input sides `features` also holds the regions of (in this order), saved
            with the words so that tagging computes the same features.

    Returns the `ObjectTagger` settings {"learned_words", "learned_weights", ["learned_scales"],
    "fitted_learned": {word: {photos, cutoff, cv_f1}}}.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    x = np.asarray(features, np.float32)
    y = np.asarray(labels).astype(bool)
    words = [str(w) for w in words]
    if check_scales(scales) != list(scales):  # `features` hold them in the order given, and are saved sorted
        raise ValueError(f"fit_words: scales {list(scales)} must be given as `check_scales` returns them (increasing)")
    if y.shape != (len(x), len(words)):
        raise ValueError(f"fit_words: labels of shape {y.shape} for {len(x)} photos and {len(words)} words")
    missing = [w for w in words if w not in vocabulary]
    if missing:
        raise ValueError(f"fit_words: {missing} not in the caption vocabulary (the decoder has no embedding "
                         "for them; retrain it with them in its vocabulary)")
    mean, scale = x.mean(axis=0), np.maximum(x.std(axis=0), 1e-3)
    z = (x - mean) / scale
    weights = np.zeros((x.shape[1] + 1, len(words)), np.float32)
    report = {}
    for j, word in enumerate(words):
        positives = int(y[:, j].sum())
        if min(positives, len(y) - positives) < folds:
            raise ValueError(f"fit_words: {word!r} has {positives} labelled photos of {len(y)}; it needs at "
                             f"least {folds} with it and {folds} without")
        model = LogisticRegression(C=strength, max_iter=3000)
        cv = cross_val_predict(model, z, y[:, j], method="predict_proba",
                               cv=StratifiedKFold(folds, shuffle=True, random_state=seed))[:, 1]
        cutoff, cv_f1 = best_cutoff(y[:, j], cv)
        model.fit(z, y[:, j])
        w = model.coef_[0] / scale
        b = model.intercept_[0] - float((model.coef_[0] * mean / scale).sum())
        cutoff = min(max(cutoff, 1e-6), 1 - 1e-6)
        b -= np.log(cutoff / (1 - cutoff))  # the cut-off becomes probability 0.5
        weights[:-1, j], weights[-1, j] = w, b
        report[word] = {"photos": positives, "cutoff": round(cutoff, 4), "cv_f1": round(100 * cv_f1, 1)}
    return {"learned_words": words, "learned_weights": encode_weights(weights),
            **({"learned_scales": list(scales)} if scales else {}),
            "fitted_learned": {"photos": int(len(x)), "strength": float(strength), "folds": int(folds),
                               "words": report}}
