"""The bundled language models, end to end (slow: they load real files)."""

import math
from pathlib import Path

import pytest

from captioner.model_card import ModelCard
from captioner.models.language_model import load_language_model

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "models"
CHAR, WORD = ASSETS / "shakespeare_char_lm.keras", ASSETS / "flickr8k_word_lm.keras"

# from the carved dev part of Tiny Shakespeare (Measure for Measure), never trained on
VERSE = """ISABELLA:
Let me hear you speak farther. I have spirit to do
anything that appears not foul in the truth of my spirit.
"""


@pytest.mark.slow
@pytest.mark.skipif(not CHAR.exists(), reason="no bundled character model")
def test_bundled_character_model():
    model = load_language_model(CHAR)
    assert model.level == "char"
    r = model.evaluate_text(VERSE)
    assert r["perplexity"] < 6.0 and r["bits_per_char"] == pytest.approx(math.log2(r["perplexity"]))
    a = model.generate("ROMEO:\n", length=120, temperature=0.7, top_k=20, seed=3)
    assert a == model.generate("ROMEO:\n", length=120, temperature=0.7, top_k=20, seed=3)
    assert len(a[0]) == 120 and set(a[0]) <= set(model.vocabulary.tokens[4:])
    card = ModelCard.find(CHAR)
    assert card.task == "language-model" and card.metrics["dev_perplexity"] < 4.5


@pytest.mark.slow
@pytest.mark.skipif(not WORD.exists(), reason="no bundled word model")
def test_bundled_word_model():
    model = load_language_model(WORD)
    assert model.level == "word"
    good = model.evaluate_text("a dog runs through the grass\n")["perplexity"]
    bad = model.evaluate_text("grass the through runs dog a\n")["perplexity"]
    assert good < 60 and bad > 3 * good  # word order matters to it
    text = model.generate("", length=30, temperature=0)[0]
    assert text and len(text.split()) < 30  # a sentence that ends
    card = ModelCard.find(WORD)
    assert card.task == "language-model"
    assert card.metrics["dev_perplexity"] < card.metrics["baselines"]["kneser_ney_3gram"]["perplexity"]
