"""Issue 23 items 7 and 9: an HDF5 store left unappendable by a kill during flush() is detected
on open and repaired (or the error says exactly what to do); the lock message never advises
deleting a store another process is writing."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from captioner.errors import InputError
from captioner.features.hdf5_store import damaged_by_a_kill, end_of_allocation
from captioner.features.store import FeatureStore


def _store(path, batches=5):
    with FeatureStore(path, "a", backbone="b", grid_shape=(2, 2), channels=8, pooled_dim=4) as s:
        for b in range(batches):
            s.append([f"{b}-{i}" for i in range(20)], np.full((20, 4, 8), b, np.float32), np.full((20, 4), b))
    return str(path)


def _kill_during_flush(path, eoa):
    """What a kill between HDF5 writing data and updating its superblock leaves: an EOA
    (end-of-allocation address) before the end of the file."""
    data = bytearray(open(path, "rb").read())
    _, offset = end_of_allocation(path)
    struct.pack_into("<Q", data, offset, eoa)
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("fraction", [0.9, 0.5])
def test_a_store_damaged_by_a_kill_is_repaired_on_open(tmp_path, fraction):
    path = _store(tmp_path / "f.h5")
    size = os.path.getsize(path)
    _kill_during_flush(path, int(size * fraction))
    assert damaged_by_a_kill(path)
    with pytest.raises(InputError, match="run the extraction that made it again"):
        FeatureStore(path, "r")  # reading does not repair (nor change) it, but says how
    assert os.path.getsize(path) == size
    with FeatureStore(path, "a") as s:  # this append failed with "addr overflow" before
        assert s.count == 100 and s.ids[:2] == ["0-0", "0-1"]
        s.append(["new"], np.ones((1, 4, 8)), np.ones((1, 4)))
    assert not damaged_by_a_kill(path)
    with FeatureStore(path, "r") as s:
        assert s.count == 101 and s.get("4-19")[1][0] == 4 and s.get("new")[1][0] == 1
    assert os.path.getsize(path + ".damaged") == size  # the damaged file is kept, not destroyed


def test_a_store_that_cannot_be_repaired_says_what_to_do(tmp_path, monkeypatch):
    path = _store(tmp_path / "f.h5")
    _kill_during_flush(path, 4096)
    before = open(path, "rb").read()

    def fail(self, src, dst):
        raise OSError("addr overflow")

    monkeypatch.setattr(FeatureStore, "_salvage", fail)
    with pytest.raises(InputError, match=r"killed while it was being written .* move it away .*extraction again"):
        FeatureStore(path, "a")
    assert open(path, "rb").read() == before and sorted(os.listdir(tmp_path)) == ["f.h5"]


def test_a_store_another_process_writes_is_not_to_be_deleted(tmp_path):
    path = _store(tmp_path / "f.h5", batches=1)
    holder = subprocess.Popen([sys.executable, "-c", "import h5py, sys, time; f = h5py.File(sys.argv[1], 'a'); "
                               "print('open', flush=True); time.sleep(60)", path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(InputError) as info:
            FeatureStore(path, "a")
        message = str(info.value)
        assert "another process has this feature store open for writing" in message
        assert "delete the file" not in message
    finally:
        holder.kill()
        holder.wait()


def test_a_store_a_live_process_is_writing_is_never_repaired(tmp_path):
    """A writer's file runs ahead of its superblock too: that is not damage, and copying or
    replacing the file under it would be."""
    path = _store(tmp_path / "f.h5")
    _kill_during_flush(path, 4096)
    before = open(path, "rb").read()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); "
                               "fcntl.flock(f.fileno(), fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
                               path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for mode in ("a", "r"):
            with pytest.raises(InputError, match="another process has this feature store open for writing"):
                FeatureStore(path, mode)
    finally:
        holder.kill()
        holder.wait()
    assert open(path, "rb").read() == before and sorted(os.listdir(tmp_path)) == ["f.h5"]
