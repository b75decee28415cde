"""Do the captioner's backbone features tell a woman from a man? (issue 38, the astronaut photo)

The bundled captioner calls Eileen Collins (`assets/samples/eileen_collins.jpg`) "a man". This
asks whether the features it reads could tell: a logistic regression on the learned words'
features (`captioner.tagging.learned_words.region_features`: the grid's mean and each ImageNet
class's largest cell logit; standardized, L2 C = 0.002 as the learned words use) is trained on
the Flickr8k training photos whose captions agree (at least 3 of 5 name a woman or girl and none
a man or boy, or the other way round), and scored on the dev photos labelled the same way. Beside
it: how often the captioner alone names a woman on the dev photos of women, and the classifier's
P(woman) for the sample photos of people.

    PYTHONPATH=. python scripts/experiments/person_gender_probe.py --features runs/flickr8k_lite2.h5

The feature store is `captioner extract`'s of Flickr8k (train and dev), as the captioner's
training run made it.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

WOMAN = {"woman", "women", "girl", "girls", "lady", "ladies"}
MAN = {"man", "men", "boy", "boys", "guy", "guys"}


def labels(references):
    """1: a photo of a woman, 0: of a man, -1: the captions do not agree (`module docstring`)."""
    from captioner.text import tokenize

    out = []
    for refs in references:
        words = [set(tokenize(c)) for c in refs]
        w, m = sum(bool(s & WOMAN) for s in words), sum(bool(s & MAN) for s in words)
        out.append(1 if w >= 3 and m == 0 else 0 if m >= 3 and w == 0 else -1)
    return np.array(out)


def main(argv=None):
    from sklearn.linear_model import LogisticRegression

    import captioner  # noqa: F401
    from captioner.data import load_flickr8k
    from captioner.features.store import FeatureStore
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.tagging.learned_words import region_features
    from captioner.tagging.object_tagger import imagenet_head
    from captioner.text import tokenize

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="assets/models/flickr8k_attention.keras")
    ap.add_argument("--flickr8k", default="../shared/datasets/flickr8k")
    ap.add_argument("--features", required=True, help="the Flickr8k feature store (train and dev photos)")
    ap.add_argument("--photos", nargs="+", default=["assets/samples/eileen_collins.jpg",
                                                    "assets/samples/grace_hopper.jpg"])
    args = ap.parse_args(argv)

    model = load_model_file(args.model, ImageCaptioner, "an image captioner")
    kernel, bias = imagenet_head(model.backbone.name)
    data, grids = {}, {}
    with FeatureStore(args.features) as store:
        for split in ("train", "dev"):
            ds = load_flickr8k(args.flickr8k, split)
            grid = np.asarray(store.load([os.path.basename(p) for p in ds.image_paths], grid=True, pooled=False)["grid"],
                              np.float32)
            grids[split] = grid.reshape(len(grid), -1, grid.shape[-1])
            data[split] = (region_features(kernel, bias, grids[split]), labels([ds.captions[p] for p in ds.image_paths]))
    (x, y), (xd, yd) = data["train"], data["dev"]
    mean, scale = x.mean(0), np.maximum(x.std(0), 1e-3)
    keep, keep_dev = y >= 0, yd >= 0
    clf = LogisticRegression(C=0.002, max_iter=3000).fit((x[keep] - mean) / scale, y[keep])
    p = clf.predict_proba((xd[keep_dev] - mean) / scale)[:, 1]
    print(f"train photos labelled: {keep.sum()} ({100 * y[keep].mean():.0f}% women); dev: {keep_dev.sum()}")
    print(f"classifier's dev accuracy: {100 * ((p >= 0.5) == yd[keep_dev]).mean():.1f}%")
    women = np.flatnonzero(yd == 1)
    said = []
    for start in range(0, len(women), 64):
        out = model.generate_from_features(grids["dev"][women[start:start + 64]])
        said += [set(tokenize(c.text)) for c in model.decode_outputs(out)]
    print(f"the captioner alone names a woman on {100 * np.mean([bool(s & WOMAN) for s in said]):.0f}% of the "
          f"{len(women)} dev photos of women, a man on {100 * np.mean([bool(s & MAN) for s in said]):.0f}%")
    for path in args.photos:
        grid = np.asarray(model.encode(model.load_pixels(path)[None]))
        q = clf.predict_proba((region_features(kernel, bias, grid) - mean) / scale)[0, 1]
        print(f"{path}: P(woman) {q:.2f}")


if __name__ == "__main__":
    main()
