#!/usr/bin/env python
"""The dialogue model beside what a user would pick instead, on the same SGD dev examples:
retrieval of the SYSTEM turn that followed the most similar train context (tf-idf).

    python scripts/experiments/respond_baselines.py                                  # retrieval only
    python scripts/experiments/respond_baselines.py --model assets/models/sgd_dialogue.keras

Examples are those of `captioner train respond` (every SYSTEM turn with a turn before it, its
last --context-turns turns as context); the first --eval-limit dev examples are scored, as the
model's card does. Retrieval: each context is its turns joined, each prefixed by its speaker;
``TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)`` over the train contexts,
cosine similarity, the response of the nearest train context. Train is the train folder minus
the dialogues `train respond` holds out for model selection. BLEU (sacrebleu, one reference)
and distinct-1/2 (%); the table is printed and written as JSON (--output).
"""

import argparse
import os
import platform
import sys
import time



def context_text(turns):
    return " ".join(f"{speaker.lower()}: {text}" for speaker, text in turns)


def retrieve(train_examples, dev_examples, batch=512):
    """The response of the most similar train context for each dev example (tf-idf, cosine)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2 if len(train_examples) > 50 else 1)
    x_train = vec.fit_transform([context_text(e.context) for e in train_examples])
    x_dev = vec.transform([context_text(e.context) for e in dev_examples])
    out = []
    for start in range(0, x_dev.shape[0], batch):
        sims = (x_dev[start:start + batch] @ x_train.T).toarray()  # (b, n) cosine: rows are L2-normalised
        out += [train_examples[int(i)].response for i in sims.argmax(1)]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-dir", default="../shared/datasets/sgd/train")
    p.add_argument("--dev-dir", default="../shared/datasets/sgd/dev")
    p.add_argument("--context-turns", type=int, default=3)
    p.add_argument("--select-fraction", type=float, default=0.03, help="as `train respond`: held out of train")
    p.add_argument("--eval-limit", type=int, default=2000)
    p.add_argument("--model", help="also score this dialogue model (captioner train respond)")
    p.add_argument("--beam-size", type=int, default=None)
    p.add_argument("--output", default="assets/benchmarks/respond_baselines.json")
    args = p.parse_args(argv)

    from captioner.data.sgd import load_sgd, response_examples
    from captioner.errors import InputError
    from captioner.io import write_json
    from captioner.training.recipes.respond import _held_out, score_responses

    try:
        train_d = [d for d in load_sgd(args.train_dir) if not _held_out(d.dialogue_id, args.select_fraction)]
        train = response_examples(train_d, args.context_turns)
        dev = response_examples(load_sgd(args.dev_dir), args.context_turns)[: args.eval_limit]
        refs = [e.response for e in dev]
        results = {}
        t0 = time.perf_counter()
        results["retrieval_tfidf"] = {**score_responses(retrieve(train, dev), refs),
                                      "seconds": round(time.perf_counter() - t0, 2)}
        if args.model:
            from captioner.models.dialogue_responder import load_dialogue_responder

            model = load_dialogue_responder(args.model)
            if model.context_turns != args.context_turns:
                raise InputError(f"{args.model}: reads {model.context_turns} turns, not --context-turns "
                                 f"{args.context_turns}")
            t0 = time.perf_counter()
            hyps = [r.text for r in model.respond([e.context for e in dev], beam_size=args.beam_size)]
            results["hred"] = {**score_responses(hyps, refs), "seconds": round(time.perf_counter() - t0, 2),
                               "beam_size": args.beam_size or model.beam_size, "model": args.model}
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"SGD dev, first {len(dev)} SYSTEM turns (train examples {len(train)}); BLEU sacrebleu, distinct-n %")
    print(f"  {'model':<28} {'BLEU':>6} {'dist-1':>7} {'dist-2':>7}")
    for name, r in results.items():
        print(f"  {name:<28} {r['BLEU']:>6.2f} {r['distinct_1']:>7.2f} {r['distinct_2']:>7.2f}")
    write_json(args.output, {"results": results, "train_examples": len(train), "dev_examples": len(dev),
                             "command": " ".join(["python scripts/experiments/respond_baselines.py",
                                                  *(argv if argv is not None else sys.argv[1:])]),
                             "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "date": time.strftime("%Y-%m-%d")})
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
