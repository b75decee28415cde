"""JSON-lines input read once for every command: the dataset readers raise at the first bad line
(`json_objects`), the batch commands report each bad line and go on (`json_rows`)."""

import pytest

from captioner.data.json_file import json_objects, json_rows
from captioner.errors import InputError
from captioner.io import numbered_lines


def test_a_batch_command_gets_every_bad_line_reported_and_the_good_ones(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"text": "a"}\r\n\n[1, 2]\n{"text": \n\xff\xfe\n{"text": "b"}\n')
    assert numbered_lines(path)[0] == (1, '{"text": "a"}') and numbered_lines(path)[4] == (5, None)
    rows = list(json_rows(numbered_lines(path)))
    assert [(n, obj) for n, obj, error in rows if error is None] == [(1, {"text": "a"}), (6, {"text": "b"})]
    errors = {n: error for n, _, error in rows if error}
    assert errors[3] == "expected a JSON object, got list" and errors[4].startswith("not valid JSON")
    assert errors[5] == "not UTF-8 text" and 2 not in errors  # a blank line is skipped
    assert dict((n, e) for n, _, e in json_rows(numbered_lines(path), blank_error="empty"))[2] == "empty"
    assert numbered_lines(tmp_path / "empty.txt") == [] if (tmp_path / "empty.txt").write_text("") == 0 else False
    with pytest.raises(InputError, match="cannot be read"):
        numbered_lines(tmp_path / "missing.jsonl")


def test_a_dataset_reader_stops_at_the_first_bad_line_naming_it(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n[3]\n')
    rows = json_objects(path)
    assert next(rows) == (f"{path}:1", {"a": 1}) and next(rows) == (f"{path}:3", {"a": 2})
    with pytest.raises(InputError, match=r"data.jsonl:4: expected a JSON object, got list"):
        next(rows)
