"""`captioner transliterate`: one output line per input line, whatever the input holds."""

import json

import keras
import pytest

import captioner  # noqa: F401
from captioner.cli import main
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary

from support.translit import DEVANAGARI, tiny_transliterator


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    model = tiny_transliterator()
    path = tmp_path_factory.mktemp("translit_cli") / "tiny.keras"
    model.save(path)
    return str(path)


BAD = (b"namaste\n\nmain ghar ja raha hoon, 25 baje!\n\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82\n"
       b"not \xff utf8\n" + b"a" * 100_000 + b"\nIndia\n   \n")


def test_bad_lines_are_named_and_every_line_gets_one_output_line(model_path, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes(BAD)
    out = tmp_path / "out.txt"
    assert main(["transliterate", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--batch-size", "3"]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) - 1 == 8  # exactly one output line per input line
    assert lines[1] == "" and lines[4] == "" and lines[5] == "" and lines[7] == ""
    assert lines[2].endswith(", 25 " + lines[2].split(", 25 ")[1]) and lines[2].endswith("!")
    assert lines[3] == "привет"
    assert lines[0] and all(c in DEVANAGARI for c in lines[0])
    err = capsys.readouterr().err
    for needle in (":2: empty", ":4: word 'привет' is in Cyrillic script", ":5: not UTF-8",
                   ":6: 100000 characters", ":8: empty"):
        assert f"in.txt{needle}" in err, err


def test_n_best_writes_json_lines_with_candidates_and_scores(model_path, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(BAD)
    out = tmp_path / "out.jsonl"
    assert main(["transliterate", "--model", model_path, "--input", str(src), "--output", str(out),
                 "--n-best", "3"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 9))
    first = rows[0]
    assert first["input"] == "namaste" and len(first["candidates"]) == 3
    scores = [c["score"] for c in first["candidates"]]
    assert scores == sorted(scores, reverse=True) and first["output"] == first["candidates"][0]["text"]
    assert first["words"][0]["source"] == "namaste" and first["words"][0]["candidates"] == first["candidates"]
    assert [w["source"] for w in rows[2]["words"]] == ["main", "ghar", "ja", "raha", "hoon", "baje"]
    assert rows[1]["warnings"] and rows[1]["candidates"] == [] and rows[4]["input"] is None


def test_bad_options_and_word_models_are_refused(model_path, tmp_path, capsys):
    assert main(["transliterate", "--model", model_path, "--n-best", "0"]) != 0
    assert "--n-best must be >= 1" in capsys.readouterr().err
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a"))
    word_model = tmp_path / "words.keras"
    Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4).save(word_model)
    assert main(["transliterate", "--model", str(word_model), "--input", str(tmp_path / "none.txt")]) != 0
    assert "not a transliteration model" in capsys.readouterr().err
    from captioner.errors import InputError
    from captioner.serving.app import load_models

    with pytest.raises(InputError, match=f"transliterate={word_model}: .*not a transliteration model"):
        load_models({"transliterate": str(word_model)})  # the server refuses it the same way


def test_n_best_of_a_rescoring_model_shows_both_scores(model_path, tmp_path):
    from captioner.decoding.rescoring import LexiconRescorer

    src = tmp_path / "in.txt"
    src.write_text("namaste\nghar ja\n", encoding="utf-8")
    plain_out = tmp_path / "plain.jsonl"
    assert main(["transliterate", "--model", model_path, "--input", str(src), "--output", str(plain_out),
                 "--n-best", "3"]) == 0
    plain = [json.loads(line) for line in plain_out.read_text(encoding="utf-8").splitlines()]
    assert all("model_score" not in c for r in plain for c in r["candidates"])  # no rescorer: as before
    # a rescorer that knows the beam's 3rd best of "namaste" lifts it to the top by its weight
    third = plain[0]["candidates"][2]
    model = keras.models.load_model(model_path)
    model.rescorer = LexiconRescorer({third["text"]: 1}, lm_order=0, weights={"known": 50.0})
    rescored_path = tmp_path / "rescored.keras"
    model.save(rescored_path)
    out = tmp_path / "out.jsonl"
    assert main(["transliterate", "--model", str(rescored_path), "--input", str(src), "--output", str(out),
                 "--n-best", "3"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    first = rows[0]
    assert first["output"] == third["text"] == first["candidates"][0]["text"]
    assert first["candidates"][0]["score"] == pytest.approx(third["score"] + 50.0, abs=2e-4)
    assert first["candidates"][0]["model_score"] == pytest.approx(third["score"], abs=2e-4)
    assert [c["text"] for c in first["candidates"][1:]] == [c["text"] for c in plain[0]["candidates"][:2]]
    assert all(c["score"] == c["model_score"] for c in first["candidates"][1:])
    assert first["words"][0]["candidates"] == first["candidates"]
    # running text: a line candidate's scores are its words' sums, both kinds
    line = rows[1]
    words = line["words"]
    assert line["candidates"][0]["model_score"] == pytest.approx(
        sum(w["candidates"][0]["model_score"] for w in words), abs=1e-3)
    assert line["candidates"][0]["score"] == pytest.approx(sum(w["candidates"][0]["score"] for w in words), abs=1e-3)


def test_a_lone_letter_gets_a_bounded_transliteration(tmp_path):
    """Issue 66 item 9: a model that never ends wrote ~40 repeated characters for "A"; the output of a
    word is bounded by its length (`output_bound`), whatever batch it is decoded in."""
    from captioner.inference.transliteration import output_bound

    model = tiny_transliterator(beam_size=2, max_length=60)
    end = model.decoder.vocab_dense.bias
    end.assign(end.numpy() - 50.0 * (keras.ops.arange(end.shape[0]) == 2).numpy())  # <end> never chosen
    path = tmp_path / "endless.keras"
    model.save(path)
    src = tmp_path / "in.txt"
    src.write_text("A\nnamaskar\n")
    assert main(["transliterate", "--model", str(path), "--input", str(src), "--output", str(tmp_path / "o.txt")]) == 0
    short, long = (tmp_path / "o.txt").read_text(encoding="utf-8").splitlines()
    assert 0 < len(short) <= output_bound(1) < len(long) <= output_bound(len("namaskar"))
