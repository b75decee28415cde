#!/usr/bin/env python
"""Which familiar-photo test separates ImageNet photos from Flickr8k dev photos best.

    python scripts/experiments/compare_familiar_tests.py --model assets/models/flickr8k_attention.keras \\
        --features work/flickr8k_lite2.h5 --imagenet ../shared/datasets/imagenet-sample \\
        --flickr8k ../shared/datasets/flickr8k --output assets/benchmarks/familiar_quantile/familiar_tests.json

A captioner's tags steer only photos its familiar-photo test calls unfamiliar
(`captioner.tagging.object_tagger.fit_familiar`). A good test lets many ImageNet photos be
steered (their objects named) while few Flickr8k dev photos are (each steered dev photo costs
about 0.1 dev CIDEr: the captioner already describes those). Each test is fitted on the
training photos (the same 80/20 split and seed as `fit_familiar`), and for each quantile this
counts, among the photos with a steering tag (a class the captioner does not know, probability
>= the tagger's threshold), the ImageNet sample photos and the dev photos it calls unfamiliar.
Captioning is not run: `scripts/eval_open_world.py` on a re-fitted copy gives the caption scores.
"""

import argparse
import glob
import json
import os
import time

QUANTILES = (0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.03, 0.05)
TESTS = (("centroids", {"centroids": 64}), ("subspace", {"dims": 32}), ("subspace", {"dims": 64}),
         ("subspace", {"dims": 128}), ("subspace", {"dims": 256}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a captioner with a fitted tagger (its known classes, threshold)")
    parser.add_argument("--features", required=True, help="a `captioner extract` store of the Flickr8k photos")
    parser.add_argument("--imagenet", required=True, help="the imagenet-sample folder")
    parser.add_argument("--flickr8k", required=True, help="the Flickr8k folder (its train and dev lists)")
    parser.add_argument("--output", help="write the counts here (JSON)")
    args = parser.parse_args(argv)

    import numpy as np

    import captioner  # noqa: F401  registers the classes
    from captioner.features.store import FeatureStore
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.tagging.object_tagger import decode_centroids, familiarity, fit_familiar

    t0 = time.time()
    model = load_model_file(args.model, (ImageCaptioner,), "an image captioner")
    tagger = model.object_tagger()

    def names(split):
        with open(os.path.join(args.flickr8k, f"Flickr_8k.{split}Images.txt"), encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]

    with FeatureStore(args.features, backbone=model.backbone.name) as store:
        train = store.load(names("train"), grid=False)["pooled"].astype("float32")
        dev = store.load(names("dev"), grid=False)["pooled"].astype("float32")
    paths = sorted(glob.glob(os.path.join(args.imagenet, "images", "*.jpg")))
    batches, kept, _ = model.encode_files(paths, reduce=lambda f: f.mean(axis=1) if f.ndim == 3 else f)
    if len(kept) != len(paths):
        raise SystemExit(f"error: {len(paths) - len(kept)} ImageNet photos could not be read")
    imagenet = np.concatenate(batches)

    def steerable(pooled):
        return np.array([any(t.synset not in tagger.known and t.probability >= tagger.threshold for t in tags)
                         for tags in tagger.tags(tagger.probabilities(pooled))])

    can_im, can_dev = steerable(imagenet), steerable(dev)
    rows = []
    for test, size in TESTS:
        for q in QUANTILES:
            fitted = fit_familiar(train, quantile=q, test=test, **size)
            centres = decode_centroids(fitted["familiar"], train.shape[1])
            threshold = fitted["familiar_threshold"]
            rows.append({"test": test, **size, "quantile": q,
                         "imagenet_steered": int(np.sum(can_im & (familiarity(centres, imagenet, test) < threshold))),
                         "dev_steered": int(np.sum(can_dev & (familiarity(centres, dev, test) < threshold)))})
            print(f"{test:9s} {json.dumps(size):18s} quantile {q:<6}: ImageNet steered {rows[-1]['imagenet_steered']:3d} "
                  f"of {int(can_im.sum())}, dev steered {rows[-1]['dev_steered']:2d} of {int(can_dev.sum())}")
    result = {"model": os.path.basename(args.model), "imagenet_photos": len(paths), "dev_photos": len(dev),
              "imagenet_with_steering_tag": int(can_im.sum()), "dev_with_steering_tag": int(can_dev.sum()),
              "rows": rows, "seconds": round(time.time() - t0, 1),
              "command": "python scripts/experiments/compare_familiar_tests.py " + " ".join(
                  f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None)}
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
