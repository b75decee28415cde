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
    model = LanguageModel.of(SPECIALS + tokens, level=level, embedding_dim=4, units=3)
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
    return LanguageModel.of(SPECIALS + list("abc \n"), level="char", embedding_dim=5, units=7)


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


# --------------------------------------------------------------------- the Transformer architecture

def tiny_transformer(seed=0, context=6, level="char"):
    keras.utils.set_random_seed(seed)
    tokens = list("abc \n") if level == "char" else ["x", "y", "z"]
    return LanguageModel.of(SPECIALS + tokens, level=level, arch="transformer", units=8, num_layers=2, num_heads=2,
                         context=context)


def _sliding_nll(model, ids, stride):
    """The reference: windows start at 0, stride, 2 stride, ... and each covers the next `context`
    targets; a target is scored by the first window covering it, from that window's start."""
    total = 0.0
    for t in range(1, len(ids)):
        start = max(0, -(-(t - model.context) // stride)) * stride
        logits = model({"tokens": ids[None, start:t]}).numpy()[0, -1].astype(np.float64)
        total -= logits[ids[t]] - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
    return total


def test_transformer_perplexity_slides_its_context_window():
    """Each character is scored once: stride 1 gives every character the full context (or all
    before it), stride = context gives non-overlapping blocks (nanoGPT's validation), the default
    is half the context."""
    model = tiny_transformer(context=6)
    text = "abc ab\nca b" * 3  # 33 characters, 32 predicted
    ids = model.text_ids(text)
    for stride in (1, 3, 6):
        r = model.evaluate_text(text, stride=stride)
        assert r["tokens"] == 32
        assert r["nll_nats"] == pytest.approx(_sliding_nll(model, ids, stride), rel=1e-4), stride
    assert model.evaluate_text(text)["nll_nats"] == model.evaluate_text(text, stride=3)["nll_nats"]
    assert model.windows_needed(model.streams_of(text)) == len(model._context_windows(33, 3)) == 10
    with pytest.raises(ValueError, match="stride"):
        model.evaluate_text(text, stride=7)


def test_transformer_generation_is_the_teacher_forced_argmax_also_past_its_context():
    """Greedy decoding through the one Generator (the step's state: the visible context, sliding
    once full) picks, at every step, the argmax of a teacher-forced call over the last `context`
    ids; samples are seeded; a word model stops at <end>."""
    model = tiny_transformer(context=4)
    prompt = "ab c"
    text = model.generate(prompt, length=9, temperature=0)[0]
    ids = list(model.text_ids(prompt))
    for _ in range(9):
        logits = model({"tokens": np.asarray(ids[-4:], np.int32)[None]}).numpy()[0, -1]
        logits[:4] = -np.inf  # the specials are banned
        ids.append(int(logits.argmax()))
    assert text == "".join(model.vocabulary.tokens[i] for i in ids[len(prompt):])
    samples = model.generate("a", length=10, temperature=1.0, seed=3, num_samples=2)
    assert samples == model.generate("a", length=10, temperature=1.0, seed=3, num_samples=2)
    assert all(len(s) == 10 and set(s) <= set("abc \n") for s in samples)
    assert model.generate("a", length=6, temperature=0, beam_size=3)[0]
    words = tiny_transformer(level="word", context=8)
    assert all(len(t.split()) <= 5 for t in words.generate("x", length=5, temperature=1.0, seed=1, num_samples=4))


def test_train_a_transformer_lm_save_and_reload(tmp_path):
    """`captioner train lm --arch transformer`: trains, is saved and loads in safe mode with the same
    perplexity and samples; the card names the architecture; bad shapes are refused before work."""
    from captioner.cli import main
    from captioner.model_card import ModelCard

    data = tmp_path / "text.txt"
    data.write_text("\n\n".join(["the cat sat on the mat", "a dog ran off"] * 60) + "\n", encoding="utf-8")
    out = tmp_path / "gpt.keras"
    common = ["train", "lm", "--arch", "transformer", "--data", str(data), "--units", "16", "--num-heads", "2",
              "--seq-length", "16", "--batch-size", "16", "--dropout", "0"]
    assert main([*common, "--num-layers", "1", "--output-dir", str(tmp_path / "run"), "--model-out", str(out),
                 "--epochs", "2", "--steps-per-epoch", "8", "--learning-rate", "0.01"]) == 0
    model = keras.models.load_model(out)
    assert (model.arch, model.num_layers, model.context, model.decoder.num_heads) == ("transformer", 1, 16, 2)
    text = "the cat sat on the mat\n\na dog ran off\n"
    ppl = model.evaluate_text(text)["perplexity"]
    assert ppl < 12  # learned something (uniform over the vocabulary: ~19)
    again = keras.models.load_model(out)
    assert again.evaluate_text(text)["perplexity"] == pytest.approx(ppl, rel=1e-6)
    assert again.generate("the", length=12, temperature=0.8, seed=1) == model.generate("the", length=12,
                                                                                       temperature=0.8, seed=1)
    card = ModelCard.find(out)
    assert "causal Transformer decoder (1 blocks, 2 heads, 16 units)" in card.notes
    assert main([*common, "--units", "15", "--output-dir", str(tmp_path / "bad")]) != 0
    assert not (tmp_path / "bad" / "model.keras").exists()


def test_check_generation_names_the_first_setting_out_of_bounds():
    from captioner.errors import InputError
    from captioner.models.language_model import GENERATION_BOUNDS, check_generation

    check_generation({"temperature": 0.0, "top_k": 0, "length": None, "num_samples": 1000, "beam_size": 1, "seed": 0})
    flag = lambda k: "--" + k.replace("_", "-")  # noqa: E731
    for values, message in [({"temperature": float("nan")}, "--temperature nan: must be a finite number >= 0"),
                            ({"temperature": -0.5}, "--temperature -0.5: must be a finite number >= 0"),
                            ({"top_k": 3, "num_samples": 1001}, "--num-samples 1001: must be at most 1000"),
                            ({"seed": 2**31}, f"--seed {2**31}: must be at most {2**31 - 1}")]:
        with pytest.raises(InputError) as info:
            check_generation(values, name=flag)
        assert str(info.value) == message
    with pytest.raises(InputError, match="^top_k 5: must be at most 4$"):
        check_generation({"top_k": 5}, {**GENERATION_BOUNDS, "top_k": (0, 4)})
