"""Atomic file writes and JSON, shared by every package: a crash never leaves a half-written
checkpoint, model or report."""

import contextlib
import json
import os
import tempfile


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Yield a temporary path beside `path`; on success it replaces `path` in one rename."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if suffix is None:  # keep the extension: some writers (Keras) insist on it
        suffix = next((s for s in (".weights.h5", ".keras", ".h5", ".json", ".jsonl", ".png", ".csv")
                       if path.endswith(s)), "")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix or ".tmp", dir=directory)
    os.close(fd)
    os.unlink(tmp)  # writers that refuse to overwrite get a fresh name
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path, data):
    with atomic_path(path, ".json") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False, default=_default)
            f.write("\n")


def _default(obj):
    try:
        import numpy as np
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
