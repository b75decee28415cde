#!/usr/bin/env python
"""Join trained Seq2Seq models (translators, transliterators, headline models with the same
vocabularies) into one ensemble `.keras` file that decodes them together in the one beam
search (`captioner model ensemble`, the one way to join models), then score it beside its
members on the Dakshina dev lexicon or Multi30k val.

    python scripts/experiments/make_seq2seq_ensemble.py runs/translit_s1/model.keras runs/translit_s2/model.keras \
        --output runs/translit_ensemble.keras [--combine product|mixture] \
        [--dakshina-dev ../shared/datasets/dakshina-hi/hi.translit.sampled.dev.tsv --beam-size 10]
    python scripts/experiments/make_seq2seq_ensemble.py runs/ende_s1/m.keras runs/ende_s2/m.keras --output E.keras \
        --multi30k ../shared/datasets/multi30k --source en --target de [--cased]

Joining is `captioner.commands.model.make_ensemble`: members loaded in safe mode, the file
written atomically, loaded back and checked, its card listing the members' commands. The
ensemble's decoding settings are the first member's unless given.
"""

import argparse
import json
import os
import sys
import time



def score_dakshina(model, dev, beam_size, alpha=None):
    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration

    started = time.perf_counter()
    scores, _ = evaluate_transliteration(model, romanized_lexicon(load_dakshina(dev)), beam_size, alpha)
    return {**scores, "seconds": round(time.perf_counter() - started, 1)}


def score_multi30k(model, folder, source, target, cased, beam_size, alpha=None):
    """sacreBLEU (13a) on Multi30k val: cased (no -lc) with the lower-cased figure beside it for
    a cased model, lower-cased otherwise (`captioner.training.translation_data.evaluate_bleu`)."""
    from captioner.data.multi30k import load_multi30k
    from captioner.training.translation_data import evaluate_bleu, grouped_references

    refs = grouped_references(load_multi30k(folder, "val", source, target))
    scores, _ = evaluate_bleu(model, refs, beam_size, model.alpha if alpha is None else alpha, cased=cased)
    return scores


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("members", nargs="+", help="Seq2Seq .keras files (two or more)")
    p.add_argument("--output", required=True)
    p.add_argument("--combine", default="product", choices=("product", "mixture"))
    p.add_argument("--beam-size", type=int, default=None)
    p.add_argument("--alpha", type=float, default=None)
    p.add_argument("--dakshina-dev", default=None, help="score members and ensemble on this dev lexicon")
    p.add_argument("--multi30k", default=None, help="score members and ensemble on this Multi30k folder's val split")
    p.add_argument("--source", default="en")
    p.add_argument("--target", default="de")
    p.add_argument("--cased", action="store_true", help="--multi30k: cased BLEU (models trained with --cased)")
    p.add_argument("--json", default=None, help="write the scores here")
    args = p.parse_args(argv)
    if len(args.members) < 2:
        p.error("give two or more members")

    from captioner.commands.model import make_ensemble
    from captioner.models.seq2seq import load_translator

    ensemble = make_ensemble(args.members, args.output, args.combine, args.beam_size, args.alpha,
                             argv=[*args.members, "--output", args.output, "--combine", args.combine,
                                   *(["--beam-size", str(args.beam_size)] if args.beam_size is not None else []),
                                   *(["--alpha", str(args.alpha)] if args.alpha is not None else [])])
    print(f"wrote {args.output}: {len(args.members)} members, combine {args.combine}, beam {ensemble.beam_size}, "
          f"alpha {ensemble.alpha}, {os.path.getsize(args.output) / 1e6:.1f} MB")
    if args.dakshina_dev or args.multi30k:
        beam = ensemble.beam_size

        def score(model):
            if args.dakshina_dev:
                return score_dakshina(model, args.dakshina_dev, beam, ensemble.alpha)
            return score_multi30k(model, args.multi30k, args.source, args.target, args.cased, beam, ensemble.alpha)

        rows = {}
        for path in args.members:
            rows[path] = score(load_translator(path))
            print(f"  member {path}: {rows[path]}", flush=True)
        rows["ensemble"] = score(load_translator(args.output))
        print(f"  ensemble ({args.combine}): {rows['ensemble']}")
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"beam_size": beam, "alpha": ensemble.alpha, "combine": args.combine, "scores": rows}, f,
                          indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
