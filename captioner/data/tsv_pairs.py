"""Sentence-pair readers shared by translation and entailment: Anki/Tatoeba TSV pairs.

The Anki files of manythings.org (Tatoeba sentences) hold one pair a line::

    English<TAB>French[<TAB>attribution]

(older cuts have two columns, newer ones a third "CC-BY 2.0 (France) Attribution: ..." column,
which is ignored). Errors name ``file:line``.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from pathlib import Path

from captioner.errors import InputError

__all__ = ["SentencePair", "read_text_lines", "read_tsv_pairs", "load_anki_pairs", "split_by_key"]


@dataclasses.dataclass(frozen=True)
class SentencePair:
    """A source/target pair and where it came from (``file:line``)."""

    source: str
    target: str
    origin: str = ""


def read_text_lines(path) -> list[str]:
    """Lines of a UTF-8 text file, plain or gzip (by the ``.gz`` suffix or the magic bytes).

    BOM and CRLF are tolerated; a missing, unreadable, non-UTF-8 or corrupt gzip file raises
    InputError naming it (and the line, for bad UTF-8).
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, expected a text file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    if raw[:2] == b"\x1f\x8b" or path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InputError(f"{path}: not a valid gzip file ({e})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not UTF-8 text ({e.reason})") from None
    return text.splitlines()


def read_tsv_pairs(path, min_columns=2, max_columns=3, skip_blank=True) -> list[tuple[int, list[str]]]:
    """``[(line number, columns)]`` of a tab-separated file; a line with too few or too many
    columns, or an empty one of the first two, raises InputError naming ``file:line``."""
    rows = []
    for line_no, line in enumerate(read_text_lines(path), start=1):
        if not line.strip():
            if skip_blank:
                continue
            raise InputError(f"{path}:{line_no}: empty line")
        cols = line.split("\t")
        if not min_columns <= len(cols) <= max_columns:
            raise InputError(f"{path}:{line_no}: expected {min_columns}"
                             f"{'' if max_columns == min_columns else f' to {max_columns}'} tab-separated "
                             f"columns, found {len(cols)} ({line[:60]!r})")
        for j in range(min_columns):
            if not cols[j].strip():
                raise InputError(f"{path}:{line_no}: column {j + 1} is empty")
        rows.append((line_no, cols))
    return rows


def load_anki_pairs(path, reverse=False) -> list[SentencePair]:
    """Read an Anki/Tatoeba file ``English<TAB>Other[<TAB>attribution]``.

    Returns pairs with ``source`` = English and ``target`` = the other language, or the other
    way round with ``reverse=True`` (French -> English translation).
    """
    pairs = []
    for line_no, cols in read_tsv_pairs(path, 2, 3):
        en, other = cols[0].strip(), cols[1].strip()
        src, tgt = (other, en) if reverse else (en, other)
        pairs.append(SentencePair(src, tgt, f"{path}:{line_no}"))
    if not pairs:
        raise InputError(f"{path}: no sentence pairs found")
    return pairs


def _bucket(key: str, salt: str) -> float:
    """A deterministic number in [0, 1) from ``key`` (md5, independent of PYTHONHASHSEED)."""
    digest = hashlib.md5((salt + "\x00" + key).encode("utf-8")).hexdigest()
    return int(digest[:12], 16) / float(16 ** 12)


def split_by_key(pairs, key, fractions, salt="captioner", exclusive=None):
    """Deterministic held-out splits by a key (e.g. the English sentence), so that no key is in
    two splits.

    Args:
        pairs: a sequence of items.
        key: item -> str, the grouping key (all items with one key land in one split).
        fractions: ``{"dev": 0.03, "test": 0.05}``; the rest is ``"train"``.
        exclusive: optional item -> str, a second key (e.g. the French side) that must not be
            shared between train and a held-out split either: a held-out item whose second key
            also occurs in train is dropped (returned under ``"dropped"``).

    Returns:
        ``{"train": [...], <held-out name>: [...], "dropped": [...]}`` in input order.
    """
    bounds, acc = [], 0.0
    for name, frac in fractions.items():
        acc += float(frac)
        bounds.append((acc, name))
    if acc >= 1.0:
        raise InputError(f"held-out fractions add up to {acc:.2f}; they must leave some training data")
    out = {"train": [], **{name: [] for name in fractions}, "dropped": []}
    assigned = []
    for item in pairs:
        u = _bucket(key(item), salt)
        name = next((n for b, n in bounds if u < b), "train")
        assigned.append((name, item))
    train_second = {exclusive(item) for name, item in assigned if name == "train"} if exclusive else set()
    for name, item in assigned:
        if exclusive and name != "train" and exclusive(item) in train_second:
            out["dropped"].append(item)
        else:
            out[name].append(item)
    return out
