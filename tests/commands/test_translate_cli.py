"""`captioner translate`: one output line per input line, in order, whatever the input holds."""

import os
import subprocess
import sys
from pathlib import Path

import keras
import pytest

from captioner.cli import main
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    keras.utils.set_random_seed(0)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "b", "c", "d"))
    model = Seq2Seq.of(v, v, kind="attention", embedding_dim=8, units=8, attention_units=8, dropout=0.0,
                    beam_size=2, max_length=6, max_source_length=5)
    path = tmp_path_factory.mktemp("translate_cli") / "tiny.keras"
    model.save(path)
    return str(path)


def test_line_alignment_with_empty_bad_and_long_lines(model_path, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes(b"a b c\n\nd d\n   \nnot \xff utf8\na b c d a b c d\nb\n")
    out = tmp_path / "out.txt"
    att = tmp_path / "att"
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--batch-size", "2", "--attention-dir", str(att)]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) - 1 == 7  # exactly one output line per input line
    assert lines[1] == "" and lines[3] == "" and lines[4] == ""  # empty / blank / bad UTF-8 stay empty
    err = capsys.readouterr().err
    assert "line 2: empty" in err and "line 4: empty" in err and "line 5: not UTF-8" in err
    assert "line 6: longer than the model's 5 source words" in err
    pngs = sorted(p.name for p in att.iterdir())
    assert pngs == ["line00001.png", "line00003.png", "line00006.png", "line00007.png"]
    assert (att / "line00001.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_same_output_whatever_the_batch_size(model_path, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a b\nc\n\nd a b\nb b b\n", encoding="utf-8")
    outs = []
    for bs in ("1", "3", "64"):
        out = tmp_path / f"out{bs}.txt"
        assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out),
                     "--batch-size", bs]) == 0
        outs.append(out.read_text(encoding="utf-8"))
    assert outs[0] == outs[1] == outs[2] and outs[0].count("\n") == 5


def test_stdin_to_stdout_subprocess(model_path):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "captioner", "translate", "--model", model_path,
                           "--beam-size", "1"], input=b"a b\n\nc d\n", capture_output=True, env=env,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert proc.stdout.decode().count("\n") == 3 and proc.stdout.decode().split("\n")[1] == ""
    assert b"line 2: empty" in proc.stderr


def test_missing_or_wrong_model_is_a_clear_error(tmp_path, capsys):
    assert main(["translate", "--model", str(tmp_path / "nope.keras")]) == 2
    assert "nope.keras: model file not found" in capsys.readouterr().err


def test_coverage_penalty_option(model_path, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("a b c\nd a\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--coverage-penalty", "0.4"]) == 0
    assert out.read_text(encoding="utf-8").count("\n") == 2
    bad = tmp_path / "bad.txt"
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(bad),
                 "--coverage-penalty", "-1"]) != 0
    assert "--coverage-penalty -1.0: must be a finite number >= 0" in capsys.readouterr().err
    assert not bad.exists()  # refused before anything was written


def test_an_empty_input_gives_an_empty_output(model_path, tmp_path):
    """Issue 23 item 10: an empty file gave one (empty) output line."""
    src = tmp_path / "empty.txt"
    src.write_bytes(b"")
    out = tmp_path / "out.txt"
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out)]) == 0
    assert out.read_bytes() == b""
    src.write_bytes(b"\xef\xbb\xbf")  # a BOM and nothing else
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out)]) == 0
    assert out.read_bytes() == b""


@pytest.fixture(scope="module")
def subword_model_path(tmp_path_factory):
    from support.subword import tiny_subword_translator

    model = tiny_subword_translator()
    path = tmp_path_factory.mktemp("translate_cli_spm") / "spm.keras"
    model.save(path)
    return str(path)


def test_subword_model_translates_and_draws_word_level_heat_maps(subword_model_path, tmp_path, capsys, monkeypatch):
    import captioner.visualize as visualize
    from captioner.visualize.alignment_heatmap import save_alignment_heatmap

    drawn = []

    def spy(path, source, target, weights, **kw):
        drawn.append((source, target, weights.shape))
        return save_alignment_heatmap(path, source, target, weights, **kw)

    monkeypatch.setattr(visualize, "save_alignment_heatmap", spy)
    src = tmp_path / "in.txt"
    src.write_text("Zwei Hunde laufen über die Straße.\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["translate", "--model", subword_model_path, "--input", str(src), "--output", str(out),
                 "--attention-dir", str(tmp_path / "att")]) == 0
    assert "\u2581" not in out.read_text(encoding="utf-8")
    assert (tmp_path / "att" / "line00001.png").exists()
    source, target, shape = drawn[0]
    assert source == ["Zwei", "Hunde", "laufen", "über", "die", "Straße."] and shape[1] == 6
    assert all("\u2581" not in w for w in target)
    # the SavedModel of a subword translator tokenizes in its graph and writes the same text
    assert main(["export", subword_model_path, "-o", str(tmp_path / "saved")]) == 0
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SentencePiece op)

    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    got = loaded.translate(tf.constant(["Zwei Hunde laufen über die Straße."]))["translation"].numpy()[0].decode()
    assert got == out.read_text(encoding="utf-8").rstrip("\n")


def test_export_without_tensorflow_text_is_a_clear_error(subword_model_path, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tensorflow_text", None)
    assert main(["export", subword_model_path, "-o", str(tmp_path / "saved")]) == 2
    err = capsys.readouterr().err
    assert subword_model_path in err and "needs tensorflow-text" in err and "Traceback" not in err
    assert not (tmp_path / "saved").exists()


def test_utf16_input_is_translated_line_for_line(model_path, tmp_path):
    """Issue 66 item 4: a UTF-16 file (with its byte-order mark) gave 3 output lines for 2 sentences."""
    plain, wide = tmp_path / "plain.txt", tmp_path / "wide.txt"
    plain.write_text("a b c\nd d\n", encoding="utf-8")
    wide.write_bytes("a b c\r\nd d\r\n".encode("utf-16"))
    for src in (plain, wide):
        assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(src) + ".out"]) == 0
    assert (tmp_path / "wide.txt.out").read_text() == (tmp_path / "plain.txt.out").read_text()
    assert len((tmp_path / "wide.txt.out").read_text().split("\n")) == 3


def test_a_rerun_after_a_kill_keeps_the_lines_done_and_translates_the_rest(model_path, tmp_path, capsys):
    """Issue 70 item 4: translate writes OUTPUT.partial batch by batch (the batch commands' one contract):
    the lines a killed run wrote stay, half a line is done again, the output is one line per input line."""
    src = tmp_path / "in.txt"
    src.write_text("a b\nc d\nb a\nd\n")
    out = tmp_path / "out.txt"
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out)]) == 0
    whole = out.read_text().split("\n")
    (tmp_path / "out.txt.partial").write_text("kept from before\nhalf a li")
    assert main(["translate", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--batch-size", "1"]) == 0
    assert out.read_text().split("\n") == ["kept from before"] + whole[1:]
    assert "resuming after 1 rows" in capsys.readouterr().err and not (tmp_path / "out.txt.partial").exists()
