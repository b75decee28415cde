import json

import numpy as np
import pytest
from PIL import Image

from captioner.cli import main
from captioner.models.vqa_classifier import VQAClassifier
from captioner.models.vqa_model import VQAModel
from captioner.text.vocabulary import Vocabulary
from support.backbones import tiny_backbone
from support.rows import assert_rows_close

ANSWERS = ["red", "blue", "yes", "no", "circle", "square"]


def _tiny_model(path):
    backbone = tiny_backbone(channels=8, two_layers=False, seed=0)  # 32x32 -> (4, 4, 8)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "what", "color", "is", "the", "shape"))
    clf = VQAClassifier.of(len(vocab), len(ANSWERS), image_dim=8, kind="attention", hops=2, embedding_dim=6,
                        units=10, attention_units=7, dropout=0.0)
    VQAModel(backbone, clf, vocab, ANSWERS).save(path)
    return path


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return str(_tiny_model(tmp_path_factory.mktemp("model") / "vqa.keras"))


def _image(path, seed):
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (48, 40, 3)).astype(np.uint8)).save(path)
    return str(path)


def test_single_question(tmp_path, model_path, capsys):
    img = _image(tmp_path / "a.png", 0)
    assert main(["ask", "--model", model_path, "--image", img, "--question", "What color is the blob?",
                 "--attention-dir", str(tmp_path / "att")]) == 0
    out, err = capsys.readouterr()
    answer, prob = out.splitlines()[0].split("\t")
    assert answer in ANSWERS and 0.0 < float(prob) <= 1.0
    assert len(out.splitlines()) == 5  # the answer, then the next 4 of the top 5
    assert "unknown words" in err and "blob" in err
    pngs = list((tmp_path / "att").glob("*.png"))
    assert len(pngs) == 1 and Image.open(pngs[0]).size[0] > 32


def test_batch_reports_broken_rows_and_goes_on(tmp_path, model_path, capsys):
    good = _image(tmp_path / "good.png", 1)
    (tmp_path / "broken.png").write_bytes(b"this is not a png")
    rows = [
        {"id": 1, "image": good, "question": "what color is the shape?"},
        {"id": 2, "image": str(tmp_path / "broken.png"), "question": "what shape?"},
        {"id": 3, "image": "good.png", "question": "   "},                   # empty question
        {"id": 4, "image": "good.png", "question": "is the shape red?"},     # relative to the input file
        {"id": 5, "image": str(tmp_path / "missing.png"), "question": "what?"},
    ]
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(r) for r in rows[:3]) + "\n{not json\n\n"
                 + "\n".join(json.dumps(r) for r in rows[3:]) + "\n")
    out = tmp_path / "a.jsonl"
    status = main(["ask", "--model", model_path, "--input", str(q), "--output", str(out),
                   "--attention-dir", str(tmp_path / "att"), "--batch-size", "2"])
    assert status == 1
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == 6 and not (tmp_path / "a.jsonl.partial").exists()
    ok = [r for r in got if "error" not in r]
    assert [r["id"] for r in ok] == [1, 4]
    for r in ok:
        assert r["answer"] in ANSWERS and len(r["top_k"]) == 5
        assert r["top_k"][0] == {"answer": r["answer"], "probability": r["probability"]}
        assert sum(a["probability"] for a in r["top_k"]) <= 1.0 + 1e-6
        assert r["attention_png"] and (tmp_path / "att").exists()
    errors = {r.get("id", "line"): r["error"] for r in got if "error" in r}
    assert "broken.png" in errors[2] and "empty question" in errors[3] and "file not found" in errors[5]
    assert "q.jsonl:4: not valid JSON" in errors["line"]
    assert "answered 2 of 6" in capsys.readouterr().err


def test_bad_model_and_arguments(tmp_path, capsys):
    assert main(["ask", "--model", str(tmp_path / "none.keras"), "--image", "x.png", "--question", "q"]) == 2
    assert "model file not found" in capsys.readouterr().err
    assert main(["ask", "--model", str(tmp_path / "none.keras"), "--question", "q"]) == 2
    assert "--image" in capsys.readouterr().err


# Issue 23 items 4, 5, 8, 9: --batch-size checked; OUTPUT.partial resumed and locked; one-line errors.

def _questions(tmp_path, n=7):
    img = _image(tmp_path / "img.png", 3)
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": i, "image": img, "question": f"what color is {i}?"}) + "\n"
                         for i in range(n)))
    return q


@pytest.mark.parametrize("size", ["-1", "0"])
def test_batch_size_below_one_is_refused_and_the_output_kept(tmp_path, model_path, capsys, size):
    q = _questions(tmp_path, 2)
    out = tmp_path / "a.jsonl"
    out.write_text("earlier answers\n")
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(out), "--batch-size", size]) == 2
    assert "--batch-size must be >= 1" in capsys.readouterr().err
    assert out.read_text() == "earlier answers\n" and not (tmp_path / "a.jsonl.partial").exists()


def test_a_rerun_keeps_the_rows_a_killed_run_wrote(tmp_path, model_path):
    q = _questions(tmp_path)
    full = tmp_path / "full.jsonl"
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(full), "-b", "2"]) == 0
    lines = full.read_text().splitlines(keepends=True)
    out = tmp_path / "a.jsonl"
    partial = tmp_path / "a.jsonl.partial"
    marked = json.loads(lines[2])
    marked["answer_from_the_killed_run"] = True  # shows the row was kept, not recomputed
    partial.write_text(lines[0] + lines[1] + json.dumps(marked) + "\n" + lines[3][:25])  # and half a line
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(out), "-b", "2"]) == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in got] == list(range(7)) and got[2].get("answer_from_the_killed_run")
    # rows of the resumed run are computed in other batches: the same answers, floats within 1e-5
    assert_rows_close(got[3:], [json.loads(x) for x in lines[3:]])
    assert not partial.exists()


