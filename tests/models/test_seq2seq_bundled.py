"""End to end on the bundled French->English model (slow; skipped when the file is absent)."""

from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "assets" / "models" / "anki_fr_en.keras"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not MODEL.exists(), reason=f"bundled model {MODEL} not present")]


@pytest.fixture(scope="module")
def model():
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.models.seq2seq import Seq2Seq

    m = keras.models.load_model(MODEL)
    assert isinstance(m, Seq2Seq) and m.kind == "attention"
    return m


def test_bundled_anki_model_translates_and_aligns(model):
    out = model.translate(["Elle visite Paris en septembre.", "", "Il fait très froid aujourd'hui."], beam_size=5)
    assert out[0].text == "she visited paris in september.", out[0].text
    assert out[1].text == ""
    assert out[2].text == "it is very cold today.", out[2].text
    att = out[0].attention
    assert att.shape == (len(out[0].tokens) + 1, len(out[0].source_tokens))
    # the alignment is the seed paper's: "paris" attends to "paris", "september" to "septembre"
    src, tgt = out[0].source_tokens, out[0].tokens
    assert src[int(att[tgt.index("paris")].argmax())] == "paris"
    assert src[int(att[tgt.index("september")].argmax())] == "septembre"


@pytest.mark.xfail(strict=True, reason="known miss of the bundled model (see assets/models/anki_fr_en.json): "
                   "'jane' never occurs in the training pairs and 'afrique' only 6 times")
def test_bundled_anki_model_translates_the_seed_sentence(model):
    text = model.translate(["Jane visite l'Afrique en septembre."], beam_size=5)[0].text.lower()
    assert "jane" in text and "africa" in text and "september" in text and "visit" in text, text
