"""COCO-QA-style question generation (captioner.data.coco_qa) on hand-worked captions."""

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from captioner.data.coco_qa import (
    CaptionLexicon,
    QAPair,
    drop_rare_answers,
    generate_qa,
    normalize_answer,
    questions_from_caption,
    read_image_list,
    singularize,
)
from captioner.errors import InputError

ROOT = Path(__file__).parents[2]

# A small caption collection: the word statistics (which words are verbs, which are nouns)
# come from it, as they come from the whole token file in real use.
CORPUS = [
    "A black dog is running on the beach .", "A dog runs on the beach .", "The dog is running .",
    "Two dogs are playing in the snow .", "Dogs play in the snow .", "The dogs are playing .",
    "A man rides a bike down the street .", "The man is riding a bike .", "A man riding .",
    "A man in a red shirt is climbing a rock .", "A woman climbs a rock .", "A man is climbing .",
    "A dog jumps over a fence .", "The dog is jumping .", "A fence and a dog .",
    "A black and white dog is leaping from a path .", "A dog leaps .", "The dog is leaping on the path .",
    "A boy holds two balls .", "The boy is holding a ball .", "A girl is holding the balls .",
    "The dog is in the snow .", "A group of people are walking on the beach .", "The people walk .",
    "A man and a woman sit on a bench .", "A woman is sitting on a bench .", "The man is sitting .",
    "A cat sits on a wall .", "The cat is sitting on the wall .", "A boy plays with a cat .",
    "A girl in a blue dress is walking .", "A girl walks on the street .", "The woman is walking .",
]


@pytest.fixture(scope="module")
def lex():
    return CaptionLexicon.from_captions(CORPUS * 2)


def qas(caption, lex):
    return questions_from_caption(caption, lex)[0]


def test_object_questions(lex):
    assert ("what is the man riding?", "bike", "object") in qas("A man rides a bike down the street .", lex)
    assert ("what is the man climbing?", "rock", "object") in qas("A man in a red shirt is climbing a rock .", lex)
    assert ("what is the dog jumping over?", "fence", "object") in qas("A dog jumps over a fence .", lex)


def test_location_questions(lex):
    assert ("where is the black dog running?", "beach", "location") in qas("A black dog is running on the beach .", lex)
    assert qas("The dog is in the snow .", lex) == [("where is the dog?", "snow", "location")]
    assert ("where are the man and the woman sitting?", "bench", "location") in \
        qas("A man and a woman sit on a bench .", lex)
    # "a group of people": the group is the subject, people the head
    q, heads, subject = questions_from_caption("A group of people are walking on the beach .", lex)
    assert ("where is the group of people walking?", "beach", "location") in q
    assert subject == "people"


def test_number_questions(lex):
    got = qas("Two dogs are playing in the snow .", lex)
    assert ("how many dogs are playing in the snow?", "two", "number") in got
    assert ("where are the two dogs playing?", "snow", "location") in got
    assert ("how many balls is the boy holding?", "two", "number") in qas("A boy holds two balls .", lex)
    assert ("what is the boy holding?", "ball", "object") in qas("A boy holds two balls .", lex)
    assert ("how many balls is the boy holding?", "two", "number") in qas("A boy holds 2 balls .", lex)


def test_color_questions(lex):
    assert ("what color is the dog?", "black", "color") in qas("A black dog is running on the beach .", lex)
    assert ("what color is the shirt?", "red", "color") in qas("A man in a red shirt is climbing a rock .", lex)
    assert ("what color is the dress?", "gray", "color") in qas("A girl in a grey dress is walking .", lex)
    # two colours: no single-word answer, not asked; the rest of the caption still is
    got = qas("A black and white dog is leaping from a path .", lex)
    assert not [q for q in got if q[2] == "color"]
    assert ("what is the black and white dog leaping from?", "path", "object") in got


def test_normalization():
    assert normalize_answer("2", "number") == "two" and normalize_answer("two", "number") == "two"
    assert normalize_answer("Dogs", "object") == "dog" and normalize_answer("men", "location") == "man"
    assert normalize_answer("grey", "color") == "gray" and normalize_answer("blonde", "color") == "blond"
    assert [singularize(w) for w in ("puppies", "benches", "glasses", "grass", "people", "waves", "bus")] == \
        ["puppy", "bench", "glasses", "grass", "person", "wave", "bus"]


CAPTIONS = {
    "dog1.jpg": ["A black dog is running on the beach .", "A dog runs on the beach .",
                 "A black dog is running .", "The dog is in the snow .", "A dog jumps over a fence ."],
    "dog2.jpg": ["A brown dog is running on the beach .", "A dog runs on the beach .",
                 "The dog is running .", "A brown dog jumps over a fence .", "A dog is in the snow ."],
    "man1.jpg": ["A man rides a bike down the street .", "The man is riding a bike .",
                 "A man in a red shirt rides a bike .", "A man riding a bike .", "A man is riding a bike ."],
    "man2.jpg": ["A man rides a bike down the street .", "A man in a red shirt is riding a bike .",
                 "A man riding a bike .", "A man climbs a rock .", "A man in a red shirt climbs a rock ."],
    "cat1.jpg": ["A cat sits on a wall .", "The cat is sitting on the wall .", "A white cat sits on a wall .",
                 "A cat sits on the wall .", "A cat on a wall ."],
    "cat2.jpg": ["A cat sits on a wall .", "The cat is sitting on a wall .", "A black cat sits on a wall .",
                 "A black cat is sitting .", "A cat on a wall ."],
}


