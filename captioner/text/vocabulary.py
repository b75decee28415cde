"""Token <-> id vocabulary with fixed special ids, saved as JSON (never pickle).

Ids 0..3 are always ``<pad>``, ``<start>``, ``<end>``, ``<unk>``; words follow, most
frequent first. The same mapping is available three ways, and tests keep them equal:

- in Python: :meth:`Vocabulary.encode` / :meth:`Vocabulary.decode`;
- as a Keras layer (inside a model or ``tf.data``): :meth:`Vocabulary.lookup_layer`,
  a :class:`VocabularyLookup` (a ``keras.layers.StringLookup`` subclass);
- from raw strings in ``tf.data``: :meth:`Vocabulary.tf_encode`.

Why a ``StringLookup`` *subclass*: a plain ``StringLookup`` always puts its OOV slot at
index 0 (or 1 after a mask token), so no configuration of it maps unknown words to 3
while ``<pad>``, ``<start>``, ``<end>`` keep 0, 1, 2. :class:`VocabularyLookup` runs the
stock lookup with the OOV slot at 0 and shifts the result by one, mapping OOV to
``UNK_ID``.
"""

from __future__ import annotations

import collections
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import keras
import numpy as np

from captioner.errors import InputError
# captioner.text's lazy __getattr__ lists the same names (tests/text check the two agree)
__all__ = ["PAD", "START", "END", "UNK", "PAD_ID", "START_ID", "END_ID", "UNK_ID", "SPECIAL_TOKENS",
           "Vocabulary", "VocabularyLookup"]

PAD, START, END, UNK = "<pad>", "<start>", "<end>", "<unk>"
PAD_ID, START_ID, END_ID, UNK_ID = 0, 1, 2, 3
SPECIAL_TOKENS = (PAD, START, END, UNK)

_FORMAT = "captioner.Vocabulary"
_VERSION = 1
# OOV token of the inner StringLookup; never in a Vocabulary (angle brackets + spaces
# cannot come out of the tokenizer) and never returned to callers.
_INNER_OOV = "< oov >"


MAX_VOCABULARY = 500_000  # a crafted config asking for 1.5M words would build GBs of weights first


def _validate_tokens(tokens, source: str) -> tuple[str, ...]:
    """Check a full token list (specials first, unique, non-empty strings)."""
    if not isinstance(tokens, (list, tuple)):
        raise InputError(f"{source}: 'tokens' must be a list of strings, got {type(tokens).__name__}")
    tokens = tuple(tokens)
    if len(tokens) > MAX_VOCABULARY:  # before any embedding or softmax of that size is built
        raise InputError(f"{source}: {len(tokens):,} tokens, more than the {MAX_VOCABULARY:,} any model here reads")
    if tokens[: len(SPECIAL_TOKENS)] != SPECIAL_TOKENS:
        raise InputError(
            f"{source}: the first tokens must be the specials {list(SPECIAL_TOKENS)} "
            f"(ids 0-3), found {list(tokens[:len(SPECIAL_TOKENS)])}"
        )
    first_seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise InputError(f"{source}: token {i} must be a non-empty string, got {token!r}")
        if token == _INNER_OOV:
            raise InputError(f"{source}: token {i} {token!r} is reserved")
        if token in first_seen:
            raise InputError(
                f"{source}: duplicate token {token!r} at positions {first_seen[token]} and {i}"
            )
        first_seen[token] = i
    return tokens


