"""Open-world captioning, side by side on the same features (issue 38): the bundled captioner
alone, and with object tags from its backbone's ImageNet head as soft lexical constraints of
the beam search (several bonus sizes), then the class names filled in.

    python scripts/eval_open_world.py --model assets/models/flickr8k_attention.keras \\
        --imagenet ../shared/datasets/imagenet-sample --flickr8k ../shared/datasets/flickr8k --dev-limit 300

* ImageNet sample (500 real photos, one per even class; never trained on): the share of
  captions that name the photo's class or a WordNet hypernym of it ("fish" for a tench), and
  the tagger's own top-1. The softmax temperature is fitted (NLL) on the photos of classes
  0, 4, 8, ... and its calibration (ECE, 15 bins) reported on the others.
* Flickr8k dev (first --dev-limit photos): BLEU-4 / METEOR / CIDEr, so the tags do not cost the
  captioner its home ground.

Writes assets/benchmarks/open_world_captioning.json (figures and 20 example captions).
"""

import argparse
import csv
import glob
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def load_features(model, paths, batch=32):
    from tqdm import tqdm

    out = []
    for start in tqdm(range(0, len(paths), batch), desc="backbone", unit="batch", file=sys.stderr):
        pixels = np.stack([model.load_pixels(p) for p in paths[start:start + batch]])
        out.append(model.encode(pixels).numpy())
    return np.concatenate(out)


def caption_all(model, features, objects, batch=32):
    captions = []
    for start in range(0, len(features), batch):
        out = model.generate_from_features(features[start:start + batch], objects=objects)
        captions.extend(model.decode_outputs(out))
    return captions


def mentions(text, entry):
    """Whether `text` names the class (a lemma or its name) or a hypernym of it."""
    padded = f" {text.lower()} "
    words = set(entry["lemmas"]) | {entry["name"].lower()} | {w for level in entry["hypernyms"] for w in level}
    return any(f" {w} " in padded or f" {w}s " in padded or f" {w}es " in padded for w in words)


def ece(probs, labels, bins=15):
    conf = probs.max(1)
    right = probs.argmax(1) == labels
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(right[inside].mean() - conf[inside].mean())
    return float(total)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="assets/models/flickr8k_attention.keras")
    parser.add_argument("--imagenet", required=True)
    parser.add_argument("--flickr8k", default=None)
    parser.add_argument("--dev-limit", type=int, default=300)
    parser.add_argument("--bonus", type=float, nargs="+", default=[2.0, 4.0, 8.0])
    parser.add_argument("--threshold", type=float, nargs="+", default=[0.3],
                        help="tag probabilities that constrain the caption (each bonus with each threshold)")
    parser.add_argument("--output", default="assets/benchmarks/open_world_captioning.json")
    args = parser.parse_args(argv)

    import keras

    import captioner  # noqa: F401
    from captioner.io import write_json
    from captioner.tagging.object_tagger import imagenet_classes

    model = keras.models.load_model(args.model)
    classes = imagenet_classes()
    with open(os.path.join(args.imagenet, "classes.tsv"), encoding="utf-8") as f:
        index_of = {r["wnid"]: int(r["index"]) for r in csv.DictReader(f, delimiter="\t")}
    paths = sorted(glob.glob(os.path.join(args.imagenet, "images", "*.jpg")))
    labels = np.array([index_of[os.path.basename(p).split("_")[0]] for p in paths])
    t0 = time.time()
    feats = load_features(model, paths)
    tagger = model.object_tagger()
    pooled = feats.mean(axis=1)
    fit = labels % 4 == 0  # classes 0, 4, 8, ...: fit T; the others (2, 6, 10, ...): report
    temps = np.round(np.arange(0.5, 3.01, 0.05), 2)

    def nll(t, rows):
        tagger.temperature = float(t)
        p = tagger.probabilities(pooled[rows])
        return float(-np.mean(np.log(p[np.arange(rows.sum()), labels[rows]] + 1e-12)))

    best_t = float(min(temps, key=lambda t: nll(t, fit)))
    report = {}
    for t in (1.0, best_t):
        tagger.temperature = t
        p = tagger.probabilities(pooled[~fit])
        report[f"T={t}"] = {"nll": nll(t, ~fit), "ece": ece(p, labels[~fit]),
                            "top1": float(np.mean(p.argmax(1) == labels[~fit]))}
    tagger.temperature = best_t
    results = {"model": args.model, "photos": len(paths), "temperature": best_t, "calibration_held_out": report,
               "tagger_top1_all": float(np.mean(tagger.probabilities(pooled).argmax(1) == labels)), "runs": {}}
    examples = {}
    settings = [("captioner alone", None)] + [(f"tags, bonus {b}, threshold {t}", (b, t))
                                              for b in args.bonus for t in args.threshold]
    for name, bonus in settings:
        if bonus is not None:
            tagger.bonus, tagger.threshold = bonus
        caps = caption_all(model, feats, objects=bonus is not None)
        named = [mentions(c.text, classes[y]) for c, y in zip(caps, labels)]
        results["runs"][name] = {"names_object_or_hypernym": float(np.mean(named)),
                                 "distinct_captions": len({c.text for c in caps})}
        examples[name] = [(os.path.basename(p), c.text) for p, c in zip(paths[:20], caps[:20])]
        print(f"{name}: names the object in {np.mean(named):.1%}", file=sys.stderr)
    results["examples_first_20"] = examples
    if args.flickr8k:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.metrics.caption_metrics import evaluate_captions

        refs = read_flickr8k_captions(os.path.join(args.flickr8k, "Flickr8k.token.txt"))
        with open(os.path.join(args.flickr8k, "Flickr_8k.devImages.txt"), encoding="utf-8") as f:
            names = [n.strip() for n in f if n.strip()][:args.dev_limit]
        dev = load_features(model, [os.path.join(args.flickr8k, "Images", n) for n in names])
        results["flickr8k_dev"] = {"images": len(names)}
        for name, bonus in settings:
            if bonus is not None:
                tagger.bonus, tagger.threshold = bonus
            caps = caption_all(model, dev, objects=bonus is not None)
            scores = evaluate_captions({n: refs[n] for n in names}, {n: c.text for n, c in zip(names, caps)})
            results["flickr8k_dev"][name] = {k: v for k, v in scores.items() if isinstance(v, (int, float, str))}
            print(f"{name}: dev {results['flickr8k_dev'][name]}", file=sys.stderr)
    results["seconds"] = round(time.time() - t0, 1)
    results["command"] = "python scripts/eval_open_world.py " + " ".join(argv or sys.argv[1:])
    write_json(args.output, results)
    print(json.dumps({k: v for k, v in results.items() if k != "examples_first_20"}, indent=1))


if __name__ == "__main__":
    main()
