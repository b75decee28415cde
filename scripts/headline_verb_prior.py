"""Would a verb prior in the n-best re-ranker make the bundled BBC headlines read better? (issue 42)

The bundled extractive headline model's beam (width 8) often holds a hypothesis with a verb when
its best one has none ("Steel world's producers" / "Steel producers cut"). This measures the
simplest re-ranker that prefers them: ``score' = model score + w * has_verb`` over the n-best of
the one beam search, on the fixed BBC dev split, for a few weights w:

* a word counts as a verb when it is lower case (or the headline's first word), is not a function
  word, and WordNet's tagged-sense counts (SemCor, `Lemma.count`) over its base forms as a verb
  (`_morphy(word, "v")`) exceed those as a noun and as an adjective ("fell" 120 / 0 / 0; "shares"
  62 / 47 / 0, a verb here; "profits" 4 / 19 / 0, a noun). No part-of-speech tagger is on this
  machine; this test reads no context, so it errs ("rival", "plans").
* ROUGE-1/2/L (rouge-score, stemmed) on the first 100 dev pairs (those the bundled model's beam
  was chosen on) and on the other 105; the share of headlines with a verb where the reference has
  one (the same test on the reference); and, for w = 0.1, the headlines that change;
* how many references hold a verb whose form (`verb_forms`) is among the article words the model
  reads (the source after truncation): the verbs a deletion-based compression could copy.

    PYTHONPATH=. python scripts/headline_verb_prior.py --output verb_prior.json

Result (docs/models.md): not bundled.
"""

from __future__ import annotations

import argparse

import numpy as np

WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.5)


def verb_test():
    """`captioner.data.headlines.verb_test` on this machine's WordNet (module docstring)."""
    from captioner.data.headlines import verb_test as wordnet_verb_test
    from captioner.text.wordnet import load_wordnet

    wordnet, why = load_wordnet()
    if wordnet is None:
        raise SystemExit(f"WordNet is needed: {why}")
    return wordnet_verb_test(wordnet)


def main(argv=None):
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.io import write_json
    from captioner.metrics.rouge_f1 import corpus_rouge_f1
    from captioner.models.seq2seq import load_translator

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bbc", default="../shared/datasets/bbc-news/bbc")
    ap.add_argument("--model", default="assets/models/bbc_headlines.keras")
    ap.add_argument("--tuned-on", type=int, default=100, help="the first K dev pairs (the beam's choice read them)")
    ap.add_argument("--output", help="JSON report")
    args = ap.parse_args(argv)

    is_verb = verb_test()

    def has_verb(text):
        words = text.split()
        return any(is_verb(w, i == 0) for i, w in enumerate(words))

    _, dev = split_bbc_headlines(load_bbc_headlines(args.bbc).pairs)
    model = load_translator(args.model)
    outs = model.translate([p.source for p in dev])
    nbest = [t.hypotheses for t in outs]
    refs = [p.target for p in dev]
    # is the reference's own verb (a form of it) among the article words the model reads?
    from captioner.data.headlines import verb_forms
    from captioner.text.wordnet import load_wordnet

    keys = verb_forms(load_wordnet()[0])
    ref_verbs = [[w for i, w in enumerate(r.split()) if is_verb(w.strip("'\":,"), i == 0)] for r in refs]
    reachable = sum(any(keys(w.strip("'\":,")) & keys(t) for w in verbs for t in o.source_tokens)
                    for verbs, o in zip(ref_verbs, outs) if verbs)
    with_verbs = sum(bool(v) for v in ref_verbs)
    print(f"references with a verb (punctuation stripped): {with_verbs}; one of whose verbs is among the article "
          f"words the model reads: {reachable}")
    halves = {f"first {args.tuned_on}": range(args.tuned_on), f"other {len(dev) - args.tuned_on}": range(args.tuned_on, len(dev))}

    def pick(hyps, w):
        return hyps[int(np.argmax([s + w * has_verb(h) for h, s in hyps]))][0]

    rows = []
    for w in WEIGHTS:
        chosen = [pick(h, w) for h in nbest]
        row = {"weight": w}
        for name, idx in halves.items():
            r = corpus_rouge_f1([[refs[i]] for i in idx], [chosen[i] for i in idx])
            with_verb = [i for i in idx if has_verb(refs[i])]
            row[name] = {"rouge1": round(r["rouge1"], 2), "rouge2": round(r["rouge2"], 2), "rougeL": round(r["rougeL"], 2),
                         "verb_where_reference_has_one": f"{sum(has_verb(chosen[i]) for i in with_verb)}/{len(with_verb)}",
                         "mean_words": round(float(np.mean([len(chosen[i].split()) for i in idx])), 2)}
        rows.append(row)
        print(w, {k: v for k, v in row.items() if k != "weight"}, flush=True)
    changed = [{"reference": refs[i], "w=0": a, "w=0.1": b}
               for i, (a, b) in enumerate(zip((pick(h, 0.0) for h in nbest), (pick(h, 0.1) for h in nbest))) if a != b]
    for c in changed[:30]:
        print(f"{c['reference']!r:45} | {c['w=0']!r:42} -> {c['w=0.1']!r}")
    if args.output:
        write_json(args.output, {"command": "python scripts/headline_verb_prior.py", "model": args.model,
                                 "beam_size": model.beam_size, "weights": rows, "changed_at_0.1": changed,
                                 "reference_verb_in_source": f"{reachable}/{with_verbs}"})


if __name__ == "__main__":
    main()
