"""Per-clip HDF5 store of per-frame backbone features, and streaming, resumable extraction.

Layout (one file per backbone and frame-sampling setting):

    attrs:          kind="video", backbone, num_frames (N), sample_fps (0 = uniform), pooled_dim,
                    grid_shape (h, w), channels, has_grid, format_version
    pooled/<key>    (k, P) float32, one dataset per clip, k <= N sampled frames
    grid/<key>      (k, R, C) float16, gzip (only with has_grid)

`<key>` is the clip id, percent-escaped (ids may hold "/"). Each pooled dataset's attrs hold
the frame numbers, timestamps, the clip's frame count and fps, and `complete`, written last,
after the data is flushed: a run killed mid-clip leaves that clip incomplete, and opening
the store for appending drops it, so a rerun redoes exactly the unfinished clips.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import logging
import os
import time
import urllib.parse

import numpy as np

from captioner.errors import ImageError, InputError
from captioner.features.hdf5_store import HDF5Store
from captioner.features.prefetch import prefetched

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def escape_key(key):
    return urllib.parse.quote(str(key), safe="")


def unescape_key(name):
    return urllib.parse.unquote(name)


class VideoFeatureStore(HDF5Store):
    """Per-clip feature store. Use as a context manager or call close()."""

    description = "video feature store"

    def __init__(self, path, mode="r", backbone=None, num_frames=None, pooled_dim=None, grid_shape=None,
                 channels=None, has_grid=False, sample_fps=None):
        self._open(path, mode)
        if "pooled" not in self.file:
            if mode == "r":
                raise InputError(f"{self.path}: not a captioner video feature store (no 'pooled' group)")
            if None in (backbone, num_frames, pooled_dim):
                raise ValueError("a new store needs backbone, num_frames and pooled_dim")
            if has_grid and None in (grid_shape, channels):
                raise ValueError("a store with grids needs grid_shape and channels")
            self.file.attrs.update(
                kind="video", backbone=backbone, num_frames=int(num_frames), pooled_dim=int(pooled_dim),
                grid_shape=list(grid_shape or (0, 0)), channels=int(channels or 0), has_grid=bool(has_grid),
                sample_fps=float(sample_fps or 0.0), format_version=FORMAT_VERSION,
            )
            self.file.create_group("pooled")
            if has_grid:
                self.file.create_group("grid")
            self.file.flush()
        else:
            self._check(backbone=backbone, num_frames=num_frames, sample_fps=sample_fps, has_grid=has_grid)
        self._complete = set()
        unfinished = []
        for name, ds in self.file["pooled"].items():
            (self._complete.add if ds.attrs.get("complete", False) else unfinished.append)(name)
        if unfinished and mode == "a":
            log.info("%s: dropping %d clip(s) a killed run left unfinished", self.path, len(unfinished))
            for name in unfinished:
                self._delete(name)
            self.file.flush()

    def _check(self, backbone, num_frames, sample_fps, has_grid):
        attrs = self.file.attrs
        problems = []
        if backbone is not None and attrs["backbone"] != backbone:
            problems.append(f"backbone {attrs['backbone']}, not {backbone}")
        if num_frames is not None and int(attrs["num_frames"]) != int(num_frames):
            problems.append(f"{int(attrs['num_frames'])} frames per clip, not {num_frames}")
        if sample_fps is not None and float(attrs["sample_fps"]) != float(sample_fps or 0.0):
            problems.append(f"sampling fps {float(attrs['sample_fps'])}, not {sample_fps or 0}")
        if has_grid and not bool(attrs["has_grid"]):
            problems.append("no grid features (it was made without --grid)")
        if problems:
            raise InputError(f"{self.path}: this store holds {'; '.join(problems)}; use another output file")

    def _delete(self, name):
        for group in ("pooled", "grid"):
            if group in self.file and name in self.file[group]:
                del self.file[group][name]

    # -- metadata ---------------------------------------------------------------------
    @property
    def num_frames(self):
        return int(self.file.attrs["num_frames"])

    @property
    def has_grid(self):
        return bool(self.file.attrs["has_grid"])

    @property
    def ids(self):
        return sorted(unescape_key(n) for n in self._complete)

    def __len__(self):
        return len(self._complete)

    def __contains__(self, key):
        return escape_key(key) in self._complete

    # -- reading ----------------------------------------------------------------------
    def _name(self, key):
        name = escape_key(key)
        if name not in self._complete:
            raise InputError(f"{self.path}: no features for clip {key!r}; extract them first "
                             "(scripts/make_video_datasets.py --extract, or a `captioner train video-*` run)")
        return name

    def get(self, key, feature="pooled"):
        """(features (k, P) or (k, R, C) float32, info dict) of one clip."""
        name = self._name(key)
        if feature == "grid" and not self.has_grid:
            raise InputError(f"{self.path}: made without grid features")
        ds = self.file[feature][name]
        info = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.file["pooled"][name].attrs.items()}
        return ds[()].astype(np.float32), info

    def load(self, keys, feature="pooled", num_frames=None, dtype=np.float32):
        """Padded batch for `keys`: (features (n, N, ...) zeros after each clip's frames,
        mask (n, N) bool). Missing clips raise InputError listing the first few."""
        missing = [k for k in keys if k not in self]
        if missing:
            raise InputError(f"{self.path}: {len(missing)} clip(s) have no features, e.g. {missing[:3]}; "
                             "extract them first")
        if feature == "grid" and not self.has_grid:
            raise InputError(f"{self.path}: made without grid features")
        n = num_frames or self.num_frames
        if feature == "pooled":
            shape = (self.pooled_dim,)
        else:
            shape = (self.grid_shape[0] * self.grid_shape[1], self.channels)
        out = np.zeros((len(keys), n) + shape, dtype=dtype)
        mask = np.zeros((len(keys), n), dtype=bool)
        group = self.file[feature]
        for i, key in enumerate(keys):
            values = group[escape_key(key)][()]
            k = min(len(values), n)
            out[i, :k] = values[:k]
            mask[i, :k] = True
        return out, mask

    # -- writing ----------------------------------------------------------------------
    def put(self, key, pooled, grid=None, info=None):
        """Store one clip: pooled (k, P), grid (k, R, C) or (k, h, w, C) when the store has grids."""
        if self.mode != "a":
            raise InputError(f"{self.path}: opened read-only")
        name = escape_key(key)
        self._delete(name)
        pooled = np.asarray(pooled, np.float32)
        if self.has_grid:
            if grid is None:
                raise ValueError("this store keeps grids; pass grid=")
            grid = np.asarray(grid).reshape(len(pooled), -1, self.channels).astype(np.float16)
            self.file["grid"].create_dataset(name, data=grid, compression="gzip", compression_opts=4,
                                             chunks=grid.shape)
        ds = self.file["pooled"].create_dataset(name, data=pooled)
        for k, v in (info or {}).items():
            ds.attrs[k] = v
        self.file.flush()
        ds.attrs["complete"] = True  # committed only after the data is written
        self.file.flush()
        self._complete.add(name)


@dataclasses.dataclass
class VideoExtractReport:
    stored: int = 0        # clips newly written
    skipped: int = 0       # clips already in the store
    frames: int = 0        # frames run through the backbone
    failed: list = dataclasses.field(default_factory=list)  # [(path, message)]
    seconds: float = 0.0

    @property
    def frames_per_second(self):
        return self.frames / self.seconds if self.seconds else 0.0


def _sample(path, num_frames, fps, size):
    from captioner.features.video import sample_frames

    try:
        return sample_frames(path, num_frames=num_frames, fps=fps, size=size), None
    except ImageError as exc:
        return None, str(exc)


def extract_video_features(paths, output, backbone="efficientnet_lite0", weights="imagenet", ids=None,
                           num_frames=8, fps=None, grid=False, batch_frames=32, workers=None, prefetch=2,
                           progress=True):
    """Sample frames of every clip in `paths` and store their backbone features in `output`.

    Clips are decoded by a thread pool while the backbone runs on earlier ones; frames of
    several clips share one backbone batch of about `batch_frames`. A rerun skips stored
    clips; unreadable clips are reported in the returned `VideoExtractReport` and skipped.
    """
    import tensorflow as tf
    from tqdm.auto import tqdm

    from captioner.backbones import get_backbone
    from captioner.features.extract import backbone_function

    paths = [os.fspath(p) for p in paths]
    ids = list(ids) if ids is not None else [clip_id(p) for p in paths]
    if len(ids) != len(paths):
        raise ValueError("ids and paths differ in length")
    if len(set(ids)) != len(ids):
        dupes = [k for k, c in collections.Counter(ids).items() if c > 1]
        raise ValueError(f"duplicate clip ids (same file name in several folders?): {dupes[:3]}")
    report = VideoExtractReport()
    if os.path.exists(output):  # all there already: no backbone, no write access needed
        name = backbone if isinstance(backbone, str) else backbone.name
        with VideoFeatureStore(output) as store:
            store._check(backbone=name, num_frames=num_frames, sample_fps=fps, has_grid=grid)
            if all(k in store for k in ids):
                report.skipped = len(ids)
                return report
    bb = get_backbone(backbone, weights) if isinstance(backbone, str) else backbone
    run = backbone_function(bb.model)
    size = bb.input_size
    workers = workers or min(8, (os.cpu_count() or 2) * 2)
    clips_per_batch = max(1, batch_frames // num_frames)
    with VideoFeatureStore(output, "a", backbone=bb.name, num_frames=num_frames, pooled_dim=bb.pooled_dim,
                           grid_shape=bb.grid_shape, channels=bb.grid_channels, has_grid=grid,
                           sample_fps=fps) as store:
        todo = [(p, k) for p, k in zip(paths, ids) if k not in store]
        report.skipped = len(paths) - len(todo)
        if report.skipped:
            log.info("%s: %d of %d clips already stored, skipping them", output, report.skipped, len(paths))
        batches = [todo[i:i + clips_per_batch] for i in range(0, len(todo), clips_per_batch)]
        bar = tqdm(total=len(todo), unit="clip", desc="extract video", disable=not progress, dynamic_ncols=True)
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            sample = lambda item: _sample(item[0], num_frames, fps, size)  # noqa: E731
            for batch, results in prefetched(pool, batches, sample, prefetch):
                clips = []
                for (path, key), (sampled, error) in zip(batch, results):
                    if error is not None:
                        report.failed.append((path, error))
                        log.warning("skipped %s", error)
                    else:
                        clips.append((key, sampled))
                if clips:
                    pixels = np.concatenate([s.frames for _, s in clips])  # (sum k, H, W, 3)
                    g, p = run(tf.convert_to_tensor(pixels))
                    g, p = g.numpy(), p.numpy()
                    offset = 0
                    for key, s in clips:
                        k = len(s.frames)
                        store.put(key, p[offset:offset + k], g[offset:offset + k] if grid else None, info={
                            "source": s.path, "indices": s.indices, "timestamps": s.timestamps,
                            "frame_count": s.frame_count, "readable_count": s.readable_count, "fps": s.fps,
                        })
                        offset += k
                    report.frames += offset
                    report.stored += len(clips)
                bar.update(len(batch))
                bar.set_postfix(failed=len(report.failed))
        report.seconds = time.perf_counter() - start
        bar.close()
    return report


def clip_id(path):
    """The id a clip is stored under: its file stem (UCF101 and MSVD clip names are unique)."""
    return os.path.splitext(os.path.basename(os.fspath(path)))[0]


def load_features(paths, store_path, feature="pooled", backbone="efficientnet_lite0", num_frames=8, fps=None,
                  progress=True, dtype=np.float32, extract=True):
    """Features of the clips at `paths` from the store at `store_path`, extracting the
    missing ones first (resumable). Clips that cannot be decoded are left out with a warning.
    With `extract=False` the backbone never runs: clips not in the store are left out (warned).

    Returns (kept paths, features (n, N, ...) zeros at masked frames, mask (n, N))."""
    ids = [clip_id(p) for p in paths]
    if extract:
        report = extract_video_features(paths, store_path, backbone=backbone, ids=ids, num_frames=num_frames,
                                        fps=fps, grid=feature == "grid", progress=progress)
        bad = {p for p, _ in report.failed}
        if bad:
            log.warning("%d clip(s) could not be read and are left out, e.g. %s", len(bad), sorted(bad)[:3])
    else:
        with VideoFeatureStore(store_path) as store:
            store._check(backbone=backbone, num_frames=num_frames, sample_fps=fps, has_grid=feature == "grid")
            bad = {p for p, k in zip(paths, ids) if k not in store}
        if bad:
            log.warning("%s: %d of %d clip(s) have no stored features and are left out (no extraction asked)",
                        store_path, len(bad), len(paths))
    kept = [p for p in paths if p not in bad]
    with VideoFeatureStore(store_path) as store:
        features, mask = store.load([clip_id(p) for p in kept], feature=feature, dtype=dtype)
    return kept, features, mask
