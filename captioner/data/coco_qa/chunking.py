"""The rule-based chunker: noun-phrase chunks and verbs of a tokenized caption (the parser's job in Ren et al.)."""

from __future__ import annotations

from dataclasses import dataclass

from captioner.data.coco_qa.lexicon import CaptionLexicon
from captioner.data.coco_qa.words import (
    BE, DETERMINERS, GROUP_NOUNS, ING_NOUNS, NUMBER_WORDS, OBJECT_PREPS, PLACE_PREPS, STOPS,
)


@dataclass
class Chunk:
    words: list[str]  # without the leading determiner
    det: str | None
    start: int  # token index of the first token (determiner included)
    end: int  # one past the last token

    @property
    def head(self) -> str:
        return self.words[-1]

    @property
    def number(self) -> str | None:
        for w in self.words[:-1]:
            if w in NUMBER_WORDS or (w.isdigit() and 2 <= int(w) <= 10):
                return w
        return None

    def text(self, drop=()) -> str:
        return " ".join(w for w in self.words if w not in drop).replace("_", " ")


def _is_verb(tokens, i, lex, chunk_so_far) -> bool:
    w = tokens[i]
    if w in ING_NOUNS:
        return False
    if w.endswith("ing") and len(w) > 4:
        prev = tokens[i - 1] if i > 0 else None
        return not (prev in DETERMINERS or prev in NUMBER_WORDS)
    if w.endswith("ed") and len(w) > 4 and chunk_so_far:
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        return nxt is None or nxt in STOPS or nxt in DETERMINERS
    if chunk_so_far and lex.is_finite_verb(w):
        return True
    return False


def chunk_tokens(tokens: list[str], lex: CaptionLexicon):
    """Sequence of items: Chunk objects and (kind, token) tuples for everything else.

    kinds: "verb", "be", "prep", "stop".
    """
    items: list = []
    cur: list[str] = []
    det = None
    start = 0

    def flush(end):
        nonlocal cur, det
        if cur:
            items.append(Chunk(cur, det, start, end))
        elif det is not None:
            items.append(("stop", det))
        cur, det = [], None

    for i, w in enumerate(tokens):
        if w in DETERMINERS:
            flush(i)
            det, start = w, i
            continue
        if w in BE:
            flush(i)
            items.append(("be", w))
        elif w in PLACE_PREPS or w in OBJECT_PREPS:
            flush(i)
            items.append(("prep", w))
        elif w in STOPS:
            flush(i)
            items.append(("stop", w))
        elif _is_verb(tokens, i, lex, bool(cur)):
            flush(i)
            items.append(("verb", w))
        else:
            if not cur and det is None:
                start = i
            cur.append(w)
    flush(len(tokens))
    return items


def _kind(it) -> str:
    return "chunk" if isinstance(it, Chunk) else it[0]


def _word(it) -> str | None:
    return None if isinstance(it, Chunk) else it[1]


def _group_head(items, k):
    """Index of the chunk that gives the head of items[k] ("a group of people" -> people)."""
    c = items[k]
    if (
        c.head in GROUP_NOUNS
        and k + 2 < len(items)
        and items[k + 1] == ("prep", "of")
        and isinstance(items[k + 2], Chunk)
    ):
        return k + 2
    return k
