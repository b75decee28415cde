#!/usr/bin/env python
"""Choose a captioner's default beam width and length-penalty alpha without peeking at the
split the figures are reported on.

The Flickr8k dev split is cut in two halves by a seeded shuffle: every (beam, alpha) pair is
scored on the TUNE half, the best pair (by coco-caption BLEU-4, CIDEr breaking ties; or by
CIDEr with ``--select CIDEr``, for a model trained on a CIDEr reward) is chosen there, and
the REPORT half, which played no part in the choice, gets the figures of
every pair, the chosen one marked. The whole dev split's figures are printed too, with what
the captions look like (mean words, distinct captions, distinct words).

    python scripts/sweep_beam_alpha.py --model assets/models/flickr8k_attention.keras \
        --features work/flickr8k_lite2.h5 --output sweep.json

Decoding runs on cached backbone features (`captioner extract` with the model's backbone).
"""

import argparse
import itertools
import os
import sys

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="an ImageCaptioner .keras file")
    p.add_argument("--features", required=True, help="HDF5 feature store of the dev images (model's backbone)")
    p.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets",
                                                      "flickr8k"))
    p.add_argument("--beams", default="1,2,3,4,5")
    p.add_argument("--alphas", default="0,0.5,1.0")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--select", default="BLEU-4", choices=("BLEU-4", "CIDEr"),
                   help="the tune-half figure that chooses (the other breaks ties)")
    p.add_argument("--output", help="JSON with every score")
    args = p.parse_args(argv)

    from tqdm.auto import tqdm

    import captioner  # noqa: F401  registers the Keras classes
    from captioner.data.flickr8k import load_flickr8k
    from captioner.features.store import FeatureStore
    from captioner.inference.batch import load_captioner
    from captioner.metrics import evaluate_captions, meteor_session
    from captioner.training.caption_data import decode_captions
    from captioner.metrics.distinct import caption_statistics

    model = load_captioner(args.model)
    dev = load_flickr8k(args.data_dir, "dev")
    paths = list(dev.image_paths)
    with FeatureStore(args.features) as store:
        if store.grid_shape != model.grid_shape:
            sys.exit(f"{args.features} holds {store.backbone} grids of {store.grid_shape}, the model attends over "
                     f"{model.grid_shape}: extract with the model's backbone")
        feats = store.load([os.path.basename(q) for q in paths], grid=True, pooled=False)["grid"]
    order = np.random.default_rng(args.seed).permutation(len(paths))
    half = len(paths) // 2
    tune, report = set(order[:half].tolist()), set(order[half:].tolist())
    refs = {q: dev.captions[q] for q in paths}

    def score(hyps, rows):
        keys = [paths[i] for i in sorted(rows)]
        s = evaluate_captions({k: refs[k] for k in keys}, {k: hyps[k] for k in keys}, tool="auto", meteor=True)
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in s.items()}

    beams = [int(b) for b in args.beams.split(",")]
    alphas = [float(a) for a in args.alphas.split(",")]
    results = []
    with meteor_session():  # one METEOR process for every score
        for beam, alpha in tqdm(list(itertools.product(beams, alphas)), desc="beam x alpha", unit="setting"):
            if beam == 1 and alpha != alphas[0]:
                continue  # alpha only re-ranks finished beams; greedy has one
            hyps = decode_captions(model.decoder, feats, paths, model.vocabulary, beam_size=beam, alpha=alpha,
                                   max_length=model.max_length)
            stats = {k.replace("dev_", ""): round(v, 2) for k, v in caption_statistics(hyps.values()).items()}
            results.append({"beam": beam, "alpha": alpha, "tune": score(hyps, tune), "report": score(hyps, report),
                            "dev": {**score(hyps, tune | report), **stats}})
    other = "CIDEr" if args.select == "BLEU-4" else "BLEU-4"
    best = max(results, key=lambda r: (r["tune"][args.select], r["tune"][other]))
    print(f"{'beam':>4} {'alpha':>5} | {'tune B4':>7} {'CIDEr':>6} | {'report B4':>9} {'CIDEr':>6} | "
          f"{'dev B4':>6} {'METEOR':>6} {'CIDEr':>6} {'words':>5} {'distinct':>8}")
    for r in results:
        mark = "  <- chosen on the tune half" if r is best else ""
        print(f"{r['beam']:>4} {r['alpha']:>5.2f} | {r['tune']['BLEU-4']:>7.2f} {r['tune']['CIDEr']:>6.2f} | "
              f"{r['report']['BLEU-4']:>9.2f} {r['report']['CIDEr']:>6.2f} | {r['dev']['BLEU-4']:>6.2f} "
              f"{r['dev']['METEOR']:>6.2f} {r['dev']['CIDEr']:>6.2f} {r['dev']['caption_length']:>5.2f} "
              f"{r['dev']['distinct_captions']:>8.0f}{mark}")
    if args.output:
        from captioner.io import write_json

        write_json(args.output, {"model": args.model, "seed": args.seed, "tune_images": len(tune),
                                 "report_images": len(report), "tool": results[0]["dev"].get("tool"),
                                 "selected_by": f"tune-half {args.select}",
                                 "chosen": {"beam": best["beam"], "alpha": best["alpha"]},
                                 "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
