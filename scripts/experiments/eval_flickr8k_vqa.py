#!/usr/bin/env python
"""Photo VQA on Flickr8k dev photos, measured side by side (issue 22, part 3).

    python scripts/experiments/eval_flickr8k_vqa.py \\
        --model attention=assets/models/flickr8k_vqa.keras \\
        --model baseline=/work/data/vqa/flickr8k_vqa_baseline.keras \\
        --model blind=/work/data/vqa/flickr8k_vqa_blind.keras \\
        --train-qa /work/data/vqa/train_qa.jsonl --dev-qa /work/data/vqa/dev_qa.jsonl \\
        --features /work/data/flickr8k_lite2.h5

Every model is a saved VQAModel (`captioner train vqa`); its trained head runs on the cached
backbone features of the dev photos (the same numbers the whole model computes from pixels,
without running the CNN again). Beside them, the "most common answer per question type"
baseline fitted on the train rows. For each: exact-match accuracy and WUPS at 0.9 and 0.0
(`captioner.metrics.wups`), overall and per question type (object, number, color, location,
yesno), in percent. For the models that carry a "don't know" rule (``min_probability``,
``question_starts``), how many dev questions they answer and how many of those are right,
the reliability bins of top probability and the coverage / accuracy curve.

Output: JSON (``--output``, default assets/benchmarks/flickr8k_vqa.json) and a PNG of the
per-type accuracies and the coverage curve (``--figure``).
"""

import argparse
import os
import sys
import time


TYPES = ("object", "number", "color", "location", "yesno")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                   help="a saved VQAModel to score (repeat); NAME labels it in the output")
    p.add_argument("--train-qa", required=True, help="make-qa rows of the train photos (for the prior baseline)")
    p.add_argument("--dev-qa", required=True, help="make-qa rows of the dev photos")
    p.add_argument("--features", required=True, help="HDF5 feature store holding the dev photos")
    p.add_argument("--output", default="assets/benchmarks/flickr8k_vqa.json")
    p.add_argument("--figure", default="assets/models/flickr8k_vqa_by_type.png")
    p.add_argument("--no-wups", action="store_true", help="skip WUPS (no WordNet)")
    p.add_argument("--card", help="also write the summary into this model card's extra.evaluation "
                                  "(e.g. assets/models/flickr8k_vqa.json)")
    return p.parse_args(argv)


def model_predictions(model, dataset, features):
    """(answers, top probabilities, known flags) of a VQAModel on every question of `dataset`."""
    import numpy as np
    from tqdm.auto import tqdm

    from captioner.training.vqa_data import FeatureSource, QuestionExamples, predict

    examples = QuestionExamples.build(dataset, model.vocabulary, {a: i for i, a in enumerate(model.answers)},
                                      model.max_question_length)
    source = FeatureSource(features, examples.image_ids, model.feature)
    try:
        probs, _ = predict(model.classifier, examples, source)
    finally:
        source.close()
    top = probs.argmax(-1)
    answers = [model.answers[k] for k in top]
    p = probs.max(-1)
    known = np.array([not model.dont_know_reason(q.question, float(pk))
                      for q, pk in tqdm(list(zip(dataset.questions, p)), desc="don't-know rule", unit="q",
                                        leave=False)])
    return answers, p, known


def evaluate(args):
    import keras
    import numpy as np

    import captioner  # noqa: F401  (registers the layers)
    from captioner.data.qa_jsonl import read_qa_jsonl
    from captioner.metrics.confidence import answered_table, reliability_bins
    from captioner.metrics.qa_scores import most_common_per_type, predict_most_common, scores_by_type
    from captioner.metrics.wups import WordNetSimilarity

    train = read_qa_jsonl(args.train_qa, split="train")
    dev = read_qa_jsonl(args.dev_qa, split="dev")
    truths = [q.answer for q in dev.questions]
    types = [q.answer_type for q in dev.questions]
    similarity = None if args.no_wups else WordNetSimilarity()
    table = most_common_per_type([q.answer_type for q in train.questions], [q.answer for q in train.questions])
    out = {"split": "Flickr8k dev photos (make-qa rows of Flickr_8k.devImages.txt)", "dev_questions": len(dev),
           "dev_images": len(dev.image_ids), "train_questions": len(train), "features": args.features,
           "dev_per_type": {t: types.count(t) for t in TYPES if t in types},
           "models": {}}
    out["models"]["most_common_per_type"] = {
        "answers": {k: v for k, v in table.items() if k != "*"},
        **scores_by_type(predict_most_common(table, types), truths, types, similarity)}
    for spec in args.model:
        name, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"--model wants NAME=PATH, got {spec!r}")
        t0 = time.perf_counter()
        model = keras.models.load_model(path)
        answers, top_p, known = model_predictions(model, dev, args.features)
        correct = np.array([a == t for a, t in zip(answers, truths)])
        entry = {"path": path, "file_mb": round(os.path.getsize(path) / 2**20, 1), "kind": model.classifier.kind,
                 "head_parameters": int(model.classifier.count_params()),
                 "backbone_parameters": int(model.backbone.count_params()),
                 **scores_by_type(answers, truths, types, similarity)}
        rule_known = np.array(known)
        entry["dont_know"] = {
            "min_probability": model.min_probability, "question_starts": model.question_starts,
            "answered": float(rule_known.mean()),
            "accuracy_answered": float(correct[rule_known].mean() * 100) if rule_known.any() else None,
            "answered_by_type": {t: float(rule_known[[k == t for k in types]].mean()) for t in TYPES if t in types},
            "reliability_bins": [{"low": lo, "high": hi, "questions": n, "accuracy": acc}
                                 for lo, hi, n, acc in reliability_bins(top_p, correct)],
            "coverage_curve": answered_table(top_p, correct, [k / 20 for k in range(20)]),
        }
        entry["seconds"] = round(time.perf_counter() - t0, 1)
        out["models"][name] = entry
        print(f"{name}: accuracy {entry['overall']['accuracy']:.2f}%", file=sys.stderr)
    if "attention" in out["models"] and "blind" in out["models"]:
        a, b = out["models"]["attention"], out["models"]["blind"]
        out["attention_minus_blind"] = {
            "overall": a["overall"]["accuracy"] - b["overall"]["accuracy"],
            **{t: a["by_type"][t]["accuracy"] - b["by_type"][t]["accuracy"] for t in TYPES if t in a["by_type"]}}
    return out


