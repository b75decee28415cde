"""Give a lower-cased word translator a truecaser learned from its cased training targets, and
measure cased sacreBLEU before and after on its held-out split.

    PYTHONPATH=. python scripts/add_truecaser.py --model assets/models/multi30k_en_de.keras \\
        --format multi30k --data ../shared/datasets/multi30k --source en --target de
    PYTHONPATH=. python scripts/add_truecaser.py --model assets/models/anki_fr_en.keras \\
        --format anki --data ../shared/datasets/anki-fra-eng/fra.txt --reverse

The training split is rebuilt exactly as `captioner train translate` builds it (same readers,
same held-out rule and sizes), and only its *target* side is read: the table
(`captioner.text.truecase.learn_truecase`) maps each word of the model's vocabularies to its
most frequent form away from the start of a sentence. The held-out split is never looked at
before scoring. The table goes into the model's config (`target_tokenizer["truecase"]`); the
file is rewritten atomically after checking that the lower-cased output did not change
(lower-cased BLEU identical), and the card gets this command, the table's size and the
cased / lower-cased BLEU before and after in ``extra.truecase`` and ``metrics``.
"""

from __future__ import annotations

import argparse
import sys
import types


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a word-level Seq2Seq translator .keras (rewritten in place)")
    parser.add_argument("--format", required=True, choices=("anki", "multi30k"))
    parser.add_argument("--data", required=True, help="anki: the TSV file; multi30k: the folder")
    parser.add_argument("--source", default="en", help="multi30k: source language")
    parser.add_argument("--target", default="de", help="multi30k: target language")
    parser.add_argument("--reverse", action="store_true", help="anki: column 2 -> column 1 (French -> English)")
    parser.add_argument("--dev-size", type=int, default=1000, help="multi30k: as `train translate` (default 1000)")
    parser.add_argument("--dev-fraction", type=float, default=0.03, help="anki: as `train translate`")
    parser.add_argument("--test-fraction", type=float, default=0.05, help="anki: as `train translate`")
    parser.add_argument("--beam-size", type=int, default=None, help="default: the model's")
    parser.add_argument("--dry-run", action="store_true", help="measure only; leave the file and its card alone")
    args = parser.parse_args(argv)

    import captioner  # noqa: F401  registers the classes
    from captioner.errors import InputError
    from captioner.models.storage import save_model
    from captioner.model_card import ModelCard
    from captioner.models.seq2seq import load_translator
    from captioner.text.tokenizer import tokenize
    from captioner.text.truecase import learn_truecase
    from captioner.training.translation_data import evaluate_bleu, grouped_references, load_translation_data

    model = load_translator(args.model)
    settings = model.target_tokenizer
    if settings.get("spm") or settings.get("chars") or not settings.get("lower", True):
        raise InputError(f"{args.model}: not a lower-cased word translator (its target tokenizer is {settings}); "
                         "nothing to truecase")
    data = types.SimpleNamespace(format=args.format, data=args.data, source=args.source, target=args.target,
                                 reverse=args.reverse, dev_size=args.dev_size, dev_fraction=args.dev_fraction,
                                 test_fraction=args.test_fraction, eval=None, dev=None)
    train, _, held_out, split, _, _ = load_translation_data(data)
    vocabulary = set(model.target_vocabulary.tokens) | set(model.source_vocabulary.tokens)
    table = learn_truecase((tokenize(p.target, lower=False, keep_punct=settings["keep_punct"]) for p in train),
                           keep=vocabulary)
    print(f"truecase table: {len(table):,} of {len(vocabulary):,} vocabulary words have a form of their own, "
          f"from {len(train):,} {split}-free training targets")

    beam = args.beam_size or model.beam_size
    refs = grouped_references(held_out)
    before, _ = evaluate_bleu(model, refs, beam, model.alpha, cased=True)
    config = model.get_config()
    config["target_tokenizer"] = {**settings, "truecase": table}
    cased = type(model).from_config(config)
    cased.set_weights(model.get_weights())
    after, _ = evaluate_bleu(cased, refs, beam, model.alpha, cased=True)
    if abs(after["BLEU_lc"] - before["BLEU_lc"]) > 0.05:
        raise AssertionError(f"truecasing changed the lower-cased output: BLEU_lc {before['BLEU_lc']} -> "
                             f"{after['BLEU_lc']}")
    print(f"{split} ({after['sentences']} sentences, beam {beam}): cased BLEU {before['BLEU']} -> {after['BLEU']}, "
          f"lower-cased {before['BLEU_lc']} -> {after['BLEU_lc']}")
    if args.dry_run:
        return 0
    save_model(cased, args.model)
    ModelCard.record_step(
        args.model, "scripts/add_truecaser.py", argv if argv is not None else sys.argv[1:],
        extra={"truecase": {"rule": "unigram truecaser (captioner.text.truecase): most frequent non-initial form in "
                                    "the cased training targets; else the source's form; first word capitalized",
                            "table_entries": len(table), "training_targets": len(train), "before": before,
                            "after": after}},
        metrics={f"{split}_beam{beam}_truecased": after})
    return 0


if __name__ == "__main__":
    sys.exit(main())
