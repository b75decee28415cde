"""One caption's questions: object, number, colour, location and yes/no, each with its one-word answer."""

from __future__ import annotations

from dataclasses import dataclass

from captioner.data.coco_qa.chunking import Chunk, _group_head, _kind, _word, chunk_tokens
from captioner.data.coco_qa.lexicon import CaptionLexicon, tokenize
from captioner.data.coco_qa.words import (
    AT_OBJECT_VERBS, BODY_AND_CLOTHES, COLORS, NON_ANSWERS, NUMBER_WORDS, PARTICLES, PLACE_PREPS, STOPS,
    is_plural, normalize_answer, singularize,
)


@dataclass(frozen=True)
class QAPair:
    image: str
    question: str
    answer: str
    type: str

    def to_json(self) -> dict:
        return {"image": self.image, "question": self.question, "answer": self.answer, "type": self.type}


def _np_phrase(items, k, end_k):
    """'the ...' phrase of the subject items[k:end_k] (chunks joined by 'and')."""
    parts = []
    for it in items[k:end_k]:
        if isinstance(it, Chunk):
            det = it.det if it.det in ("the", "his", "her", "their", "its", "this", "these", "those") else "the"
            if parts and parts[-1] == "of":
                det = it.det
            parts.append(f"{det} {it.text()}" if det else it.text())
        elif it == ("prep", "of"):
            parts.append("of")
        elif it == ("stop", "and"):
            parts.append("and")
    return " ".join(parts)


def _surface(items, k, end_k):
    """Original words of items[k:end_k] (for an object phrase inside a question)."""
    out = []
    for it in items[k:end_k]:
        if isinstance(it, Chunk):
            out.extend(([it.det] if it.det else []) + [w.replace("_", " ") for w in it.words])
        else:
            out.append(it[1].replace("_", " "))
    return " ".join(out)


def _valid_answer(word, lex, place=False):
    if word in NON_ANSWERS or word in STOPS or word in COLORS or not word.isalpha():
        return False
    if place and (word in BODY_AND_CLOTHES or singularize(word) in BODY_AND_CLOTHES):
        return False
    return lex.is_noun(word)