def test_generate_aggregates_balances_and_is_seeded():
    stats = {}
    pairs = generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0, stats=stats)
    # one image's identical questions are merged
    keys = [(p.image, p.question) for p in pairs]
    assert len(keys) == len(set(keys))
    yes = [p for p in pairs if p.type == "yesno" and p.answer == "yes"]
    no = [p for p in pairs if p.type == "yesno" and p.answer == "no"]
    assert yes and len(yes) == len(no)
    for p in no:  # a "no" is never about something the image's captions mention
        word = p.question.split()[-1].rstrip("?")
        assert all(word not in c.lower() for c in CAPTIONS[p.image])
    assert QAPair("dog1.jpg", "where is the dog running?", "beach", "location") in pairs
    assert generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0) == pairs
    assert stats["per_type"]["yesno"] == len(yes) + len(no)


def test_majority_answer_and_ties_dropped():
    caps = {"a.jpg": ["A black dog is running .", "A black dog jumps .", "A brown dog runs ."],
            "b.jpg": ["A black dog is running .", "A brown dog jumps ."]}
    pairs = generate_qa(caps, min_answer_count=1, yesno_per_image=0, lexicon=CaptionLexicon.from_captions(CORPUS * 2))
    colors = {p.image: p.answer for p in pairs if p.type == "color"}
    assert colors == {"a.jpg": "black"}  # b.jpg: black 1, brown 1: dropped


def test_rare_answers_dropped():
    stats = {}
    pairs = generate_qa(CAPTIONS, min_answer_count=3, yesno_per_image=0, stats=stats)
    counts = Counter((p.type, p.answer) for p in pairs)
    assert counts and min(counts.values()) >= 3
    assert stats["dropped_rare_total"] > 0
    everything = generate_qa(CAPTIONS, min_answer_count=1, yesno_per_image=0)
    assert len(everything) - len(pairs) == stats["dropped_rare_total"]
    kept = generate_qa(CAPTIONS, yesno_per_image=0, answers_from={"color": {"black"}})
    assert {(p.type, p.answer) for p in kept} == {("color", "black")}
    p = [QAPair("x", "q", "a", "object")] * 2 + [QAPair("x", "q", "b", "object"), QAPair("x", "q", "no", "yesno")]
    assert drop_rare_answers(p, 2) == p[:2] + p[3:]


def test_read_image_list(tmp_path):
    f = tmp_path / "list.txt"
    f.write_text("a.jpg\n\nb.jpg\na.jpg\n", encoding="utf-8")
    assert read_image_list(f) == ["a.jpg", "b.jpg"]
    f.write_text("a.jpg\nb.jpg#0\tcaption\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"list.txt:2"):
        read_image_list(f)


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_generator_and_command_import_no_tensorflow():
    for path in (*sorted((ROOT / "captioner/data/coco_qa").glob("*.py")), ROOT / "captioner/commands/make_qa.py"):
        assert not _imports(path) & {"tensorflow", "keras", "numpy", "nltk"}, path
    # loaded without the package __init__ (which registers the Keras layers), nothing pulls TF in
    code = ("import sys, types\n"
            "for n, p in (('captioner', 'captioner'), ('captioner.data', 'captioner/data')):\n"
            "    m = types.ModuleType(n); m.__path__ = [p]; sys.modules[n] = m\n"
            "import captioner.data.coco_qa, captioner.data.flickr8k, captioner.commands.make_qa, captioner.io\n"
            "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_false_premise_asks_person_questions_of_photos_without_a_person():
    """Issue 69 item 1: 'what is the man riding?' asked of a photo no caption of which names a person is
    answered 'nobody'; only such photos get one, the questions are real person questions of other
    photos, at most as many as those; without the option the pairs are exactly as before."""
    base = generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0)
    pairs = generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0, false_premise=1.0)
    premises = [p for p in pairs if p.answer == "nobody"]
    assert [p for p in pairs if p.answer != "nobody"] == base
    person_rows = [p.question for p in base if p.type == "object" and p.question.split()[3] in
                   ("man", "woman", "boy", "girl", "people")]
    person_questions = set(person_rows)
    assert premises and all(p.type == "object" and p.question in person_questions for p in premises)
    no_person = {im for im, caps in CAPTIONS.items()
                 if not any(w in c.lower().split() for c in caps for w in ("man", "woman", "boy", "girl", "people"))}
    assert {p.image for p in premises} <= no_person and len(premises) == min(len(no_person), len(person_rows))
    assert generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0, false_premise=1.0) == pairs
    half = generate_qa(CAPTIONS, seed=3, min_answer_count=1, min_head_count=0, false_premise=0.5)
    assert sum(p.answer == "nobody" for p in half) == round(0.5 * len(person_rows))
