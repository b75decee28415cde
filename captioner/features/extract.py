"""Streaming, resumable feature extraction into a `FeatureStore`.

Images are decoded by a thread pool while the backbone runs on the previous batch, so
decoding overlaps inference; only `prefetch` batches are in memory at once, so peak memory
does not grow with the number of images. A rerun skips ids already stored. Unreadable files
are reported and skipped.
"""

import collections
import concurrent.futures
import dataclasses
import logging
import os

import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

import captioner.backbones  # get_backbone looked up at each call (a test's stand-in applies, then goes)
from captioner.errors import ImageError
from captioner.features.images import load_image
from captioner.features.prefetch import prefetched
from captioner.features.store import FeatureStore

log = logging.getLogger(__name__)


@dataclasses.dataclass
class ExtractReport:
    stored: int = 0        # newly written
    skipped: int = 0       # already in the store
    failed: list = dataclasses.field(default_factory=list)  # [(path, message)]
    seconds: float = 0.0

    @property
    def images_per_second(self):
        return self.stored / self.seconds if self.seconds else 0.0


def image_ids_for(paths, roots=None):
    """Id of each path: relative to the folder it was found under, else its basename."""
    ids = []
    for p in paths:
        key = os.path.basename(p)
        for root in roots or ():
            root = os.path.abspath(root)
            ap = os.path.abspath(p)
            if os.path.isdir(root) and ap.startswith(root + os.sep):
                key = os.path.relpath(ap, root)
                break
        ids.append(key.replace(os.sep, "/"))
    return ids


def backbone_function(model):
    """A compiled call of the backbone returning (grid, pooled) for a pixel batch."""

    @tf.function(reduce_retracing=True)
    def run(pixels):
        out = model(pixels, training=False)
        return out["grid"], out["pooled"]

    return run


def _decode(path, size):
    try:
        return load_image(path, size=size), None
    except ImageError as exc:
        return None, str(exc)


def extract_features(paths, output, backbone="efficientnet_lite0", weights="imagenet", ids=None,
                     batch_size=32, workers=None, prefetch=2, progress=True):
    """Extract grid + pooled features of `paths` into the HDF5 file `output`.

    `backbone` is a name or a `Backbone`. Returns an ExtractReport.
    """
    import time

    bb = captioner.backbones.get_backbone(backbone, weights) if isinstance(backbone, str) else backbone
    ids = list(ids) if ids is not None else image_ids_for(paths)
    if len(ids) != len(paths):
        raise ValueError("ids and paths differ in length")
    if len(set(ids)) != len(ids):
        dupes = [k for k, c in collections.Counter(ids).items() if c > 1]
        raise ValueError(f"duplicate image ids (same file name in several folders?): {dupes[:3]}")
    report = ExtractReport()
    run = backbone_function(bb.model)
    size = bb.input_size
    workers = workers or min(8, (os.cpu_count() or 2) * 2)
    with FeatureStore(output, "a", backbone=bb.name, grid_shape=bb.grid_shape,
                      channels=bb.grid_channels, pooled_dim=bb.pooled_dim) as store:
        todo = [(p, k) for p, k in zip(paths, ids) if k not in store]
        report.skipped = len(paths) - len(todo)
        if report.skipped:
            log.info("%s: %d of %d images already stored, skipping them", output, report.skipped, len(paths))
        batches = [todo[i:i + batch_size] for i in range(0, len(todo), batch_size)]
        bar = tqdm(total=len(todo), unit="img", desc="extract", disable=not progress, dynamic_ncols=True)
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for batch, results in prefetched(pool, batches, lambda item: _decode(item[0], size), prefetch):
                arrays, keys = [], []
                for (path, key), (pixels, error) in zip(batch, results):
                    if error is not None:
                        report.failed.append((path, error))
                        log.warning("skipped %s", error)
                    else:
                        arrays.append(pixels)
                        keys.append(key)
                if arrays:
                    grid, pooled = run(tf.convert_to_tensor(np.stack(arrays)))
                    store.append(keys, grid.numpy(), pooled.numpy())
                    report.stored += len(keys)
                bar.update(len(batch))
                bar.set_postfix(failed=len(report.failed))
        report.seconds = time.perf_counter() - start
        bar.close()
    return report
