#!/usr/bin/env python
"""What separates the HAN's tf-idf branch from a tf-idf SVM on 20 Newsgroups: the same LinearSVC
(scikit-learn defaults, sublinear tf) fitted on each view of the same posts, on the saved dev split.

    python scripts/newsgroups_views.py          # -> assets/benchmarks/newsgroups_views.json

Views, from what the SVM baseline reads to what the HAN's branch read before --tfidf-terms:

* scikit-learn's default analyzer over the whole text (lower-cased words of 2+ word characters),
  min_df 2: the baseline of scripts/classify_baselines.py;
* the same terms, each document's first 512 distinct ones (what ``--tfidf-terms`` reads: its
  ``tfidf_max_terms``, one fixed-width input);
* words and word pairs (``ngram_range=(1, 2)``) over the whole text at min_df 2 and 3, and at
  min_df 3 each document's first 1,024 distinct terms (``--tfidf-ngrams 2 --tfidf-min-df 3
  --tfidf-max-terms 1024``);
* the HAN's words (`captioner.data.documents.to_hierarchy`: Treebank tokens, lower-cased,
  punctuation and 1-character words kept) over the whole text, in the HAN's vocabulary (words seen
  twice or more, 40,000 at most, as `captioner train classify` builds it);
* the HAN's words of only the sentences the HAN reads (30 sentences of 40 words, long ones split),
  and of 60: what the branch read with ``--tfidf`` alone.
"""

import argparse
import collections
import platform
import time

DATA = "../shared/datasets/20newsgroups/20news-bydate-train"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=DATA)
    p.add_argument("--output", default="assets/benchmarks/newsgroups_views.json")
    args = p.parse_args(argv)

    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    from captioner.data.documents import to_hierarchy
    from captioner.data.newsgroups import load_newsgroups
    from captioner.io import write_json
    from captioner.models.document_classifier import text_terms

    train, dev = load_newsgroups(args.data_dir, "train"), load_newsgroups(args.data_dir, "dev")
    y_train, y_dev = [d.label for d in train], np.array([d.label for d in dev])

    def svm(train_docs, dev_docs, **vectorizer):
        started = time.perf_counter()
        v = TfidfVectorizer(sublinear_tf=True, **vectorizer)
        x = v.fit_transform(train_docs)
        accuracy = float(np.mean(LinearSVC().fit(x, y_train).predict(v.transform(dev_docs)) == y_dev))
        return {"dev_accuracy": round(100 * accuracy, 2), "features": x.shape[1],
                "seconds": round(time.perf_counter() - started, 1)}

    tokens = dict(tokenizer=str.split, token_pattern=None, lowercase=False)  # documents given as words
    sk = TfidfVectorizer(min_df=2).fit([d.text for d in train])
    kept = set(sk.vocabulary_)

    def first_terms(text, cap=512, kept=kept, ngrams=1):
        """The text's first `cap` distinct kept terms, as one term per token ("\u2581" joins a pair: not a word character)."""
        terms = text_terms(text, ngrams)
        keep = set(list(dict.fromkeys(t for t in terms if t in kept))[:cap])
        return " ".join(t.replace(" ", "\u2581") for t in terms if t in keep)

    pairs = TfidfVectorizer(min_df=3, ngram_range=(1, 2)).fit([d.text for d in train])
    kept_pairs = set(pairs.vocabulary_)

    rows = {"scikit-learn terms, whole text, min_df 2 (the SVM baseline)":
            svm([d.text for d in train], [d.text for d in dev], min_df=2),
            "scikit-learn terms, first 512 distinct, train min_df 2 (--tfidf-terms)":
            svm([first_terms(d.text) for d in train], [first_terms(d.text) for d in dev], vocabulary=sorted(kept),
                **tokens),
            "words and word pairs, whole text, min_df 2": svm([d.text for d in train], [d.text for d in dev], min_df=2,
                                                              ngram_range=(1, 2)),
            "words and word pairs, whole text, min_df 3": svm([d.text for d in train], [d.text for d in dev], min_df=3,
                                                              ngram_range=(1, 2))}

    def first_pairs(d):
        return first_terms(d.text, 1024, kept_pairs, 2)

    rows["words and word pairs, first 1024 distinct, train min_df 3 (--tfidf-ngrams 2 --tfidf-min-df 3)"] = svm(
        [first_pairs(d) for d in train], [first_pairs(d) for d in dev],
        vocabulary=sorted(t.replace(" ", "\u2581") for t in kept_pairs), **tokens)
    for label, sentences in (("whole text", None), ("60 sentences", 60), ("30 sentences (--tfidf)", 30)):
        def words(d, sentences=sentences):
            return " ".join(w for s in to_hierarchy(d.text, sentences, 40, lower=True, split_long=True) for w in s)
        tr, dv = [words(d) for d in train], [words(d) for d in dev]
        count = collections.Counter(w for t in tr for w in t.split())
        vocab = [w for w, n in count.most_common(40000 - 4) if n >= 2]
        rows[f"HAN words and vocabulary, {label}"] = svm(tr, dv, vocabulary=vocab, **tokens)
    width = max(map(len, rows))
    for name, row in rows.items():
        print(f"{name:<{width}}  {row['dev_accuracy']:6.2f}%  {row['features']:>6} features")
    write_json(args.output, {"data_dir": args.data_dir, "train_documents": len(train), "dev_documents": len(dev),
                             "classifier": "TfidfVectorizer(sublinear_tf=True) + LinearSVC(), scikit-learn defaults",
                             "views": rows, "machine": platform.processor() or platform.machine()})
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
