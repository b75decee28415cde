"""Saving a model file small: float16 weights, nothing stored that loading does not need.

`save_model(model, path)` is the one way the project writes a `.keras` file (the Trainer, the
ensemble and re-save commands): `model.save` to a temporary file beside `path`, then
:func:`store_weights_as` rewrites its ``model.weights.h5`` with every float32 weight array stored
as float16 (half the bytes), and the file replaces `path` atomically.

Loading needs nothing of ours: Keras's own ``load_own_variables`` assigns each stored array to
its float32 variable, which casts it, so ``keras.models.load_model(path)`` computes in float32
as before, on weights rounded to float16 (relative error <= 2**-11). An array whose values do
not fit float16 (beyond +-65504, or non-finite) stays float32; so do integer arrays (step
counters). What the rounding changes is measured per bundled model on its dev data
(``assets/benchmarks/float16_storage.json``).

The backbone of a pixel model is not in the file at all when it is its pip package's
(`captioner.backbones.by_reference`, decided by `PixelModel.get_config`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile

import numpy as np

STORAGE_DTYPES = ("float16", "float32")
FLOAT16_MAX = 65504.0
WEIGHTS_MEMBER = "model.weights.h5"


def save_model(model, path, weights_dtype="float16"):
    """`model.save(path)` atomically, with float32 weights stored as `weights_dtype`."""
    from captioner.io import atomic_path

    if weights_dtype not in STORAGE_DTYPES:
        raise ValueError(f"weights_dtype must be one of {STORAGE_DTYPES}, not {weights_dtype!r}")
    with atomic_path(os.fspath(path), ".keras") as tmp:
        model.save(tmp)
        if weights_dtype != "float32":
            store_weights_as(tmp, weights_dtype)
    return path


def drop_training_state(model):
    """Uncompile every compiled model inside `model` (itself included): no optimizer state and no
    compile config are saved with it any more (an inference file needs neither). Returns the
    number of models uncompiled. Changes `model` in place: call it on a model you only save."""
    import keras

    dropped = 0
    for layer in [model, *model._flatten_layers(include_self=False, recursive=True)]:
        if isinstance(layer, keras.Model) and (getattr(layer, "optimizer", None) is not None or layer.compiled):
            layer.optimizer = None
            layer.compiled = False
            dropped += 1
    return dropped


def store_weights_as(path, dtype="float16"):
    """Rewrite the `.keras` file `path` in place with its float32 weight arrays stored as `dtype`
    (those that fit); every other member, group and attribute is copied as is. Returns
    (arrays converted, arrays kept float32)."""
    import h5py

    converted = kept = 0
    folder = tempfile.mkdtemp(prefix="captioner-store-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        source_h5, target_h5 = os.path.join(folder, "in.h5"), os.path.join(folder, "out.h5")
        with zipfile.ZipFile(path) as archive:
            members = [(info, archive.read(info)) for info in archive.infolist()]
        names = [info.filename for info, _ in members]
        if WEIGHTS_MEMBER not in names:
            return 0, 0  # a model without weights
        with open(source_h5, "wb") as f:
            f.write(dict(zip(names, (data for _, data in members)))[WEIGHTS_MEMBER])
        with h5py.File(source_h5, "r") as src, h5py.File(target_h5, "w") as dst:
            _copy_attrs(src, dst)

            def copy(name, obj):
                nonlocal converted, kept
                if isinstance(obj, h5py.Group):
                    dst.require_group(name)
                else:
                    data = obj[()]
                    if (isinstance(data, np.ndarray) and data.dtype == np.float32 and data.size
                            and np.isfinite(data).all() and np.abs(data).max() <= FLOAT16_MAX):
                        data = data.astype(dtype)
                        converted += 1
                    elif isinstance(data, np.ndarray) and data.dtype == np.float32:
                        kept += 1
                    dst.create_dataset(name, data=data)
                _copy_attrs(obj, dst[name])

            src.visititems(copy)
        with open(target_h5, "rb") as f:
            weights = f.read()
        rewritten = os.path.join(folder, "model.keras")
        with zipfile.ZipFile(rewritten, "w", zipfile.ZIP_STORED) as out:
            for info, data in members:
                out.writestr(info, weights if info.filename == WEIGHTS_MEMBER else data)
        os.replace(rewritten, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return converted, kept


def _copy_attrs(src, dst):
    for key, value in src.attrs.items():
        dst.attrs[key] = value


def stored_dtypes(path):
    """{dtype name: number of weight arrays} of a `.keras` file (what a model card records)."""
    import io

    import h5py

    counts = {}
    with zipfile.ZipFile(path) as archive:
        if WEIGHTS_MEMBER not in archive.namelist():
            return counts
        data = archive.read(WEIGHTS_MEMBER)
    with h5py.File(io.BytesIO(data), "r") as h5:
        def count(name, obj):
            if isinstance(obj, h5py.Dataset):
                counts[str(obj.dtype)] = counts.get(str(obj.dtype), 0) + 1
        h5.visititems(count)
    return counts


def storage_record(model, path):
    """What a model card records of how `path` (just saved from `model`) stores its weights:
    {"bytes", "weights": {dtype: arrays}, "backbone": the package reference or "stored"}, read
    from the file itself (its config.json: what was written, without digesting the backbone again)."""
    import json

    from captioner.backbones.by_reference import REFERENCE_KEY

    record = {"bytes": os.path.getsize(path), "weights": stored_dtypes(path)}
    if getattr(model, "backbone", None) is not None:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json")).get("config", {}).get("backbone")
        record["backbone"] = config[REFERENCE_KEY] if isinstance(config, dict) and REFERENCE_KEY in config else "stored"
    return record
