"""SentencePiece subwords (captioner.text.subword): training in memory, deterministic, lossless."""

import pytest

from captioner.text.subword import (
    WORD_START,
    decode_pieces,
    encode_pieces,
    piece_vocabulary,
    piece_words,
    to_base64,
    train_sentencepiece,
    word_groups,
)

GERMAN = ["Ein Mann mit einem orangefarbenen Hut starrt auf etwas.", "Zwei Hunde spielen im Schnee!",
          "Eine Frau fährt mit dem Fahrrad über die Straße, (schnell).", "Jüngere Männer trinken Äpfelsaft?",
          "Der Hund läuft \"schnell\" über die Wiese; ein Kind schaut zu."] * 8


@pytest.fixture(scope="module")
def spm_models():
    return {kind: to_base64(train_sentencepiece(GERMAN, vocab_size=70, model_type=kind)) for kind in ("unigram", "bpe")}


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_round_trip_keeps_case_punctuation_and_umlauts(spm_models, kind):
    spm = spm_models[kind]
    for text in GERMAN[:5] + ["Über ÄÖÜ äöü ß: Zoë, naïve — 42 €!", "Unbekanntes Wort: Qxylophon."]:
        pieces = encode_pieces(text, spm)
        assert decode_pieces(pieces) == text
        assert "".join(piece_words(pieces)) == text.replace(" ", "")
    assert decode_pieces(encode_pieces("  zwei   Hunde ", spm)) == "zwei Hunde"  # whitespace runs collapse
    assert decode_pieces(encode_pieces("Hund", spm, lower=True)) == "hund"


def test_training_is_deterministic_and_the_vocabulary_holds_only_pieces(spm_models):
    assert to_base64(train_sentencepiece(GERMAN, vocab_size=70)) == spm_models["unigram"]
    pieces = piece_vocabulary(spm_models["unigram"])
    assert 30 < len(pieces) <= 70 and "<unk>" not in pieces and "<s>" not in pieces
    assert any(p.startswith(WORD_START) for p in pieces)
    with pytest.raises(ValueError):
        train_sentencepiece(["", "  "])


def test_word_groups_start_at_the_word_marker():
    pieces = ["▁Ein", "▁Ha", "us", ".", "▁", "Ä", "pfel"]
    assert word_groups(pieces) == [[0], [1, 2, 3], [4, 5, 6]]
    assert piece_words(pieces) == ["Ein", "Haus.", "Äpfel"]
    assert decode_pieces(pieces) == "Ein Haus. Äpfel"
    assert word_groups(["us", "▁Ha"]) == [[0], [1]] and piece_words([]) == []