def questions_from_caption(caption: str, lex: CaptionLexicon):
    """``(qas, heads, subject)``: [(question, answer, type)] of one caption with normalized
    answers; the head nouns it names (subject, objects) for yes/no questions; the subject's
    head (None when there is none or it is "X and Y")."""
    tokens = tokenize(caption)
    items = chunk_tokens(tokens, lex)
    out: list[tuple[str, str, str]] = []
    heads: list[str] = []
    subject_head = None

    # colour questions: any chunk with a single colour directly before more words
    for k, it in enumerate(items):
        if not isinstance(it, Chunk):
            continue
        cols = [i for i, w in enumerate(it.words) if w in COLORS]
        if len(cols) != 1 or cols[0] == len(it.words) - 1:
            continue
        prev = items[k - 1] if k > 0 else None
        if it.det is None and prev in (("stop", "and"), ("stop", ","), ("stop", "or")):
            before = items[k - 2] if k > 1 else None
            if isinstance(before, Chunk) and before.head in COLORS:
                continue  # "a black and white dog"
        rest = it.words[cols[0] + 1 :]
        if any(w in COLORS or w in NUMBER_WORDS for w in rest) or "and" in rest:
            continue
        if rest[-1] in NON_ANSWERS or not lex.is_noun(rest[-1]):
            continue
        if rest[0].endswith("ed"):
            continue  # "blonde haired toddler", "red striped shirt": the colour is not the head's
        verb = "are" if is_plural(rest[-1]) else "is"
        out.append((f"what color {verb} the {' '.join(rest)}?", normalize_answer(it.words[cols[0]], "color"), "color"))

    # the clause: subject [PPs] [be] verb [particle] [object] [prep chunk]
    if not items or not isinstance(items[0], Chunk):
        return out, heads, subject_head
    s_end = 1
    while (
        s_end + 1 < len(items)
        and items[s_end] in (("stop", "and"), ("prep", "of"))
        and isinstance(items[s_end + 1], Chunk)
    ):
        s_end += 2
    subj_k = _group_head(items, 0)
    subj_head = items[subj_k].head
    conj = any(it == ("stop", "and") for it in items[1:s_end])
    plural = conj or is_plural(items[0].head) or items[0].number is not None
    if not lex.is_noun(subj_head) or subj_head in NON_ANSWERS:
        return out, heads, subject_head
    subject = _np_phrase(items, 0, s_end)
    subject_head = None if conj else subj_head
    if not conj:
        heads.append(subj_head)
    aux = "are" if plural else "is"

    # skip prepositional / "with" phrases after the subject
    j = s_end
    skipped = 0
    while j + 1 < len(items) and _kind(items[j]) == "prep" and isinstance(items[j + 1], Chunk) and skipped < 2:
        j += 2
        skipped += 1
        while j + 1 < len(items) and items[j] in (("stop", "and"), ("stop", ",")) and isinstance(items[j + 1], Chunk):
            j += 2
    k = j
    be = False
    if k < len(items) and _kind(items[k]) == "be":
        be, k = True, k + 1
    # "the dog is in the snow": where is the dog?
    if (
        be
        and k + 1 < len(items)
        and _kind(items[k]) == "prep"
        and _word(items[k]) in PLACE_PREPS
        and isinstance(items[k + 1], Chunk)
        and skipped == 0
    ):
        loc = items[_group_head(items, k + 1)].head
        if _valid_answer(loc, lex, place=True):
            out.append((f"where {aux} {subject}?", normalize_answer(loc, "location"), "location"))
        return out, heads, subject_head
    if k >= len(items) or _kind(items[k]) != "verb":
        # no verb: "a dog in the snow" -> where is the dog?
        if skipped and not be and k >= len(items) and _word(items[s_end]) in PLACE_PREPS:
            loc = items[_group_head(items, s_end + 1)].head
            if _valid_answer(loc, lex, place=True) and skipped == 1:
                out.append((f"where {aux} {subject}?", normalize_answer(loc, "location"), "location"))
        return out, heads, subject_head
    verb = _word(items[k])
    if be and not verb.endswith("ing"):
        return out, heads, subject_head  # "is covered", "are dressed": passive, not asked
    ing = lex.ing_form(verb)
    if ing is None:
        return out, heads, subject_head
    k += 1
    particle = None
    if (
        k < len(items)
        and isinstance(items[k], tuple)
        and _word(items[k]) in PARTICLES
        and k + 1 < len(items)
        and isinstance(items[k + 1], Chunk)
    ):
        particle, k = _word(items[k]), k + 1
    vp = f"{ing} {particle}" if particle else ing

    # number question on the subject
    n = items[0].number
    if n is not None and s_end == 1 and is_plural(items[0].head):
        rest_end = k
        m = k
        if m < len(items) and isinstance(items[m], Chunk):
            m += 1
        if m + 1 < len(items) and _kind(items[m]) == "prep" and isinstance(items[m + 1], Chunk):
            m += 2
        rest_end = m
        tail = _surface(items, k, rest_end)
        what = items[0].text(drop=(n,))
        q = f"how many {what} are {vp}" + (f" {tail}" if tail else "") + "?"
        out.append((q, normalize_answer(n, "number"), "number"))

    obj_text = ""
    if k < len(items) and isinstance(items[k], Chunk):
        ok = _group_head(items, k)
        obj = items[ok]
        if obj.number is not None and is_plural(obj.head) and ok == k:
            out.append(
                (
                    f"how many {obj.text(drop=(obj.number,))} {aux} {subject} {vp}?",
                    normalize_answer(obj.number, "number"),
                    "number",
                )
            )
        if _valid_answer(obj.head, lex):
            out.append((f"what {aux} {subject} {vp}?", normalize_answer(obj.head, "object"), "object"))
            if obj.head not in BODY_AND_CLOTHES:
                heads.append(obj.head)
        obj_text = " " + _surface(items, k, ok + 1)
        k = ok + 1
    if k + 1 < len(items) and _kind(items[k]) == "prep" and isinstance(items[k + 1], Chunk):
        prep = _word(items[k])
        pk = _group_head(items, k + 1)
        head = items[pk].head
        if verb in AT_OBJECT_VERBS or ing in AT_OBJECT_VERBS:
            prep_kind = "object"
        elif prep in PLACE_PREPS:
            prep_kind = "location"
        else:
            prep_kind = "object"
        if prep_kind == "location" and _valid_answer(head, lex, place=True):
            out.append((f"where {aux} {subject} {vp}{obj_text}?", normalize_answer(head, "location"), "location"))
        elif (
            prep_kind == "object"
            and not obj_text
            and prep not in ("of", "to", "for")
            and _valid_answer(head, lex)
            and head not in BODY_AND_CLOTHES
        ):
            out.append(
                (f"what {aux} {subject} {vp} {prep.replace('_', ' ')}?", normalize_answer(head, "object"), "object")
            )
            heads.append(head)
    return out, heads, subject_head
