"""End to end on the bundled Hindi transliteration model (slow; skipped when the file is absent)."""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "assets" / "models" / "dakshina_hi_translit.keras"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not MODEL.exists(), reason=f"bundled model {MODEL} not present")]


@pytest.fixture(scope="module")
def model():
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.models.seq2seq import Translator

    m = keras.models.load_model(MODEL)
    assert isinstance(m, Translator) and m.kind == "attention" and m.source_tokenizer["chars"]
    return m


def test_bundled_model_writes_devanagari_with_n_best_and_alignment(model):
    out = model.translate(["india", "namaste", "ghar", "pyaar"])
    assert [o.text for o in out] == ["इंडिया", "नमस्ते", "घर", "प्यार"]
    for o in out:
        assert len(o.hypotheses) == model.beam_size == 10
        scores = [s for _, s in o.hypotheses]
        assert scores == sorted(scores, reverse=True) and len({t for t, _ in o.hypotheses}) == 10
        assert o.attention.shape == (len(o.tokens) + 1, len(o.source_tokens))
    # the alignment runs left to right: the first letters are attended first, the last ones last
    att = out[1].attention  # namaste -> न म स ् त े <end>
    assert att[0].argmax() == 0 and att[len(out[1].tokens) - 1].argmax() >= 5


def test_bundled_model_reranks_its_n_best_with_the_training_words(model):
    # the re-ranker in its config: the train lexicon's native words and a character LM over them
    assert model.rescorer is not None and model.rescorer.lm_order == 6 and len(model.rescorer.counts) == 25000
    assert "घर" in model.rescorer.counts and set(model.rescorer.weights) == {"model", "lm", "lm_sum", "length"}
    [rescored] = model.translate(["rehta"])
    [plain] = model.translate(["rehta"], rescore=False)
    assert plain.text == "रेहता" and rescored.text == "रहता"  # the model's choice, and the LM's
    assert plain.model_scores is None and sorted(rescored.model_scores) == sorted(s for _, s in plain.hypotheses)
    assert {t for t, _ in rescored.hypotheses} == {t for t, _ in plain.hypotheses}  # same n-best, new order


def test_bundled_model_cli_running_text_bad_lines_and_n_best(tmp_path, capsys):
    from captioner.cli import main

    src = tmp_path / "in.txt"
    src.write_bytes("main ghar ja raha hoon.\n\nnamaste, India 2024!\nпривет\n".encode() + b"\xff\n" + b"a" * 100_000 + b"\n")
    out = tmp_path / "out.txt"
    assert main(["transliterate", "--model", str(MODEL), "--input", str(src), "--output", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == 6
    assert lines[0].endswith(" घर जा रहा हूं.") or lines[0].endswith(" घर जा रहा हूँ."), lines[0]
    assert lines[1] == "" and lines[2] == "नमस्ते, इंडिया 2024!" and lines[3] == "привет"
    assert lines[4] == "" and lines[5] == ""
    err = capsys.readouterr().err
    assert "in.txt:2: empty" in err and "in.txt:4: word 'привет' is in Cyrillic" in err
    assert "in.txt:5: not UTF-8" in err and "in.txt:6: 100000 characters" in err
    jl = tmp_path / "out.jsonl"
    assert main(["transliterate", "--model", str(MODEL), "--input", str(src), "--output", str(jl),
                 "--n-best", "5"]) == 0
    rows = [json.loads(r) for r in jl.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6 and rows[2]["output"] == lines[2]
    assert [w["source"] for w in rows[2]["words"]] == ["namaste", "India"]
    assert all(len(w["candidates"]) == 5 for w in rows[2]["words"])
    assert all("model_score" in c for w in rows[2]["words"] for c in w["candidates"])  # re-ranked: both scores
