"""`captioner classify` on files and folders with a tiny model: one row per document in order,
a Latin-1 post read, broken files reported and skipped, the output written whole."""

import json
import os

import pytest

from captioner.cli import main
from support import han



@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("han") / "han.keras"
    han.tiny_classifier(seed=0).inference_copy().save(path)
    return path


def _posts(root):
    (root / "sub").mkdir(parents=True)
    (root / "a_post").write_text("From: x@y.edu\nSubject: Rockets\n\n> quoted orbit\nThe rocket went to orbit.\n")
    (root / "sub" / "b_latin1").write_bytes("Subject: Caf\xe9\n\nThe doctor at the caf\xe9 clinic.\n".encode("latin-1"))
    (root / "sub" / "c_plain.txt").write_text("The brake of the sedan.\n\nIt was the engine.\n")
    (root / "sub" / "d_binary").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (root / "sub" / "e_empty").write_text("")
    (root / ".hidden").write_text("Subject: x\n\nskipped\n")
    return root


def test_files_and_folders_one_row_each_errors_reported(model_path, tmp_path, capsys):
    docs = _posts(tmp_path / "docs")
    out = tmp_path / "out.jsonl"
    missing = tmp_path / "nope"
    code = main(["classify", "--model", str(model_path), str(docs), str(missing), "--output", str(out)])
    assert code == 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    sources = [r["source"] for r in rows]
    assert sources == [str(docs / "a_post"), str(docs / "sub" / "b_latin1"), str(docs / "sub" / "c_plain.txt"),
                       str(docs / "sub" / "d_binary"), str(docs / "sub" / "e_empty"), str(missing)]
    a, b, c, d, e, m = rows
    assert a["read_as"] == "post" and a["sentences"] == ["Rockets", "The rocket went to orbit ."]  # no quote
    assert b["encoding"] == "latin-1" and "café" in b["sentences"][0].lower() + " ".join(b["sentences"]).lower()
    assert c["read_as"] == "text" and len(c["sentences"]) == 2
    for r in (a, b, c):
        assert r["label"] in han.TOPICS and set(r["probabilities"]) == set(han.TOPICS)
        assert abs(sum(r["sentence_weights"]) - 1) < 1e-3
        assert [len(w) for w in r["word_weights"]] == [len(s.split()) for s in r["sentences"]]
        assert all(abs(sum(w) - 1) < 1e-3 for w in r["word_weights"])
    assert "binary" in d["error"] and str(docs / "sub" / "d_binary") in d["error"]
    assert "empty file" in e["error"] and "file not found" in m["error"]
    err = capsys.readouterr().err
    assert "d_binary" in err and "3 of 6 file(s) could not be classified" in err


def test_formats_and_a_bad_model(model_path, tmp_path):
    docs = _posts(tmp_path / "docs")
    out = tmp_path / "out.jsonl"
    assert main(["classify", "--model", str(model_path), str(docs / "sub" / "c_plain.txt"), "--format", "post",
                 "--output", str(out)]) == 1
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert "header" in row["error"] and "c_plain.txt:1" in row["error"]
    assert main(["classify", "--model", str(model_path), str(docs / "a_post"), "--format", "text",
                 "--output", str(out)]) == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["read_as"] == "text" and row["sentences"][0].startswith("From")
    assert main(["classify", "--model", str(tmp_path / "none.keras"), str(docs), "--output", str(out)]) == 2


def test_a_huge_one_line_file_is_cut_and_reported_and_its_neighbour_classified(model_path, tmp_path):
    """Issue 40 item 14: a 50 MB one-line file raised NLTK's regex TimeoutError (a traceback) and
    the other file of the folder got no row."""
    import time

    folder = tmp_path / "posts"
    folder.mkdir()
    (folder / "a_huge.txt").write_text("word " * 4_000_000, encoding="utf-8")  # 20 MB, one line
    (folder / "b.txt").write_text("the team won the game. the fans cheered.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    start = time.perf_counter()
    assert main(["classify", "--model", str(model_path), str(folder), "--output", str(out)]) == 0
    assert time.perf_counter() - start < 300  # not a hang (it takes seconds)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [os.path.basename(r["source"]) for r in rows] == ["a_huge.txt", "b.txt"]
    assert rows[0]["truncated"] is True and rows[0]["label"] and rows[1]["label"]
