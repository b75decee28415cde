"""Drop the unused ImageNet classifier from the backbone saved inside a pixel model (image
captioner, VQA model, video captioner or classifier), keeping every weight that is used.

    PYTHONPATH=. python scripts/slim_backbone.py --model assets/models/flickr8k_video_caption.keras

Models trained before `Backbone.feature_model` saved the whole backbone, classifier included:
1.28M parameters (5.1 MB) of EfficientNet-Lite that no output depends on. The file is rewritten
atomically (one `.keras`, safe-mode loadable) after checking, on random pixels, that the
backbone's features are bit-identical; the card gets this command appended to its commands and
the sizes before and after in ``extra.slim_backbone``. Its metrics stay valid: the outputs are
the same.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a pixel model .keras file (rewritten in place)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random pixels the check uses")
    args = parser.parse_args(argv)
    import keras
    import numpy as np

    import captioner  # noqa: F401  registers the classes
    from captioner.errors import InputError
    from captioner.models.storage import save_model
    from captioner.model_card import ModelCard
    from captioner.models.pixel_model import PixelModel

    model = keras.models.load_model(args.model, compile=False)
    if not isinstance(model, PixelModel):
        raise InputError(f"{args.model}: not a pixel model (got {type(model).__name__}); nothing to slim")
    slim = model.without_classifier()
    if slim is model:
        print(f"{args.model}: the backbone has no classifier; left as it is")
        return 0
    pixels = np.random.default_rng(args.seed).integers(0, 256, (2, *model.input_size, 3)).astype(np.uint8)
    np.testing.assert_array_equal(slim.features(pixels).numpy(), model.features(pixels).numpy())
    before = os.path.getsize(args.model)
    params = {"before": int(model.count_params()), "after": int(slim.count_params())}
    save_model(slim, args.model)
    after = os.path.getsize(args.model)
    ModelCard.record_step(args.model, "scripts/slim_backbone.py", argv if argv is not None else sys.argv[1:],
                          extra={"slim_backbone": {"bytes": {"before": before, "after": after}, "parameters": params}})
    print(f"{args.model}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB, "
          f"{params['before']:,} -> {params['after']:,} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
