"""Issue 23 item 10: atomic writes leave `.tmp-*` files behind after a kill; the next write of the
same file removes them (only those whose process is gone)."""

import os
import signal
import subprocess
import sys

import pytest

from captioner.io import write_json

KILLED_MID_WRITE = """
import os, signal, sys
from captioner.io import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    open(tmp, "w").write("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    target = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(target)], env=env)
    assert proc.returncode == -signal.SIGKILL
    left = [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]
    assert len(left) == 1 and left[0].startswith(".tmp-report.json.")
    live = tmp_path / f".tmp-report.json.{os.getppid()}-abc.json"  # a live process's: kept
    live.write_text("busy")
    other = tmp_path / ".tmp-other.json.999999999-abc.json"  # another file's: not this write's business
    other.write_text("x")
    write_json(target, {"a": 1})
    assert sorted(os.listdir(tmp_path)) == sorted(["report.json", live.name, other.name])


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path):
    """Issue 40 item 2: the same file by name, by hard link or by symbolic link; a file inside an
    input folder; a missing output, stdout and other files pass."""
    import pytest

    from captioner.errors import InputError
    from captioner.io import check_output_not_input

    src = tmp_path / "in.txt"
    src.write_text("bonjour\n")
    (tmp_path / "hard.txt").hardlink_to(src)
    (tmp_path / "soft.txt").symlink_to(src)
    for out in (src, tmp_path / "hard.txt", tmp_path / "soft.txt", tmp_path / "." / "in.txt"):
        with pytest.raises(InputError, match="is the input"):
            check_output_not_input(str(out), [str(src)])
    folder = tmp_path / "posts"
    folder.mkdir()
    (folder / "old.jsonl").write_text("{}\n")
    with pytest.raises(InputError, match="inside the input folder"):
        check_output_not_input(str(folder / "old.jsonl"), [str(folder)])
    for out in (None, "-", str(tmp_path / "new.txt")):
        check_output_not_input(out, [str(src), None])
    (tmp_path / "other.txt").write_text("x")
    check_output_not_input(str(tmp_path / "other.txt"), [str(src), str(folder)])
    assert src.read_text() == "bonjour\n"


def test_every_text_command_refuses_to_write_over_its_input(tmp_path, capsys):
    """translate, transliterate, classify, entail, summarize, respond, ask and make-qa, each with
    --output its own input: exit 2, one line naming it, the input unchanged (before any model loads:
    the model path here does not even exist)."""
    from captioner.cli import main

    src = tmp_path / "in.txt"
    body = "premise\thypothesis\n"
    src.write_text(body)
    link = tmp_path / "link.txt"
    link.symlink_to(src)
    model = str(tmp_path / "no-model.keras")
    runs = {
        "translate": ["translate", "--model", model, "--input", str(src), "--output", str(link)],
        "transliterate": ["transliterate", "--model", model, "--input", str(src), "--output", str(src)],
        "classify": ["classify", "--model", model, str(src), "--output", str(src)],
        "entail": ["entail", "--model", model, "--input", str(src), "--output", str(link)],
        "summarize": ["summarize", "--model", model, "--input", str(src), "--output", str(src)],
        "respond": ["respond", "--model", model, "--input", str(src), "--output", str(src)],
        "ask": ["ask", "--model", model, "--input", str(src), "--output", str(link)],
        "make-qa": ["make-qa", "--captions", str(src), "--images", str(tmp_path / "list.txt"), "--output", str(link)],
    }
    for name, argv in runs.items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err.strip()
        assert "is the input" in err and len(err.splitlines()) == 1, (name, err)
        assert src.read_text() == body, name


def test_a_fifo_document_is_refused_without_being_opened(tmp_path):
    import os

    import pytest

    from captioner.data.documents import read_document_file
    from captioner.errors import InputError

    os.mkfifo(tmp_path / "post.txt")
    with pytest.raises(InputError, match="not a regular file"):
        read_document_file(tmp_path / "post.txt")  # would block forever if it opened it


def test_an_unwritable_output_is_one_line(tmp_path, capsys):
    """Issue 40 item 15: --output under a read-only folder (here: under a file) was a 23-27 line traceback."""
    from captioner.cli import main

    (tmp_path / "plain").write_text("a file")
    src = tmp_path / "in.txt"
    src.write_text("x\n")
    out = str(tmp_path / "plain" / "out.jsonl")
    for argv in (["make-qa", "--captions", str(src), "--images", str(src), "--output", out],):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "cannot be written" in err, err


def test_batch_output_refuses_an_unwritable_path_in_one_line_and_resumes_what_a_kill_left(tmp_path):
    """The one output contract of the batch commands (issue 70 item 4): rows to OUTPUT.partial as batches end,
    renamed at the end; a rerun skips the rows a killed run wrote (half a line dropped), refuses a partial
    file of another input or with more rows than the input, and a run that failed before its first row
    leaves nothing behind."""
    import pytest

    from captioner.errors import InputError
    from captioner.resumable import batch_output

    (tmp_path / "plain").write_text("a file")
    with pytest.raises(InputError, match="cannot write"):
        with batch_output(str(tmp_path / "plain" / "out.txt"), ["a"], text=True):
            pass
    out = tmp_path / "ok.txt"
    with pytest.raises(RuntimeError):
        with batch_output(str(out), ["a", "b", "c"], text=True) as sink:
            sink.write("A")
            sink.flush()
            sink.write("B")  # not flushed: the kill takes it
            raise RuntimeError("killed")
    assert not out.exists() and (tmp_path / "ok.txt.partial").read_text() == "A\n"
    with open(tmp_path / "ok.txt.partial", "a") as f:
        f.write("half a li")
    with batch_output(str(out), ["a", "b", "c"], text=True) as sink:
        assert sink.done == ["A"] and sink.todo == ["b", "c"]
        for item in sink.todo:
            sink.write(item.upper())
    assert out.read_text() == "A\nB\nC\n" and not (tmp_path / "ok.txt.partial").exists()
    rows = tmp_path / "rows.jsonl"
    (tmp_path / "rows.jsonl.partial").write_text('{"line": 1}\n{"line": 2}\n')
    with pytest.raises(InputError, match="another input"):
        with batch_output(str(rows), [(1,), (3,)], same=lambda row, item: row["line"] == item[0]):
            pass
    with pytest.raises(InputError, match="it has 1 rows"):
        with batch_output(str(rows), [(1,)]):
            pass
    with pytest.raises(RuntimeError):
        with batch_output(str(tmp_path / "none.jsonl"), [1]):
            raise RuntimeError("failed before the first row")
    assert not list(tmp_path.glob("none.jsonl*"))


def test_a_users_text_file_from_another_system_is_read_as_its_words(tmp_path):
    """Issue 66 items 4 and 5: UTF-16/32 with a byte-order mark decoded, CRLF and lone CR as line
    ends, NUL bytes (UTF-16 without a mark) refused by name; one reader for every text command."""
    from captioner.errors import InputError
    from captioner.io import numbered_lines

    text = "Ein Hund läuft.\nZwei Katzen.\n"
    for encoding in ("utf-16", "utf-16-be", "utf-32", "utf-8-sig"):
        path = tmp_path / f"{encoding}.txt"
        raw = text.encode(encoding)
        if encoding == "utf-16-be":
            raw = b"\xfe\xff" + raw
        path.write_bytes(raw)
        assert numbered_lines(str(path)) == [(1, "Ein Hund läuft."), (2, "Zwei Katzen.")], encoding
    for ends in (b"\r\n", b"\r"):
        path = tmp_path / "ends.txt"
        path.write_bytes(b"a b" + ends + b"c" + ends)
        assert numbered_lines(str(path)) == [(1, "a b"), (2, "c")]
    path = tmp_path / "nobom.txt"
    path.write_bytes("ab\ncd\n".encode("utf-16-le"))
    with pytest.raises(InputError, match="nobom.txt: line 1 holds NUL bytes"):
        numbered_lines(str(path))
    path.write_bytes(b"\xff\xfe" + b"a\x00\x00\xd8")  # a UTF-16 mark, then a lone surrogate
    with pytest.raises(InputError, match="does not decode as UTF-16-LE"):
        numbered_lines(str(path))
