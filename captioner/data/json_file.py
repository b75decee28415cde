"""Reading a dataset's JSON file, with an InputError that names the file (and the line)."""

from __future__ import annotations

import json

from captioner.errors import InputError, text_file_errors

__all__ = ["read_json"]


def read_json(path, encoding="utf-8"):
    """The parsed content of the JSON file at `path`; a missing, non-UTF-8 or malformed file
    raises InputError naming it (``utf-8-sig`` also accepts a byte order mark)."""
    with text_file_errors(path), open(path, encoding=encoding) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None
