"""Issue 23 item 6 (and 9): a `.keras` file's declared sizes are checked before Keras opens it;
a corrupt or truncated file is named as such, not 'file not found'. The crafted archives are
small zips whose headers declare huge sizes (nothing that size is ever written)."""

import glob
import os
import struct
import zipfile

import pytest

from captioner.errors import InputError
from captioner.models.keras_archive import check_keras_archive
from captioner.models.loading import load_model_file

ASSETS = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "models")


def _archive(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _declare(path, name, size):
    """Make the zip's headers (local and central) declare `size` inflated bytes for `name`."""
    data = bytearray(open(path, "rb").read())
    encoded = name.encode()
    for signature, size_at, name_at in ((b"PK\x01\x02", 24, 46), (b"PK\x03\x04", 22, 30)):
        at = data.find(signature)
        while at >= 0:
            (name_len,) = struct.unpack_from("<H", data, at + (28 if signature == b"PK\x01\x02" else 26))
            if data[at + name_at: at + name_at + name_len] == encoded:
                struct.pack_into("<I", data, at + size_at, size)
            at = data.find(signature, at + 4)
    open(path, "wb").write(bytes(data))
    return path


def _model_members(weights=b"\0" * 1000):
    return {"metadata.json": b'{"keras_version": "3"}', "config.json": b'{"class_name": "Sequential"}',
            "model.weights.h5": weights}


def test_a_config_declaring_gigabytes_is_refused_before_loading(tmp_path):
    path = _declare(_archive(tmp_path / "big_config.keras", _model_members()), "config.json", 3 * 2**30)
    with pytest.raises(InputError, match=r"big_config.keras: config.json declares 3,072 MiB \(at most 64 MiB\)"):
        load_model_file(path, object, "a model")


def test_a_compressed_member_that_inflates_a_thousandfold_is_a_bomb(tmp_path):
    path = _archive(tmp_path / "bomb.keras", _model_members(weights=b"\0" * (4 * 2**20)), zipfile.ZIP_DEFLATED)
    with pytest.raises(InputError, match=r"bomb.keras: member model.weights.h5 inflates .* zip bomb"):
        check_keras_archive(path)
    path = _declare(_archive(tmp_path / "bomb2.keras", _model_members(), zipfile.ZIP_DEFLATED),
                    "model.weights.h5", int(3.5 * 2**30))
    with pytest.raises(InputError, match="zip bomb"):
        load_model_file(path, object, "a model")


def test_many_members_that_would_fill_the_temp_folder(tmp_path):
    members = _model_members()
    members.update({f"assets/blob{i}": b"x" for i in range(12)})
    path = _archive(tmp_path / "many.keras", members)
    for i in range(12):
        _declare(path, f"assets/blob{i}", 250 * 2**20)
    with pytest.raises(InputError, match=r"many.keras: the archive declares 3,000 MiB once inflated"):
        load_model_file(path, object, "a model")


def test_corrupt_truncated_and_non_keras_files_are_named_as_such(tmp_path):
    good = _archive(tmp_path / "good.keras", _model_members(weights=os.urandom(5000)))
    truncated = tmp_path / "truncated.keras"
    truncated.write_bytes(good.read_bytes()[:3000])
    text = tmp_path / "notes.keras"
    text.write_text("not a model")
    for path in (truncated, text):
        with pytest.raises(InputError, match="corrupt, truncated or not a Keras model") as info:
            load_model_file(path, object, "a model")
        assert "not found" not in str(info.value)
    with pytest.raises(InputError, match="no config.json"):
        check_keras_archive(_archive(tmp_path / "other.keras", {"readme.txt": b"hi"}))
    with pytest.raises(InputError, match="is a directory"):
        load_model_file(tmp_path, object, "a model")


def test_real_models_pass_the_check():
    models = glob.glob(os.path.join(ASSETS, "*.keras"))
    assert models
    for path in models:
        check_keras_archive(path)
