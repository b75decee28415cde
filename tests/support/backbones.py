"""Tiny random-weight backbones with the real interface, for tests that must not build
EfficientNet: pixels (B, S, S, 3) valued 0..255 -> {"grid": (B, g, g, C), "pooled": (B, C)}."""

import keras

PREPROCESSING = ("tf", "rescale")


def tiny_backbone(size=32, channels=12, grid=4, preprocess="tf", two_layers=True, kernel=None, seed=None,
                  name="tiny_backbone"):
    """A keras.Model pixels (B, size, size, 3) -> {"grid": (B, grid, grid, channels), "pooled": (B, channels)}.

    preprocess: "tf" (ImagePreprocessing("tf"), to [-1, 1], saved with the model like the real
    backbones) or "rescale" (keras Rescaling 1/255). two_layers (the default, what
    tiny_captioner's ImageCaptioner uses): an 8-channel ReLU conv of stride size // (2 * grid)
    (kernel = stride), then a 2x2 stride-2 one to `channels`; else one ReLU conv of stride
    size // grid: non-overlapping patches (kernel = stride) unless `kernel` is given (then "same"
    padding). seed: keras.utils.set_random_seed(seed) first, for the same weights on every call
    (None: whatever the global seed gives)."""
    if preprocess not in PREPROCESSING:
        raise ValueError(f"preprocess must be one of {PREPROCESSING}, not {preprocess!r}")
    if seed is not None:
        keras.utils.set_random_seed(seed)
    pixels = keras.Input((size, size, 3), name="pixels")
    if preprocess == "tf":
        from captioner.layers.image_preprocessing import ImagePreprocessing

        x = ImagePreprocessing("tf", name="preprocess")(pixels)
    else:
        x = keras.layers.Rescaling(1 / 255.0, name="preprocess")(pixels)
    if two_layers:
        stride = size // (2 * grid)
        x = keras.layers.Conv2D(8, stride, strides=stride, activation="relu", name="conv1")(x)  # (B, 2g, 2g, 8)
        grid_out = keras.layers.Conv2D(channels, 2, strides=2, activation="relu", name="conv2")(x)
    else:
        stride = size // grid
        padding = "valid" if kernel is None else "same"
        grid_out = keras.layers.Conv2D(channels, kernel or stride, strides=stride, padding=padding, activation="relu",
                                       name="conv1")(x)
    pooled = keras.layers.GlobalAveragePooling2D(name="pool")(grid_out)  # (B, channels)
    return keras.Model(pixels, {"grid": grid_out, "pooled": pooled}, name=name)


def tiny_wrapped_backbone(name="tiny", **kwargs):
    """tiny_backbone(**kwargs) in the `captioner.backbones.Backbone` wrapper named `name`."""
    from captioner.backbones.backbone import Backbone

    return Backbone(name, tiny_backbone(**kwargs))


def tiny_get_backbone(name="efficientnet_lite0", weights=None):
    """A stand-in for `captioner.backbones.get_backbone` (same signature, to monkeypatch in; the
    arguments are ignored): a seeded 32x32 -> 4x4x6 backbone, "tf" preprocessing, wrapped."""
    return tiny_wrapped_backbone(channels=6, two_layers=False, seed=0)
