"""The language model (the decoder with no encoder): perplexity against hand-worked cases, the
state carried across windows, sampling through the one Generator, save -> reload -> same."""

import math

import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.errors import InputError
from captioner.models.language_model import LanguageModel, bits_per_token, perplexity
from captioner.text.ngram_lm import KneserNeyLM, add_one_unigram_nll, compare_baselines
from support import fresh_python

SPECIALS = ["<pad>", "<start>", "<end>", "<unk>"]


def fixed_distribution_model(tokens, probs, level="char"):
    """A model whose every step predicts `probs` over `tokens` whatever it read: every weight 0
    but the output bias, log(probs) (-inf-ish for the specials)."""
    model = LanguageModel(SPECIALS + tokens, level=level, embedding_dim=4, units=3)
    weights = [np.zeros_like(w) for w in model.get_weights()]
    bias = np.full(len(SPECIALS) + len(tokens), -1e9, np.float32)
    bias[len(SPECIALS):] = np.log(probs)
    if level == "word":
        bias[2] = np.log(probs[-1])  # <end> takes the last token's share
        bias[-1] = -1e9
    names = [w.path for w in model.weights]
    weights[[i for i, n in enumerate(names) if n.endswith("L_o/bias")][0]] = bias
    model.set_weights(weights)
    return model


def test_perplexity_by_hand():
    # p(a) = 1/2, p(b) = p(c) = 1/4 at every step; "abcab": b, c, a, b are predicted (the first is given)
    model = fixed_distribution_model(["a", "b", "c"], [0.5, 0.25, 0.25])
    r = model.evaluate_text("abcab")
    assert r["tokens"] == 4
    assert r["bits_per_char"] == pytest.approx((2 + 2 + 1 + 2) / 4, rel=1e-5)  # -log2 of each
    assert r["perplexity"] == pytest.approx(2 ** 1.75, rel=1e-5)
    assert perplexity(4 * math.log(2), 4) == pytest.approx(2.0) and bits_per_token(math.log(8), 1) == pytest.approx(3)
    # word level: "x y" = <start> x y <end> predicts x, y, <end>; p(x) = 0.5, p(y) = 0.25, p(<end>) = 0.25
    words = fixed_distribution_model(["x", "y", "z"], [0.5, 0.25, 0.25], level="word")
    r = words.evaluate_text("x y\n\ny x x\n")
    assert r["sentences"] == 2 and r["tokens"] == 3 + 4
    bits = (1 + 2 + 2) + (2 + 1 + 1 + 2)  # x y <end>, y x x <end>: -log2 p of each
    assert r["perplexity"] == pytest.approx(2 ** (bits / 7), rel=1e-5)
    assert r["oov_rate"] == 0.0


def tiny_char_model(seed=0):
    keras.utils.set_random_seed(seed)
    return LanguageModel(SPECIALS + list("abc \n"), level="char", embedding_dim=5, units=7)


def test_state_is_carried_across_windows():
    model = tiny_char_model()
    text = "abc ab\nca b" * 7
    one = model.evaluate_text(text, window=1000)
    for window in (1, 3, 10):
        assert model.evaluate_text(text, window=window)["nll_nats"] == pytest.approx(one["nll_nats"], rel=1e-5)
    parts = model.evaluate_text(text, streams=4)
    assert parts["tokens"] == one["tokens"] - 3  # each part's first character is given


def test_unknown_characters_and_empty_text():
    model = tiny_char_model()
    with pytest.raises(InputError, match=r"doc.txt: line 2, column 3: character 'z'"):
        model.evaluate_text("ab\nabz", source="doc.txt")
    with pytest.raises(InputError, match="nothing to predict"):
        model.evaluate_text("a")
    with pytest.raises(InputError, match="'Q' is not in the model's vocabulary"):
        model.generate("aQ", length=3)


