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

from captioner.data.coco_qa.dataset import answer_stats, drop_rare_answers, generate_qa
from captioner.data.flickr8k import read_image_list
from captioner.data.coco_qa.lexicon import CaptionLexicon
from captioner.data.coco_qa.questions import QAPair, questions_from_caption
from captioner.data.coco_qa.words import TYPES, normalize_answer, singularize

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
