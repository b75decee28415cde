"""Reading a dataset's JSON file, with an InputError that names the file (and the line)."""

from __future__ import annotations

import json

from captioner.errors import InputError

__all__ = ["read_json"]


def read_json(path, encoding="utf-8"):
    """The parsed content of the JSON file at `path`; a missing, non-UTF-8 or malformed file
    raises InputError naming it (``utf-8-sig`` also accepts a byte order mark)."""
    try:
        with open(path, encoding=encoding) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None
