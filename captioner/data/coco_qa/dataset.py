"""The question set of a caption file: every image's questions merged, balanced yes/no, rare answers dropped."""

from __future__ import annotations

from collections import Counter
from collections import defaultdict
import random

from captioner.data.coco_qa.lexicon import CaptionLexicon, tokenize
from captioner.data.coco_qa.questions import QAPair, questions_from_caption
from captioner.data.coco_qa.words import (
    ANIMALS, BODY_AND_CLOTHES, NON_ANSWERS, NOT_THINGS, SCENE_WORDS, SYNONYM_GROUPS, TYPES, singularize,
)


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


def person_words(words) -> set[str]:
    """The words of `words` that name people: the COCO-QA people group, and where WordNet is here
    (`captioner.text.wordnet.load_wordnet`), every noun whose most frequent sense is a kind of
    person.n.01 (web captions' "actor", "artist", "celebrity", "footballer")."""
    from captioner.text.wordnet import load_wordnet

    people = set(SYNONYM_GROUPS[0])
    wordnet, _ = load_wordnet()
    if wordnet is None:
        return {w for w in words if w in people or singularize(w) in people}
    person = wordnet.synset("person.n.01")
    found = set()
    for word in words:
        if word in people or singularize(word) in people:
            found.add(word)
            continue
        senses = wordnet.synsets(singularize(word), pos="n")
        if senses and any(person in path for path in senses[0].hypernym_paths()):
            found.add(word)
    return found


COUNT_NAMES = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
GROUP_WORDS = frozenset({"crowd", "group", "team", "family", "couple", "audience", "people", "spectators"})


def people_count(caption, people) -> int | None:
    """How many people one caption says there are: "two men and a woman" 3, "a man" 1; None where it
    does not say (a plural without a number, "a group of", "people")."""
    from captioner.data.coco_qa.words import NUMBER_WORDS

    tokens = tokenize(caption)
    count = 0
    for i, token in enumerate(tokens):
        if token not in people:
            continue
        before = tokens[i - 1] if i else ""
        if before in NUMBER_WORDS:
            count += NUMBER_WORDS[before]
        elif token in GROUP_WORDS or singularize(token) != token:
            return None  # "a group", "people", "men": how many is not said
        elif before in ("a", "an", "one"):
            count += 1
        else:
            return None  # "the man" after "a man" names him again; "his father": unsure
    return count or None


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
    absent_people: bool = False,
    false_premise: float = 0.0,
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
        absent_people: also ask "how many people are there?" of every image: "none" where no caption names a
            person (`person_words`), the count where most of its captions say the same one (`people_count`:
            "two men and a woman" 3, "a man" 1); questions made from captions otherwise only ever ask how many
            where people are, and a model learns to count people in a bowl of soup.
        false_premise: also ask, of photos none of whose captions names a person, one of the questions
            other photos' captions raised about a person ("what is the man doing?", "what is the woman
            holding?"), answered "nobody" (`FALSE_PREMISE_ANSWER`): this share of the number of such person
            questions (0: none), so "nobody" stays an answer the photo decides, not the question.
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
    asks_absent = absent_people or false_premise
    people = person_words({t for im in images for c in captions[im] for t in tokenize(c)}) if asks_absent else set()
    # photos none of whose captions names a person (asked "how many people": "none"; false premises' photos)
    nobody = {im for im in images if not any(t in people for c in captions[im] for t in tokenize(c))} \
        if asks_absent else set()
    premises = _false_premises(images, per_image, nobody, people, seed, false_premise) if false_premise else {}
    asked: Counter = Counter()
    result: list[QAPair] = []
    for image in images:
        for q, a, t in per_image[image]:
            if keep(t, a):
                result.append(QAPair(image, q, a, t))
            else:
                dropped[t] += 1
        if image in premises:
            result.append(QAPair(image, premises[image], FALSE_PREMISE_ANSWER, "object"))
        if absent_people and image in nobody:
            result.append(QAPair(image, "how many people are there?", "none", "number"))
        elif absent_people:  # the same question where people are: their count, where the captions agree on it
            said = [n for n in (people_count(c, people) for c in captions[image]) if n]
            top = Counter(said).most_common(1)
            if top and top[0][1] * 2 > len(captions[image]) and top[0][0] in COUNT_NAMES:
                result.append(QAPair(image, "how many people are there?", COUNT_NAMES[top[0][0]], "number"))
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


FALSE_PREMISE_ANSWER = "nobody"


def _false_premises(images, per_image, nobody, people, seed, share) -> dict[str, str]:
    """{image: a question about a person} for the photos `nobody` (none of whose captions names a person);
    the questions are the object questions of the other photos whose subject holds a person word, drawn at random
    (their own generator, so the other questions do not change), one per photo, for `share` times as
    many photos as there are such questions (or every such photo, if fewer)."""
    asked = [q for im in images for q, _, t in per_image[im]
             if t == "object" and q.startswith(("what is the ", "what are the ")) and set(q.split()[3:-1]) & people]
    empty = [im for im in images if im in nobody]
    if not asked or not empty:
        return {}
    rng = random.Random(f"false-premise-{seed}")
    chosen = rng.sample(empty, min(len(empty), round(share * len(asked))))
    return {im: rng.choice(asked) for im in chosen}


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
