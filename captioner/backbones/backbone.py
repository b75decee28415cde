"""One interface over every image backbone: a spatial grid and a pooled vector.

`get_backbone(name, weights)` returns a `Backbone` whose `model` maps raw RGB pixels
(B, H, W, 3) in 0..255 to {"grid": (B, h, w, C), "pooled": (B, P), ...}; preprocessing is
inside the model, so callers (and saved captioning models) feed plain pixels.
"""

import dataclasses

import numpy as np

from captioner.errors import WeightsError

DEFAULT_BACKBONE = "efficientnet_lite0"

BACKBONES = (
    "efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2",
    "inception_v3", "resnet50", "vgg16", "mobilenet_v2",
)


@dataclasses.dataclass
class Backbone:
    name: str
    model: object  # keras.Model: pixels -> {"grid", "pooled", "logits"}

    @property
    def feature_model(self):
        """The backbone without its ImageNet classifier: pixels -> {"grid", "pooled"}, sharing
        the layers of `model`. What trained models save (the classifier is never used, and
        it is 1.28M of EfficientNet-Lite's parameters: 5 MB of every .keras file)."""
        return features_only(self.model)

    @property
    def input_size(self):
        """(height, width) the backbone expects; images are resized to it without cropping."""
        return input_size_of(self.model)

    @property
    def grid_shape(self):
        """(h, w) of the spatial grid: regions = h * w annotation vectors."""
        return grid_shape_of(self.model)

    @property
    def grid_channels(self):
        return int(output_shape_of(self.model, "grid")[-1])

    @property
    def pooled_dim(self):
        return int(output_shape_of(self.model, "pooled")[-1])

    def features(self, pixels, batch_size=32):
        """Run the backbone on uint8/float pixels (N, H, W, 3): returns numpy grid (N, R, C), pooled (N, P)."""
        out = self.model.predict(np.asarray(pixels), batch_size=batch_size, verbose=0)
        grid = out["grid"]
        return grid.reshape(grid.shape[0], -1, grid.shape[-1]), out["pooled"]


FEATURE_OUTPUTS = ("grid", "pooled")


def features_only(model):
    """A backbone model restricted to its "grid" and "pooled" outputs (same layers, same
    weights; layers that only fed the others, such as an ImageNet classifier, are dropped).
    A model that has only those outputs already is returned as is."""
    import keras

    outputs = model.output
    if set(outputs) <= set(FEATURE_OUTPUTS):
        return model
    return keras.Model(model.inputs, {k: outputs[k] for k in FEATURE_OUTPUTS if k in outputs}, name=model.name)


def input_size_of(model):
    """(height, width) of a backbone model's pixel input (B, H, W, 3)."""
    shape = model.inputs[0].shape
    return int(shape[1]), int(shape[2])


def output_shape_of(model, key):
    """Shape of output `key` ("grid", "pooled", ...) of a backbone model whose output is a dict.

    `model.output` is the dict the functional model was built with (`model.outputs` is only
    the flat, key-sorted list)."""
    return tuple(model.output[key].shape)


def grid_shape_of(model):
    """(h, w) of a backbone model's spatial grid: regions = h * w annotation vectors."""
    shape = output_shape_of(model, "grid")
    return int(shape[1]), int(shape[2])


def get_backbone(name=DEFAULT_BACKBONE, weights="imagenet"):
    """Build backbone `name` with `weights` ("imagenet", a local weights file, or None)."""
    name = name.lower().replace("-", "_")
    if name.startswith("efficientnet_lite"):
        from captioner.backbones.efficientnet_lite import VARIANTS, build_efficientnet_lite

        if name not in VARIANTS:
            raise WeightsError(f"unknown backbone {name!r}; choose from {', '.join(BACKBONES)}")
        model = build_efficientnet_lite(name, weights=weights)
    else:
        from captioner.backbones.keras_applications import APPLICATIONS, build_keras_application

        if name not in APPLICATIONS:
            raise WeightsError(f"unknown backbone {name!r}; choose from {', '.join(BACKBONES)}")
        model = build_keras_application(name, weights=weights)
    backbone = Backbone(name, model)
    return backbone
