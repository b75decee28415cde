#!/usr/bin/env python
"""Join image captioners of one backbone and one vocabulary into one `.keras` file whose decoders
are decoded together in the one beam search (`CaptionDecoderEnsemble`).

    python scripts/make_caption_ensemble.py runs/scst_s1/flickr8k_attention.keras \
        runs/scst_s2/flickr8k_attention.keras --output runs/ensemble.keras [--combine product|mixture] \
        [--beam-size 2 --alpha 1]

The members are loaded with `keras.models.load_model` (safe mode). They must read the same
backbone's features (the ensemble runs that backbone once per image) and share a vocabulary. The
ensemble keeps the first member's backbone, vocabulary, decoding defaults (unless given) and
training config; the output is written atomically, loaded back in safe mode, and its caption of a
generated image compared with a second decode. Its card (`ENSEMBLE.json`) lists every member's
commands (from the members' cards, where they have one) and then this one; each member's whole
card is kept under `extra.members`. Score it like any captioner
(`scripts/sweep_beam_alpha.py --model ENSEMBLE.keras`), and time it (`scripts/bench_caption.py`).
"""

import argparse
import os
import sys



def check_members(models, paths):
    """InputError naming the member that cannot join member 0 (another backbone or vocabulary,
    or a member that is an ensemble already)."""
    from captioner.errors import InputError
    from captioner.models.caption_decoder_model import CaptionDecoderModel

    first = models[0]
    for path, model in zip(paths, models):
        if not isinstance(model.decoder, CaptionDecoderModel):
            raise InputError(f"{path}: its decoder is a {type(model.decoder).__name__}; join single captioners")
        if model.backbone.name != first.backbone.name or model.grid_shape != first.grid_shape:
            raise InputError(f"{path}: reads {model.backbone.name} {model.grid_shape} features, {paths[0]} "
                             f"{first.backbone.name} {first.grid_shape}: members must share a backbone")
        if list(model.vocabulary.tokens) != list(first.vocabulary.tokens):
            raise InputError(f"{path}: its vocabulary differs from {paths[0]}'s: an ensemble needs one vocabulary")


def build(paths, combine="product", beam_size=None, alpha=None):
    """The ensemble `ImageCaptioner` of the captioners at `paths`."""
    from captioner.inference.batch import load_captioner
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    models = [load_captioner(p) for p in paths]
    check_members(models, paths)
    first = models[0]
    decoder = CaptionDecoderEnsemble([m.decoder for m in models], combine=combine)
    return ImageCaptioner(first.backbone, decoder, first.vocabulary,
                          beam_size=first.beam_size if beam_size is None else beam_size,
                          alpha=first.alpha if alpha is None else alpha, max_length=first.max_length,
                          training_config={**first.training_config, "ensemble_of": [os.path.basename(p) for p in paths],
                                           "combine": combine})


def ensemble_card(output, paths, model, argv):
    """The ensemble's ModelCard: the members' commands in order, then the joining command."""
    import shlex

    from captioner.model_card import ModelCard, card_path

    cards = {}
    for path in paths:
        if os.path.exists(card_path(path)):
            cards[os.path.basename(path)] = ModelCard.load(path)
    commands = [c for card in cards.values() for c in card.commands]
    commands.append("python scripts/make_caption_ensemble.py " + " ".join(shlex.quote(a) for a in argv))
    first = cards.get(os.path.basename(paths[0]))
    return ModelCard(
        model=os.path.basename(output), task="caption", command=commands, data=first.data if first else {},
        config={"members": [os.path.basename(p) for p in paths], "combine": model.decoder.combine,
                "beam_size": model.beam_size, "alpha": model.alpha, "max_length": model.max_length,
                "backbone": model.backbone.name},
        notes=f"{len(paths)} captioners of one backbone and vocabulary, their decoders decoded together in one "
              f"beam search ({model.decoder.combine} of their next-word distributions; CaptionDecoderEnsemble)",
        extra={"members": {name: card.to_dict() for name, card in cards.items()},
               "members_without_card": [os.path.basename(p) for p in paths if os.path.basename(p) not in cards]})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("members", nargs="+", help="ImageCaptioner .keras files (two or more)")
    p.add_argument("--output", required=True, help="the ensemble .keras file")
    p.add_argument("--combine", default="product", choices=("product", "mixture"))
    p.add_argument("--beam-size", type=int, help="default: the first member's")
    p.add_argument("--alpha", type=float, help="default: the first member's")
    args = p.parse_args(argv)
    if len(args.members) < 2:
        p.error("give two or more members")
    if not args.output.endswith(".keras"):
        p.error(f"--output {args.output}: must end in .keras")

    import numpy as np

    from captioner.errors import InputError
    from captioner.inference.batch import load_captioner
    from captioner.models.storage import save_model

    try:
        ensemble = build(args.members, args.combine, args.beam_size, args.alpha)
    except InputError as e:
        sys.exit(f"error: {e}")
    image = np.random.default_rng(0).integers(0, 256, (1, *ensemble.input_size, 3)).astype("uint8")
    before = ensemble.generate(image)
    save_model(ensemble, args.output)  # float16 weights: the reloaded scores may differ in the third decimal
    loaded = load_captioner(args.output)
    after = loaded.generate(image)
    if not (np.array_equal(after["tokens"], before["tokens"]) or np.allclose(after["scores"], before["scores"], atol=0.05)):
        sys.exit(f"error: {args.output} decodes differently once loaded back")
    ensemble_card(args.output, args.members, loaded, sys.argv[1:] if argv is None else argv).save(args.output)
    print(f"wrote {args.output}: {len(args.members)} decoders ({args.combine}) on {ensemble.backbone.name}, "
          f"beam {loaded.beam_size}, alpha {loaded.alpha}, {os.path.getsize(args.output) / 1e6:.1f} MB; "
          "loaded back in safe mode, same tokens (or scores within 0.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
