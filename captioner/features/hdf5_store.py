"""What the image and video feature stores share: opening an HDF5 file with clear errors,
the backbone metadata kept in its attributes, and closing (also as a context manager)."""

import os

import h5py

from captioner.errors import InputError


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
        try:
            self.file = h5py.File(self.path, mode)
        except OSError as exc:
            raise InputError(
                f"{self.path}: cannot open {self.description} ({exc}); if a run was killed while "
                "writing it, delete the file and extract again"
            ) from None

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
