"""Subword (SentencePiece) translators: the model in the config, word-level alignment, <unk> copy, case."""

import keras
import numpy as np
import pytest

from captioner.models.seq2seq import Seq2Seq, text_tokens, word_alignment
from captioner.text.subword import piece_vocabulary, to_base64, train_sentencepiece
from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary

EN = ["A man in an orange hat.", "Two dogs play in the snow.", "A woman rides a bike over the street."] * 10
DE = ["Ein Mann mit einem orangefarbenen Hut.", "Zwei Hunde spielen im Schnee.",
      "Eine Frau fährt Fahrrad über die Straße."] * 10


@pytest.fixture(scope="module")
def tokenizers():
    return ({"spm": to_base64(train_sentencepiece(EN, 50)), "lower": False},
            {"spm": to_base64(train_sentencepiece(DE, 70)), "lower": False})


def _model(tokenizers, **kw):
    keras.utils.set_random_seed(0)
    src, tgt = tokenizers
    vocab = [Vocabulary(SPECIAL_TOKENS + tuple(piece_vocabulary(t["spm"]))) for t in tokenizers]
    args = dict(embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=12,
                source_tokenizer=src, target_tokenizer=tgt)
    args.update(kw)
    return Seq2Seq.of(*vocab, **args)


def test_save_load_safe_mode_gives_the_same_translations(tokenizers, tmp_path):
    model = _model(tokenizers)
    sentences = ["A man in Zürich.", "Two dogs."]
    before = model.translate(sentences)
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras", safe_mode=True)
    assert loaded.source_tokenizer == model.source_tokenizer and loaded.target_tokenizer["spm"] == tokenizers[1]["spm"]
    after = loaded.translate(sentences)
    for a, b in zip(before, after):
        assert a.text == b.text and a.pieces == b.pieces
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-6)
    # the source side reads pieces, shows words; no piece marker in any text
    t = after[0]
    assert t.source_tokens == ["A", "man", "in", "Zürich."] and t.source_pieces == text_tokens(sentences[0], tokenizers[0])
    assert "\u2581" not in t.text and all("\u2581" not in w for w in t.tokens + t.source_tokens)
    assert t.attention.shape == (len(t.tokens) + t.finished, 4)
    np.testing.assert_allclose(t.attention.sum(axis=1), 1.0, atol=1e-5)


def test_word_alignment_sums_source_pieces_and_averages_target_pieces():
    a = np.array([[0.5, 0.25, 0.25, 0.0],   # target piece 0 (word 0)
                  [0.1, 0.1, 0.2, 0.6],     # target piece 1 (word 1)
                  [0.3, 0.3, 0.0, 0.4],     # target piece 2 (word 1)
                  [0.0, 0.0, 0.5, 0.5]])    # <end>
    w = word_alignment(a, [[0, 1], [2, 3]], [[0], [1, 2]], finished=True)
    np.testing.assert_allclose(w, [[0.75, 0.25], [0.4, 0.6], [0.0, 1.0]], atol=1e-6)  # (0.2+0.6)/2, (0.8+0.4)/2
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)
    assert word_alignment(a[:3], [[0, 1], [2, 3]], [[0], [1, 2]], finished=False).shape == (2, 2)


def test_unk_piece_copies_the_most_attended_source_word(tokenizers):
    model = _model(tokenizers)
    v = model.target_vocabulary
    src = text_tokens("A man in Zürich.", tokenizers[0])  # Zürich. is several pieces
    words_of = [i for i, p in enumerate(src) if p.startswith("\u2581")] + [len(src)]
    zurich = list(range(words_of[3], words_of[4]))
    head = text_tokens("Ein Mann", tokenizers[1])  # pieces the target vocabulary has
    ids = [v.token_to_id(p) for p in head] + [3, 2]  # Ein Mann <unk> <end>
    n = len(head)
    attn = np.zeros((n + 2, len(src)))
    attn[:n, 0] = attn[n + 1, -1] = 1.0
    attn[n, :] = 0.3 / (len(src) - len(zurich))
    attn[n, zurich] = 0.7 / len(zurich)  # no single piece of Zürich. beats the rest, the word does
    out = {"tokens": np.array([[ids]]), "scores": np.array([[-1.0]]), "finished": np.array([[True]]),
           "log_probs": np.array([[-2.0]]), "lengths": np.array([[n + 2]]), "attention": attn[None, None]}
    t = model._decode_one(out, 0, src, replace_unk=True)
    # the word's core is copied: its punctuation stays behind (the model writes its own)
    assert t.text == "Ein Mann Zürich" and t.tokens == ["Ein", "Mann", "Zürich"] and t.replaced_unk == 1
    assert t.attention_labels == ["Ein", "Mann", "Zürich", "<end>"] and t.attention.shape == (4, 4)
    assert t.attention[2, 3] == pytest.approx(0.7) and t.attention[2].sum() == pytest.approx(1.0)
    t = model._decode_one(out, 0, src, replace_unk=False)
    assert t.tokens == ["Ein", "Mann", "<unk>"] and t.replaced_unk == 0


def test_cased_word_models_keep_case():
    assert text_tokens("Ein Mann.", {"lower": False}) == ["Ein", "Mann", "."]
    assert text_tokens("Ein Mann.", {}) == ["ein", "mann", "."]


def test_export_refuses_sentencepiece_on_one_side_only(tokenizers):
    from captioner.export.saved_model import TranslatorModule

    one_sided = Seq2Seq.from_config({**_model(tokenizers).get_config(), "target_tokenizer": {"lower": False}})
    with pytest.raises(ValueError, match="SentencePiece on one side only"):
        TranslatorModule(one_sided)


def test_unknown_source_words_are_those_with_an_unknown_piece(tokenizers):
    model = _model(tokenizers)
    t = model.translate(["A man in Zürich."])[0]  # Z and ü never occur in the English training text
    assert t.unknown_source_words(model.source_vocabulary) == ["Zürich."]


def test_export_without_tensorflow_text_says_what_to_install(tokenizers, monkeypatch):
    import sys

    from captioner.export.saved_model import TranslatorModule

    monkeypatch.setitem(sys.modules, "tensorflow_text", None)  # import fails
    with pytest.raises(ValueError, match="needs tensorflow-text"):
        TranslatorModule(_model(tokenizers))
