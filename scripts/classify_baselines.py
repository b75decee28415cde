#!/usr/bin/env python
"""What a user would pick instead of a hierarchical attention network, on the saved dev splits:
tf-idf + a linear SVM and multinomial naive Bayes, side by side in one run.

    python scripts/classify_baselines.py                         # both corpora, ../shared/datasets
    python scripts/classify_baselines.py --dataset newsgroups --data-dir ~/20news-bydate
    python scripts/classify_baselines.py --dataset bbc --data-dir ~/bbc --output /tmp/bbc.json
    python scripts/classify_baselines.py --dataset newsgroups --han-model assets/models/newsgroups_han.keras

Every model reads the documents through the project's readers (`captioner.data.newsgroups`,
`captioner.data.bbc_news`) with their default ``keep`` (20 Newsgroups: Subject + the author's own
text, no other headers, quotes or signature; BBC: headline + article), trains on the train split
(the train folder minus the dev list) and is scored on the dev split (the bundled one, or
``--dev-list``; 20 Newsgroups: the latest 10% of each group by article number, BBC: a
hash-chosen 10% of each topic; see scripts/make_dev_splits.py):

* ``svm``: ``TfidfVectorizer(sublinear_tf=True, min_df=2)`` + ``LinearSVC()``, scikit-learn
  defaults otherwise (C=1). On the official 20 Newsgroups bydate test split, with the raw posts,
  this scores about 86% (../shared/datasets/README.md).
* ``naive_bayes``: ``MultinomialNB`` on the same tf-idf features; its smoothing ``alpha`` is
  chosen from ``ALPHAS`` by accuracy on a 10% slice of train (carved like the dev split, another
  salt), never on dev, then refit on all of train.
* ``majority``: the most frequent train label, for scale.
* ``han`` (with ``--han-model``): a hierarchical attention network trained by
  ``captioner train classify`` on the same train split, scored on the same dev documents as
  read by the same reader (its own training and dev selection are in its card).

Then the reader's choices are measured: the same SVM on the same posts with headers, quotes
and signature kept or removed (header leakage: From / Organization lines name the site and the
author, which give away the group).

Accuracy and macro-F1 (scikit-learn), fit seconds (vectorizer + classifier on train) and
predict seconds (vectorize + predict dev) are printed as a table and written as JSON
(``--output``, default ``assets/benchmarks/classify_baselines.json``).
"""

import argparse
import os
import platform
import sys
import time


DEFAULT_DIRS = {"newsgroups": "../shared/datasets/20newsgroups/20news-bydate-train",
                "bbc": "../shared/datasets/bbc-news/bbc"}
ALPHAS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
# (name, keep) variants of the reader, most kept first; the reader's default is marked in the table
NEWSGROUPS_VARIANTS = (
    ("raw post: all headers, subject, body, quotes, signature", ("headers", "body", "quotes", "signature")),
    ("no headers: subject, body, quotes, signature", ("subject", "body", "quotes", "signature")),
    ("subject, body, quotes", ("subject", "body", "quotes")),
    ("subject, body (reader default)", ("subject", "body")),
    ("body only", ("body",)),
)
BBC_VARIANTS = (
    ("headline, body (reader default)", ("headline", "body")),
    ("body only", ("body",)),
)


def _vectorizer():
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, min_df=2)


def _scores(y_true, y_pred):
    from sklearn.metrics import accuracy_score, f1_score

    return {"accuracy": float(accuracy_score(y_true, y_pred)),
            "macro_f1": float(f1_score(y_true, y_pred, average="macro", zero_division=0))}


def fit_svm(train_texts, train_labels, dev_texts, dev_labels):
    """tf-idf + LinearSVC: scores and timings on dev."""
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    vec = _vectorizer()
    x_train = vec.fit_transform(train_texts)
    clf = LinearSVC().fit(x_train, train_labels)
    t1 = time.perf_counter()
    pred = clf.predict(vec.transform(dev_texts))
    t2 = time.perf_counter()
    return {**_scores(dev_labels, pred), "fit_s": round(t1 - t0, 3), "predict_s": round(t2 - t1, 3),
            "features": len(vec.vocabulary_)}


