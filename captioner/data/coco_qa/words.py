"""The word lists of the question generator (`words.json` beside this file: data, not code) and
the few rules on words: singular forms, plurals, canonical answers."""

from __future__ import annotations

import json
import os

with open(os.path.join(os.path.dirname(__file__), "words.json"), encoding="utf-8") as _f:
    _WORDS = json.load(_f)

TYPES = ("object", "number", "color", "location", "yesno")
DETERMINERS = frozenset(_WORDS["determiners"])
NUMBER_WORDS = dict(_WORDS["number_words"])
_NUMBER_NAMES = {v: k for k, v in NUMBER_WORDS.items()}
COLORS = dict(_WORDS["colors"])  # a colour word -> its canonical form (grey -> gray)
PLACE_PREPS = frozenset(_WORDS["place_prepositions"])
OBJECT_PREPS = frozenset(_WORDS["object_prepositions"])
AT_OBJECT_VERBS = frozenset(_WORDS["at_object_verbs"])
PARTICLES = frozenset(_WORDS["particles"])
BE = dict(_WORDS["be"])  # a form of "be" -> the present form a question uses (None: never asked)
STOPS = frozenset(_WORDS["stops"]) | PLACE_PREPS | OBJECT_PREPS | frozenset(BE)
ING_NOUNS = frozenset(_WORDS["ing_nouns"])
GROUP_NOUNS = frozenset(_WORDS["group_nouns"])
NON_ANSWERS = frozenset(_WORDS["non_answers"])  # never answers of object/location questions, never yes/no subjects
BODY_AND_CLOTHES = frozenset(_WORDS["body_and_clothes"])
NOT_THINGS = frozenset(_WORDS["not_things"])  # events and other heads that make poor "is there a ...?" questions
# the yes/no negatives: mentioning any member of a group excludes all its members
SYNONYM_GROUPS = [frozenset(group) for group in _WORDS["synonym_groups"].values()]
SCENE_WORDS = frozenset(_WORDS["scene_words"])
_IRREGULAR_PLURALS = dict(_WORDS["irregular_plurals"])
_PLURALIA_TANTUM_ONLY = frozenset(_WORDS["pluralia_tantum"])
# singular nouns ending in s: singularize keeps them, and they are not plurals
_SINGULAR_IN_S = frozenset(_WORDS["singular_in_s"])
_PLURALIA_TANTUM = _PLURALIA_TANTUM_ONLY | _SINGULAR_IN_S  # what singularize leaves alone


def singularize(word: str) -> str:
    """English singular of a (lower-case) noun by a few rules; pluralia tantum are kept."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word in _PLURALIA_TANTUM or len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes", "oes")):
        return word[:-2]
    return word[:-1]


_ANIMAL_WORDS = _WORDS["synonym_groups"]["dogs"] + _WORDS["synonym_groups"]["horses"]
ANIMALS = frozenset(_ANIMAL_WORDS + _WORDS["more_animals"]) | {singularize(w) for w in _ANIMAL_WORDS}


def is_plural(word: str) -> bool:
    return (
        singularize(word) != word
        or word in ("people", "sheep", "fish", "deer")
        or word in _PLURALIA_TANTUM_ONLY
    )


def normalize_answer(answer: str, qtype: str) -> str:
    """One-word answer in canonical form: two/2 -> two; dogs -> dog; grey -> gray."""
    a = answer.strip().lower()
    if qtype == "number":
        if a.isdigit():
            return _NUMBER_NAMES.get(int(a), a)
        return a
    if qtype == "color":
        return COLORS.get(a, a)
    if qtype in ("object", "location"):
        return singularize(a)
    return a
