#!/usr/bin/env python
"""Does an ensemble of HANs trained with other seeds beat one HAN on 20 Newsgroups dev (issue 42)?

    python scripts/experiments/ensemble_hans.py assets/models/newsgroups_han.keras \
        runs/han_s2/m.keras runs/han_s3/m.keras --output assets/benchmarks/han_seed_ensembles.json

Each member classifies the dev posts once; every combination of two or more members is then
scored with the rule a `DocumentEnsemble` uses (`captioner.decoding.ensemble.combine_log_probs`:
the mixture, their mean probability, and the product, their normalized geometric mean), and the
ensemble of all members is built, classified with and checked against that rule, so the figures
are those of the file `captioner model ensemble` would write. Accuracy and macro-F1 in percent.
"""

import argparse
import itertools
import os

import numpy as np


def scores(gold, predicted):
    from sklearn.metrics import accuracy_score, f1_score

    return {"accuracy": round(100 * float(accuracy_score(gold, predicted)), 2),
            "macro_f1": round(100 * float(f1_score(gold, predicted, average="macro", zero_division=0)), 2)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("members", nargs="+", help="two or more document classifier .keras files (one reading)")
    p.add_argument("--data-dir", default="../shared/datasets/20newsgroups/20news-bydate-train")
    p.add_argument("--dev-list", help="the dev split list (default: the bundled one)")
    p.add_argument("--output", help="write the figures here (JSON)")
    args = p.parse_args(argv)

    import tensorflow as tf

    from captioner.data.newsgroups import load_newsgroups
    from captioner.decoding.ensemble import combine_log_probs
    from captioner.io import write_json
    from captioner.models.document_classifier import DocumentEnsemble, load_document_classifier

    docs = load_newsgroups(args.data_dir, "dev", dev_list=args.dev_list)
    texts = [d.text for d in docs]
    models = [load_document_classifier(path) for path in args.members]
    labels = models[0].labels
    gold = np.array([labels.index(d.label) for d in docs])
    log_probs = []
    rows = {"members": {}, "ensembles": []}
    for path, model in zip(args.members, models):
        probs = np.array([[r.probabilities[k] for k in labels] for r in model.classify(texts)])
        log_probs.append(np.log(np.maximum(probs, 1e-30)))
        rows["members"][path] = scores(gold, probs.argmax(1))
        print(f"{path}: {rows['members'][path]}")
    for k in range(2, len(models) + 1):
        for combo in itertools.combinations(range(len(models)), k):
            row = {"members": [args.members[i] for i in combo]}
            for combine in ("mixture", "product"):
                mixed = combine_log_probs(tf.constant(np.stack([log_probs[i] for i in combo])), combine).numpy()
                row[combine] = scores(gold, mixed.argmax(1))
            rows["ensembles"].append(row)
            print(f"{' + '.join(row['members'])}: mixture {row['mixture']}, product {row['product']}")
    ensemble = DocumentEnsemble(models)  # the whole set, as the joined file classifies
    whole = np.array([labels.index(r.label) for r in ensemble.classify(texts)])
    rows["check"] = {"all members, DocumentEnsemble (mixture)": scores(gold, whole)}
    assert rows["check"]["all members, DocumentEnsemble (mixture)"] == rows["ensembles"][-1]["mixture"], rows
    rows["documents"] = len(docs)
    rows["command"] = "python scripts/experiments/ensemble_hans.py " + " ".join(args.members) + (
        f" --data-dir {args.data_dir}" + (f" --dev-list {args.dev_list}" if args.dev_list else ""))
    rows["data"] = {"data_dir": args.data_dir, "dev_list": args.dev_list or "bundled"}
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        write_json(args.output, rows)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
