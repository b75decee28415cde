"""Headline generation pairs (source text -> headline) and their deterministic dev split.

One record type for every headline corpus: :class:`HeadlinePair` (``source``, ``target`` =
the headline, a stable ``id``, a ``category``, and ``origin`` = ``file:line`` or the file).
Readers return a :class:`HeadlineCorpus`: the pairs plus the records they dropped (empty
source or headline), so a caller can report how many and where.

The dev split is a hash rule, not a saved list: a record is in dev when the md5 of
``salt + key`` falls in the first ``dev_fraction`` of the hash range
(:func:`captioner.data.tsv_pairs.split_by_key`), so it is the same on every machine, in every
Python, whatever the file order. The key is the smallest id of the record's duplicate group:
records joined by the same id, the same source text or the same headline (case and spacing
ignored, chains followed) are one group and land on one side. Without that the BBC corpus
leaks: it holds 111 pairs of identical articles and more re-published versions under one
headline, and about one dev article in ten would have its copy in train.

This module also holds a minimal BBC News adapter (:func:`load_bbc_headlines`): article ->
headline from the Greene & Cunningham 2006 files ``bbc/<topic>/NNN.txt``, whose first line is
the headline and the rest the article.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from captioner.data.tsv_pairs import split_by_key
from captioner.errors import InputError

__all__ = [
    "BBC_SALT",
    "DEV_FRACTION",
    "HeadlineCorpus",
    "HeadlinePair",
    "aligned_positions",
    "duplicate_groups",
    "load_bbc_headlines",
    "split_bbc_headlines",
    "split_headlines",
    "verb_forms",
]

DEV_FRACTION = 0.1
BBC_SALT = "bbc-news"


@dataclasses.dataclass(frozen=True)
class HeadlinePair:
    """One source text and its headline."""

    source: str
    target: str
    id: str
    category: str = ""
    origin: str = ""


@dataclasses.dataclass
class HeadlineCorpus:
    """Pairs read from a corpus, and ``dropped``: ``(origin, reason)`` of each record left out."""

    pairs: list[HeadlinePair]
    dropped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    def summary(self) -> str:
        text = f"{len(self.pairs)} pairs, {len(self.dropped)} records dropped"
        if self.dropped:
            reasons = {}
            for _, why in self.dropped:
                reasons[why] = reasons.get(why, 0) + 1
            text += " (" + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())) + ")"
        return text + "".join(f"; {note}" for note in self.notes)


def _normalized(text: str) -> str:
    return " ".join(text.lower().split())


def duplicate_groups(pairs) -> dict[str, str]:
    """id -> the smallest id of its group: pairs sharing an id, a source or a headline (case
    and spacing ignored), transitively (union-find)."""
    parent: dict[str, str] = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first_by = {}
    for p in pairs:
        parent.setdefault(p.id, p.id)
        for field, value in (("source", _normalized(p.source)), ("target", _normalized(p.target))):
            other = first_by.setdefault((field, value), p.id)
            a, b = find(other), find(p.id)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {i: find(i) for i in parent}


def split_headlines(pairs, dev_fraction: float = DEV_FRACTION, salt: str = "headlines"):
    """``(train, dev)`` by the hash rule on each pair's duplicate group (see the module
    docstring), input order kept."""
    if not 0 < dev_fraction < 1:
        raise InputError(f"dev_fraction {dev_fraction}: must be between 0 and 1")
    pairs = list(pairs)
    group = duplicate_groups(pairs)
    parts = split_by_key(pairs, key=lambda p: group[p.id], fractions={"dev": dev_fraction}, salt=salt)
    return parts["train"], parts["dev"]


def _read_bbc_text(path: Path, notes: list[str]) -> str:
    """UTF-8, else Windows-1252 (one file of the public BBC corpus, sport/199.txt, has a
    Latin-1 pound sign); bytes neither can decode raise InputError naming ``file:line``."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        text = raw.decode("cp1252")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: neither UTF-8 nor Windows-1252 text ({e.reason})") from None
    notes.append(f"{path}: not UTF-8, read as Windows-1252")
    return text


