"""Change the decoding defaults saved in a Seq2Seq model (translator or headline model) after
training, keeping its weights: beam width, length penalty, n-gram blocking, distinct copies.

    PYTHONPATH=. python scripts/set_decoding_defaults.py --model assets/models/bbc_headlines.keras \\
        --no-repeat-ngram 3 --copy distinct

The file is rewritten atomically (one `.keras`, safe-mode loadable) and its card gets this
command appended to its commands, with the old and new settings in ``extra.decoding_defaults``;
the card's metrics are left as they are (re-measure them, e.g. scripts/summarize_baselines.py).
"""

from __future__ import annotations

import argparse
import sys

SETTINGS = ("beam_size", "alpha", "no_repeat_ngram", "copy_distinct")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a Seq2Seq .keras file (rewritten in place)")
    parser.add_argument("--beam-size", type=int)
    parser.add_argument("--alpha", type=float)
    parser.add_argument("--no-repeat-ngram", type=int)
    parser.add_argument("--copy", choices=("argmax", "distinct"),
                        help="an <unk> copies the most attended source word, or the most attended one not yet written")
    args = parser.parse_args(argv)
    import numpy as np

    import captioner  # noqa: F401  registers the classes
    from captioner.io import atomic_path
    from captioner.model_card import ModelCard
    from captioner.models.seq2seq import load_translator

    model = load_translator(args.model)
    old = {k: getattr(model, k) for k in SETTINGS}
    config = model.get_config()
    for key, value in (("beam_size", args.beam_size), ("alpha", args.alpha), ("no_repeat_ngram", args.no_repeat_ngram),
                       ("copy_distinct", None if args.copy is None else args.copy == "distinct")):
        if value is not None:
            config[key] = value
    new_model = type(model).from_config(config)
    new_model.set_weights(model.get_weights())
    probe = np.array([[4, 5, 6]], np.int32) % len(model.source_vocabulary)
    np.testing.assert_array_equal(new_model.encode(probe)[0].numpy(), model.encode(probe)[0].numpy())  # same weights
    with atomic_path(args.model, ".keras") as tmp:
        new_model.save(tmp)
    new = {k: getattr(new_model, k) for k in SETTINGS}
    ModelCard.record_step(args.model, "scripts/set_decoding_defaults.py", argv if argv is not None else sys.argv[1:],
                          extra={"decoding_defaults": {"before": old, "after": new}})
    print(f"{args.model}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    main()
