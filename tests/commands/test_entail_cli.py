"""`captioner entail`: one JSON line per input pair, error rows for malformed lines."""

import json

import keras
import pytest

from captioner.cli import main
from captioner.models.entailment import LABELS, EntailmentClassifier
from captioner.text import Vocabulary


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    keras.utils.set_random_seed(0)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "man", "is", "not", "playing"))
    model = EntailmentClassifier.of(v, embedding_dim=8, units=8, hidden_units=8)
    path = tmp_path_factory.mktemp("entail_cli") / "tiny.keras"
    model.save(path)
    return str(path)


def test_output_rows_labels_probabilities_and_error_rows(model_path, tmp_path, capsys):
    src = tmp_path / "pairs.tsv"
    src.write_bytes(b"A man is playing\tA man is not playing\n"
                    b"no tab here\n"
                    b"\tempty premise\n"
                    b"A man\tA man\tNEUTRAL\n"
                    b"bad \xff\tutf8\n"
                    b"!!!\tA man\n")
    out = tmp_path / "out.jsonl"
    assert main(["entail", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--batch-size", "2"]) == 1  # some lines failed
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 6]
    for i in (0, 3):
        assert rows[i]["label"] in LABELS and set(rows[i]["probabilities"]) == set(LABELS)
        assert abs(sum(rows[i]["probabilities"].values()) - 1) < 1e-4
        assert rows[i]["label"] == max(rows[i]["probabilities"], key=rows[i]["probabilities"].get)
    assert rows[3]["hypothesis"] == "A man"  # the third column is ignored
    assert "no tab" in rows[1]["error"] and "empty premise" in rows[2]["error"]
    assert "UTF-8" in rows[4]["error"] and "no words" in rows[5]["error"]
    assert "line 2:" in capsys.readouterr().err


def test_all_good_lines_exit_zero(model_path, tmp_path):
    src = tmp_path / "pairs.tsv"
    src.write_text("a man is playing\ta man is playing\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["entail", "--model", model_path, "--input", str(src), "--output", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1


def test_attention_dir_and_word_relations(tmp_path):
    keras.utils.set_random_seed(1)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "man", "person", "is", "not", "playing"))
    relations = {"base": {}, "synonym": {}, "antonym": {}, "hypernym": {"man": {"person": 1}}, "parents": {}}
    path = tmp_path / "kim.keras"
    EntailmentClassifier.of(v, embedding_dim=8, units=8, hidden_units=8, relations=relations).save(path)
    src = tmp_path / "pairs.tsv"
    src.write_text("A man is playing\tA person is playing\nno tab\nA man\tA man is not playing\n", encoding="utf-8")
    out, att = tmp_path / "out.jsonl", tmp_path / "att"
    assert main(["entail", "--model", str(path), "--input", str(src), "--output", str(out),
                 "--attention-dir", str(att)]) == 1  # line 2 failed, the others are done
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["word_relations"] == [["man", "person", "hypernym", 0.875]]
    assert "error" in rows[1] and rows[2]["word_relations"] == []
    assert sorted(p.name for p in att.iterdir()) == ["line00001.png", "line00003.png"]
    assert (att / "line00003.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("size", ["-1", "0"])
def test_batch_size_below_one_is_refused_and_the_output_kept(model_path, tmp_path, capsys, size):
    """Issue 23 item 4: -1 replaced the output with an empty file, 0 gave a traceback."""
    src = tmp_path / "pairs.tsv"
    src.write_text("a man\ta man\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text("earlier rows\n")
    assert main(["entail", "--model", model_path, "--input", str(src), "--output", str(out), "--batch-size", size]) == 2
    assert "--batch-size must be >= 1" in capsys.readouterr().err
    assert out.read_text() == "earlier rows\n"


def test_an_empty_input_gives_an_empty_output(model_path, tmp_path):
    """Issue 23 item 10: an empty file gave one error line."""
    src = tmp_path / "empty.tsv"
    src.write_bytes(b"")
    out = tmp_path / "out.jsonl"
    assert main(["entail", "--model", model_path, "--input", str(src), "--output", str(out)]) == 0
    assert out.read_bytes() == b""
