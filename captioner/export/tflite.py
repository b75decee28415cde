"""TFLite conversion of an image captioner: the backbone always, the whole captioner where it converts.

* ``backbone``: uint8 pixels (1, h, w, 3) -> grid (1, h', w', C), the feature extractor a device
  runs before sending annotations on (or before the decoder below). Builtin ops only.
* ``captioner``: uint8 pixels (1, h, w, 3) -> tokens (1, K, T), scores (1, K), lengths (1, K),
  attention (1, K, T, R) at the model's beam settings (fixed when converted): the backbone and the
  one beam search (its ``tf.while_loop``) in one flat buffer. The search needs TensorFlow ops
  that have no TFLite builtin, so it is converted with ``SELECT_TF_OPS`` (the Flex delegate,
  linked into the TensorFlow pip package's interpreter; a device build must include it).
  Ids -> words is left to the caller (the vocabulary is in the .keras config).

`convert(model, kind)` returns the flat buffer bytes; `write_tflite` writes it atomically.
"""

from __future__ import annotations

import tensorflow as tf

from captioner.decoding import Decoding

KINDS = ("backbone", "captioner")
# the outputs of each kind, in the flat buffer's output order (freezing drops the signature)
OUTPUTS = {"backbone": ("grid",), "captioner": ("tokens", "scores", "lengths", "attention")}


def _backbone_function(model):
    h, w = model.input_size

    @tf.function(input_signature=[tf.TensorSpec((1, h, w, 3), tf.uint8, name="pixels")], autograph=False)
    def backbone(pixels):
        return (model.backbone(tf.cast(pixels, tf.float32), training=False)["grid"],)

    return backbone


def _captioner_function(model):
    h, w = model.input_size
    beam_size, alpha, max_length = model.beam_size, model.alpha, model.max_length

    @tf.function(input_signature=[tf.TensorSpec((1, h, w, 3), tf.uint8, name="pixels")], autograph=False)
    def captioner(pixels):
        features = model.features(pixels)
        start = model.graph_start_tokens(features)  # a several-corpora captioner's style token, else None
        out = model.decoder.generator.search(*((features,) if start is None else (features, start)),
                                             decoding=Decoding(beam_size, alpha, max_length))
        return tuple(out[k] for k in OUTPUTS["captioner"])

    return captioner


QUANTIZE = ("dynamic",)


def convert(model, kind="backbone", quantize=None):
    """The TFLite flat buffer (bytes) of `kind` ("backbone" or "captioner") of a loaded
    ImageCaptioner. ``quantize="dynamic"``: dynamic-range quantisation (the converter's
    `Optimize.DEFAULT` without a representative dataset: int8 weights, activations quantised on
    the fly where a kernel has an int8 path; scripts/bench_quantized.py measures what it costs).
    Raises what the converter raises when the graph does not convert."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if quantize is not None and quantize not in QUANTIZE:
        raise ValueError(f"quantize must be one of {QUANTIZE} or None, got {quantize!r}")
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    fn = _backbone_function(model) if kind == "backbone" else _captioner_function(model)
    # weights as constants, also those read inside the search's while loop (left as variables,
    # the converter emits READ_VARIABLE ops in the loop body that fail at run time)
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function())
    converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen])
    if kind == "captioner":
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
    if quantize == "dynamic":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter.convert()


def write_tflite(model, output, kind="backbone", quantize=None):
    """Convert and write `output` atomically; returns its size in bytes."""
    from captioner.io import atomic_path

    data = convert(model, kind, quantize)
    with atomic_path(output, ".tflite") as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
    return len(data)


class Runner:
    """Runs a converted flat buffer: ``runner(pixels)`` -> {output name: array}."""

    def __init__(self, path_or_bytes, kind="backbone", num_threads=None):
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self.interpreter = tf.lite.Interpreter(model_content=bytes(path_or_bytes), num_threads=num_threads)
        else:
            self.interpreter = tf.lite.Interpreter(model_path=str(path_or_bytes), num_threads=num_threads)
        self.interpreter.allocate_tensors()
        self.input = self.interpreter.get_input_details()[0]["index"]
        details = self.interpreter.get_output_details()
        self.outputs = [d["index"] for d in sorted(details, key=_output_position)]
        self.names = OUTPUTS[kind]
        if len(self.outputs) != len(self.names):
            raise ValueError(f"a {kind} flat buffer has outputs {self.names}, this one has {len(self.outputs)}")

    def __call__(self, pixels):
        self.interpreter.set_tensor(self.input, pixels)
        self.interpreter.invoke()
        return {name: self.interpreter.get_tensor(i) for name, i in zip(self.names, self.outputs)}


def _output_position(detail):
    """The position of a frozen function's output, from its name "Identity", "Identity_<i>"."""
    name = detail["name"].split(":")[0]
    if name == "Identity":
        return 0
    suffix = name.rpartition("_")[2]
    return int(suffix) if name.startswith("Identity_") and suffix.isdigit() else detail["index"]
