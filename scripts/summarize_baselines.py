"""The baselines a headline generator must beat, side by side on the dev split (issue 16).

For each dataset (BBC News: article -> headline; HuffPost News Category: short description
-> headline), on its fixed dev split:

* ``lead-N``: the first N whitespace words of the source. N is chosen on TRAIN, as the N of
  the best mean ROUGE-L F1 over N = 1..--max-n (ties: the smaller N); the whole train curve
  (ROUGE-1/2/L for every N) goes into the JSON.
* ``retrieval``: the headline of the nearest train source by tf-idf cosine (scikit-learn's
  TfidfVectorizer fitted on the train sources, its defaults: lower-case, words of 2+ word
  characters, smooth idf, l2 norm; the first train record wins a tie).
* ``oracle lead-N``: NOT a baseline, an upper reference that peeks at the reference: for each
  dev document the N in 1..--max-n of the best ROUGE-L F1 against its own headline.

ROUGE-1/2/L F1 from Google's rouge-score (default tokenizer, Porter stemmer on), corpus
figure = mean per-pair F1 x 100 (:mod:`captioner.metrics.rouge_f1`).

    PYTHONPATH=. python scripts/summarize_baselines.py \\
        --output assets/benchmarks/summarize_baselines.json

With ``--model M.keras`` (repeatable) each headline model (``captioner train summarize``) gets
its row beside the baselines, decoded on the same dev pairs in the same run (beam settings:
the model's, or ``--beam-size`` / ``--alpha`` / ``--no-repeat-ngram``).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from captioner.data.headlines import (
    HeadlinePair,
    load_bbc_headlines,
    split_bbc_headlines,
)
from captioner.data.news_category import load_news_category, split_news_category
from captioner.errors import InputError
from captioner.io import write_json
from captioner.metrics.rouge_f1 import (
    ROUGE_TYPES,
    RougeF1,
    corpus_rouge_f1,
    rouge_tool_description,
)

DATASETS = "../shared/datasets"
SELECT_BY = "rougeL"


def lead_words(text: str, n: int) -> str:
    """The first ``n`` whitespace-separated words of ``text``, joined by single spaces."""
    return " ".join(text.split()[:n])


def lead_n_curve(pairs, ns, scorer: RougeF1):
    """``(curve, per_doc)``: curve = {N: {type: mean F1 x 100}}; per_doc[i][N] = {type: F1}.

    Scores from cached rouge-score tokens (:meth:`RougeF1.score_tokens`), the same numbers as
    scoring each lead-N string (tested).
    """
    ns = sorted(set(ns))
    sums = {n: dict.fromkeys(scorer.rouge_types, 0.0) for n in ns}
    per_doc = []
    for pair in pairs:
        words = scorer.tokenize_words(pair.source)
        reference = scorer.tokenize(pair.target)
        doc = {}
        for n in ns:
            hypothesis = [tok for word in words[:n] for tok in word]
            doc[n] = scorer.score_tokens(reference, hypothesis)
            for t, f in doc[n].items():
                sums[n][t] += f
        per_doc.append(doc)
    curve = {n: {t: 100.0 * s / len(pairs) for t, s in sums[n].items()} for n in ns}
    return curve, per_doc


def choose_n(curve, by: str = SELECT_BY) -> int:
    """The N of the highest ``curve[N][by]``; the smallest such N on a tie."""
    return max(sorted(curve), key=lambda n: (curve[n][by], -n))


def nearest_train_indices(train_sources, queries):
    """``(indices, similarities)``: for each query, the train source of highest tf-idf cosine."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer()
    train_matrix = vectorizer.fit_transform(train_sources)  # (train, vocab), rows l2-normalised
    query_matrix = vectorizer.transform(queries)  # (queries, vocab)
    similarity = (query_matrix @ train_matrix.T).toarray()  # (queries, train): cosine
    indices = np.argmax(similarity, axis=1)  # first maximum: ties go to the earlier train record
    return indices.tolist(), similarity[np.arange(len(queries)), indices].tolist()


def retrieve_headlines(train, dev):
    """``(headlines, neighbour ids, similarities)``: the headline of each dev source's nearest train source."""
    indices, sims = nearest_train_indices([p.source for p in train], [p.source for p in dev])
    return [train[i].target for i in indices], [train[i].id for i in indices], sims


def oracle_lead(per_doc, by: str = SELECT_BY):
    """Per document, the N of its best ``by`` F1 (smallest N on a tie) and its scores."""
    picks = [max(sorted(doc), key=lambda n: (doc[n][by], -n)) for doc in per_doc]
    scores = {t: 100.0 * statistics.fmean(doc[n][t] for doc, n in zip(per_doc, picks)) for t in ROUGE_TYPES}
    return picks, scores


