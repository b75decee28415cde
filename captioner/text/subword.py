"""Subword tokenization with SentencePiece (Kudo & Richardson 2018), for translators.

A SentencePiece model is trained in memory on the training side of a corpus and stored as a
base64 string in the tokenizer settings of the model that uses it (``{"spm": <base64>, ...}``),
so a saved ``.keras`` file carries it in its config: no pickle, no side file.

* :func:`train_sentencepiece`: sentences -> the model proto's bytes (deterministic: one
  thread, a fixed random seed; ``identity`` normalization, so that decoding gives back the
  NFC text with its whitespace runs collapsed; full character coverage, no byte fallback:
  a character never seen in training becomes an unknown piece, which the vocabulary maps to
  ``<unk>`` and the translator copies from the source by attention).
* :func:`encode_pieces` / :func:`decode_pieces`: text <-> pieces (``"▁Mann"``, ``"es"``);
  a piece that starts with ``▁`` (U+2581) starts a word.
* :func:`word_groups` / :func:`piece_words`: which pieces make up each whitespace-separated
  word, and those words' text (what the alignment heat maps and the ``<unk>`` copy use).

Processors are built lazily from the base64 string and cached.
"""

from __future__ import annotations

import base64
import functools
import io
import unicodedata

__all__ = ["SUBWORD_KINDS", "WORD_START", "train_sentencepiece", "encode_pieces", "decode_pieces",
           "word_groups", "piece_words", "piece_vocabulary", "processor", "to_base64", "word_core", "core_spans",
           "CORE_EDGE"]

WORD_START = "\u2581"  # "▁": SentencePiece's marker of a piece that begins a word
SUBWORD_KINDS = {"spm-unigram": "unigram", "spm-bpe": "bpe"}


def _normalize(text: str, lower: bool) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    text = unicodedata.normalize("NFC", text)
    return text.lower() if lower else text


def train_sentencepiece(sentences, vocab_size=8000, model_type="unigram", lower=False, seed=1) -> bytes:
    """Train a SentencePiece model on ``sentences`` (an iterable of str) -> its serialized proto.

    ``vocab_size`` is a ceiling (a small corpus gets fewer pieces, never an error);
    ``model_type``: ``"unigram"`` or ``"bpe"``. The same sentences and settings give the same bytes.
    """
    import sentencepiece as spm

    if model_type not in ("unigram", "bpe"):
        raise ValueError(f"model_type must be 'unigram' or 'bpe', got {model_type!r}")
    texts = [t for t in (_normalize(s, lower).strip() for s in sentences) if t]
    if not texts:
        raise ValueError("no sentences to train a SentencePiece model on")
    spm.set_random_generator_seed(int(seed))
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=out, vocab_size=int(vocab_size), model_type=model_type,
        character_coverage=1.0, normalization_rule_name="identity", hard_vocab_limit=False,
        num_threads=1, minloglevel=2, input_sentence_size=0, shuffle_input_sentence=False,
        max_sentence_length=100000)
    return out.getvalue()


def to_base64(proto: bytes) -> str:
    return base64.b64encode(proto).decode("ascii")


@functools.lru_cache(maxsize=8)
def processor(spm_b64: str):
    """The SentencePieceProcessor of a base64 model proto (cached: one per model)."""
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_proto=base64.b64decode(spm_b64))


def check_spm(spm_b64, source: str) -> None:
    """InputError naming `source` unless `spm_b64` is base64 of a SentencePiece model with pieces
    (a translator whose model is bad base64 or random bytes would load, then write empty lines)."""
    import binascii

    from captioner.errors import InputError

    if not isinstance(spm_b64, str):
        raise InputError(f"{source}: the SentencePiece model must be a base64 string, got {type(spm_b64).__name__}")
    try:
        proto = base64.b64decode(spm_b64, validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"{source}: not a SentencePiece model (its base64 does not decode)") from None
    try:
        size = processor(spm_b64).get_piece_size() if proto else 0
    except Exception as exc:  # noqa: BLE001 - sentencepiece raises RuntimeError and others for a bad proto
        raise InputError(f"{source}: not a SentencePiece model ({type(exc).__name__})") from None
    if size < 1:
        raise InputError(f"{source}: not a SentencePiece model (no pieces)")


def piece_vocabulary(spm_b64: str) -> list[str]:
    """Every normal piece of the model, in id order (no <unk>/<s>/</s>): a vocabulary's tokens."""
    p = processor(spm_b64)
    return [p.id_to_piece(i) for i in range(p.get_piece_size())
            if not (p.is_unknown(i) or p.is_control(i) or p.is_unused(i))]


def encode_pieces(text: str, spm_b64: str, lower: bool = False) -> list[str]:
    """Text -> pieces. A character the model never saw comes out as a piece of its own (its
    id would be SentencePiece's unknown); the pieces always decode back to the text."""
    return list(processor(spm_b64).encode(_normalize(text, lower), out_type=str))


def word_groups(pieces) -> list[list[int]]:
    """Positions of the pieces of each word: a word starts at a piece beginning with ``▁`` (or
    at the first piece); a lone ``▁`` piece starts a word too and belongs to it."""
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        if not groups or (piece.startswith(WORD_START)):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def piece_words(pieces) -> list[str]:
    """The whitespace-separated words that ``pieces`` spell (``["▁Ha", "us", "."]`` -> ``["Haus."]``)."""
    return [w for w in ("".join(pieces[i] for i in g).replace(WORD_START, " ").strip()
                        for g in word_groups(pieces))] if pieces else []


# what `word_core` strips from both ends of a word: anything but letters and digits (RE2 syntax
# too, so the SavedModel graph strips the same: `captioner.export.saved_model`)
CORE_EDGE = r"^[^\pL\pN]+|[^\pL\pN]+$"


def word_core(word: str) -> str:
    """A word without the punctuation around it ("Montréal." -> "Montréal"); the word itself when
    nothing is left ("--"). What a subword translator's <unk> copies from the source."""
    import regex

    core = regex.sub(CORE_EDGE, "", word)
    return core or word


def core_spans(pieces) -> list[tuple[str, int, int]]:
    """For each word of ``pieces``: (its letters-and-digits core, first piece, end piece) where
    the core runs from the first to the last piece holding a letter or digit; ("", i, i) for a
    word with none. The pieces of a span are what a copied word replaces in training
    (`captioner.training.translation_data.copyable_spans`)."""
    import regex

    out = []
    for group in word_groups(pieces):
        alnum = [i for i in group if regex.search(r"[\pL\pN]", pieces[i])]
        if not alnum:
            out.append(("", group[0], group[0]))
            continue
        a, b = alnum[0], alnum[-1] + 1
        out.append(("".join(pieces[a:b]).replace(WORD_START, ""), a, b))
    return out


def decode_pieces(pieces) -> str:
    """Pieces -> text: the words joined by single spaces (SentencePiece's own decoding, for the
    ``identity`` normalization these models use)."""
    return " ".join(w for w in piece_words(list(pieces)) if w)