def test_generation_through_the_one_generator():
    model = tiny_char_model()
    greedy = model.generate("ab", length=12, temperature=0)
    assert model.generate("ab", length=12, temperature=1e-4, seed=3) == greedy
    assert model.generate("ab", length=12, temperature=1.5, top_k=1, seed=4) == greedy
    a = model.generate("ab", length=12, temperature=1.0, seed=5, num_samples=3)
    assert a == model.generate("ab", length=12, temperature=1.0, seed=5, num_samples=3)
    assert len(a) == 3 and all(len(t) == 12 and set(t) <= set("abc \n") for t in a)  # no specials, no end
    assert a != model.generate("ab", length=12, temperature=1.0, seed=6, num_samples=3)
    # the prompt is read: greedy after "ab" is greedy after a prompt whose state it shares
    assert model.generate("", length=5, temperature=0) == model.generate("\n", length=5, temperature=0)


def test_kneser_ney_is_a_distribution_and_add_one_by_hand():
    train = [["a", "b", "a"], ["b", "b"], ["a", "c", "b", "a"]]
    for order in (1, 2, 3):
        lm = KneserNeyLM(order).fit(train)
        for history in ([], ["a"], ["<s>", "a"], ["c", "b"], ["z", "z"]):
            total = sum(lm.prob(w, history) for w in ["a", "b", "c", "</s>"])
            assert total == pytest.approx(1.0, abs=1e-9)
    # add-one unigram: counts a 4, b 4, c 1, </s> 3 (N = 12, V = 4); dev "a c" predicts a, c, </s>
    nll, n = add_one_unigram_nll(train, [["a", "c"]])
    assert n == 3 and nll == pytest.approx(-(math.log(5 / 16) + math.log(2 / 16) + math.log(4 / 16)))
    table = compare_baselines(train, [["a", "b"]], orders=(2,))
    assert set(table) == {"add_one_unigram", "kneser_ney_2gram"}


def test_kneser_ney_without_singletons_still_gives_unseen_words_mass():
    """Every n-gram seen twice: the Chen-Goodman discount n1 / (n1 + 2 n2) would be 0 and a word
    unseen after a history impossible (nll raised a math domain error); it stays a distribution."""
    lm = KneserNeyLM(2).fit([["a", "b"], ["a", "b"]])
    assert lm.prob("a", ["a"]) > 0
    assert sum(lm.prob(w, ["a"]) for w in ["a", "b", "</s>"]) == pytest.approx(1.0, abs=1e-9)
    nll, n = lm.nll([["b", "a"]])
    assert n == 3 and math.isfinite(nll)


def test_train_save_reload_in_a_fresh_process(tmp_path):
    """`captioner train lm` on generated text, then the saved file in a fresh process: same
    perplexity and the same seeded samples."""
    from captioner.cli import main

    rng = np.random.default_rng(0)
    words = ["the cat", "a dog", "sat on", "the mat", "ran off"]
    lines = [" ".join(rng.choice(words, 3)) for _ in range(300)]
    data = tmp_path / "text.txt"
    data.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "lm.keras"
    assert main(["train", "lm", "--level", "char", "--data", str(data), "--output-dir", str(tmp_path / "run"),
                 "--model-out", str(out), "--units", "16", "--embedding-dim", "8", "--seq-length", "20",
                 "--epochs", "2", "--steps-per-epoch", "4", "--batch-size", "16"]) == 0
    model = keras.models.load_model(out)
    assert isinstance(model, LanguageModel) and model.level == "char"
    sample = model.generate("the ", length=20, temperature=0.8, top_k=5, seed=2)[0]
    dev = (tmp_path / "dev.txt")
    dev.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    ppl = model.evaluate_text(dev.read_text(encoding="utf-8"))["perplexity"]
    assert ppl < 25  # it learned something (a uniform guess over its vocabulary is ~25)
    code = ("import captioner, keras, json, sys; m = keras.models.load_model(sys.argv[1]); "
            "print(json.dumps([m.generate('the ', length=20, temperature=0.8, top_k=5, seed=2)[0], "
            "m.evaluate_text(open(sys.argv[2], encoding='utf-8').read())['perplexity']]))")
    import json

    fresh_sample, fresh_ppl = json.loads(fresh_python.last_line(code, out, dev, timeout=300))
    assert fresh_sample == sample
    assert fresh_ppl == pytest.approx(ppl, rel=1e-6)
    from captioner.model_card import ModelCard

    card = ModelCard.find(out)
    assert card is not None and card.task == "language-model" and "dev_perplexity" in card.metrics
    assert "kneser_ney_5gram" in card.metrics["baselines"]