def dev_copies_in_train(train, dev) -> int:
    """How many dev pairs share a source or a headline (case and spacing ignored) with a train pair."""
    def norm(text):
        return " ".join(text.lower().split())
    seen = {("s", norm(p.source)) for p in train} | {("t", norm(p.target)) for p in train}
    return sum(("s", norm(p.source)) in seen or ("t", norm(p.target)) in seen for p in dev)


def _mean_words(texts):
    return round(statistics.fmean(len(t.split()) for t in texts), 2)


def model_headlines(path, dev, decoding):
    """(row name, headlines) of a saved headline model on the dev sources."""
    from captioner.models.seq2seq import load_translator

    model = load_translator(path)
    settings = {k: v for k, v in decoding.items() if v is not None}
    outs = model.translate([p.source for p in dev], **settings)
    beam = settings.get("beam_size", model.beam_size)
    ngram = settings.get("no_repeat_ngram", model.no_repeat_ngram)
    alpha = settings.get("alpha", model.alpha)
    name = f"model {Path(path).name} (beam {beam}, alpha {alpha:g}, no-repeat-{ngram}-gram)"
    return name, [o.text for o in outs]


def run_dataset(name, train, dev, max_n, notes=(), examples=3, models=(), decoding=None, dev_from=0):
    """All baselines of one dataset (and the rows of ``models``); returns its JSON-ready report.
    ``dev_from`` K > 0: every row again on the dev pairs from K on only (those a model trained
    with ``--dev-limit K`` never read for its model selection)."""
    if not train or not dev:
        raise InputError(f"{name}: empty train ({len(train)}) or dev ({len(dev)}) split")
    if not 0 <= dev_from < len(dev):
        raise InputError(f"{name}: --dev-from {dev_from} leaves no dev pair (dev has {len(dev)})")
    scorer = RougeF1(use_stemmer=True)
    started = time.perf_counter()
    ns = list(range(1, max_n + 1))
    train_curve, _ = lead_n_curve(train, ns, scorer)
    best_n = choose_n(train_curve)
    references = [p.target for p in dev]

    rows, tail_rows = {}, {}

    def add(row, outputs):
        rows[row] = corpus_rouge_f1(references, outputs).scores
        if dev_from:
            tail_rows[row] = corpus_rouge_f1(references[dev_from:], outputs[dev_from:]).scores

    lead = [lead_words(p.source, best_n) for p in dev]
    add(f"lead-{best_n} (N chosen on train)", lead)
    retrieved, neighbour_ids, sims = retrieve_headlines(train, dev)
    add("retrieval: nearest train headline (tf-idf)", retrieved)
    generated = {}
    for path in models:
        row, headlines = model_headlines(path, dev, decoding or {})
        add(row, headlines)
        generated[Path(path).name] = headlines
    dev_curve, dev_per_doc = lead_n_curve(dev, ns, scorer)
    picks, oracle_scores = oracle_lead(dev_per_doc)
    rows[f"ORACLE best lead-N per doc (N<={max_n}, sees the reference)"] = oracle_scores

    return {
        "task": "article -> headline" if name == "bbc-news" else "short description -> headline",
        "train": len(train),
        "dev": len(dev),
        "notes": list(notes),
        "dev_pairs_with_a_copy_in_train": dev_copies_in_train(train, dev),
        "mean_words": {"source": _mean_words(p.source for p in dev), "headline": _mean_words(references),
                       "lead": _mean_words(lead), "retrieval": _mean_words(retrieved)},
        "lead_n": {"selected_by": f"mean {SELECT_BY} F1 on train", "n": best_n,
                   "train_curve": {str(n): v for n, v in train_curve.items()},
                   "dev_curve": {str(n): v for n, v in dev_curve.items()}},
        "retrieval": {"vectorizer": "sklearn TfidfVectorizer() defaults, fitted on train sources",
                      "mean_cosine": round(statistics.fmean(sims), 4)},
        "oracle_lead_mean_n": round(statistics.fmean(picks), 2),
        "dev_rouge_f1": rows,
        **({f"dev_rouge_f1_from_{dev_from}": {"pairs": len(dev) - dev_from, "rows": tail_rows}} if dev_from else {}),
        "examples": [{"id": p.id, "reference": p.target, "lead": lead[i], "retrieved": retrieved[i],
                      "neighbour": neighbour_ids[i], **{m: h[i] for m, h in generated.items()}}
                     for i, p in enumerate(dev[:examples])],
        "seconds": round(time.perf_counter() - started, 1),
    }


def read_dev_list(path) -> set[str]:
    """Ids (``topic/NNN.txt``; ``topic/NNN`` is accepted) of a saved BBC dev list, one a line."""
    ids = set()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ids.add(line if line.endswith(".txt") else line + ".txt")
    if not ids:
        raise InputError(f"{path}: no ids")
    return ids


