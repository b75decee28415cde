#!/usr/bin/env python
"""What an ensemble of image captioners buys on Flickr8k dev, and what it costs.

    python scripts/ensemble_captioners.py \
        --member assets/models/flickr8k_attention.keras work/flickr8k_lite2.h5 \
        --member old_lite0_captioner.keras work/dev_lite0.h5 --output ensemble.json

Each ``--member`` is a captioner and the feature store of its backbone (`captioner extract` with
that backbone; the members may use different backbones and grids). The members are decoded
together inside the one beam search (`EnsembleDecoder`: a product of their distributions; each
member reads its own features; the attention shown is the first member's), at the first member's
default beam width and length penalty unless given. Printed and written: coco-caption scores of
every member alone and of the ensemble on the same dev images, distinct captions, mean caption
length, and the cost: seconds of beam search on cached features, and each member's backbone rate
on real dev JPEGs (images/s, measured in this run), from which the end-to-end slowdown follows.
"""

import argparse
import functools
import os
import sys
import time

import numpy as np


def member_names(paths):
    """How the members are named in the printout and the JSON: their file names, or, where two
    share a file name (two runs' flickr8k_attention.keras), the paths as given, numbered if
    even those repeat."""
    for names in ([os.path.basename(m) for m in paths], list(paths)):
        if len(set(names)) == len(names):
            return names
    return [f"{k + 1}: {m}" for k, m in enumerate(paths)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--member", nargs=2, action="append", required=True, metavar=("MODEL", "FEATURES"),
                   help="a captioner .keras and the HDF5 features of its backbone (repeat; 2 or more)")
    p.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets",
                                                      "flickr8k"))
    p.add_argument("--beam-size", type=int, help="default: the first member's")
    p.add_argument("--alpha", type=float, help="default: the first member's")
    p.add_argument("--combine", default="product", choices=("product", "mixture"))
    p.add_argument("--limit", type=int, help="only the first N dev images")
    p.add_argument("--bench-images", type=int, default=64, help="dev JPEGs timed through each backbone (0: skip)")
    p.add_argument("--output", help="JSON with every figure")
    args = p.parse_args(argv)
    if len(args.member) < 2:
        p.error("give at least two --member")

    import captioner  # noqa: F401  registers the Keras classes
    from captioner.data.flickr8k import load_flickr8k
    from captioner.decoding.ensemble import EnsembleDecoder
    from captioner.decoding.generator import Generator
    from captioner.features.store import FeatureStore
    from captioner.inference.batch import load_captioner
    from captioner.metrics import evaluate_captions, meteor_session
    from captioner.training.caption_data import hypothesis_texts

    models = [load_captioner(m) for m, _ in args.member]
    for (path, _), model in zip(args.member[1:], models[1:]):
        if model.vocabulary != models[0].vocabulary:
            sys.exit(f"{path}: its vocabulary differs from {args.member[0][0]}'s: an ensemble needs one vocabulary")
    dev = load_flickr8k(args.data_dir, "dev")
    paths = list(dev.image_paths)[:args.limit]
    names = [os.path.basename(q) for q in paths]
    feats = []
    for (path, store_path), model in zip(args.member, models):
        with FeatureStore(store_path) as store:
            if store.grid_shape != model.grid_shape:
                sys.exit(f"{store_path} holds grids of {store.grid_shape}; {path} attends over {model.grid_shape}")
            feats.append(store.load(names, grid=True, pooled=False)["grid"])
    beam = args.beam_size or models[0].beam_size
    alpha = models[0].alpha if args.alpha is None else args.alpha
    max_length = models[0].max_length

    gens = [m.decoder.generator for m in models]

    def own_input(k, *inputs):  # member k reads the k-th features
        return gens[k].encode(inputs[k])

    ensemble = EnsembleDecoder([(g.decoder, functools.partial(own_input, k)) for k, g in enumerate(gens)],
                               combine=args.combine, attention_from=0)
    joint = Generator(ensemble, ensemble.encode, banned_ids=gens[0].banned_ids)
    settings = {"beam_size": beam, "alpha": alpha, "max_length": max_length}

    def alone(k, i, j):
        return gens[k](feats[k][i:j], **settings)

    labels = member_names([m for m, _ in args.member])
    runs = [(labels[k], functools.partial(alone, k)) for k in range(len(args.member))]
    runs.append(("ensemble", lambda i, j: joint(*[f[i:j] for f in feats], **settings)))
    refs = {q: dev.captions[q] for q in paths}
    results = {}
    with meteor_session():  # one METEOR process for the members and the ensemble
        for name, run in runs:
            run(0, 2)  # compile outside the timing
            start, hyps = time.perf_counter(), []
            for i in range(0, len(paths), 100):
                hyps += hypothesis_texts(run(i, i + 100), models[0].vocabulary)
            seconds = time.perf_counter() - start
            scores = evaluate_captions(refs, dict(zip(paths, hyps)), tool="auto", meteor=True)
            results[name] = {**{k: round(v, 2) for k, v in scores.items() if isinstance(v, float)},
                             "tool": scores.get("tool"), "distinct_captions": len(set(hyps)),
                             "mean_words": round(float(np.mean([len(h.split()) for h in hyps])), 2),
                             "search_seconds": round(seconds, 1)}
            print(name, results[name], flush=True)

    backbone_rate = {}
    if args.bench_images:
        for label, model in zip(labels, models):
            pixels = np.stack([model.load_pixels(q) for q in paths[:args.bench_images]])
            model.encode(pixels[:16])  # compile at the timed batch size
            start = time.perf_counter()
            for i in range(0, len(pixels), 16):
                model.encode(pixels[i:i + 16])
            backbone_rate[label] = round(len(pixels) / (time.perf_counter() - start), 1)
        print("backbone images/s:", backbone_rate)
    if args.output:
        from captioner.io import write_json

        write_json(args.output, {"what": "captioner ensemble vs its members, Flickr8k dev", "argv": sys.argv,
                                 "members": [m for m, _ in args.member], "images": len(paths), "beam_size": beam,
                                 "alpha": alpha, "combine": args.combine, "results": results,
                                 "backbone_images_per_second": backbone_rate})
    return 0


if __name__ == "__main__":
    sys.exit(main())
