"""The keras.applications backbones users expect, exposing a grid and a pooled vector.

`weights="imagenet"` downloads Keras' weight files when online; offline the download fails
and we raise WeightsError saying which file to fetch and how to pass it as a path.
"""

import keras

from captioner.errors import WeightsError
from captioner.layers.image_preprocessing import ImagePreprocessing

# name -> (constructor, input size, grid layer, pooled layer or None (= global average),
#          preprocessing mode, keras weight file name for the include_top model)
APPLICATIONS = {
    "inception_v3": ("InceptionV3", 299, "mixed10", None, "tf",
                     "inception_v3_weights_tf_dim_ordering_tf_kernels.h5"),
    "resnet50": ("ResNet50", 224, "conv5_block3_out", None, "caffe",
                 "resnet50_weights_tf_dim_ordering_tf_kernels.h5"),
    "vgg16": ("VGG16", 224, "block5_conv3", "fc2", "caffe",
              "vgg16_weights_tf_dim_ordering_tf_kernels.h5"),
    "mobilenet_v2": ("MobileNetV2", 224, "out_relu", None, "tf",
                     "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_224.h5"),
}


def build_keras_application(name, weights="imagenet"):
    """Functional model on raw RGB pixels (0..255) -> {"grid", "pooled", "logits"}.

    VGG16's pooled vector is fc7 (4096, the `fc2` layer), as in Show and Tell style models;
    the others use the global average of the grid. The grid is the last conv map
    (VGG16: conv5_3, 14x14x512, the layer Show-Attend-Tell attends over).
    """
    ctor_name, size, grid_layer, pooled_layer, mode, weight_file = APPLICATIONS[name]
    ctor = getattr(keras.applications, ctor_name)
    kwargs = dict(include_top=True, input_shape=(size, size, 3))
    try:
        if weights in (None, "imagenet"):
            base = ctor(weights=weights, **kwargs)
        else:
            base = ctor(weights=None, **kwargs)
            base.load_weights(str(weights))
    except (OSError, ValueError, Exception) as exc:  # noqa: BLE001 - download errors vary
        if weights == "imagenet":
            raise WeightsError(
                f"{name}: could not get the ImageNet weights ({type(exc).__name__}: {exc}). "
                f"Without internet access, download '{weight_file}' (Keras' include_top "
                f"weights of {ctor_name}) elsewhere and pass its path: "
                f"--backbone-weights /path/to/{weight_file} (Python: weights='/path/...')."
            ) from None
        raise WeightsError(f"{name}: cannot load weights from {weights}: {exc}") from None
    pixels = keras.Input((size, size, 3), name="pixels")
    x = ImagePreprocessing(mode=mode, name="preprocess")(pixels)
    features = keras.Model(
        base.inputs,
        {
            "grid": base.get_layer(grid_layer).output,
            "pooled": base.get_layer(pooled_layer).output if pooled_layer else None,
            "logits": base.output,
        } if pooled_layer else {"grid": base.get_layer(grid_layer).output, "logits": base.output},
        name=f"{name}_features",
    )
    out = features(x)
    pooled = out.get("pooled")
    if pooled is None:
        pooled = keras.layers.GlobalAveragePooling2D(name="avg_pool")(out["grid"])
    return keras.Model(pixels, {"grid": out["grid"], "pooled": pooled, "logits": out["logits"]}, name=name)