def split_by_list(pairs: list[HeadlinePair], dev_ids: set[str]):
    unknown = dev_ids - {p.id for p in pairs}
    if unknown:
        raise InputError(f"{len(unknown)} dev id(s) not in the corpus, e.g. {sorted(unknown)[:3]}")
    return [p for p in pairs if p.id not in dev_ids], [p for p in pairs if p.id in dev_ids]


def print_table(report):
    print(f"\nROUGE F1 x100 on dev ({report['metric']})")
    for name, ds in report["datasets"].items():
        print(f"\n{name}: {ds['task']}  (train {ds['train']}, dev {ds['dev']}; lead N = {ds['lead_n']['n']} "
              f"chosen by {ds['lead_n']['selected_by']})")
        print(f"  {'system':<72} {'R-1':>6} {'R-2':>6} {'R-L':>6}")
        for row, s in ds["dev_rouge_f1"].items():
            print(f"  {row:<72} {s['rouge1']:6.2f} {s['rouge2']:6.2f} {s['rougeL']:6.2f}")
        for key in (k for k in ds if k.startswith("dev_rouge_f1_from_")):
            print(f"  dev pairs {key.rsplit('_', 1)[1]}.. only ({ds[key]['pairs']}):")
            for row, s in ds[key]["rows"].items():
                print(f"  {row:<72} {s['rouge1']:6.2f} {s['rouge2']:6.2f} {s['rougeL']:6.2f}")
        curve = ds["lead_n"]["train_curve"]
        print("  train lead-N curve (R-L): " + " ".join(f"{n}:{v['rougeL']:.1f}" for n, v in curve.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--news-category", default=f"{DATASETS}/news-category/News_Category_Dataset_v3.json",
                        help="News Category JSON lines ('' to skip)")
    parser.add_argument("--bbc", default=f"{DATASETS}/bbc-news/bbc", help="BBC folder of <topic>/NNN.txt ('' to skip)")
    parser.add_argument("--bbc-dev-list", default="",
                        help="a saved BBC dev list (topic/NNN.txt a line) instead of the hash rule")
    parser.add_argument("--max-n", type=int, default=30, help="lead-N tries N = 1..max-n")
    parser.add_argument("--output", default="", help="write the report as JSON here")
    parser.add_argument("--model", action="append", default=[], help="a headline model (.keras) to score beside them")
    parser.add_argument("--beam-size", type=int, default=None, help="models: beam width (default: each model's)")
    parser.add_argument("--alpha", type=float, default=None, help="models: length penalty (default: each model's)")
    parser.add_argument("--no-repeat-ngram", type=int, default=None, help="models: n-gram blocking (default: the model's)")
    parser.add_argument("--examples", type=int, default=3, help="dev examples in the JSON")
    parser.add_argument("--dev-from", type=int, default=0, metavar="K", help=(
        "also score every row on the dev pairs from K on: those that a model trained with --dev-limit K did not "
        "read for its model selection (0: off)"))
    args = parser.parse_args(argv)
    decoding = {"beam_size": args.beam_size, "alpha": args.alpha, "no_repeat_ngram": args.no_repeat_ngram}
    if args.max_n < 1:
        parser.error("--max-n must be >= 1")

    report = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv if argv is not None else sys.argv[1:])]),
              "metric": rouge_tool_description(True), "python": platform.python_version(), "datasets": {}}
    if args.bbc:
        corpus = load_bbc_headlines(args.bbc)
        if args.bbc_dev_list:
            train, dev = split_by_list(corpus.pairs, read_dev_list(args.bbc_dev_list))
            rule = f"dev = the ids listed in {args.bbc_dev_list}"
        else:
            train, dev = split_bbc_headlines(corpus.pairs)
            rule = ("dev = md5('bbc-news' NUL group) in the first 10%, group = smallest topic/NNN.txt among "
                    "files sharing an article or a headline (captioner.data.headlines)")
        report["datasets"]["bbc-news"] = run_dataset("bbc-news", train, dev, args.max_n,
                                                     [corpus.summary(), rule], args.examples, args.model, decoding,
                                                     args.dev_from)
    if args.news_category:
        corpus = load_news_category(args.news_category)
        train, dev = split_news_category(corpus.pairs)
        rule = ("dev = md5('news-category' NUL group) in the first 10%, group = smallest link among records "
                "sharing a link, a description or a headline (captioner.data.news_category)")
        report["datasets"]["news-category"] = run_dataset("news-category", train, dev, args.max_n,
                                                          [corpus.summary(), rule], args.examples, args.model,
                                                          decoding, args.dev_from)
    print_table(report)
    if args.output:
        write_json(args.output, report)
        print(f"\nwrote {args.output}")
    return report


if __name__ == "__main__":
    main()
