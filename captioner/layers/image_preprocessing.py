"""Backbone input preprocessing as a registered Keras layer (safe to save and load)."""

import keras
from keras import ops

CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)


@keras.saving.register_keras_serializable(package="captioner")
class ImagePreprocessing(keras.layers.Layer):
    """Map raw RGB pixels (0..255) to a backbone's expected input.

    Modes follow keras.applications: "tf" scales to [-1, 1]; "caffe" flips RGB to BGR and
    subtracts the ImageNet mean; "torch" scales to [0, 1] and standardizes per channel;
    "lite" is EfficientNet-Lite's (x - 127) / 128.
    """

    MODES = ("tf", "caffe", "torch", "lite")

    def __init__(self, mode="tf", **kwargs):
        super().__init__(**kwargs)
        if mode not in self.MODES:
            raise ValueError(f"unknown preprocessing mode {mode!r}; choose from {self.MODES}")
        self.mode = mode

    def call(self, x):
        # float32 arithmetic whatever the policy (pixel values and ImageNet means lose digits in
        # bfloat16), the result in the compute dtype as the next layer takes it
        return ops.cast(self._preprocess(ops.cast(x, "float32")), self.compute_dtype)

    def _preprocess(self, x):
        if self.mode == "tf":
            return x / 127.5 - 1.0
        if self.mode == "lite":
            return (x - 127.0) / 128.0
        if self.mode == "caffe":
            return x[..., ::-1] - ops.convert_to_tensor(CAFFE_MEAN_BGR, "float32")
        mean = ops.convert_to_tensor((0.485, 0.456, 0.406), "float32")
        std = ops.convert_to_tensor((0.229, 0.224, 0.225), "float32")
        return (x / 255.0 - mean) / std

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}