class Vocabulary:
    """An immutable token <-> id mapping with ``<pad>``=0, ``<start>``=1, ``<end>``=2, ``<unk>``=3.

    Args:
        tokens: every token in id order, starting with :data:`SPECIAL_TOKENS`.
        metadata: optional JSON-serialisable dict saved alongside (for example how the
            vocabulary was built, or the tokenizer settings it expects).
    """

    def __init__(self, tokens: Sequence[str], metadata: dict | None = None, *, _source: str = "Vocabulary"):
        self._tokens = _validate_tokens(tokens, _source)
        self._ids = {token: i for i, token in enumerate(self._tokens)}
        self.metadata = dict(metadata or {})
        self._tf_lookup = None  # lazily built VocabularyLookup for tf_encode

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        min_count: int = 1,
        max_size: int | None = None,
    ) -> "Vocabulary":
        """Count tokens and keep the frequent ones.

        Args:
            token_lists: an iterable of token lists (one per sentence).
            min_count: keep words seen at least this many times.
            max_size: at most this many ids **including the 4 specials** (so it is
                the embedding/softmax size); the most frequent words win.

        Words are ordered by count (descending), ties by the token string (ascending),
        so the result never depends on input order. Occurrences of the special strings
        themselves (e.g. ``"<unk>"`` in the text) are not counted as words; empty
        strings are ignored.
        """
        if min_count < 1:
            raise InputError(f"min_count must be >= 1, got {min_count}")
        if max_size is not None and max_size < len(SPECIAL_TOKENS):
            raise InputError(f"max_size must be >= {len(SPECIAL_TOKENS)} (the specials), got {max_size}")
        counts: collections.Counter[str] = collections.Counter()
        for i, tokens in enumerate(token_lists):
            if isinstance(tokens, str):
                raise InputError(
                    f"token_lists[{i}] is a string ({tokens[:40]!r}); pass lists of tokens (tokenize first)"
                )
            counts.update(tokens)
        for special in SPECIAL_TOKENS:
            counts.pop(special, None)
        counts.pop("", None)
        counts.pop(_INNER_OOV, None)
        words = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        if max_size is not None:
            words = words[: max_size - len(SPECIAL_TOKENS)]
        metadata = {"min_count": min_count, "max_size": max_size, "num_counted_types": len(counts)}
        return cls(SPECIAL_TOKENS + tuple(words), metadata=metadata)

    # ------------------------------------------------------------------ mapping
    @property
    def tokens(self) -> tuple[str, ...]:
        """All tokens in id order (specials first)."""
        return self._tokens

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token) -> bool:
        return token in self._ids

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and self._tokens == other._tokens

    def __hash__(self) -> int:
        return hash(self._tokens)

    def __repr__(self) -> str:
        return f"Vocabulary(size={len(self)}, words={list(self._tokens[4:9])}...)"

    def token_to_id(self, token: str) -> int:
        """The id of ``token``; unknown tokens give ``UNK_ID`` (3)."""
        return self._ids.get(token, UNK_ID)

    def id_to_token(self, token_id: int) -> str:
        """The token of ``token_id``; raises InputError when out of range."""
        token_id = int(token_id)
        if not 0 <= token_id < len(self._tokens):
            raise InputError(f"token id {token_id} is out of range [0, {len(self._tokens)})")
        return self._tokens[token_id]

    def encode(
        self,
        tokens: Sequence[str],
        add_start: bool = True,
        add_end: bool = True,
        max_length: int | None = None,
    ) -> list[int]:
        """Map tokens to ids, optionally framed by ``<start>`` ... ``<end>``.

        With ``max_length``, the result has at most ``max_length`` ids: words past the
        limit are dropped but ``<start>``/``<end>`` are kept, so a truncated sequence
        still ends with ``<end>``. No padding (see :meth:`encode_batch`).
        """
        if isinstance(tokens, str):
            raise InputError(f"encode() takes a list of tokens, got the string {tokens[:40]!r}; tokenize first")
        n_special = int(add_start) + int(add_end)
        ids = [self._ids.get(t, UNK_ID) for t in tokens]
        if max_length is not None:
            if max_length < n_special:
                raise InputError(f"max_length={max_length} leaves no room for <start>/<end>")
            ids = ids[: max_length - n_special]
        return ([START_ID] if add_start else []) + ids + ([END_ID] if add_end else [])

    def encode_batch(
        self,
        token_lists: Sequence[Sequence[str]],
        max_length: int | None = None,
        add_start: bool = True,
        add_end: bool = True,
    ) -> np.ndarray:
        """Encode several token lists into one int32 array padded with ``PAD_ID``.

        Returns:
            ``(batch, max_length)`` int32; with ``max_length=None`` the width is the
            longest encoded sequence.
        """
        rows = [self.encode(t, add_start, add_end, max_length) for t in token_lists]
        width = max_length if max_length is not None else max((len(r) for r in rows), default=0)
        out = np.full((len(rows), width), PAD_ID, dtype=np.int32)  # (batch, width)
        for i, row in enumerate(rows):
            out[i, : len(row)] = row
        return out

    def decode(self, ids, strip_special: bool = True) -> list[str]:
        """Map ids back to tokens.

        With ``strip_special`` (default), decoding stops at the first ``<end>`` and
        ``<pad>``/``<start>`` are dropped (``<unk>`` is kept: it stands for a word).
        Without it, every id is mapped, specials included. Accepts lists, NumPy arrays
        and eager tensors of rank 1.
        """
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise InputError(f"decode() takes a 1-D sequence of ids, got shape {ids.shape}; use decode_batch")
        out = []
        for token_id in ids.tolist():
            token = self.id_to_token(token_id)
            if strip_special:
                if token_id == END_ID:
                    break
                if token_id in (PAD_ID, START_ID):
                    continue
            out.append(token)
        return out

    def tf_decode(self, ids):
        """In-graph twin of :meth:`decode` (``strip_special``) for a batch: int ids (N, T) ->
        a ``tf.RaggedTensor`` of tokens (N, None) that stops before each row's first ``<end>``
        and drops ``<pad>``/``<start>``. The token list is a constant of the graph."""
        import tensorflow as tf

        ids = tf.cast(ids, tf.int32)
        before_end = tf.cumsum(tf.cast(ids == END_ID, tf.int32), axis=-1, exclusive=True) == 0
        keep = before_end & (ids != END_ID) & (ids != PAD_ID) & (ids != START_ID)  # (N, T)
        tokens = tf.gather(tf.constant(list(self._tokens)), ids)  # (N, T) strings
        return tf.ragged.boolean_mask(tokens, keep)

    def decode_batch(self, batch_ids, strip_special: bool = True) -> list[list[str]]:
        """:meth:`decode` every row of a ``(batch, length)`` array."""
        return [self.decode(row, strip_special) for row in np.asarray(batch_ids)]

    # ------------------------------------------------------------------ persistence
    def to_config(self) -> dict:
        """A JSON-serialisable dict: ``{"format", "version", "tokens", "metadata"}``."""
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "tokens": list(self._tokens),
            "metadata": self.metadata,
        }

    @classmethod
    def coerce(cls, value, source: str = "vocabulary config") -> "Vocabulary":
        """A Vocabulary as it is, or one rebuilt from its config dict or its token list (what a
        model's config holds); ``source`` names it in errors."""
        if isinstance(value, cls):
            return value
        return cls.from_config(value if isinstance(value, dict) else {"tokens": list(value)}, source=source)

    @classmethod
    def from_config(cls, config: dict, source: str = "vocabulary config") -> "Vocabulary":
        """Rebuild from :meth:`to_config` output; ``source`` names it in errors."""
        if not isinstance(config, dict):
            raise InputError(f"{source}: expected a JSON object, got {type(config).__name__}")
        if "tokens" not in config:
            raise InputError(f"{source}: missing the 'tokens' list")
        fmt = config.get("format", _FORMAT)
        if fmt != _FORMAT:
            raise InputError(f"{source}: format is {fmt!r}, expected {_FORMAT!r}")
        version = config.get("version", _VERSION)
        if not isinstance(version, int) or version > _VERSION:
            raise InputError(f"{source}: unsupported version {version!r} (this code reads <= {_VERSION})")
        metadata = config.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InputError(f"{source}: 'metadata' must be an object")
        return cls(config["tokens"], metadata=metadata, _source=source)

    def save(self, path) -> None:
        """Write the vocabulary as UTF-8 JSON, atomically (temp file + ``os.replace``)."""
        path = Path(path)
        text = json.dumps(self.to_config(), ensure_ascii=False, indent=1)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path) -> "Vocabulary":
        """Read a file written by :meth:`save`; malformed files raise InputError naming it."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"{path}: vocabulary file not found") from None
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: not UTF-8 text ({e})") from None
        try:
            config = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None
        return cls.from_config(config, source=str(path))

    # ------------------------------------------------------------------ TensorFlow
    def lookup_layer(self, name: str | None = None) -> "VocabularyLookup":
        """A new Keras layer mapping string tokens to exactly :meth:`token_to_id`'s ids.

        Works on dense, ragged and sparse string tensors, inside ``tf.data`` and inside
        a saved ``.keras`` model (the layer is registered as ``captioner>VocabularyLookup``).
        """
        return VocabularyLookup(vocabulary=list(self._tokens), name=name)

    def tf_encode(
        self,
        strings,
        add_start: bool = True,
        add_end: bool = True,
        max_length: int | None = None,
        lower: bool = True,
        keep_punct: bool = False,
    ):
        """Tokenize raw strings with :func:`~captioner.text.tokenizer.tf_tokenize` and encode them.

        Usable in ``tf.data.Dataset.map``. Same framing and truncation as :meth:`encode`.

        Args:
            strings: a scalar string tensor (one sentence) or a 1-D batch of them.

        Returns:
            int32. Scalar input: ``(length,)``, or ``(max_length,)`` padded with 0 when
            ``max_length`` is given. Batch input: ``(batch, max_length)`` padded with 0,
            or a ``tf.RaggedTensor`` ``(batch, None)`` when ``max_length`` is None.
        """
        import tensorflow as tf

        from captioner.text.tokenizer import tf_tokenize

        n_special = int(add_start) + int(add_end)
        if max_length is not None and max_length < n_special:
            raise InputError(f"max_length={max_length} leaves no room for <start>/<end>")
        if self._tf_lookup is None:
            self._tf_lookup = self.lookup_layer()
        strings = tf.convert_to_tensor(strings, dtype=tf.string)
        rank = strings.shape.rank
        if rank not in (0, 1):
            raise InputError(f"tf_encode() takes a scalar or 1-D string tensor, got shape {strings.shape}")
        tokens = tf_tokenize(strings, lower=lower, keep_punct=keep_punct)  # (n,) or (batch, None)
        ids = tf.cast(self._tf_lookup(tokens), tf.int32)
        if rank == 0:
            if max_length is not None:
                ids = ids[: max_length - n_special]
            parts = ([tf.constant([START_ID])] if add_start else []) + [ids]
            parts += [tf.constant([END_ID])] if add_end else []
            ids = tf.concat(parts, axis=0)  # (length,)
            if max_length is not None:
                ids = tf.pad(ids, [[0, max_length - tf.size(ids)]], constant_values=PAD_ID)
                ids = tf.ensure_shape(ids, [max_length])
            return ids
        if max_length is not None:
            ids = ids[:, : max_length - n_special]
        column = tf.RaggedTensor.from_tensor(tf.ones([ids.nrows(), 1], tf.int32))  # (batch, 1)
        parts = ([column * START_ID] if add_start else []) + [ids]
        parts += [column * END_ID] if add_end else []
        ids = tf.concat(parts, axis=1)  # (batch, None)
        if max_length is not None:
            return ids.to_tensor(default_value=PAD_ID, shape=[None, max_length])  # (batch, max_length)
        return ids


@keras.saving.register_keras_serializable(package="captioner")
class VocabularyLookup(keras.layers.StringLookup):
    """A ``StringLookup`` whose ids equal :class:`Vocabulary` ids, OOV included (``UNK_ID``).

    Args:
        vocabulary: the full token list of a :class:`Vocabulary` (specials first).
        **kwargs: base layer arguments (``name``, ...).

    Output: int64 ids with the input's shape (dense, ragged or sparse).
    """

    def __init__(self, vocabulary, **kwargs):
        self.vocabulary_tokens = _validate_tokens(list(vocabulary), "VocabularyLookup")
        for fixed in ("num_oov_indices", "mask_token", "oov_token", "invert", "output_mode",
                      "max_tokens", "pad_to_max_tokens", "idf_weights", "sparse", "vocabulary_size"):
            kwargs.pop(fixed, None)  # fixed below; present when rebuilt from a full StringLookup config
        super().__init__(
            vocabulary=self.vocabulary_tokens,
            num_oov_indices=1,  # inner id 0 = OOV, token i -> i + 1
            mask_token=None,
            oov_token=_INNER_OOV,
            output_mode="int",
            **kwargs,
        )

    def call(self, inputs):
        import tensorflow as tf

        inner = super().call(inputs)  # OOV -> 0, token i -> i + 1

        def remap(ids):
            return tf.where(tf.equal(ids, 0), tf.constant(UNK_ID, ids.dtype), ids - 1)

        if isinstance(inner, tf.RaggedTensor):
            return tf.ragged.map_flat_values(remap, inner)
        if isinstance(inner, tf.SparseTensor):
            return tf.SparseTensor(inner.indices, remap(inner.values), inner.dense_shape)
        return remap(inner)

    def vocabulary_size(self):
        """Number of ids the layer can output (equals ``len(Vocabulary)``)."""
        return len(self.vocabulary_tokens)

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens in id order; without specials, the words only."""
        if include_special_tokens:
            return list(self.vocabulary_tokens)
        return list(self.vocabulary_tokens[len(SPECIAL_TOKENS):])

    def get_config(self):
        config = super().get_config()
        keep = {k: config[k] for k in ("name", "trainable", "dtype", "encoding") if k in config}
        return {**keep, "vocabulary": list(self.vocabulary_tokens)}
