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
    from captioner.models.seq2seq import Translator

    m = keras.models.load_model(MODEL)
    assert isinstance(m, Translator) and m.kind == "attention"
    return m


def test_bundled_anki_model_translates_and_aligns(model):
    out = model.translate(["Jane visite l'Afrique en septembre.", "", "Il fait très froid aujourd'hui."], beam_size=5)
    assert out[1].text == ""
    assert out[2].text == "It is very cold today.", out[2].text  # truecased (`captioner model add-truecaser`)
    # the seed paper's example: "jane" never occurs in the training pairs, so it is <unk> on the way
    # in; the model writes <unk> there (--copy-unk-rate) and the attention puts "jane" back
    text = out[0].text
    assert text.startswith("Jane ") and "Africa" in text and "September" in text and "visit" in text, text
    assert out[0].replaced_unk == 1
    att = out[0].attention
    assert att.shape == (len(out[0].tokens) + 1, len(out[0].source_tokens))
    # the alignment is the seed paper's: each word attends to its translation
    src, tgt = out[0].source_tokens, [w.lower() for w in out[0].tokens]
    for target_word, source_word in (("jane", "jane"), ("africa", "afrique"), ("september", "septembre")):
        assert src[int(att[tgt.index(target_word)].argmax())] == source_word, (target_word, src, tgt)