def plot(out, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from captioner.io import atomic_path

    names = list(out["models"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [2.2, 1]})
    groups = ["overall", *[t for t in TYPES if t in out["dev_per_type"]]]
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        m = out["models"][name]
        vals = [m["overall"]["accuracy"] if g == "overall" else m["by_type"][g]["accuracy"] for g in groups]
        xs = np.arange(len(groups)) + (i - (len(names) - 1) / 2) * width
        ax.bar(xs, vals, width, label=name)
        for x, v in zip(xs, vals):
            ax.text(x, v + 0.8, f"{v:.0f}", ha="center", fontsize=7)
    ax.set_xticks(np.arange(len(groups)))
    ax.set_xticklabels([g if g == "overall" else f"{g}\n({out['dev_per_type'][g]})" for g in groups])
    ax.set_ylabel("dev accuracy (%)")
    ax.set_title(f"Flickr8k dev photos, {out['dev_questions']} make-qa questions")
    ax.legend(fontsize=8)
    for name in names:
        dk = out["models"][name].get("dont_know")
        if not dk:
            continue
        curve = dk["coverage_curve"]
        ax2.plot([100 * r["answered"] for r in curve], [100 * (r["accuracy_answered"] or 0) for r in curve],
                 marker=".", label=name)
        ax2.plot([100 * dk["answered"]], [dk["accuracy_answered"] or 0], "k*", markersize=10)
    ax2.set_xlabel("dev questions answered (%)")
    ax2.set_ylabel("accuracy of the answered (%)")
    ax2.set_title("threshold on top probability (* = the rule)")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path, ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def summary(out):
    """Accuracy / WUPS per model and type, the margin over blind, the rule's coverage: for the card."""
    rows = {}
    for name, m in out["models"].items():
        rows[name] = {"overall": {k: round(v, 2) for k, v in m["overall"].items() if k != "questions"},
                      "accuracy_by_type": {t: round(v["accuracy"], 2) for t, v in m["by_type"].items()}}
        for key in ("file_mb", "head_parameters", "backbone_parameters"):
            if key in m:
                rows[name][key] = m[key]
        if "dont_know" in m:
            rows[name]["dont_know"] = {"min_probability": m["dont_know"]["min_probability"],
                                       "answered": round(m["dont_know"]["answered"], 4),
                                       "accuracy_answered": round(m["dont_know"]["accuracy_answered"] or 0, 2)}
    return {"split": out["split"], "questions": out["dev_questions"], "per_type_questions": out["dev_per_type"],
            "models": rows, "attention_minus_blind": {k: round(v, 2) for k, v in
                                                      out.get("attention_minus_blind", {}).items()}}


def write_card(args, out):
    from captioner.model_card import ModelCard

    card = ModelCard.load(args.card)
    card.extra["evaluation"] = {
        "command": "python scripts/experiments/eval_flickr8k_vqa.py " + " ".join(
            f"--model {m}" for m in args.model) + f" --train-qa {args.train_qa} --dev-qa {args.dev_qa} "
            f"--features {args.features} --output {args.output} --figure {args.figure} --card {args.card}",
        "figure": args.figure, "full_results": args.output, **summary(out)}
    card.save(args.card)


def main(argv=None):
    from captioner.io import write_json

    args = parse_args(argv)
    out = evaluate(args)
    write_json(args.output, out)
    if args.figure:
        plot(out, args.figure)
    if args.card:
        write_card(args, out)
    for name, m in out["models"].items():
        row = "  ".join(f"{t} {m['by_type'][t]['accuracy']:.1f}" for t in TYPES if t in m["by_type"])
        wups = "" if "wups_0.9" not in m["overall"] else \
            f"  WUPS@0.9 {m['overall']['wups_0.9']:.1f}  WUPS@0.0 {m['overall']['wups_0.0']:.1f}"
        print(f"{name:22s} overall {m['overall']['accuracy']:.1f}{wups}  |  {row}")
    print(f"-> {args.output}" + (f", {args.figure}" if args.figure else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
