"""Expanding command-line inputs (files, folders, globs) into a list of files."""

from __future__ import annotations

import glob
import os

__all__ = ["list_files"]


def list_files(paths, extensions, recursive=True):
    """Expand files, folders (recursed) and globs into a sorted, de-duplicated list of files.

    Folders contribute files whose name ends with one of `extensions` (lower-case); explicit
    files are kept whatever their extension so a broken or misnamed file is reported rather
    than silently skipped.
    """
    found = []
    for entry in paths:
        entry = os.fspath(entry)
        if os.path.isdir(entry):
            for root, dirs, files in os.walk(entry):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in sorted(files) if f.lower().endswith(extensions))
                if not recursive:
                    break
        elif any(ch in entry for ch in "*?["):
            found.extend(m for m in sorted(glob.glob(entry, recursive=True)) if os.path.isfile(m))
        else:
            found.append(entry)
    return list(dict.fromkeys(found))


def not_a_regular_file(path):
    """A reason (str) when `path` exists but is not a regular file (a FIFO, socket or device,
    which a read would block on or stream from forever), else None. Links are followed."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing or unreadable: the reader's own error says so
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"not a regular file ({kind}): not read"
