"""What the image and video feature stores share: opening an HDF5 file with clear errors,
the backbone metadata kept in its attributes, and closing (also as a context manager).

A kill while HDF5 flushes can leave the superblock's end-of-allocation address (EOA) behind
the data already written: the file opens, but every later append fails with "addr overflow"
(issue 23, item 7). Opening for appending detects it (EOA < file size) and repairs the store:
the consistent part (the committed rows, `_salvage`) is copied into a fresh file that replaces
it, and the damaged file is kept beside it as `<path>.damaged`. When that cannot be done, the
error says exactly what to do.
"""

import logging
import os
import shutil
import struct

import h5py

from captioner.errors import InputError

log = logging.getLogger(__name__)

_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def end_of_allocation(path):
    """(EOA address, offset of that field) from a version 0/1 superblock at the start of
    `path`, or None for another layout (not HDF5, a user block, superblock v2+)."""
    with open(path, "rb") as f:
        head = f.read(64)
    if len(head) < 56 or head[:8] != _SIGNATURE or head[8] not in (0, 1) or head[13] != 8:
        return None  # only 8-byte addresses, as h5py writes them
    offset = 40 if head[8] == 0 else 44  # v1 has 4 more bytes (indexed storage K) before the addresses
    return struct.unpack_from("<Q", head, offset)[0], offset


def _in_use(path):
    """Whether another process holds HDF5's lock on `path` (HDF5 takes flock() locks)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return False
    with open(path, "rb") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


def damaged_by_a_kill(path):
    """Whether `path` is an HDF5 file whose superblock lost track of data written to it."""
    found = end_of_allocation(path)
    return found is not None and found[0] < os.path.getsize(path)


class HDF5Store:
    """Base of FeatureStore and VideoFeatureStore. Subclasses call `_open` first."""

    description = "feature store"

    def _open(self, path, mode):
        self.path = os.fspath(path)
        if mode not in ("r", "a"):
            raise ValueError("mode must be 'r' or 'a'")
        self.mode = mode
        if mode == "r" and not os.path.exists(self.path):
            raise InputError(f"{self.path}: {self.description} not found")
        if os.path.isdir(self.path):
            raise InputError(f"{self.path}: is a directory, not a {self.description}")
        if os.path.isfile(self.path) and damaged_by_a_kill(self.path):
            if _in_use(self.path):  # a live writer's file is ahead of its superblock too: not damaged
                raise InputError(self._in_use_message())
            if mode == "r":
                raise InputError(
                    f"{self.path}: damaged by a run killed while it was being written; run the extraction "
                    f"that made it again with the same --output: opening it for appending repairs it, keeping "
                    f"every committed row")
            self._repair()  # before HDF5 opens it for writing: closing would cut the file at its EOA
        try:
            self.file = h5py.File(self.path, mode)
        except OSError as exc:
            if "unable to lock file" in str(exc) or "errno = 11" in str(exc):
                raise InputError(self._in_use_message()) from None
            raise InputError(
                f"{self.path}: cannot open {self.description} ({exc}); if it is damaged, move it away "
                f"(e.g. `mv {self.path} {self.path}.damaged`) and run the extraction again") from None

    def _in_use_message(self):
        return (f"{self.path}: another process has this {self.description} open for writing; wait for it to "
                "finish (the file is in use: do not delete or move it)")

    def _repair(self):
        """Replace the store by a fresh copy of its consistent part; keep the damaged file."""
        eoa, offset = end_of_allocation(self.path)
        size = os.path.getsize(self.path)
        damaged = self.path + ".damaged"
        n = 1
        while os.path.exists(damaged):  # never overwrite an earlier damaged copy
            damaged, n = f"{self.path}.damaged.{n}", n + 1
        patched = self.path + ".repair-src"
        fresh = self.path + ".repair-new"
        try:
            shutil.copyfile(self.path, patched)
            with open(patched, "r+b") as f:  # let HDF5 read everything that was written
                f.seek(offset)
                f.write(struct.pack("<Q", size))
            with h5py.File(patched, "r") as src, h5py.File(fresh, "w") as dst:
                dst.attrs.update(dict(src.attrs))
                kept = self._salvage(src, dst)
            os.replace(self.path, damaged)
            os.replace(fresh, self.path)
        except Exception as exc:  # noqa: BLE001 - any failure: say what to do, change nothing
            if os.path.exists(fresh):
                os.unlink(fresh)
            raise InputError(
                f"{self.path}: damaged by a run killed while it was being written (its HDF5 end-of-allocation "
                f"{eoa} is before its end, {size}) and it could not be repaired ({type(exc).__name__}: {exc}); "
                f"move it away (`mv {self.path} {self.path}.damaged`) and run the extraction again") from None
        finally:
            if os.path.exists(patched):
                os.unlink(patched)
        log.warning("%s: repaired after a run was killed while writing it: kept %s; the damaged file is %s "
                    "(delete it once the store works)", self.path, kept, damaged)

    def _salvage(self, src, dst):
        """Copy the consistent content of `src` (an open damaged store) into `dst`; returns a
        description of what was kept. Subclasses copy only committed rows."""
        for name in src:
            src.copy(src[name], dst, name=name)
        return "every dataset"

    # -- metadata ---------------------------------------------------------------------
    @property
    def backbone(self):
        return str(self.file.attrs["backbone"])

    @property
    def grid_shape(self):
        return tuple(int(v) for v in self.file.attrs["grid_shape"])

    @property
    def channels(self):
        return int(self.file.attrs["channels"])

    @property
    def pooled_dim(self):
        return int(self.file.attrs["pooled_dim"])

    # -- closing ----------------------------------------------------------------------
    def close(self):
        if getattr(self, "file", None) is not None:
            self.file.close()
            self.file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
