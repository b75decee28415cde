"""`captioner summarize`: one JSON row out per row in, in order; bad rows reported and skipped."""

import json

import keras
import pytest

from captioner.cli import main
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from support.rows import assert_rows_close


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    keras.utils.set_random_seed(0)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "b", "c", "d"))
    model = Seq2Seq.of(v, v, kind="attention", embedding_dim=8, units=8, attention_units=8, dropout=0.0,
                    beam_size=2, max_length=6, max_source_length=5, no_repeat_ngram=2)
    path = tmp_path_factory.mktemp("summarize_cli") / "tiny.keras"
    model.save(path)
    return str(path)


def rows_of(path):
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    return [json.loads(line) for line in lines[:-1]]


def test_bad_rows_are_reported_and_skipped_in_order(model_path, tmp_path, capsys):
    good = [{"id": 1, "text": "a b c"}, {"id": "x", "text": "d a"}]
    lines = [json.dumps(good[0]).encode(), b"{not json", json.dumps({"id": 3}).encode(),
             json.dumps({"id": 4, "text": "   "}).encode(), b"[1, 2]", b"", json.dumps({"text": 7}).encode(),
             b'{"text": "caf\xe9"}', json.dumps({"id": "long", "text": "a b " * 60_000}).encode(),
             json.dumps(good[1]).encode()]
    src = tmp_path / "docs.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out.jsonl"
    assert main(["summarize", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--batch-size", "3"]) == 1  # rows failed: every row written, exit status 1 (issue 43 item 5)
    rows = rows_of(out)
    assert len(rows) == len(lines)  # exactly one row per input row
    assert rows[0]["id"] == 1 and isinstance(rows[0]["summary"], str) and "error" not in rows[0]
    assert rows[9]["id"] == "x" and isinstance(rows[9]["summary"], str)
    for i, what in [(1, "not valid JSON"), (2, "no 'text' field"), (3, "empty 'text'"), (4, "expected a JSON object"),
                    (5, "empty line"), (6, "'text' is int"), (7, "not UTF-8")]:
        assert rows[i]["summary"] is None and what in rows[i]["error"], (i, rows[i])
        assert rows[i]["error"].startswith(f"{src}:{i + 1}: ")
    assert rows[2]["id"] == 3 and rows[3]["id"] == 4  # ids kept on error rows
    assert rows[8]["id"] == "long" and rows[8]["truncated"] is True and isinstance(rows[8]["summary"], str)
    err = capsys.readouterr().err
    assert f"{src}:9: 240,000 characters; summarized the first 5 words only" in err
    assert f"{src}:2: not valid JSON" in err and f"{src}:8: not UTF-8 text" in err


@pytest.mark.slow
def test_same_rows_whatever_the_batch_size_and_files_as_arguments(model_path, tmp_path):
    texts = ["a b", "c", "d a b", "b b b a", "a"]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    outs = []
    for batch in ("1", "4"):
        out = tmp_path / f"out{batch}.jsonl"
        assert main(["summarize", "--model", model_path, "--input", str(src), "-o", str(out),
                     "--batch-size", batch]) == 0
        outs.append(rows_of(out))
    assert_rows_close(outs[0], outs[1])  # other batches: floats within 1e-5 (issue 40 item 17)
    files = []
    for k, t in enumerate(texts[:2]):
        f = tmp_path / f"doc{k}.txt"
        f.write_text(t + "\n", encoding="utf-8")
        files.append(str(f))
    (tmp_path / "bad.txt").write_bytes(b"\xfa\xfb")
    out = tmp_path / "files.jsonl"
    assert main(["summarize", "--model", model_path, *files, str(tmp_path / "bad.txt"), str(tmp_path / "none.txt"),
                 "-o", str(out)]) == 1  # two files failed: their rows written, exit status 1
    rows = rows_of(out)
    assert [r["file"] for r in rows] == files + [str(tmp_path / "bad.txt"), str(tmp_path / "none.txt")]
    assert [r["summary"] for r in rows[:2]] == [r["summary"] for r in outs[0][:2]]
    assert rows[2]["summary"] is None and "not UTF-8" in rows[2]["error"]
    assert rows[3]["summary"] is None and "cannot be read" in rows[3]["error"]


def test_refuses_bad_options(model_path, tmp_path, capsys):
    src = tmp_path / "docs.jsonl"
    src.write_text('{"text": "a"}\n', encoding="utf-8")
    assert main(["summarize", "--model", model_path, "--input", str(src), "--no-repeat-ngram", "-1"]) != 0
    assert main(["summarize", "--model", model_path, "--input", str(src), str(src)]) != 0
    err = capsys.readouterr().err
    assert "--no-repeat-ngram must be >= 0" in err and "not both" in err


def test_a_lone_surrogate_row_is_an_error_row_and_the_others_are_answered(model_path, tmp_path, capsys):
    """Issue 40 item 13 and issue 66 item 3: {"text": "\\ud800 tax"} (first, or between good rows) is an
    error row naming the surrogate; every good row's headline is written."""
    for lines in (['{"text": "\\ud800 tax"}', '{"text": "a b"}'],
                  ['{"text": "a b"}', '{"id": "\\udfff", "text": "c"}', '{"text": "d a"}']):
        src = tmp_path / "docs.jsonl"
        src.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = tmp_path / "out.jsonl"
        assert main(["summarize", "--model", model_path, "--input", str(src), "--output", str(out)]) == 1
        rows = rows_of(out)
        assert len(rows) == len(lines)
        bad = [i for i, line in enumerate(lines) if "\\ud" in line]
        for i, row in enumerate(rows):
            if i in bad:
                assert row["summary"] is None and "lone surrogate" in row["error"] and "\\u" in row["error"]
            else:
                assert isinstance(row["summary"], str)
        assert "lone surrogate" in capsys.readouterr().err
        json.dumps(rows, ensure_ascii=False).encode("utf-8")  # the output is valid UTF-8
