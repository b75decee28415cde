"""`captioner generate` and `captioner evaluate-lm`: output format and bad input."""

import json

import keras
import pytest

from captioner.cli import main
from captioner.models.language_model import LanguageModel

SPECIALS = ["<pad>", "<start>", "<end>", "<unk>"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    keras.utils.set_random_seed(0)
    d = tmp_path_factory.mktemp("lm_cli")
    char = LanguageModel.of(SPECIALS + list("abc \n:"), level="char", embedding_dim=4, units=6)
    word = LanguageModel.of(SPECIALS + ["a", "dog", "runs", "cat"], level="word", embedding_dim=4, units=6)
    gpt = LanguageModel.of(SPECIALS + list("abc \n:"), level="char", arch="transformer", units=4, num_layers=1,
                        num_heads=2, context=4)
    char.save(d / "char.keras")
    word.save(d / "word.keras")
    gpt.save(d / "gpt.keras")
    return str(d / "char.keras"), str(d / "word.keras"), str(d / "gpt.keras")


def _json_last_line(out):
    return json.loads(out.strip().splitlines()[-1])


def test_evaluate_char_model(models, tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_bytes(b"ab c\nabc:\n")
    assert main(["evaluate-lm", "--model", models[0], "--input", str(text)]) == 0
    r = _json_last_line(capsys.readouterr().out)
    assert r["tokens"] == 9 and r["perplexity"] > 1 and r["bits_per_char"] > 0 and r["skipped_lines"] == 0
    same = tmp_path / "w.txt"
    same.write_bytes(b"ab c\nabc:\n")
    assert main(["evaluate-lm", "--model", models[0], "--input", str(same), "--window", "2"]) == 0
    assert _json_last_line(capsys.readouterr().out)["perplexity"] == pytest.approx(r["perplexity"], rel=1e-5)


def test_evaluate_a_transformer_model_with_its_stride(models, tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_bytes(b"ab c\nabc:\nca b\n")
    gpt = keras.models.load_model(models[2])
    for stride in (None, 1, 4):
        assert main(["evaluate-lm", "--model", models[2], "--input", str(text),
                     *(["--stride", str(stride)] if stride else [])]) == 0
        r = _json_last_line(capsys.readouterr().out)
        expected = gpt.evaluate_text(text.read_text(), stride=stride)
        assert r["stride"] == (stride or 2) and r["tokens"] == 14
        assert r["perplexity"] == pytest.approx(expected["perplexity"], rel=1e-5)
    assert main(["evaluate-lm", "--model", models[2], "--input", str(text), "--stride", "5"]) == 2
    assert "--stride 5: must be in 1 .. 4" in capsys.readouterr().err
    assert main(["evaluate-lm", "--model", models[0], "--input", str(text), "--stride", "2"]) == 2
    assert "this one is recurrent" in capsys.readouterr().err


def test_evaluate_skips_bad_lines_and_says_which(models, tmp_path, capsys):
    text = tmp_path / "bad.txt"
    text.write_bytes(b"ab c\nnot \xff utf8\nabz\nabc:\n")
    assert main(["evaluate-lm", "--model", models[0], "--input", str(text)]) == 0
    captured = capsys.readouterr()
    assert "line 2: not UTF-8" in captured.err
    assert "line 3, column 3: character 'z' is not in the model's vocabulary" in captured.err
    r = _json_last_line(captured.out)
    assert r["skipped_lines"] == 2 and r["tokens"] == 9  # "ab c\nabc:\n" is what is left


@pytest.mark.parametrize("content, message", [(b"", "empty"), (b"  \n\n", "empty"), (b"zzz\n", "nothing to predict")])
def test_evaluate_refuses_empty_or_unreadable(models, tmp_path, capsys, content, message):
    text = tmp_path / "e.txt"
    text.write_bytes(content)
    assert main(["evaluate-lm", "--model", models[0], "--input", str(text)]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_missing_files(models, tmp_path, capsys):
    assert main(["evaluate-lm", "--model", models[0], "--input", str(tmp_path / "none.txt")]) == 2
    assert "none.txt: cannot be read" in capsys.readouterr().err
    text = tmp_path / "t.txt"
    text.write_text("ab\n", encoding="utf-8")
    assert main(["evaluate-lm", "--model", str(tmp_path / "no.keras"), "--input", str(text)]) == 2
    assert "no.keras: model file not found" in capsys.readouterr().err


def test_evaluate_word_model(models, tmp_path, capsys):
    text = tmp_path / "s.txt"
    text.write_text("a dog runs\n\nA cat flies!\n", encoding="utf-8")
    assert main(["evaluate-lm", "--model", models[1], "--input", str(text)]) == 0
    r = _json_last_line(capsys.readouterr().out)
    assert r["level"] == "word" and r["sentences"] == 2 and r["tokens"] == 4 + 4
    assert "bits_per_char" not in r and r["oov_rate"] == pytest.approx(1 / 6)  # "flies" of 6 words


def test_generate_seeded_and_json(models, capsys):
    args = ["generate", "--model", models[0], "--prompt", "ab", "--temperature", "0.9", "--top-k", "3",
            "--length", "15", "--seed", "4", "--num-samples", "2", "--json"]
    assert main(args) == 0
    first = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert main(args) == 0
    again = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert first == again and len(first) == 2
    assert all(s["text"] == "ab" + s["continuation"] and len(s["continuation"]) == 15 for s in first)
    assert main(["generate", "--model", models[1], "--prompt", "a zebra", "--temperature", "0", "--length", "5"]) == 0
    captured = capsys.readouterr()
    assert "read as <unk>: zebra" in captured.err and captured.out.startswith("a zebra")


@pytest.mark.parametrize("extra, message", [
    (["--temperature", "-1"], "--temperature -1.0: must be a finite number >= 0"),
    (["--top-k", "-3"], "--top-k -3: must be >= 0"),
    (["--length", "0"], "--length 0: must be >= 1"),
    (["--prompt", "abQ"], "prompt: line 1, column 3: character 'Q' is not in the model's vocabulary"),
    (["--prompt", "ab\udcff"], "--prompt: not valid UTF-8"),
])
def test_generate_bad_input(models, capsys, extra, message):
    assert main(["generate", "--model", models[0], *extra]) == 2
    assert message in capsys.readouterr().err


def test_train_lm_with_too_small_a_limit_is_one_line_not_a_stopiteration(tmp_path, capsys):
    """Issue 43 item 2: `train lm --level char ... --limit 20` ended in a StopIteration traceback."""
    text = tmp_path / "t.txt"
    text.write_text("ROMEO:\nBut soft, what light through yonder window breaks?\n\n" * 60, encoding="utf-8")
    assert main(["train", "lm", "--level", "char", "--data", str(text), "--limit", "20",
                 "--output-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "makes no batch" in err[-1] and "characters for `train lm --level char`" in err[-1]


def test_evaluate_reads_crlf_and_utf16_as_the_same_text(models, tmp_path, capsys):
    """Issue 66 items 4-5: CRLF lines were all skipped ("'\\r' is not in the vocabulary"), UTF-16 got a
    perplexity of NUL bytes; both now read as the same text as the UTF-8 file."""
    figures = []
    for name, raw in (("unix.txt", b"ab c\nabc:\n"), ("dos.txt", b"ab c\r\nabc:\r\n"),
                      ("utf16.txt", "ab c\nabc:\n".encode("utf-16"))):
        (tmp_path / name).write_bytes(raw)
        assert main(["evaluate-lm", "--model", models[0], "--input", str(tmp_path / name)]) == 0
        figures.append(_json_last_line(capsys.readouterr().out))
    for r in figures[1:]:
        assert r["tokens"] == figures[0]["tokens"] and r["skipped_lines"] == 0
        assert r["perplexity"] == pytest.approx(figures[0]["perplexity"], rel=1e-5)
    (tmp_path / "nobom.txt").write_bytes("ab c\n".encode("utf-16-le"))
    assert main(["evaluate-lm", "--model", models[0], "--input", str(tmp_path / "nobom.txt")]) == 2
    assert "holds NUL bytes" in capsys.readouterr().err
