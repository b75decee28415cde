"""Transliteration inference: the character Seq2Seq (train a few steps, save, reload in a fresh
process, same outputs), running text cut into words, scripts, n-best lists."""

import json

import keras
import numpy as np
import pytest

import captioner  # noqa: F401  registers the classes
from captioner.inference.transliteration import (
    MAX_LINE_CHARS,
    evaluate_transliteration,
    segments,
    transliterate_text,
    word_script,
)
from captioner.models.caption_decoder_model import masked_sparse_ce
from captioner.models.seq2seq import Seq2Seq, join_tokens, text_tokens
from captioner.text import Vocabulary
from support.translit import generated_pairs
from support import fresh_python


CHARS = {"chars": True, "lower": True}
NATIVE = {"chars": True, "lower": False}


def _tiny_char_model(pairs, units=32, beam_size=4):
    keras.utils.set_random_seed(0)
    src = Vocabulary.build([text_tokens(r, CHARS) for r, _ in pairs], min_count=1)
    tgt = Vocabulary.build([text_tokens(n, NATIVE) for _, n in pairs], min_count=1)
    return Seq2Seq.of(src, tgt, embedding_dim=16, units=units, attention_units=16, dropout=0.0, beam_size=beam_size,
                   max_length=12, max_source_length=12, source_tokenizer=CHARS, target_tokenizer=NATIVE,
                   replace_unk=False)


def _batches(model, pairs, size=32, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.choice(len(pairs), size)
        src = model.encode_sources([text_tokens(pairs[i][0], CHARS) for i in idx])
        tgt = model.target_vocabulary.encode_batch([text_tokens(pairs[i][1], NATIVE) for i in idx])
        yield {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]


def test_character_tokens_and_their_join():
    assert text_tokens("India", CHARS) == list("india")
    assert text_tokens("नमस्ते", NATIVE) == ["न", "म", "स", "्", "त", "े"]  # code points, NFC
    assert join_tokens(["न", "म", "स", "्", "त", "े"], NATIVE) == "नमस्ते"
    assert join_tokens(["a", ",", "b"], {}) == "a, b"  # word models still detokenize


@pytest.fixture(scope="module")
def trained():
    pairs = generated_pairs(200)
    model = _tiny_char_model(pairs, units=48)
    model.compile(optimizer=keras.optimizers.Adam(1e-2, clipnorm=5.0), loss=masked_sparse_ce)
    data = _batches(model, pairs)
    first = float(model.train_on_batch(*next(data)))
    for _ in range(150):
        last = float(model.train_on_batch(*next(data)))
    assert last < 0.5 * first, (first, last)
    return model, pairs


def test_char_model_learns_and_survives_save_load_in_fresh_process(trained, tmp_path):
    model, pairs = trained
    words = [r for r, _ in pairs[:30]]
    out = model.translate(words, beam_size=4)
    exact = np.mean([o.text == n for o, (_, n) in zip(out, pairs[:30])])
    assert exact >= 0.5, [(w, o.text) for w, o in zip(words, out)][:10]
    o = out[0]
    assert o.source_tokens == list(words[0]) and len(o.hypotheses) == 4
    assert [s for _, s in o.hypotheses] == sorted([s for _, s in o.hypotheses], reverse=True)  # n-best, best first
    assert o.attention.shape == (len(o.tokens) + 1, len(words[0]))

    path = tmp_path / "translit.keras"
    model.save(path)
    expected = [[(t, round(s, 4)) for t, s in o.hypotheses] for o in out[:5]]
    code = (
        "import json, keras, captioner\n"
        f"m = keras.models.load_model({str(path)!r})\n"
        f"out = m.translate({words[:5]!r}, beam_size=4)\n"
        "print(json.dumps([[(t, round(s, 4)) for t, s in o.hypotheses] for o in out], ensure_ascii=False))\n"
    )
    loaded = json.loads(fresh_python.last_line(code))
    assert [[t for t, _ in h] for h in loaded] == [[t for t, _ in h] for h in expected]
    np.testing.assert_allclose([[s for _, s in h] for h in loaded], [[s for _, s in h] for h in expected], atol=1e-3)


def test_evaluate_scores_top_k_as_the_field_does(trained):
    model, pairs = trained
    lexicon = {r: [n] for r, n in pairs[:20]}
    scores, predictions = evaluate_transliteration(model, lexicon, beam_size=5)
    assert scores["words"] == 20 and scores["beam_size"] == 5
    assert 0 <= scores["top-1"] <= scores["top-5"] <= 100
    right = sum(p[0] == refs[0] for _, p, refs in predictions)
    assert scores["top-1"] == round(100 * right / 20, 2)
    # a second acceptable reference that is the prediction itself makes every input right
    lexicon = {r: ["x", p[0]] for r, p, _ in predictions}
    assert evaluate_transliteration(model, lexicon, beam_size=1)[0]["top-1"] == 100.0


def test_segments_and_scripts():
    line = "main ghar ja raha hoon, 25 baje! नमस्ते привет"
    assert "".join(segments(line)) == line
    assert segments("ghar, 25!") == ["ghar", ", 25!"]
    assert [word_script(w) for w in ("India", "नमस्ते", "привет", "αβ", "abcд")] == \
        ["LATIN", "DEVANAGARI", "CYRILLIC", "GREEK", "MIXED"]


def test_running_text_keeps_punctuation_numbers_and_native_words(trained):
    model, pairs = trained
    r1, r2 = pairs[0][0], pairs[1][0]
    lines = [f"{r1.title()}, {r2} 42!", r1, "", None, "привет " + r1, "नमस्ते", "x" * (MAX_LINE_CHARS + 1),
             "a" * 50, "Café"]
    words = {r: o.text for r, o in zip([r1, r2], model.translate([r1, r2]))}
    out = transliterate_text(model, lines, n_best=3)
    assert len(out) == len(lines)
    assert out[0].text == f"{words[r1]}, {words[r2]} 42!" and not out[0].warnings
    assert [w for w, _ in out[0].words] == [r1.title(), r2]
    assert out[1].text == words[r1] and len(out[1].candidates) == 3
    alone = model.translate([r1], beam_size=4)[0].hypotheses[:3]
    assert [t for t, _ in out[1].candidates] == [t for t, _ in alone]
    np.testing.assert_allclose([s for _, s in out[1].candidates], [s for _, s in alone], atol=1e-4)
    assert out[0].candidates[0][0] == out[0].text  # rank 0 of every word: the best line
    assert out[2].text == "" and "empty" in out[2].warnings[0]
    assert out[3].text == "" and "not UTF-8" in out[3].warnings[0]
    assert out[4].text == "привет " + words[r1] and "Cyrillic" in out[4].warnings[0]
    assert out[5].text == "नमस्ते" and "no Latin-script word" in out[5].warnings[0]
    assert out[6].text == "" and str(MAX_LINE_CHARS) in out[6].warnings[0]
    assert out[7].text == "a" * 50 and "longer than the 12 letters" in out[7].warnings[0]
    assert not out[8].warnings and out[8].words[0][0] == "Café"  # accents dropped: read as "cafe"
    assert out[8].text == model.translate(["cafe"])[0].text
