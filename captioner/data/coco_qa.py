"""Question/answer pairs from image captions: the COCO-QA method (Ren, Kiros, Zemel 2015,
"Exploring Models and Data for Image Question Answering", section 4) for Flickr8k-style captions.

Pure Python (no TensorFlow, no NLTK data): ``generate_qa(captions, images, seed=0)``.

How a caption becomes questions
-------------------------------
Ren et al. parse each caption with a constituency parser, split compound sentences, turn
indefinite determiners into "the" and move the answer phrase to a wh-word. Flickr8k captions are
short and regular ("a black dog is running on the beach ."), so here a rule-based chunker does
the parser's job:

1. Tokens: lower-cased words; ``'s`` dropped; "in front of", "next to", "on top of", "out of"
   and "in the middle of" become one preposition.
2. Chunks (noun phrases) are maximal runs of tokens between *stop* tokens: prepositions,
   conjunctions, punctuation, pronouns, forms of *be/have*, adverbs of a small list, and verbs.
   A determiner or number starts a new chunk. A word is a verb when it ends in ``-ing`` and
   does not follow a determiner, number or colour ("a swimming pool" stays a noun phrase,
   "a dog swimming" does not), when it ends in ``-ed`` before a preposition or determiner
   ("covered in snow"), or when it is a 3rd-person or base form (runs, play) whose ``-ing``
   form occurs in the caption file and that rarely follows a determiner there (these word
   statistics come from all captions of the token file: no tagger, no lexicon download).
   The head of a chunk is its last word; "group/couple/pair/... of X" takes X's head.
3. A clause is: subject chunk (or "X and Y"), prepositional phrases after it skipped
   ("a man in a red shirt"), then the main verb: ``is/are VERBing``, a 3rd-person or base
   form, or a bare ``VERBing`` (a caption without a finite verb, "a dog running through the
   snow", reads as "is running"). An optional particle (up, down, out, ...), then an object
   chunk, then a prepositional phrase.

Question types (the four of COCO-QA, plus yes/no):

- **object**: the head of the main verb's object ("a man rides a bike" -> "what is the man
  riding?" -> bike), or of a non-place preposition after the verb ("a dog jumps over a fence"
  -> "what is the dog jumping over?" -> fence). COCO-QA asks both kinds as "what" questions.
- **location**: the head after a place preposition (in, on, at, near, through, across, along,
  into, onto, under, by, beside, behind, inside, outside, around, in front of, ...) following
  the verb, its object, or "is/are" ("where is the dog running?" -> beach; "the dog is in the
  snow" -> "where is the dog?"). Body parts, clothes and words like "front", "top", "side" are
  never location answers. Ren et al. use "in" phrases whose object is a place; we accept more
  prepositions because Flickr8k captions place things "on the beach", "through the snow".
- **number**: a number (2-10, word or digit) before a plural head, in the subject ("two dogs
  are playing in the snow" -> "how many dogs are playing in the snow?" -> two) or in the
  object ("how many balls is the man holding?"). "one" is not asked (mostly a pronoun).
- **color**: a colour word directly modifying the head ("a black dog" -> "what color is the
  dog?" -> black). Colours joined by "and"/"," ("a black and white dog") or two colours in
  one chunk are not asked: no single-word answer is right.
- **yesno**: "is there a dog?" with answer yes for a head noun this image's captions name
  (subject or object), and the same number of "no" questions about a head that another
  image's captions name (drawn by a seeded RNG; a random other image, then a random one of its
  heads, so frequent objects are asked about with both answers) and that none of this image's
  captions mention, counting synonyms (any person word excludes every person word, any dog
  breed every dog word, ...). Scene words (grass, water, street, ...) are never asked "no":
  they are in most photos whether a caption names them or not. Balanced: exactly as many
  no as yes per image. Not in COCO-QA (which has no yes/no questions); asked for by issue 22.

Answers: one word, normalized (numbers as words: 2 -> two; object and location answers in
the singular: dogs -> dog, men -> man, puppies -> puppy, glasses kept; colour synonyms:
grey -> gray, blonde -> blond). One image's five captions: identical questions are merged,
the majority answer kept, ties dropped. Rare answers: like Ren et al., who reject answers
below a frequency threshold, every answer of a type (object, location, color, number) seen
fewer than ``min_answer_count`` times (default 5) in the whole generated set is dropped;
``answers_from`` (a {type: set of answers} map, e.g. from the train output) instead keeps only
answers known there, so a dev set shares the train answer vocabulary. Ren et al. also
down-sample very common answers; we do not.

Measured on Flickr8k (``captioner make-qa``, seed 0, min_answer_count 5; the commands, per-type
counts and top answers of both lists are in ``assets/qa/flickr8k_qa_stats.json``): train (6,000
images) 30,915 pairs: object 7,193, number 3,651, color 5,955, location 6,996, yes/no 7,120
(3,560 each); 1,820 pairs dropped as rare answers (object 1,060, location 760), 854 questions
dropped as ties. Top answers: object ball, dog, shirt, trick, bike; number two (74%), three,
four; color white, red, black, blue, brown; location water, grass, field, snow, beach. Dev
(1,000 images, answers restricted to the train ones): 5,318 pairs. Precision, read by hand on
100 random train pairs: 89 good; the bad ones were yes/no about non-nouns (since filtered),
the wrong head of a compound ("rock climbing wall" -> rock), truncated questions ("fooling
[around]") and one event as a location ("in a race").
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from captioner.errors import InputError

__all__ = [
    "TYPES",
    "CaptionLexicon",
    "QAPair",
    "answer_stats",
    "drop_rare_answers",
    "generate_qa",
    "normalize_answer",
    "questions_from_caption",
    "read_image_list",
    "singularize",
]

TYPES = ("object", "number", "color", "location", "yesno")

DETERMINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "his",
        "her",
        "their",
        "its",
        "my",
        "your",
        "our",
        "some",
        "another",
        "each",
        "every",
        "several",
        "many",
        "few",
    ]
)
NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_NUMBER_NAMES = {v: k for k, v in NUMBER_WORDS.items()}
COLORS = {
    "black": "black",
    "white": "white",
    "brown": "brown",
    "red": "red",
    "blue": "blue",
    "green": "green",
    "yellow": "yellow",
    "orange": "orange",
    "pink": "pink",
    "purple": "purple",
    "gray": "gray",
    "grey": "gray",
    "tan": "tan",
    "silver": "silver",
    "blond": "blond",
    "blonde": "blond",
    "golden": "gold",
    "gold": "gold",
}
PLACE_PREPS = frozenset(
    [
        "in",
        "on",
        "at",
        "near",
        "through",
        "across",
        "along",
        "into",
        "onto",
        "under",
        "by",
        "beside",
        "behind",
        "inside",
        "outside",
        "around",
        "in_front_of",
        "next_to",
        "on_top_of",
        "in_the_middle_of",
        "underneath",
        "beneath",
        "among",
        "between",
        "alongside",
    ]
)
OBJECT_PREPS = frozenset(
    [
        "over",
        "with",
        "toward",
        "towards",
        "from",
        "past",
        "off",
        "against",
        "up",
        "down",
        "out_of",
        "for",
        "to",
        "above",
        "below",
        "of",
    ]
)
# Verbs after which "at" introduces the thing looked at, not a place.
AT_OBJECT_VERBS = frozenset(
    [
        "pull",
        "pulling",
        "tug",
        "tugging",
        "chew",
        "chewing",
        "bite",
        "biting",
        "grab",
        "grabbing",
        "hold",
        "holding",
        "look",
        "looking",
        "stare",
        "staring",
        "watch",
        "watching",
        "bark",
        "barking",
        "smile",
        "smiling",
        "point",
        "pointing",
        "wave",
        "waving",
        "laugh",
        "laughing",
        "yell",
        "yelling",
        "glance",
        "glancing",
    ]
)
PARTICLES = frozenset(["up", "down", "out", "off", "away", "back", "around", "over"])
BE = {"is": "is", "are": "are", "was": "is", "were": "are", "be": None, "being": None, "been": None, "am": None}
STOPS = (
    frozenset(
        [
            "and",
            "or",
            "but",
            "nor",
            ",",
            ".",
            ";",
            ":",
            "!",
            "?",
            "(",
            ")",
            '"',
            "while",
            "as",
            "so",
            "then",
            "than",
            "who",
            "whom",
            "whose",
            "which",
            "that",
            "where",
            "when",
            "what",
            "why",
            "how",
            "there",
            "here",
            "it",
            "he",
            "she",
            "they",
            "him",
            "them",
            "we",
            "us",
            "you",
            "i",
            "me",
            "itself",
            "himself",
            "herself",
            "themselves",
            "something",
            "someone",
            "somebody",
            "anything",
            "everything",
            "nothing",
            "each_other",
            "one",
            "another",
            "has",
            "have",
            "had",
            "having",
            "do",
            "does",
            "did",
            "not",
            "no",
            "very",
            "also",
            "too",
            "just",
            "together",
            "alone",
            "nearby",
            "away",
            "back",
            "high",
            "up",
            "down",
            "out",
            "off",
            "outside",
            "inside",
            "around",
            "about",
            "almost",
            "all",
            "both",
            "other",
            "others",
            "can",
            "could",
            "will",
            "would",
            "should",
            "may",
            "might",
            "must",
            "to",
            "outdoors",
            "indoors",
            "upstairs",
            "downstairs",
            "home",
            "downhill",
            "uphill",
            "underwater",
            "overhead",
            "ahead",
            "whilst",
            "whereas",
            "before",
            "after",
            "during",
            "until",
            "because",
            "if",
            "like",
            "being",
        ]
    )
    | PLACE_PREPS
    | OBJECT_PREPS
    | frozenset(BE)
)
ING_NOUNS = frozenset(
    [
        "building",
        "buildings",
        "clothing",
        "ring",
        "rings",
        "swing",
        "swings",
        "string",
        "thing",
        "things",
        "ceiling",
        "painting",
        "paintings",
        "wedding",
        "railing",
        "railings",
        "morning",
        "evening",
        "sibling",
        "siblings",
        "spring",
        "king",
        "wing",
        "wings",
        "sling",
        "icing",
        "stuffing",
        "pudding",
        "parking",
        "boxing",
        "ping",
    ]
)
GROUP_NOUNS = frozenset(
    [
        "group",
        "groups",
        "couple",
        "pair",
        "team",
        "crowd",
        "bunch",
        "herd",
        "pack",
        "flock",
        "line",
        "lot",
        "number",
        "row",
        "pile",
        "handful",
        "variety",
        "family",
        "kind",
    ]
)
# Never answers of object/location questions, never yes/no subjects.
NON_ANSWERS = frozenset(
    [
        "front",
        "top",
        "side",
        "middle",
        "edge",
        "background",
        "foreground",
        "distance",
        "way",
        "end",
        "back",
        "left",
        "right",
        "center",
        "centre",
        "area",
        "part",
        "piece",
        "kind",
        "sort",
        "type",
        "lot",
        "number",
        "group",
        "couple",
        "pair",
        "bunch",
        "one",
        "ones",
        "other",
        "others",
        "thing",
        "things",
        "something",
        "picture",
        "photo",
        "image",
        "view",
        "air",
        "time",
        "day",
        "night",
        "shot",
        "bottom",
        "corner",
        "sight",
    ]
)
BODY_AND_CLOTHES = frozenset(
    [
        "mouth",
        "hand",
        "hands",
        "arm",
        "arms",
        "head",
        "face",
        "leg",
        "legs",
        "foot",
        "feet",
        "back",
        "lap",
        "shoulder",
        "shoulders",
        "neck",
        "nose",
        "eye",
        "eyes",
        "ear",
        "ears",
        "hair",
        "teeth",
        "tongue",
        "finger",
        "fingers",
        "knee",
        "knees",
        "body",
        "chest",
        "tail",
        "paw",
        "paws",
        "jaws",
        "shirt",
        "shirts",
        "t-shirt",
        "tshirt",
        "jacket",
        "coat",
        "hat",
        "cap",
        "dress",
        "pants",
        "jeans",
        "shorts",
        "outfit",
        "uniform",
        "uniforms",
        "suit",
        "costume",
        "costumes",
        "helmet",
        "helmets",
        "sweater",
        "top",
        "skirt",
        "boots",
        "shoes",
        "sneakers",
        "gear",
        "clothes",
        "clothing",
        "vest",
        "hoodie",
        "sweatshirt",
        "jersey",
        "jerseys",
        "swimsuit",
        "bikini",
        "trunks",
        "glasses",
        "sunglasses",
        "goggles",
        "scarf",
        "gloves",
        "mask",
        "apron",
        "robe",
        "tank",
    ]
)
# Events and other heads that make poor "is there a ...?" questions.
NOT_THINGS = frozenset(
    [
        "trick",
        "jump",
        "flip",
        "game",
        "race",
        "play",
        "run",
        "walk",
        "turn",
        "ride",
        "swim",
        "dive",
        "pose",
        "stunt",
        "move",
        "shot",
        "lap",
        "match",
        "competition",
        "event",
        "attempt",
        "break",
        "rest",
        "look",
        "smile",
        "hug",
        "kiss",
        "fight",
        "leap",
        "catch",
        "throw",
        "wheelie",
        "ollie",
        "spin",
        "splash",
        "sunset",
        "sunlight",
        "shade",
        "closeup",
        "close-up",
        "object",
        "camera",
        "photograph",
        "sport",
        "good",
    ]
)
# Synonym groups for the yes/no negatives: mentioning any member excludes all members.
_PEOPLE = (
    "man men woman women person people boy boys girl girls child children kid kids guy guys "
    "lady ladies baby babies toddler toddlers adult adults teenager teenagers teen teens youth "
    "player players crowd worker workers rider riders biker bikers bicyclist cyclist skier "
    "skiers snowboarder surfer surfers skateboarder skater swimmer climber runner runners "
    "dancer dancers gentleman someone family couple group team male female son daughter "
    "mother father mom dad friend friends student students infant individual spectators "
    "audience performer musician tourist tourists hiker hikers wrestler wrestlers athlete "
    "cowboy police officer soldier bride groom"
)
_DOGS = (
    "dog dogs puppy puppies pup pups collie poodle terrier retriever labrador lab dachshund "
    "greyhound husky beagle shepherd spaniel pitbull bulldog chihuahua pug boxer dalmatian "
    "rottweiler schnauzer mutt hound doberman corgi sheepdog pet pets animal animals canine "
    "dogs' retrievers"
)
_HORSES = "horse horses pony ponies animal animals bull bulls cow cows"
_BIKES = "bike bikes bicycle bicycles motorcycle motorbike dirtbike cycle"
_BOATS = "boat boats kayak canoe raft ship sailboat"
_BALLS = "ball balls football soccer basketball volleyball tennis baseball"
SYNONYM_GROUPS = [frozenset(g.split()) for g in (_PEOPLE, _DOGS, _HORSES, _BIKES, _BOATS, _BALLS)]
SCENE_WORDS = frozenset(
    [
        "grass",
        "water",
        "snow",
        "sand",
        "beach",
        "ocean",
        "sea",
        "lake",
        "river",
        "pool",
        "street",
        "road",
        "sidewalk",
        "path",
        "trail",
        "field",
        "ground",
        "dirt",
        "mud",
        "floor",
        "wall",
        "building",
        "buildings",
        "tree",
        "trees",
        "sky",
        "sun",
        "air",
        "park",
        "yard",
        "city",
        "area",
        "background",
        "room",
        "house",
        "rocks",
        "rock",
        "hill",
        "mountain",
        "mountains",
        "forest",
        "woods",
        "crowd",
        "people",
        "stage",
        "fence",
        "waves",
        "wave",
        "shore",
        "track",
        "bench",
        "table",
        "chair",
        "window",
        "door",
        "stairs",
        "steps",
        "light",
    ]
)

_IRREGULAR_PLURALS = {
    "men": "man",
    "women": "woman",
    "children": "child",
    "people": "person",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
    "oxen": "ox",
    "sheep": "sheep",
    "fish": "fish",
    "deer": "deer",
    "policemen": "policeman",
    "firemen": "fireman",
    "knives": "knife",
    "leaves": "leaf",
    "wolves": "wolf",
    "calves": "calf",
    "shelves": "shelf",
    "lives": "life",
    "wives": "wife",
    "scarves": "scarf",
    "halves": "half",
    "dice": "die",
    "cacti": "cactus",
    "ladies": "lady",
    "puppies": "puppy",
}
_PLURALIA_TANTUM_ONLY = frozenset(
    [
        "glasses",
        "sunglasses",
        "goggles",
        "pants",
        "jeans",
        "shorts",
        "trunks",
        "clothes",
        "scissors",
        "overalls",
        "tights",
        "pajamas",
        "bleachers",
        "stairs",
        "binoculars",
        "headphones",
        "tongs",
        "leggings",
        "sweatpants",
        "yes",
    ]
)
# singular nouns ending in s: singularize keeps them, and they are not plurals
_SINGULAR_IN_S = frozenset(
    [
        "grass",
        "bus",
        "gas",
        "lens",
        "dress",
        "cross",
        "chess",
        "glass",
        "class",
        "boss",
        "moss",
        "mattress",
        "circus",
        "cactus",
        "octopus",
        "walrus",
        "canvas",
        "news",
        "series",
        "species",
    ]
)
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


ANIMALS = frozenset(
    (_DOGS + " " + _HORSES + " cat kitten bird duck goose sheep goat cow camel elephant deer").split()
) | {singularize(w) for w in (_DOGS + " " + _HORSES).split()}


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


# ---------------------------------------------------------------------------- tokens and lexicon

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


# ------------------------------------------------------------------------------------ chunking


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


# ------------------------------------------------------------------------------------ questions


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


# ------------------------------------------------------------------------------------ the data set


def _majority(answers: list[str]) -> str | None:
    counts = Counter(answers).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def _mentions(captions) -> set[str]:
    words = set()
    for c in captions:
        for t in tokenize(c):
            words.add(t)
            words.add(singularize(t))
    for group in SYNONYM_GROUPS:
        if words & group:
            words |= group
    return words


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def generate_qa(
    captions: dict[str, list[str]],
    images=None,
    *,
    seed: int = 0,
    min_answer_count: int = 5,
    answers_from: dict | None = None,
    yesno_per_image: int = 2,
    min_head_count: int = 10,
    lexicon=None,
    progress=None,
    stats: dict | None = None,
) -> list[QAPair]:
    """Question/answer pairs for `images` (default: every image of `captions`), in image order.

    Args:
        captions: {image: [caption, ...]} (e.g. ``read_flickr8k_captions``).
        images: image names to generate for; each must have captions (the caller reports and
            drops the others).
        seed: seeds the yes/no negatives.
        min_answer_count: drop answers of a type seen fewer times than this (0/1: keep all).
        answers_from: {type: answers} to keep instead of the count threshold.
        yesno_per_image: at most this many "yes" questions per image, and as many "no".
        min_head_count: a yes/no noun must head this many noun phrases of `captions`.
        lexicon: a CaptionLexicon (default: built from all of `captions`).
        progress: wraps the image iterable (e.g. tqdm).
        stats: filled with counts: generated, dropped_rare, per type.
    """
    images = list(captions) if images is None else list(images)
    lex = lexicon or CaptionLexicon.from_captions(c for caps in captions.values() for c in caps)
    rng = random.Random(seed)
    per_image: dict[str, list[tuple[str, str, str]]] = {}
    heads: dict[str, list[str]] = {}
    subjects: dict[str, list] = defaultdict(list)
    conflicts = 0
    for image in progress(images) if progress else images:
        grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
        image_heads: list[str] = []
        for caption in captions[image]:
            qas, hs, subj = questions_from_caption(caption, lex)
            for q, a, t in qas:
                grouped[(q, t)].append(a)
            image_heads.extend(hs)
            subjects[image].append(subj)
        rows = []
        for (q, t), answers in grouped.items():
            a = _majority(answers)
            if a is None:
                conflicts += 1
                continue
            rows.append((q, a, t))
        per_image[image] = rows
        heads[image] = sorted(
            {
                singularize(h)
                for h in image_heads
                if h not in NON_ANSWERS
                and h not in BODY_AND_CLOTHES
                and lex.is_noun(h)
                and not lex.is_finite_verb(h)
                and singularize(h) not in NOT_THINGS
                and singularize(h) not in BODY_AND_CLOTHES
            }
        )

    # rare answers
    counts = Counter((t, a) for rows in per_image.values() for _, a, t in rows)
    dropped = Counter()

    def keep(t, a):
        if answers_from is not None:
            return a in answers_from.get(t, ())
        return counts[(t, a)] >= min_answer_count

    # yes/no: positives from this image's heads, negatives from other images' heads
    # yes/no subjects: heads of at least `min_head_count` noun phrases of the whole caption
    # file (drops odd heads such as "serious", "followed")
    for im in images:
        heads[im] = [h for h in heads[im] if lex.chunk_end[h] >= min_head_count and not h.endswith("ed")]
    others = [im for im in images if heads[im]]
    asked: Counter = Counter()
    result: list[QAPair] = []
    for image in images:
        for q, a, t in per_image[image]:
            if keep(t, a):
                result.append(QAPair(image, q, a, t))
            else:
                dropped[t] += 1
        pos = [h for h in heads[image] if h not in SCENE_WORDS] or heads[image]
        pos = rng.sample(pos, min(yesno_per_image, len(pos)))
        mentioned = _mentions(captions[image])
        # people are in most photos and captions name them by many roles: ask "no" about a
        # person only when every caption's subject is an animal
        if not all(s is not None and singularize(s) in ANIMALS for s in subjects[image]):
            mentioned = mentioned | SYNONYM_GROUPS[0]
        neg: list[str] = []
        for _ in range(50 * max(1, len(pos))):
            if len(neg) == len(pos) or len(others) < 2:
                break
            other = rng.choice(others)
            if other == image:
                continue
            cand = rng.choice(heads[other])
            if cand in mentioned or cand in SCENE_WORDS or cand in neg or cand in BODY_AND_CLOTHES:
                continue
            if asked[(cand, "no")] > asked[(cand, "yes")]:
                continue  # keeps each noun's yes and no about even, so the answer needs the image
            neg.append(cand)
        pos = pos[: len(neg)]  # balanced: as many yes as no
        for word, answer in [(w, "yes") for w in pos] + [(w, "no") for w in neg]:
            asked[(word, answer)] += 1
            result.append(QAPair(image, f"is there {_article(word)} {word}?", answer, "yesno"))
    if stats is not None:
        stats.update(
            {
                "images": len(images),
                "pairs": len(result),
                "conflicting_questions_dropped": conflicts,
                "dropped_rare": dict(dropped),
                "dropped_rare_total": sum(dropped.values()),
                "min_answer_count": None if answers_from is not None else min_answer_count,
            }
        )
        stats.update(answer_stats(result))
    return result


def drop_rare_answers(pairs, min_count: int):
    """Pairs whose answer is seen at least `min_count` times within its type (yes/no kept)."""
    counts = Counter((p.type, p.answer) for p in pairs)
    return [p for p in pairs if p.type == "yesno" or counts[(p.type, p.answer)] >= min_count]


def answer_stats(pairs, top: int = 15) -> dict:
    """{"per_type": {type: count}, "distinct_answers": {...}, "top_answers": {type: [[a, n], ...]}}."""
    by_type: dict[str, Counter] = defaultdict(Counter)
    for p in pairs:
        by_type[p.type][p.answer] += 1
    return {
        "per_type": {t: sum(by_type[t].values()) for t in TYPES if t in by_type},
        "distinct_answers": {t: len(by_type[t]) for t in TYPES if t in by_type},
        "top_answers": {t: by_type[t].most_common(top) for t in TYPES if t in by_type},
    }


def read_image_list(path) -> list[str]:
    """Image names of a list file (one a line, blanks skipped, duplicates dropped); InputError
    naming file:line for a line that is not one file name."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e})") from None
    names, seen = [], set()
    for n, line in enumerate(lines, start=1):
        name = line.strip()
        if not name:
            continue
        if "\t" in name or "#" in name or " " in name:
            raise InputError(f"{path}:{n}: expected one image file name per line, found {line[:80]!r}")
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names
