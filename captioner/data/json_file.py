"""Reading a dataset's JSON file, with an InputError that names the file (and the line)."""

from __future__ import annotations

import json

from captioner.errors import InputError, text_file_errors

__all__ = ["json_objects", "json_rows", "read_json"]


def read_json(path, encoding="utf-8"):
    """The parsed content of the JSON file at `path`; a missing, non-UTF-8 or malformed file
    raises InputError naming it (``utf-8-sig`` also accepts a byte order mark)."""
    with text_file_errors(path), open(path, encoding=encoding) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None


def json_objects(path, expected="a JSON object", lines=None):
    """(where, object) of each non-blank line of the JSON-lines file at `path`, in order: where is
    "path:line". The file is read as `read_text_lines` reads (plain or gzip, UTF-8, a byte-order mark
    skipped), or `lines` are used instead. A line that is not JSON, or not an object, raises
    InputError naming path:line (`expected` says what an object should be)."""
    from captioner.data.tsv_pairs import read_text_lines

    for number, line in enumerate(read_text_lines(path) if lines is None else lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: not valid JSON ({e.msg}, column {e.colno})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected {expected}, got {type(obj).__name__}")
        yield where, obj


def json_rows(numbered, blank_error=None):
    """(line number, object or None, error or None) of each JSON line of `numbered` ((number, text or
    None where not UTF-8) pairs, `captioner.io.numbered_lines`), for a batch command that reports a
    bad line and goes on: the error says what is wrong ("not UTF-8 text", "not valid JSON (...)",
    "expected a JSON object, got list"), without the place. Blank lines are skipped, or reported
    with `blank_error`."""
    for number, line in numbered:
        if line is None:
            yield number, None, "not UTF-8 text"
            continue
        if not line.strip():
            if blank_error:
                yield number, None, blank_error
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield number, None, f"not valid JSON ({e.msg}, column {e.colno})"
            continue
        if not isinstance(obj, dict):
            yield number, None, f"expected a JSON object, got {type(obj).__name__}"
            continue
        surrogate = lone_surrogate(obj)
        if surrogate:
            yield number, None, (f"holds an escaped lone surrogate ({surrogate}), which is half of a UTF-16 pair "
                                 "and no character: it cannot be read or written as UTF-8")
            continue
        yield number, obj, None


def lone_surrogate(obj):
    """The first lone surrogate ("\\ud800") in any string of the parsed JSON `obj` (keys included), else
    None. JSON may escape one (`"\\ud800"`); Python then holds a str that no UTF-8 writer accepts."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"\\u{ord(obj[e.start]):04x}"
        return None
    items = obj.items() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
    for item in items:
        for part in (item if isinstance(obj, dict) else (item,)):
            found = lone_surrogate(part)
            if found:
                return found
    return None