def choose_alpha(train_ids, train_texts, train_labels, alphas=ALPHAS):
    """``(alpha, {alpha: slice accuracy})``: MultinomialNB fit on 90% of train, scored on the
    other 10% (per label, by hash of the id: `make_dev_split` with another salt)."""
    from sklearn.metrics import accuracy_score
    from sklearn.naive_bayes import MultinomialNB

    from captioner.data.documents import make_dev_split

    held = set(make_dev_split(train_ids, train_labels, 0.1, salt="captioner-nb-alpha-v1"))
    fit_idx = [i for i, d in enumerate(train_ids) if d not in held]
    val_idx = [i for i, d in enumerate(train_ids) if d in held]
    vec = _vectorizer()
    x_fit = vec.fit_transform([train_texts[i] for i in fit_idx])
    x_val = vec.transform([train_texts[i] for i in val_idx])
    y_fit = [train_labels[i] for i in fit_idx]
    y_val = [train_labels[i] for i in val_idx]
    accuracy = {a: float(accuracy_score(y_val, MultinomialNB(alpha=a).fit(x_fit, y_fit).predict(x_val)))
                for a in alphas}
    best = max(alphas, key=lambda a: (accuracy[a], a))   # ties: the smoother model
    return best, accuracy


def fit_naive_bayes(train_ids, train_texts, train_labels, dev_texts, dev_labels, alphas=ALPHAS):
    """Multinomial NB on tf-idf, alpha chosen on a slice of train: scores and timings on dev."""
    from sklearn.naive_bayes import MultinomialNB

    t0 = time.perf_counter()
    alpha, slice_accuracy = choose_alpha(train_ids, train_texts, train_labels, alphas)
    t1 = time.perf_counter()
    vec = _vectorizer()
    clf = MultinomialNB(alpha=alpha).fit(vec.fit_transform(train_texts), train_labels)
    t2 = time.perf_counter()
    pred = clf.predict(vec.transform(dev_texts))
    t3 = time.perf_counter()
    return {**_scores(dev_labels, pred), "fit_s": round(t2 - t1, 3), "predict_s": round(t3 - t2, 3),
            "alpha": alpha, "alpha_select_s": round(t1 - t0, 3),
            "alpha_slice_accuracy": {str(a): round(v, 4) for a, v in slice_accuracy.items()}}


def fit_majority(train_labels, dev_labels):
    from collections import Counter

    t0 = time.perf_counter()
    label = Counter(train_labels).most_common(1)[0][0]
    t1 = time.perf_counter()
    return {**_scores(dev_labels, [label] * len(dev_labels)), "fit_s": round(t1 - t0, 3), "predict_s": 0.0,
            "label": label}


def evaluate_baselines(train_docs, dev_docs, alphas=ALPHAS):
    """The three models on ``Document`` lists (their ``text`` and ``label``)."""
    ids = [d.doc_id for d in train_docs]
    x_train, y_train = [d.text for d in train_docs], [d.label for d in train_docs]
    x_dev, y_dev = [d.text for d in dev_docs], [d.label for d in dev_docs]
    return {"svm": fit_svm(x_train, y_train, x_dev, y_dev),
            "naive_bayes": fit_naive_bayes(ids, x_train, y_train, x_dev, y_dev, alphas),
            "majority": fit_majority(y_train, y_dev)}


def evaluate_han(model_path, dev_docs):
    """A saved DocumentClassifier on ``Document`` dev docs: scores and predict seconds."""
    from captioner.models.document_classifier import load_document_classifier

    model = load_document_classifier(model_path)
    unknown = sorted({d.label for d in dev_docs} - set(model.labels))
    if unknown:
        from captioner.errors import InputError

        raise InputError(f"{model_path}: knows no label {unknown[0]!r} of the dev documents (another corpus?)")
    t0 = time.perf_counter()
    results = model.classify([d.text for d in dev_docs])
    t1 = time.perf_counter()
    return {**_scores([d.label for d in dev_docs], [r.label for r in results]), "fit_s": None,
            "predict_s": round(t1 - t0, 3), "model": str(model_path),
            "config": {k: v for k, v in model.get_config().items() if k not in ("vocabulary", "labels", "name", "shared",
                                                                                  "trainable", "dtype")},
            "vocabulary": len(model.vocabulary)}


def _load(dataset, data_dir, split, keep, dev_list):
    if dataset == "newsgroups":
        from captioner.data.newsgroups import load_newsgroups

        return load_newsgroups(data_dir, split, keep=keep, dev_list=dev_list)
    from captioner.data.bbc_news import load_bbc_news

    return load_bbc_news(data_dir, split, keep=keep, dev_list=dev_list)


