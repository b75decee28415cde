"""save_model: float16 weight storage that plain `keras.models.load_model` reads back into float32
variables, values that do not fit kept float32, the file replaced atomically."""

import io
import os
import zipfile

import h5py
import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.models.storage import save_model, store_weights_as, stored_dtypes


def small_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5,))
    x = keras.layers.Dense(7, activation="tanh", name="hidden")(inputs)
    outputs = keras.layers.Dense(3, name="out")(x)
    return keras.Model(inputs, outputs)


def test_float16_storage_loads_as_float32_and_computes_the_same(tmp_path):
    model = small_model()
    path = tmp_path / "m.keras"
    save_model(model, path)
    assert stored_dtypes(path) == {"float16": 4}
    loaded = keras.models.load_model(path)
    assert all(w.dtype == "float32" for w in loaded.weights)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_allclose(b.numpy(), a.numpy().astype(np.float16).astype(np.float32))
    x = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), atol=5e-3)


def test_float32_storage_is_exact_and_out_of_range_values_stay_float32(tmp_path):
    model = small_model()
    save_model(model, tmp_path / "exact.keras", weights_dtype="float32")
    assert stored_dtypes(tmp_path / "exact.keras") == {"float32": 4}
    model.get_layer("out").bias.assign([1e6, 0.0, -2.0])  # beyond float16's 65504
    save_model(model, tmp_path / "big.keras")
    assert stored_dtypes(tmp_path / "big.keras") == {"float16": 3, "float32": 1}
    loaded = keras.models.load_model(tmp_path / "big.keras")
    np.testing.assert_array_equal(loaded.get_layer("out").bias.numpy(), [1e6, 0.0, -2.0])
    with pytest.raises(ValueError, match="weights_dtype"):
        save_model(model, tmp_path / "x.keras", weights_dtype="int8")


def test_a_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "m.keras"
    save_model(small_model(), path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("captioner.models.storage.store_weights_as", broken)
    with pytest.raises(OSError, match="disk full"):
        save_model(small_model(), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.keras"]


def test_rewriting_keeps_every_other_member_and_the_group_attributes(tmp_path):
    path = tmp_path / "m.keras"
    small_model().save(path)
    with zipfile.ZipFile(path) as z:
        before = {n: z.read(n) for n in z.namelist() if n != "model.weights.h5"}
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as h5:
            attrs = {n: dict(h5[n].attrs) for n in ("layers/hidden", "layers/out") if n in h5}
    assert store_weights_as(path) == (4, 0)
    with zipfile.ZipFile(path) as z:
        assert {n: z.read(n) for n in z.namelist() if n != "model.weights.h5"} == before
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as h5:
            assert {n: dict(h5[n].attrs) for n in attrs} == attrs


def test_dropping_the_training_state_saves_no_optimizer_and_no_compile_config(tmp_path):
    inner = small_model()
    inner.compile(optimizer="adam", loss="mse")
    inner.fit(np.zeros((4, 5)), np.zeros((4, 3)), verbose=0)
    outer = keras.Sequential([keras.Input((5,)), inner])
    from captioner.models.storage import drop_training_state

    assert drop_training_state(outer) == 1
    save_model(outer, tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        config = z.read("config.json").decode()
        assert '"loss"' not in config and '"Adam"' not in config  # no compile config (an empty one at most)
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as h5:
            names = []
            h5.visititems(lambda n, o: names.append(n))
    assert names and not [n for n in names if "optimizer" in n]
    loaded = keras.models.load_model(tmp_path / "m.keras")
    x = np.ones((2, 5), np.float32)
    np.testing.assert_allclose(loaded(x).numpy(), outer(x).numpy(), atol=5e-3)