def test_a_second_writer_is_refused_and_a_foreign_partial_kept(tmp_path, model_path, capsys):
    fcntl = pytest.importorskip("fcntl")
    q = _questions(tmp_path, 3)
    out = tmp_path / "a.jsonl"
    partial = tmp_path / "a.jsonl.partial"
    partial.write_text('{"id": 0, "image": "x", "question": "y", "answer": "red"}\n')
    with open(partial, "ab") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run is writing
        assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(out)]) == 2
    assert "another captioner process is writing" in capsys.readouterr().err
    assert partial.read_text() == '{"id": 0, "image": "x", "question": "y", "answer": "red"}\n'
    # unlocked, but the row is for another input: refused, not thrown away
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(out)]) == 2
    assert "partial output is from another input" in capsys.readouterr().err
    assert partial.read_text() == '{"id": 0, "image": "x", "question": "y", "answer": "red"}\n'
    assert not out.exists()


def test_bad_utf8_non_text_question_and_a_new_output_folder(tmp_path, model_path, capsys):
    img = _image(tmp_path / "img.png", 4)
    q = tmp_path / "q.jsonl"
    q.write_bytes(json.dumps({"image": img, "question": "what color?"}).encode() + b"\n"
                  + b'{"image": "x.png", "question": "caf\xe9"}\n'
                  + json.dumps({"image": img, "question": 5}).encode() + b"\n")
    out = tmp_path / "new" / "folder" / "a.jsonl"
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert "answer" in rows[0] and "q.jsonl:2: not UTF-8" in rows[1]["error"]
    assert "'question' must be text, got int 5" in rows[2]["error"]
    assert main(["ask", "--model", model_path, "--input", str(q), "--output", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_sigkill_mid_run_loses_no_answer_and_leaves_no_half_line(tmp_path, model_path):
    """A real kill: the rerun keeps every row the killed run finished and answers the rest once."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    q = _questions(tmp_path, 400)
    out = tmp_path / "a.jsonl"
    partial = tmp_path / "a.jsonl.partial"
    cmd = [sys.executable, "-m", "captioner", "ask", "--model", model_path, "--input", str(q), "--output", str(out),
           "--batch-size", "1"]
    env = dict(os.environ, PYTHONPATH=str(repo))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if partial.exists() and partial.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    written = partial.read_bytes()
    finished = [json.loads(line) for line in written[: written.rfind(b"\n") + 1].splitlines()]
    assert len(finished) >= 3
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == list(range(400)) and rows[: len(finished)] == finished


def test_dont_know_rule_in_single_and_batch_mode(tmp_path, capsys):
    """A model with a "don't know" rule says so (with its best guess) instead of answering."""
    backbone = tiny_backbone(channels=8, two_layers=False, seed=0)  # 32x32 -> (4, 4, 8)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "what", "color", "is", "the", "shape", "why"))
    clf = VQAClassifier.of(len(vocab), len(ANSWERS), image_dim=8, kind="attention", hops=2, embedding_dim=6,
                        units=10, attention_units=7, dropout=0.0)
    # an untrained model: top probability ~1/6, below a threshold of 0.9 -> "don't know" for every question
    path = str(tmp_path / "rule.keras")
    VQAModel(backbone, clf, vocab, ANSWERS, min_probability=0.9, question_starts=["is", "what"]).save(path)
    img = _image(tmp_path / "a.png", 0)
    assert main(["ask", "--model", path, "--image", img, "--question", "what color is the shape?"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("don't know\t(confidence ") and "below its threshold 0.90; best guess: " in first
    rows = [{"image": img, "question": "why is the shape red?"}, {"image": img, "question": "blah blah"}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["ask", "--model", path, "--input", str(tmp_path / "q.jsonl")]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["known"] for r in out] == [False, False]
    assert out[0]["reason"] == "questions starting with 'why' were not in its training data"
    assert out[1]["reason"] == "questions starting with 'blah' were not in its training data"
    assert out[0]["answer"] in ANSWERS  # the best guess is still there, marked as such

    # without a threshold or question starts (an older file) only a question of unknown words is refused
    assert main(["ask", "--model", str(_tiny_model(tmp_path / "plain.keras")), "--input",
                 str(tmp_path / "q.jsonl")]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["known"] for r in out] == [True, False]
    assert out[1]["reason"] == "none of the question's words is in its vocabulary"


def test_named_models(monkeypatch):
    from captioner.commands import ask

    assert set(ask.MODELS) == {"photo", "easy-vqa", "flickr8k"} and ask.DEFAULT_MODEL == ask.MODELS["photo"]
    assert ask.MODELS["flickr8k"] == ask.MODELS["photo"]  # the old name still works
    assert ask.DEFAULT_MODEL.name == "photo_vqa.keras" and ask.MODELS["easy-vqa"].name == "easy_vqa.keras"
    seen = []
    monkeypatch.setattr("captioner.models.loading.load_model_file", lambda path, *a, **k: seen.append(path))
    ask.load_model("easy-vqa")
    ask.load_model(None)
    assert seen == [ask.MODELS["easy-vqa"], ask.MODELS["photo"]]
