"""Issue 40 items 9 and 15: every beam, length and count option has a documented bound, checked
before any work (the model paths here do not even exist), one line naming the option."""

import pytest

from captioner.cli import main
from captioner.errors import SEARCH_BOUNDS

M = "/nonexistent/model.keras"
CASES = [
    (["translate", "--model", M, "--max-length", "2147483647"], "--max-length 2147483647: must be at most 1000"),
    (["translate", "--model", M, "--beam-size", "-3"], "--beam-size -3: must be >= 1"),
    (["translate", "--model", M, "--max-length", "-1"], "--max-length -1: must be >= 1"),
    (["translate", "--model", M, "--alpha", "nan"], "--alpha nan: must be a finite number"),
    (["transliterate", "--model", M, "--n-best", "1000000"], "--n-best 1000000: must be at most 64"),
    (["generate", "--model", M, "--num-samples", "100000000"], "--num-samples 100000000: must be at most 1000"),
    (["generate", "--model", M, "--length", "1000000"], "--length 1000000: must be at most 100000"),
    (["caption", "/nonexistent", "--model", M, "--beam-size", "100000"], "--beam-size 100000: must be at most 64"),
    (["video", "/nonexistent", "--model", M, "--output", "x.jsonl", "--beam-size", "100000"], "must be at most 64"),
    (["summarize", "--model", M, "--alpha", "-1"], "--alpha -1.0: must be a finite number"),
    (["respond", "--model", M, "--input", M, "--nbest", "1000"], "--nbest 1000: must be at most 64"),
    (["chat", "--model", M, "--beam-size", "-1"], "--beam-size -1: must be >= 1"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in CASES])
def test_out_of_bound_options_are_one_line_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_bounds_are_what_the_options_document():
    assert SEARCH_BOUNDS["beam_size"] == (1, 64) and SEARCH_BOUNDS["max_length"] == (1, 1000)
