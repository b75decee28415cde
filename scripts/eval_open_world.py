"""Open-world captioning, side by side on the same features (issue 38): the bundled captioner
alone, and with object tags from its backbone's ImageNet head steering the one beam search,
either softly (a bonus on the tag's word: ``--search bonus``) or as hard, disjunctive
constraints (Anderson et al. 2017's constrained beam search: ``--search constrained``), then
the class names filled in.

    python scripts/eval_open_world.py --model assets/models/flickr8k_attention.keras \\
        --imagenet ../shared/datasets/imagenet-sample --flickr8k ../shared/datasets/flickr8k --dev-limit 300 \\
        --search bonus constrained --bonus 16 --threshold 0.5

* ImageNet sample (500 real photos, one per even class; never trained on): the share of
  captions that name the photo's class or a WordNet hypernym of it ("fish" for a tench; the
  generic hypernyms, "animal", "device", "food", do not count: `captioner.metrics.object_naming`),
  overall and by coarse group, and the tagger's own top-1. The softmax temperature is fitted
  (NLL) on the photos of classes 0, 4, 8, ... and its calibration (ECE, 15 bins) reported on the
  others.
* Flickr8k dev (first --dev-limit photos): BLEU-4 / METEOR / CIDEr, CHAIR (object words no
  reference names: ``captioner.metrics.hallucination``) and the mean caption length, so the
  tags do not cost the captioner its home ground.

``--cache DIR`` keeps the backbone features of both photo sets (one .npy each per model file).
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
    parser.add_argument("--search", nargs="+", default=["bonus"], choices=["bonus", "constrained"],
                        help="how tags steer: a bonus (each --bonus) or hard constraints (the bonus plays no part)")
    parser.add_argument("--max-constraints", type=int, default=2)
    parser.add_argument("--deadline", type=int, nargs="+", default=[0],
                        help="constrained: one tag's word within the first N words (0: anywhere); each is a run")
    parser.add_argument("--familiar", nargs="+", default=["model"], choices=["model", "on", "off"],
                        help="the familiar-photo test: as the model has it, on (the model's fitted threshold), off")
    parser.add_argument("--known", nargs="+", default=["on"], choices=["on", "off"],
                        help="the known classes: as fitted (on) or none (off: every confident tag may steer)")
    parser.add_argument("--describe", nargs="+", default=["model"], choices=["model", "sentence", "object"],
                        help="the tagger's describe setting: the decoder's sentence, or the object alone on unfamiliar "
                             "photos; several: each measured")
    parser.add_argument("--cache", default=None, help="a folder for the backbone features of both photo sets")
    parser.add_argument("--output", default="assets/benchmarks/open_world_captioning.json")
    args = parser.parse_args(argv)

    import keras

    import captioner  # noqa: F401
    from captioner.io import write_json
    from captioner.metrics.object_naming import coarse_group, mentions
    from captioner.tagging.object_tagger import imagenet_classes

    model = keras.models.load_model(args.model)
    classes = imagenet_classes()
    with open(os.path.join(args.imagenet, "classes.tsv"), encoding="utf-8") as f:
        index_of = {r["wnid"]: int(r["index"]) for r in csv.DictReader(f, delimiter="\t")}
    paths = sorted(glob.glob(os.path.join(args.imagenet, "images", "*.jpg")))
    labels = np.array([index_of[os.path.basename(p).split("_")[0]] for p in paths])
    t0 = time.time()

    def features(name, photo_paths):
        if not args.cache:
            return load_features(model, photo_paths)
        cached = os.path.join(args.cache, f"{os.path.basename(args.model)}.{name}.{len(photo_paths)}.npy")
        if not os.path.exists(cached):
            os.makedirs(args.cache, exist_ok=True)
            np.save(cached + ".tmp.npy", load_features(model, photo_paths))
            os.replace(cached + ".tmp.npy", cached)
        return np.load(cached)

    feats = features("imagenet", paths)
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
    settings = [("captioner alone", None)]
    for search in args.search:
        for t in args.threshold:
            if search == "constrained":
                settings += [(f"tags as constraints (at most {args.max_constraints}"
                              + (f", one within {d} words" if d else "") + f"), threshold {t}",
                              {"search": search, "threshold": t, "max_constraints": args.max_constraints, "deadline": d})
                             for d in args.deadline]
            else:
                settings += [(f"tags, bonus {b}, threshold {t}", {"search": search, "bonus": b, "threshold": t})
                             for b in args.bonus]
    fitted_known, fitted_familiar = tagger.known, tagger.familiar_threshold
    if "on" in args.familiar and fitted_familiar is None:
        parser.error(f"--familiar on: {args.model} has no familiar-photo test (captioner model fit-tagger fits one)")
    variants = []
    for familiar in args.familiar:
        for known in args.known:
            for describe in args.describe:
                suffix = ("" if familiar == "model" else f", familiar-photo test {familiar}") + \
                    ("" if known == "on" else ", no known classes") + \
                    ("" if describe == "model" else f", describe {describe}")
                variants.append((suffix, {"familiar_threshold": None if familiar == "off" else fitted_familiar,
                                          "known": fitted_known if known == "on" else frozenset(),
                                          **({} if describe == "model" else {"describe": describe})}))
    settings = settings[:1] + [(name + suffix, {**setting, **variant}) for name, setting in settings[1:]
                               for suffix, variant in variants]
    groups = np.array([coarse_group(classes[y]) for y in labels])
    for name, setting in settings:
        for key, value in (setting or {}).items():
            setattr(tagger, key, value)
        caps = caption_all(model, feats, objects=setting is not None)
        named = np.array([mentions(c.text, classes[y]) for c, y in zip(caps, labels)])
        results["runs"][name] = {"names_object_or_hypernym": float(np.mean(named)),
                                 "by_group": {g: {"photos": int((groups == g).sum()),
                                                  "named": round(float(named[groups == g].mean()), 3)}
                                              for g in sorted(set(groups))},
                                 "distinct_captions": len({c.text for c in caps}),
                                 "steered_captions": sum(any(o["steered"] for o in c.objects) for c in caps),
                                 "mean_words": round(float(np.mean([len(c.text.split()) for c in caps])), 2)}
        examples[name] = [(os.path.basename(p), c.text) for p, c in zip(paths[:20], caps[:20])]
        print(f"{name}: names the object in {np.mean(named):.1%}", file=sys.stderr)
    results["examples_first_20"] = examples
    if args.flickr8k:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.metrics.caption_metrics import evaluate_captions
        from captioner.metrics.hallucination import chair

        refs = read_flickr8k_captions(os.path.join(args.flickr8k, "Flickr8k.token.txt"))
        with open(os.path.join(args.flickr8k, "Flickr_8k.devImages.txt"), encoding="utf-8") as f:
            names = [n.strip() for n in f if n.strip()][:args.dev_limit]
        dev = features("flickr8k_dev", [os.path.join(args.flickr8k, "Images", n) for n in names])
        results["flickr8k_dev"] = {"images": len(names)}
        for name, setting in settings:
            for key, value in (setting or {}).items():
                setattr(tagger, key, value)
            caps = caption_all(model, dev, objects=setting is not None)
            texts = {n: c.text for n, c in zip(names, caps)}
            scores = evaluate_captions({n: refs[n] for n in names}, texts)
            results["flickr8k_dev"][name] = {k: v for k, v in scores.items() if isinstance(v, (int, float, str))}
            results["flickr8k_dev"][name]["chair"] = chair({n: refs[n] for n in names}, texts)
            results["flickr8k_dev"][name]["mean_words"] = round(float(np.mean([len(t.split()) for t in texts.values()])), 2)
            results["flickr8k_dev"][name]["steered_captions"] = sum(any(o["steered"] for o in c.objects) for c in caps)
            print(f"{name}: dev {results['flickr8k_dev'][name]}", file=sys.stderr)
    results["seconds"] = round(time.time() - t0, 1)
    results["command"] = "python scripts/eval_open_world.py " + " ".join(argv or sys.argv[1:])
    write_json(args.output, results)
    print(json.dumps({k: v for k, v in results.items() if k != "examples_first_20"}, indent=1))


if __name__ == "__main__":
    main()
