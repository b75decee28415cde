"""Change the decoding defaults saved in a model after training, keeping its weights: beam width
and length penalty of a Seq2Seq model (translator or headline model) or an image captioner, and
n-gram blocking and distinct copies of a Seq2Seq model.

    PYTHONPATH=. python scripts/set_decoding_defaults.py --model assets/models/bbc_headlines.keras \\
        --no-repeat-ngram 3 --copy distinct
    PYTHONPATH=. python scripts/set_decoding_defaults.py --model assets/models/flickr8k_attention.keras \\
        --beam-size 3 --alpha 1

The file is rewritten atomically (one `.keras`, safe-mode loadable) and its card gets this
command appended to its commands, with the old and new settings in ``extra.decoding_defaults``;
the card's metrics are left as they are (re-measure them, e.g. scripts/experiments/summarize_baselines.py).
"""

from __future__ import annotations

import argparse
import sys

SETTINGS = ("beam_size", "alpha", "no_repeat_ngram", "copy_distinct")
CAPTIONER_SETTINGS = ("beam_size", "alpha")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a Seq2Seq or ImageCaptioner .keras file (rewritten in place)")
    parser.add_argument("--beam-size", type=int)
    parser.add_argument("--alpha", type=float)
    parser.add_argument("--no-repeat-ngram", type=int)
    parser.add_argument("--copy", choices=("argmax", "distinct"),
                        help="an <unk> copies the most attended source word, or the most attended one not yet written")
    args = parser.parse_args(argv)
    import numpy as np

    import captioner  # noqa: F401  registers the classes
    from captioner.models.storage import save_model
    from captioner.model_card import ModelCard
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.seq2seq import Seq2Seq

    model = load_model_file(args.model, (Seq2Seq, ImageCaptioner), "a Seq2Seq model or an image captioner")
    if isinstance(model, ImageCaptioner):
        if args.no_repeat_ngram is not None or args.copy is not None:
            parser.error("an image captioner has no n-gram blocking or copies: only --beam-size and --alpha")
        settings = CAPTIONER_SETTINGS
        old = {k: getattr(model, k) for k in settings}
        model.set_search_defaults(old["beam_size"] if args.beam_size is None else args.beam_size,
                                  old["alpha"] if args.alpha is None else args.alpha, model.max_length)
        new_model = model  # the defaults are plain attributes in its config; the weights stay as they are
    else:
        settings = SETTINGS
        old = {k: getattr(model, k) for k in settings}
        config = model.get_config()
        for key, value in (("beam_size", args.beam_size), ("alpha", args.alpha),
                           ("no_repeat_ngram", args.no_repeat_ngram),
                           ("copy_distinct", None if args.copy is None else args.copy == "distinct")):
            if value is not None:
                config[key] = value
        new_model = type(model).from_config(config)
        new_model.set_weights(model.get_weights())
        probe = np.array([[4, 5, 6]], np.int32) % len(model.source_vocabulary)
        np.testing.assert_array_equal(new_model.encode(probe)[0].numpy(), model.encode(probe)[0].numpy())  # same weights
    save_model(new_model, args.model)
    new = {k: getattr(new_model, k) for k in settings}
    ModelCard.record_step(args.model, "scripts/set_decoding_defaults.py", argv if argv is not None else sys.argv[1:],
                          extra={"decoding_defaults": {"before": old, "after": new}})
    print(f"{args.model}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    main()