def run_dataset(dataset, data_dir, dev_list=None, alphas=ALPHAS, variants=None, han_model=None):
    """Everything the script measures for one corpus, as a JSON-ready dict."""
    if variants is None:
        variants = NEWSGROUPS_VARIANTS if dataset == "newsgroups" else BBC_VARIANTS
    default_keep = next(keep for name, keep in variants if "default" in name)
    t0 = time.perf_counter()
    train = _load(dataset, data_dir, "train", default_keep, dev_list)
    dev = _load(dataset, data_dir, "dev", default_keep, dev_list)
    read_s = time.perf_counter() - t0
    out = {"data_dir": str(data_dir), "dev_list": str(dev_list) if dev_list else "bundled",
           "n_train": len(train), "n_dev": len(dev), "labels": sorted({d.label for d in train}),
           "read_s": round(read_s, 3), "keep": list(default_keep),
           "latin1_documents": sum(d.encoding == "latin-1" for d in train + dev),
           "models": evaluate_baselines(train, dev, alphas), "svm_by_reader_keep": []}
    if han_model:
        out["models"]["han"] = evaluate_han(han_model, dev)
    for name, keep in variants:
        if keep == default_keep:
            scores = out["models"]["svm"]
        else:
            tr, dv = (_load(dataset, data_dir, s, keep, dev_list) for s in ("train", "dev"))
            scores = fit_svm([d.text for d in tr], [d.label for d in tr], [d.text for d in dv], [d.label for d in dv])
        out["svm_by_reader_keep"].append({"variant": name, "keep": list(keep), **scores})
    return out


def format_table(dataset, result) -> str:
    rows = [(f"{dataset}: train {result['n_train']}, dev {result['n_dev']} ({len(result['labels'])} labels), "
             f"reader keep={tuple(result['keep'])}"),
            f"  {'model':<44} {'accuracy':>8} {'macro-F1':>8} {'fit s':>7} {'pred s':>7}"]
    names = {"svm": "tf-idf + LinearSVC", "naive_bayes": "tf-idf + MultinomialNB (alpha={alpha})",
             "majority": "majority class ({label})", "han": "HAN (hierarchical attention network)"}
    for key, m in result["models"].items():
        fit = "" if m["fit_s"] is None else f"{m['fit_s']:.2f}"  # HAN: trained apart (its card says how)
        rows.append(f"  {names[key].format(**m):<44} {m['accuracy']:>8.4f} {m['macro_f1']:>8.4f} "
                    f"{fit:>7} {m['predict_s']:>7.2f}")
    rows.append("  the same SVM, by what the reader keeps:")
    for v in result["svm_by_reader_keep"]:
        rows.append(f"    {v['variant'][:54]:<54} {v['accuracy']:>8.4f} {v['macro_f1']:>8.4f}")
    return "\n".join(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", choices=("newsgroups", "bbc", "all"), default="all")
    p.add_argument("--data-dir", help="the corpus folder (only with one --dataset; default: "
                   + ", ".join(f"{k}: {v}" for k, v in DEFAULT_DIRS.items()) + ")")
    p.add_argument("--dev-list", help="the dev split list (default: the one bundled for the dataset)")
    p.add_argument("--han-model", help="also score this HAN model (captioner train classify) on the same dev "
                   "documents (only with one --dataset)")
    p.add_argument("--output", default="assets/benchmarks/classify_baselines.json")
    args = p.parse_args(argv)
    datasets = ("newsgroups", "bbc") if args.dataset == "all" else (args.dataset,)
    if (args.data_dir or args.dev_list or args.han_model) and len(datasets) > 1:
        p.error("--data-dir, --dev-list and --han-model need one --dataset (newsgroups or bbc)")

    import sklearn

    from captioner.errors import InputError
    from captioner.io import write_json

    results = {}
    try:
        for dataset in datasets:
            results[dataset] = run_dataset(dataset, args.data_dir or DEFAULT_DIRS[dataset], args.dev_list,
                                           han_model=args.han_model)
            print(format_table(dataset, results[dataset]), flush=True)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report = {"results": results,
              "command": " ".join(["python scripts/classify_baselines.py",
                                   *(argv if argv is not None else sys.argv[1:])]),
              "reference": "20 Newsgroups bydate TEST split, raw posts (../shared/datasets/README.md): "
                           "tf-idf + LinearSVC 86.1% accuracy, multinomial naive Bayes 83.3%",
              "versions": {"scikit-learn": sklearn.__version__, "python": platform.python_version()},
              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
              "date": time.strftime("%Y-%m-%d")}
    write_json(args.output, report)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
