"""End to end on the bundled French->English model (slow; skipped when the file is absent)."""

from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "assets" / "models" / "anki_fr_en.keras"


@pytest.mark.slow
@pytest.mark.skipif(not MODEL.exists(), reason=f"bundled model {MODEL} not present")
def test_bundled_anki_model_translates_the_seed_sentence():
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.models.seq2seq import Seq2Seq

    model = keras.models.load_model(MODEL)
    assert isinstance(model, Seq2Seq) and model.kind == "attention"
    out = model.translate(["Jane visite l'Afrique en septembre.", "", "Il fait beau."], beam_size=5)
    text = out[0].text.lower()
    assert "jane" in text and "africa" in text and "september" in text, out[0].text
    assert "visit" in text, out[0].text
    assert out[1].text == "" and out[2].text
    att = out[0].attention
    assert att.shape == (len(out[0].tokens) + 1, len(out[0].source_tokens))
    # "africa" attends mostly to "afrique", "september" to "septembre"
    src, tgt = out[0].source_tokens, out[0].tokens
    assert src[int(att[tgt.index("africa")].argmax())] == "afrique"
    assert src[int(att[tgt.index("september")].argmax())] == "septembre"
