"""How captions of the ImageNet sample photos read: the rows `captioner caption` wrote for them.

    captioner caption ../shared/datasets/imagenet-sample/images --output imagenet.jsonl [--model M]
    python scripts/eval_imagenet_captions.py imagenet.jsonl [more.jsonl ...] [--output figures.json]

For each file: the share of captions that name the photo's class or a non-generic WordNet hypernym
of it (`captioner.metrics.object_naming.mentions`: "fish" for a tench), the share that are the
tagger's template ("a photo of a ..."), the mean length in words and the share of distinct
captions. The class of a photo is the wnid its file name starts with (`n01440764_tench.jpg`).
The photos are a test of generalization: never train or tune a captioner on them.
"""

import argparse
import json
import os
import sys

TEMPLATE = "a photo of "


def figures(rows, classes):
    from captioner.metrics.object_naming import mentions
    from captioner.text import tokenize

    captions = {os.path.basename(r["image"]): r["caption"] for r in rows if r.get("caption")}
    by_wnid = {c["wnid"]: c for c in classes}
    named = sum(mentions(text, by_wnid[name.split("_")[0]]) for name, text in captions.items())
    lengths = [len(tokenize(text)) for text in captions.values()]
    n = max(len(captions), 1)
    return {"photos": len(captions), "named": round(100.0 * named / n, 1),
            "template": round(100.0 * sum(t.lower().startswith(TEMPLATE) for t in captions.values()) / n, 1),
            "mean_length": round(sum(lengths) / n, 2),
            "distinct": round(100.0 * len(set(captions.values())) / n, 1)}


def main(argv=None):
    from captioner.io import write_json
    from captioner.tagging.object_tagger import imagenet_classes

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("captions", nargs="+", help="JSON-lines rows of `captioner caption` on the ImageNet sample")
    p.add_argument("--output", help="the figures as JSON")
    args = p.parse_args(argv)
    classes = imagenet_classes()
    report = {}
    for path in args.captions:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        report[os.path.basename(path)] = figures(rows, classes)
        print(path, json.dumps(report[os.path.basename(path)]))
    if args.output:
        write_json(args.output, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