def load_bbc_headlines(root) -> HeadlineCorpus:
    """Article -> headline pairs of the BBC News corpus under ``root`` (the folder holding the
    topic folders, e.g. ``bbc-news/bbc``), sorted by ``topic/NNN`` (the id; category = topic).

    The headline is the first non-blank line; the article is the rest, stripped, paragraphs
    kept as lines. A file with no headline or no article is dropped and counted.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a folder (expected the BBC folder holding <topic>/NNN.txt)")
    files = sorted(p for p in root.glob("*/*.txt") if p.is_file())
    if not files:
        raise InputError(f"{root}: no <topic>/*.txt files")
    pairs, dropped, notes = [], [], []
    for path in files:
        lines = _read_bbc_text(path, notes).splitlines()
        while lines and not lines[0].strip():
            lines.pop(0)
        headline = lines[0].strip() if lines else ""
        article = "\n".join(line.strip() for line in lines[1:]).strip()
        if not headline or not article:
            dropped.append((str(path), "empty headline" if not headline else "empty article"))
            continue
        topic = path.parent.name
        pairs.append(HeadlinePair(article, headline, f"{topic}/{path.name}", topic, str(path)))
    if not pairs:
        raise InputError(f"{root}: no file with both a headline and an article")
    return HeadlineCorpus(pairs, dropped, notes)


def split_bbc_headlines(pairs, dev_fraction: float = DEV_FRACTION):
    """``(train, dev)`` of BBC pairs by the hash rule on ``topic/NNN.txt`` (salt ``bbc-news``)."""
    return split_headlines(pairs, dev_fraction, salt=BBC_SALT)


def _word_key(token: str) -> str:
    """What two words compare by when a headline is aligned to its source: lower case, without a
    possessive or a plural s ("profits" and "profit's" are "profit")."""
    key = token.lower()
    key = key[:-2] if key.endswith("'s") else key
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def verb_forms(wordnet):
    """A ``token -> frozenset of keys`` function for `aligned_positions`: `_word_key`, and for a
    word of letters the base forms WordNet's morphology gives it as a verb (its verb exception
    lists and suffix rules: "rose", "rises" and "rising" all hold "rise"; "fell" holds "fall" and
    "fell"). A headline's verb is mostly another form of the article's ("Output falls" over
    "output fell"), which plain words do not align. Cached per token."""
    import functools

    @functools.lru_cache(maxsize=None)
    def keys(token: str) -> frozenset:
        low = token.lower()
        forms = {_word_key(token)}
        if low.isalpha() and len(low) > 2:
            forms.update(wordnet._morphy(low, "v"))  # every base form: the public morphy() gives the first ("fell")
        return frozenset(forms)

    return keys


def verb_test(wordnet):
    """A ``word, first=False -> bool`` test: is this word a verb? No part-of-speech tagger is on
    this machine, so it reads no context: a word is a verb when it is lower case (or the first of
    its headline), not a function word, and WordNet's tagged-sense counts (SemCor, `Lemma.count`)
    over its base forms as a verb (`_morphy(word, "v")`) exceed those as a noun and as an
    adjective ("fell" 120 / 0 / 0; "shares" 62 / 47 / 0, a verb; "profits" 4 / 19 / 0, a noun). It
    errs ("rival", "plans"). Cached per word."""
    import functools

    from captioner.text.tokenizer import FUNCTION_WORDS

    def count(word, pos):
        return sum(lemma.count() for base in wordnet._morphy(word, pos) for lemma in wordnet.lemmas(base, pos))

    @functools.lru_cache(maxsize=None)
    def is_verb(word: str, first: bool = False) -> bool:
        if not word.isalpha() or word.lower() in FUNCTION_WORDS or (word[0].isupper() and not first):
            return False
        low = word.lower()
        verb = count(low, "v")
        return verb > 0 and verb > count(low, "n") + count(low, "a")

    return is_verb


def with_source_verb(positions, source_tokens, headline_tokens, is_verb, within: int, skip=None) -> list[int]:
    """A deletion-based target that keeps a verb where its headline has one: when the headline
    holds a verb (``is_verb``) and the source words at ``positions`` none, add the first source
    verb that lies within ``within`` words after an aligned word (after the first one: the subject
    comes first), and before the next one. A headline's verb is mostly not the article's ("Campbell
    rescues Arsenal", "Gurkhas to help tsunami victims" over "... to assist ..."): the article's verb
    in the same place stands for it. A word ``skip`` holds (a ``word -> bool``; the recipe skips
    forms of "say": a reporting verb does not head a headline) is passed over. Returns
    ``positions`` unchanged when nothing applies."""
    if not positions or not any(is_verb(t, i == 0) for i, t in enumerate(headline_tokens)):
        return positions
    if any(is_verb(source_tokens[j], True) for j in positions):
        return positions
    bounds = positions[1:] + [len(source_tokens)]
    for a, b in zip(positions, bounds):
        for j in range(a + 1, min(b, a + within + 1)):
            word = source_tokens[j]
            if is_verb(word, True) and not (skip and skip(word)):
                return sorted(positions + [j])
    return positions


def aligned_positions(source_tokens, headline_tokens, keys=None) -> tuple[list[int], int]:
    """The longest common subsequence of a headline's words and its source's (`_word_key`; the
    headline's tokens without a letter or digit are not aligned): (the source positions, in order;
    the headline words that could be aligned). The positions are a deletion-based compression of
    the source (Filippova et al. 2015): its words there, in order, are the part of the headline
    the source holds. With ``keys`` (`verb_forms`), two words align when their key sets meet."""
    keys = keys or (lambda t: {_word_key(t)})
    src = [keys(t) for t in source_tokens]
    head = [keys(t) for t in headline_tokens if any(ch.isalnum() for ch in t)]
    n, m = len(head), len(src)
    best = [[0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: LCS of head[i:] and src[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = best[i + 1][j + 1] + 1 if head[i] & src[j] else max(best[i + 1][j], best[i][j + 1])
    positions, i, j = [], 0, 0
    while i < n and j < m:
        if head[i] & src[j] and best[i][j] == best[i + 1][j + 1] + 1:
            positions.append(j)
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return positions, n
