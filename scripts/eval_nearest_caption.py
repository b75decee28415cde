"""The baseline a user could build in an afternoon: caption each dev photo with the first caption
of its nearest training photo (cosine similarity of the backbone's pooled features).

    python scripts/eval_nearest_caption.py --features work/mixed_lite2.h5 \
        --corpus flickr8k:../shared/datasets/flickr8k \
        --corpus img2dataset:work/cc3m:train=00000+00001+00002:dev=00003 --output nearest.json

The training photos are those of every corpus given (the pool a several-corpora captioner saw);
each corpus's dev split is scored on its own with the product's coco-caption scorer
(`captioner.metrics.evaluate_captions`), also with the pool of its own corpus alone. Features
come from a `captioner extract` store that holds every photo (photos keyed by file name).
"""

import argparse
import json
import os
import sys

import numpy as np


def main(argv=None):
    from captioner.features.store import FeatureStore
    from captioner.io import write_json
    from captioner.metrics import evaluate_captions, meteor_session
    from captioner.metrics.distinct import caption_statistics
    from captioner.data.caption_corpora import parse_corpus

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--features", required=True, help="a `captioner extract` store holding every photo")
    p.add_argument("--corpus", action="append", required=True, metavar="FORMAT:DIR[:train=..][:dev=..]")
    p.add_argument("--output", help="the figures as JSON")
    args = p.parse_args(argv)
    corpora = [parse_corpus(spec) for spec in args.corpus]
    splits = [(c, c.load("train"), c.load("dev")) for c in corpora]
    with FeatureStore(args.features) as store:
        def pooled(paths):
            x = store.load([os.path.basename(q) for q in paths], grid=False, pooled=True)["pooled"]
            return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-8)  # (N, C) unit rows

        pools = [(pooled(train.image_paths), [train.captions[q][0] for q in train.image_paths])
                 for _, train, _ in splits]
        devs = [pooled(dev.image_paths) for _, _, dev in splits]
    everything = (np.concatenate([f for f, _ in pools]), [c for _, caps in pools for c in caps])
    results = []
    with meteor_session():
        for (corpus, _, dev), dev_x, own in zip(splits, devs, pools):
            for pool_name, (train_x, captions) in (("all corpora", everything), ("its own corpus", own)):
                nearest = np.concatenate([np.argmax(dev_x[i:i + 512] @ train_x.T, axis=1)
                                          for i in range(0, len(dev_x), 512)])
                hyps = {q: captions[j] for q, j in zip(dev.image_paths, nearest)}
                scores = evaluate_captions({q: dev.captions[q] for q in hyps}, hyps, tool="auto")
                stats = caption_statistics(hyps.values())
                row = {"corpus": corpus.style, "dev_split": corpus.dev, "pool": pool_name, "images": len(hyps),
                       **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in scores.items()},
                       "caption_length": round(stats["dev_caption_length"], 2),
                       "distinct": round(stats["dev_distinct_captions"] / len(hyps), 4)}
                results.append(row)
                print(json.dumps(row), flush=True)
    if args.output:
        write_json(args.output, {"baseline": "first caption of the nearest training photo (cosine, pooled "
                                             "backbone features)", "results": results,
                                 "command": "python scripts/eval_nearest_caption.py " + " ".join(
                                     argv if argv is not None else sys.argv[1:])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
