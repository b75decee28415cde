"""HDF5 feature store: grid and pooled backbone features keyed by image id.

Layout (one file per backbone):
  attrs:   backbone, grid_shape (h, w), channels, pooled_dim, count, format_version
  grid     (N, R, C) float16   annotation vectors (R = h * w regions)
  pooled   (N, P)    float32   pooled / fc7 vector
  ids      (N,)      utf-8     image id of each row

Rows are appended in batches; `count` is written last, after the rows are flushed, so a run
killed mid-batch leaves a store whose first `count` rows are whole, and a rerun resumes.
"""

import h5py
import numpy as np

from captioner.errors import InputError
from captioner.features.hdf5_store import HDF5Store

FORMAT_VERSION = 1


class FeatureStore(HDF5Store):
    """Append-only HDF5 store. Use as a context manager or call close()."""

    def __init__(self, path, mode="r", backbone=None, grid_shape=None, channels=None, pooled_dim=None):
        self._open(path, mode)
        if "grid" not in self.file:
            if mode == "r":
                raise InputError(f"{self.path}: not a captioner feature store (no 'grid' dataset)")
            if None in (backbone, grid_shape, channels, pooled_dim):
                raise ValueError("a new store needs backbone, grid_shape, channels and pooled_dim")
            regions = int(grid_shape[0] * grid_shape[1])
            self.file.attrs.update(
                backbone=backbone, grid_shape=list(grid_shape), channels=int(channels),
                pooled_dim=int(pooled_dim), count=0, format_version=FORMAT_VERSION,
            )
            self.file.create_dataset("grid", (0, regions, channels), maxshape=(None, regions, channels),
                                     dtype="float16", chunks=(16, regions, channels))
            self.file.create_dataset("pooled", (0, pooled_dim), maxshape=(None, pooled_dim),
                                     dtype="float32", chunks=(256, pooled_dim))
            self.file.create_dataset("ids", (0,), maxshape=(None,), dtype=h5py.string_dtype("utf-8"),
                                     chunks=(1024,))
        elif backbone is not None and self.file.attrs["backbone"] != backbone:
            raise InputError(
                f"{self.path}: holds {self.file.attrs['backbone']} features, not {backbone}; "
                "use another output file"
            )
        count = self.count
        self._index = {k: i for i, k in enumerate(self.file["ids"].asstr()[:count])}

    def _salvage(self, src, dst):
        """The first `count` rows (the committed ones) of each dataset, read back in full."""
        count = int(src.attrs["count"])
        for name in ("grid", "pooled", "ids"):
            ds = src[name]
            data = ds[:count]  # raises if a committed row cannot be read: then nothing is replaced
            dst.create_dataset(name, data=data, maxshape=(None,) + ds.shape[1:], dtype=ds.dtype, chunks=ds.chunks)
        return f"its {count} committed rows"

    # -- metadata ---------------------------------------------------------------------
    @property
    def count(self):
        return int(self.file.attrs["count"])

    @property
    def ids(self):
        return list(self._index)

    def __len__(self):
        return len(self._index)

    def __contains__(self, image_id):
        return image_id in self._index

    # -- reading ----------------------------------------------------------------------
    def get(self, image_id):
        """(grid (R, C) float32, pooled (P,) float32) of one image."""
        try:
            i = self._index[image_id]
        except KeyError:
            raise InputError(f"{self.path}: no features for image id {image_id!r}") from None
        return self.file["grid"][i].astype(np.float32), self.file["pooled"][i]

    def rows(self, image_ids):
        """Row numbers of `image_ids` (InputError listing the first missing ones)."""
        missing = [k for k in image_ids if k not in self._index]
        if missing:
            raise InputError(
                f"{self.path}: {len(missing)} image(s) have no features, e.g. {missing[:3]}; "
                "run `captioner extract` over them first"
            )
        return np.array([self._index[k] for k in image_ids], dtype=np.int64)

    def load(self, image_ids=None, grid=True, pooled=True):
        """Arrays for `image_ids` (all rows if None): dict with "grid" (float16) and/or "pooled"."""
        rows = np.arange(self.count) if image_ids is None else self.rows(image_ids)
        out = {}
        for name, wanted in (("grid", grid), ("pooled", pooled)):
            if not wanted:
                continue
            if len(rows) * 2 > self.count:
                out[name] = self.file[name][: self.count][rows]  # one sequential read
            else:
                unique, inverse = np.unique(rows, return_inverse=True)  # h5py wants increasing
                out[name] = self.file[name][unique][inverse]
        return out

    # -- writing ----------------------------------------------------------------------
    def append(self, image_ids, grid, pooled):
        """Append a batch: ids (n,), grid (n, R, C) or (n, h, w, C), pooled (n, P)."""
        n = len(image_ids)
        if n == 0:
            return
        grid = np.asarray(grid).reshape(n, -1, self.channels)
        start = self.count
        for name, values in (("grid", grid.astype(np.float16)), ("pooled", np.asarray(pooled, np.float32)),
                             ("ids", np.array(image_ids, dtype=object))):
            ds = self.file[name]
            ds.resize(start + n, axis=0)
            ds[start:start + n] = values
        self.file.flush()
        self.file.attrs["count"] = start + n  # committed only after the rows are written
        self.file.flush()
        for i, k in enumerate(image_ids):
            self._index[k] = start + i
