#!/usr/bin/env python
"""Object questions to the photo VQA model, with and without the backbone's ImageNet head
(issue 38 item 4), side by side on the same photos.

    python scripts/experiments/eval_vqa_objects.py --model assets/models/photo_vqa.keras \\
        --imagenet ../shared/datasets/imagenet-sample --flickr8k ../shared/datasets/flickr8k \\
        --output assets/benchmarks/vqa_object_questions.json

* ImageNet sample (500 photos of 500 classes, never trained on): each photo is asked "what is
  this?"; an answer is right when it names the class or a specific hypernym of it
  (`captioner.metrics.object_naming`, as the open-world captioning figures), overall and by
  coarse group; the "don't know" answers are counted too.
* Flickr8k dev (the VQA model's own world; its make-qa dev questions never take this form): the
  same question about each of the first --dev-limit dev photos; an answer is right when a word of
  it is a noun of one of the photo's five reference captions (any word but the stop words).

Writes the figures, and every answer of the first 30 photos of each set, as JSON.
"""

import argparse
import csv
import glob
import json
import os
import sys
import time

STOP = frozenset("a an the of in on at is are and with to".split())


def ask_all(model, paths, question, objects, batch_size=32):
    from tqdm import tqdm

    out = []
    for start in tqdm(range(0, len(paths), batch_size), desc=f"ask ({'objects' if objects else 'classifier'})",
                      unit="batch", file=sys.stderr):
        chunk = paths[start:start + batch_size]
        out.extend(model.answer_batch(chunk, [question] * len(chunk), top_k=3, objects=objects))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="assets/models/photo_vqa.keras")
    p.add_argument("--imagenet", required=True)
    p.add_argument("--flickr8k", default=None)
    p.add_argument("--dev-limit", type=int, default=1000)
    p.add_argument("--question", default="what is this?")
    p.add_argument("--output", default="assets/benchmarks/vqa_object_questions.json")
    args = p.parse_args(argv)

    import captioner  # noqa: F401  registers the classes
    from captioner.io import write_json
    from captioner.metrics.object_naming import coarse_group, mentions
    from captioner.models.loading import load_model_file
    from captioner.models.vqa_model import VQAModel
    from captioner.tagging.object_tagger import imagenet_classes

    started = time.time()
    model = load_model_file(args.model, VQAModel, "a VQA model")
    classes = imagenet_classes()
    with open(os.path.join(args.imagenet, "classes.tsv"), encoding="utf-8") as f:
        index_of = {r["wnid"]: int(r["index"]) for r in csv.DictReader(f, delimiter="\t")}
    paths = sorted(glob.glob(os.path.join(args.imagenet, "images", "*.jpg")))
    labels = [index_of[os.path.basename(q).split("_")[0]] for q in paths]
    groups = [coarse_group(classes[y]) for y in labels]
    results = {"model": args.model, "question": args.question, "imagenet": {"photos": len(paths)}}
    for objects in (False, True):
        answers = ask_all(model, paths, args.question, objects)
        right = [a.known and mentions(a.answer, classes[y]) for a, y in zip(answers, labels)]
        results["imagenet"]["with objects" if objects else "classifier alone"] = {
            "names_object_or_hypernym": round(sum(right) / len(right), 4),
            "dont_know": round(sum(not a.known for a in answers) / len(answers), 4),
            "from_tag": sum(a.from_tag for a in answers),
            "by_group": {g: round(sum(r for r, gg in zip(right, groups) if gg == g) / groups.count(g), 3)
                         for g in sorted(set(groups))},
            "first_30": [(os.path.basename(q), a.display) for q, a in zip(paths[:30], answers[:30])]}
        print(f"ImageNet sample, {'with objects' if objects else 'classifier alone'}: names the object in "
              f"{sum(right) / len(right):.1%}", file=sys.stderr)
    if args.flickr8k:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.text import tokenize

        refs = read_flickr8k_captions(os.path.join(args.flickr8k, "Flickr8k.token.txt"))
        with open(os.path.join(args.flickr8k, "Flickr_8k.devImages.txt"), encoding="utf-8") as f:
            names = [n.strip() for n in f if n.strip()][:args.dev_limit]
        words = {n: {w for c in refs[n] for w in tokenize(c)} - STOP for n in names}
        dev_paths = [os.path.join(args.flickr8k, "Images", n) for n in names]
        results["flickr8k_dev"] = {"photos": len(names)}
        for objects in (False, True):
            answers = ask_all(model, dev_paths, args.question, objects)
            right = [a.known and bool(set(a.answer.split()) & words[n]) for a, n in zip(answers, names)]
            results["flickr8k_dev"]["with objects" if objects else "classifier alone"] = {
                "answer_in_references": round(sum(right) / len(right), 4),
                "dont_know": round(sum(not a.known for a in answers) / len(answers), 4),
                "from_tag": sum(a.from_tag for a in answers),
                "first_30": [(n, a.display) for n, a in zip(names[:30], answers[:30])]}
    results["seconds"] = round(time.time() - started, 1)
    results["command"] = "python scripts/experiments/eval_vqa_objects.py " + " ".join(argv or sys.argv[1:])
    write_json(args.output, results)
    print(json.dumps({k: ({kk: {x: y for x, y in vv.items() if x != "first_30"} if isinstance(vv, dict) else vv
                           for kk, vv in v.items()} if isinstance(v, dict) else v)
                      for k, v in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
