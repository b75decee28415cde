"""Caption tokens and the word statistics of the caption file (which words are verbs, which nouns)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from dataclasses import field
import re

from captioner.data.coco_qa.words import COLORS, DETERMINERS, NUMBER_WORDS, STOPS, singularize


_MULTI_PREPS = [
    ("in", "the", "middle", "of"),
    ("in", "front", "of"),
    ("on", "top", "of"),
    ("next", "to"),
    ("out", "of"),
    ("each", "other"),
]
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*|[,.;:!?]")


def tokenize(caption: str) -> list[str]:
    """Lower-cased words and punctuation; possessive 's dropped; multi-word prepositions and
    colour lists ("black and white" -> black_and_white) joined."""
    text = caption.lower().replace("'s ", " ").replace("' ", " ").replace("'", "")
    words = _join_colours(_WORD.findall(text))
    out: list[str] = []
    i = 0
    while i < len(words):
        for mw in _MULTI_PREPS:
            if tuple(words[i : i + len(mw)]) == mw:
                out.append("_".join(mw))
                i += len(mw)
                break
        else:
            out.append(words[i])
            i += 1
    return out


def _join_colours(words: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(words):
        j = i
        if words[i] in COLORS:
            while j + 2 < len(words) and words[j + 1] in ("and", ",") and words[j + 2] in COLORS:
                j += 2
            if (
                j + 1 < len(words)
                and words[j + 1] == ","
                and j + 3 < len(words)
                and words[j + 2] == "and"
                and words[j + 3] in COLORS
            ):
                j += 3
        out.append("_".join(w for w in words[i : j + 1] if w != ",") if j > i else words[i])
        i = j + 1
    return out


def _ing_candidates(word: str) -> list[str]:
    """-ing forms a 3rd-person/base verb form could have (runs -> running, rides -> riding)."""
    bases = [word]
    if word.endswith("ies"):
        bases.append(word[:-3] + "y")
    if word.endswith("es"):
        bases.append(word[:-2])
    if word.endswith("s"):
        bases.append(word[:-1])
    out = []
    for b in bases:
        if len(b) < 2:
            continue
        out.append(b + "ing")
        if b.endswith("e") and not b.endswith("ee"):
            out.append(b[:-1] + "ing")
        if b.endswith("ie"):
            out.append(b[:-2] + "ying")
        out.append(b + b[-1] + "ing")
    return out


@dataclass
class CaptionLexicon:
    """Word statistics of a caption collection: the stand-in for a tagger.

    ``count[w]``: occurrences; ``after_det[w]``: occurrences right after a determiner or number;
    ``chunk_end[w]``: occurrences as the last word of a determiner-initial run (a noun head).
    """

    count: Counter = field(default_factory=Counter)
    after_det: Counter = field(default_factory=Counter)
    chunk_end: Counter = field(default_factory=Counter)

    @classmethod
    def from_captions(cls, captions) -> CaptionLexicon:
        lex = cls()
        captions = list(captions)
        for caption in captions:
            toks = tokenize(caption)
            lex.count.update(toks)
            for prev, tok in zip(toks, toks[1:]):
                if prev in DETERMINERS or prev in NUMBER_WORDS:
                    lex.after_det[tok] += 1
        for caption in captions:  # second pass: chunk heads, stopping at the verbs found above
            toks = tokenize(caption)
            for i, tok in enumerate(toks):
                if (tok in DETERMINERS or tok in NUMBER_WORDS) and i + 1 < len(toks):
                    j = i + 1
                    while (
                        j + 1 < len(toks)
                        and toks[j + 1] not in STOPS
                        and not toks[j + 1].endswith("ing")
                        and toks[j + 1] not in DETERMINERS
                        and not lex.is_finite_verb(toks[j + 1])
                    ):
                        j += 1
                    lex.chunk_end[toks[j]] += 1
        return lex

    def ing_form(self, word: str) -> str | None:
        """The -ing form of a verb form if the captions use it (runs -> running), else None."""
        if word.endswith("ing"):
            return word
        found = [c for c in _ing_candidates(word) if self.count[c] > 0]
        return max(found, key=lambda c: self.count[c]) if found else None

    def det_ratio(self, word: str) -> float:
        return self.after_det[word] / self.count[word] if self.count[word] else 0.0

    def is_finite_verb(self, word: str) -> bool:
        """A 3rd-person or base verb form: an -ing form exists and it rarely follows a determiner."""
        if word.endswith("ing") or word in STOPS or word in COLORS or word in NUMBER_WORDS:
            return False
        if word in ("goes", "does", "gets", "sits", "lies", "runs", "swims"):
            return True
        return self.ing_form(word) is not None and self.det_ratio(word) < 0.15 and self.count[word] >= 2

    def is_noun(self, word: str) -> bool:
        """Seen as the head of a determiner-initial chunk at least twice and in a fair share of uses."""
        if word in STOPS or word in COLORS or word in NUMBER_WORDS or word in DETERMINERS:
            return False
        return any(
            self.chunk_end[w] >= 2 and self.chunk_end[w] >= 0.2 * self.count[w] for w in {word, singularize(word)}
        )
