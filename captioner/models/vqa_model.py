"""The whole VQA inference model in one Keras object: pixels + question -> answer, attention.

`VQAModel` holds the backbone (a functional model with its preprocessing inside), the
trained :class:`VQAClassifier`, the question vocabulary and the answer list (both in its
config, as JSON). Saved as one `.keras` file it loads in a fresh process with

    import captioner, keras
    model = keras.models.load_model("assets/models/easy_vqa.keras")  # safe_mode on
    result = model.answer("image.png", "what color is the shape?")
    result.answer, result.probability, result.top_k, result.attention  # (hops, h, w)

Questions are tokenized like every text of the project (`captioner.text.tokenize`); words
the vocabulary does not know become `<unk>`. Calling the model directly takes
``{"pixels": (B, H, W, 3) 0..255, "question": (B, T) int ids or (B,) strings}`` and returns
``{"probabilities": (B, A), "attention": (B, hops, R)}``.

Asked what the object in a photo is ("what is this?", "what animal is this?", "what kind of dog
is it?"; `is_object_question`), a model with an EfficientNet-Lite backbone can answer from the
backbone's own ImageNet head instead (`answer_batch(..., objects=True)`, what `captioner ask`
does by default): the tagger of the captioners (`captioner.tagging`, its settings and
familiar-photo test saved in the model's config), on a photo unlike the VQA training photos, with
a confident tag: the class's own name ("tabby", "espresso") or its word ("dog") answers. The
answer vocabulary of a VQA model trained on Flickr8k questions holds neither. Asked whether an animal
is there ("is there a dog?"; `presence_noun`), the same head answers "yes" or "no" on such a photo
where it is sure (`captioner.tagging.object_tagger.animal_present`): the classifier, whose yes/no
questions ask about animals its training captions name, says "yes" to a cat, a horse or a bird of
8 in 10 ImageNet photos that have none.
"""

from __future__ import annotations

import dataclasses
import re

import keras
import numpy as np
import tensorflow as tf

from captioner.errors import InputError
from captioner.models.calibration import Calibrated
from captioner.models.pixel_model import PixelModel, deserialize
from captioner.models.vqa_classifier import VQAClassifier  # noqa: F401  (registered)
from captioner.text.tokenizer import tf_tokenize, tokenize
from captioner.text.vocabulary import PAD_ID, UNK, VocabularyLookup
from captioner.models.compiled import compiled_method


@dataclasses.dataclass
class VQAAnswer:
    question: str
    answer: str
    probability: float
    top_k: list                 # [(answer, probability)], most probable first
    attention: np.ndarray | None  # (hops, h, w) for the attention model, None for the baseline
    tokens: list                # question words as the model saw them (unknown ones as <unk>)
    unknown_words: list         # question words outside the vocabulary
    known: bool = True          # False: the model says it does not know (see `dont_know_reason`)
    reason: str = ""            # why not, in words ("" when known)
    objects: list = dataclasses.field(default_factory=list)  # an object question's tags (Tag.as_dict())
    from_tag: bool = False      # the answer is a tag's name, not the classifier's (`model_answer` was)
    model_answer: str = ""      # with from_tag: what the classifier answered

    @property
    def display(self):
        """The answer to show a user: the answer, or "don't know (...)" with the best guess."""
        if self.known:
            return self.answer
        return f"don't know ({self.reason}; best guess {self.answer!r} at {self.probability:.2f})"

    def to_json(self):
        out = {"question": self.question, "answer": self.answer, "probability": self.probability,
               "top_k": [{"answer": a, "probability": p} for a, p in self.top_k],
               "unknown_words": self.unknown_words, "known": self.known}
        if not self.known:
            out["reason"] = self.reason
        if self.objects:
            out["objects"] = self.objects
        if self.from_tag:
            out.update(from_tag=True, model_answer=self.model_answer)
        return out


# "what is this?", "what's in the picture?", "what animal is that?", "what kind of dog is it?"
OBJECT_NOUNS = ("animal", "object", "thing", "bird", "dog", "cat", "fish", "insect", "bug", "plant", "flower", "food",
                "fruit", "vegetable", "dish", "drink", "vehicle", "car", "boat", "instrument", "tool", "device",
                "machine", "building", "structure", "creature", "item", "toy")
_OBJECT_QUESTION = re.compile(
    r"^what(?:'s|\s+is|\s+are)?\s+(?:(?:kind|type|sort|breed)\s+of\s+\w+\s+|(?:" + "|".join(OBJECT_NOUNS) + r")\s+)?"
    r"(?:is\s+|are\s+)?(?:this|that|it|these|those|shown|in\s+(?:the|this)\s+(?:picture|photo|photograph|image))$")


# "is there a dog?", "are there any birds?"
_PRESENCE_QUESTION = re.compile(r"^(?:is|are)\s+there\s+(?:an?|any|some)\s+([a-z]+)$")


def _plain(question):
    return re.sub(r"\s+", " ", str(question).lower()).strip().rstrip("?.! ").strip()


def is_object_question(question):
    """Whether `question` asks what the photo shows (its object's name), not about it."""
    return bool(_OBJECT_QUESTION.match(_plain(question)))


def presence_noun(question):
    """The noun of a question whether a thing is in the photo ("is there a dog?": "dog"), else None."""
    match = _PRESENCE_QUESTION.match(_plain(question))
    return match.group(1) if match else None


def asked_animals(question):
    """The ImageNet classes of the animal a question asks is there ("is there a dog?"), else None."""
    from captioner.tagging.object_tagger import animal_classes

    noun = presence_noun(question)
    return None if noun is None else animal_classes(noun)


def head_may_answer(question):
    """Whether the backbone's ImageNet head may answer `question` (`VQAModel.answer_objects`)."""
    return is_object_question(question) or asked_animals(question) is not None


@keras.saving.register_keras_serializable(package="captioner")
class VQAModel(Calibrated, PixelModel):
    vocabulary_key = "question_vocabulary"

    def __init__(self, backbone, classifier, question_vocabulary, answers, max_question_length=30,
                 training_config=None, min_probability=0.0, question_starts=None, tagger=None, **kwargs):
        super().__init__(backbone, question_vocabulary, training_config, **kwargs)
        self.tagger_config = dict(tagger or {})  # ObjectTagger settings (as a captioner's), for object questions
        self.classifier = deserialize(classifier)
        self.feature = self.classifier.feature
        self.answers = [str(a) for a in answers]
        if len(self.answers) != self.classifier.num_answers:
            raise ValueError(f"{len(self.answers)} answers for a classifier of {self.classifier.num_answers}")
        if len(self.vocabulary) != self.classifier.vocab_size:
            raise ValueError(f"vocabulary of {len(self.vocabulary)} for a classifier of {self.classifier.vocab_size}")
        self.max_question_length = int(max_question_length)
        # the "don't know" rule (see `dont_know_reason`): chosen on dev by the vqa recipe
        self.min_probability = float(min_probability)
        self.question_starts = sorted({str(w) for w in (question_starts or [])})
        self.lookup = VocabularyLookup(list(self.vocabulary.tokens), name="question_lookup")

    # -- graph ------------------------------------------------------------------------
    def question_ids(self, question):
        """(B,) strings -> (B, T) ids, in-graph (tf_tokenize + the vocabulary lookup)."""
        words = tf_tokenize(question)  # ragged (B, None)
        ids = tf.cast(self.lookup(words), "int32")[:, : self.max_question_length]
        return ids.to_tensor(default_value=PAD_ID)  # (B, T)

    def call(self, inputs, training=False):
        question = inputs["question"]
        if question.dtype == tf.string:
            question = self.question_ids(question)
        feats = self.features(inputs["pixels"])
        net_in = {"image": feats, "question": question}
        if "image_index" in inputs:
            net_in["image_index"] = inputs["image_index"]
        logits, alphas = self.classifier.forward(net_in, training=False)
        return {"probabilities": self.calibrated_softmax(logits),
                "attention": tf.cast(alphas, "float32")}

    # -- Python API -------------------------------------------------------------------
    def encode_question(self, question):
        """Tokenize a question: returns (ids, words as seen, unknown words). Empty -> InputError."""
        if not isinstance(question, str):
            raise InputError(f"a question must be a string, got {type(question).__name__}")
        words = tokenize(question)[: self.max_question_length]
        if not words:
            raise InputError(f"question {question!r} has no words")
        ids = self.vocabulary.encode(words, add_start=False, add_end=False)
        seen = [w if w in self.vocabulary else UNK for w in words]
        return ids, seen, [w for w in words if w not in self.vocabulary]

    @compiled_method
    def _predict_fn(self, pixels, question, image_index):
        return self({"pixels": pixels, "question": question, "image_index": image_index})

    def predict_ids(self, pixels, token_ids, image_index=None):
        """Compiled forward pass: pixels (N, H, W, 3), ids (B, T), image_index (B,) or None."""
        if image_index is None:
            image_index = np.arange(len(token_ids))
        out = self._predict_fn(tf.convert_to_tensor(pixels), tf.convert_to_tensor(token_ids, tf.int32),
                               tf.convert_to_tensor(image_index, tf.int32))
        return {k: v.numpy() for k, v in out.items()}

    def answer_batch(self, images, questions, top_k=5, batch_size=32, objects=False):
        """Answer ``questions[i]`` about ``images[i]``; one :class:`VQAAnswer` each, in order.

        ``images`` may also be a single image (every question is about it). Identical image
        paths are loaded and run through the backbone once. Errors (unreadable image, empty
        question) raise; see `captioner ask` for a batch that reports them row by row.
        ``objects=True``: object questions may be answered by the backbone's ImageNet head
        (`answer_objects`).
        """
        questions = list(questions)
        encoded = [self.encode_question(q) for q in questions]
        results = []
        for chunk, pixels, index, out in self._forward(images, questions, encoded, batch_size):
            answers = [self.make_answer(questions[i], encoded[i], out["probabilities"][row], out["attention"][row],
                                        top_k) for row, i in enumerate(chunk)]
            if objects:
                self.answer_objects(pixels, index, answers)
            results.extend(answers)
        return results

    def answer_probabilities(self, images, questions, batch_size=32):
        """(N, answers) probabilities of every answer for each question (as `answer_batch` batches them;
        what `captioner model calibrate` fits the temperature on)."""
        questions = list(questions)
        encoded = [self.encode_question(q) for q in questions]
        parts = [out["probabilities"] for _, _, _, out in self._forward(images, questions, encoded, batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, len(self.answers)), np.float32)

    def _forward(self, images, questions, encoded, batch_size):
        """Per batch of questions: (their indices, the batch's distinct images' pixels, each question's
        image row, `predict_ids` output)."""
        if isinstance(images, (list, tuple)):
            images = list(images)
            if len(images) != len(questions):
                raise InputError(f"{len(images)} images for {len(questions)} questions")
        else:
            images = [images] * len(questions)
        for start in range(0, len(questions), batch_size):
            chunk = range(start, min(start + batch_size, len(questions)))
            keys, pixels, index = {}, [], []
            for i in chunk:
                img = images[i]
                key = img if isinstance(img, str) else id(img)
                if key not in keys:
                    keys[key] = len(pixels)
                    pixels.append(self.load_pixels(img))
                index.append(keys[key])
            width = max(len(encoded[i][0]) for i in chunk)
            ids = np.full((len(chunk), width), PAD_ID, np.int32)  # (B, T)
            for row, i in enumerate(chunk):
                ids[row, : len(encoded[i][0])] = encoded[i][0]
            pixels = np.stack(pixels)
            yield chunk, pixels, index, self.predict_ids(pixels, ids, np.array(index))

    # the tagger's words are the answers: a class maps to the nearest answer on its WordNet chain
    # ("dog" for every breed), else to its own name ("espresso")
    tag_own_names = True

    def tag_vocabulary(self):
        return frozenset(self.answers)

    def answer_objects(self, pixels, index, answers):
        """Questions the backbone's ImageNet head answers better than the classifier, on a photo unlike the
        VQA training photos (the tagger's familiar-photo test), in place:

        * an object question (`is_object_question`): the tags of its image go into ``objects``; the most
          probable tag at least the tagger's threshold probable answers: the class's own name when it alone
          is that probable, else its word;
        * whether an animal is there ("is there a dog?": `asked_animals`): "yes" or "no"
          where the head is sure (`animal_present`). The yes/no training questions ask about animals the
          other photos' captions name, so on a photo like none of them the classifier says "yes" to most
          (a cat, a horse, a bird in 8 of 10 ImageNet photos without one).

        The backbone runs once per such image (``pixels[index[i]]``). Returns `answers`; a model whose
        backbone has no ImageNet head leaves them as they are."""
        from captioner.tagging.object_tagger import animal_present

        asked = [i for i, a in enumerate(answers) if is_object_question(a.question)]
        yes_no = {"yes", "no"} <= set(self.answers)
        animals = {i: c for i, a in enumerate(answers) if yes_no and (c := asked_animals(a.question)) is not None}
        if not (asked or animals) or not self.can_tag_objects:
            return answers
        images = sorted({int(index[i]) for i in asked + list(animals)})
        pooled = np.asarray(self.backbone(tf.convert_to_tensor(np.asarray(pixels)[images]), training=False)["pooled"])
        tagger = self.object_tagger()
        row = {image: k for k, image in enumerate(images)}
        tagged = sorted({int(index[i]) for i in asked})
        by_image = dict(zip(tagged, tagger.tag(pooled[[row[image] for image in tagged]]))) if tagged else {}
        for i in asked:
            image_tags, result = by_image[int(index[i])], answers[i]
            result.objects = [t.as_dict() for t in image_tags]
            top = next((t for t in image_tags if t.probability >= tagger.threshold and not t.familiar_photo), None)
            if top is not None:
                name = top.name.lower() if top.name_probability >= tagger.threshold else top.word
                self._from_tag(result, name, top.probability)
        if animals:
            probabilities = tagger.probabilities(pooled)
            familiarity = tagger.familiarity(pooled)
            for i, classes in animals.items():
                k = row[int(index[i])]
                if familiarity is not None and tagger.familiar_threshold is not None \
                        and familiarity[k] >= tagger.familiar_threshold:
                    continue
                answer, probability = animal_present(probabilities[k], classes, tagger.threshold)
                if answer is not None:
                    self._from_tag(answers[i], answer, probability)
        return answers

    @staticmethod
    def _from_tag(result, answer, probability):
        result.model_answer, result.from_tag = result.answer, True
        result.answer, result.probability, result.known, result.reason = answer, probability, True, ""
        result.top_k = [(answer, probability)] + [(a, p) for a, p in result.top_k if a != answer][:-1]

    def answer(self, image, question, top_k=5, objects=False):
        """Answer one question about one image: a :class:`VQAAnswer` (`objects`: as `answer_batch`)."""
        return self.answer_batch([image], [question], top_k=top_k, objects=objects)[0]

    def make_answer(self, question, encoded, probs, alphas, top_k=5):
        """A :class:`VQAAnswer` from one row of `predict_ids` output; `encoded` from `encode_question`."""
        order = np.argsort(-probs)[: max(1, top_k)]
        attention = None
        if self.feature == "grid":
            attention = alphas.reshape(alphas.shape[0], *self.grid_shape)  # (hops, h, w)
        reason = self.dont_know_reason(question, float(probs[order[0]]))
        return VQAAnswer(
            question=question, answer=self.answers[order[0]], probability=float(probs[order[0]]),
            top_k=[(self.answers[j], float(probs[j])) for j in order], attention=attention,
            tokens=encoded[1], unknown_words=encoded[2], known=not reason, reason=reason or "",
        )

    def dont_know_reason(self, question, probability):
        """Why the model should not answer, or None. In this order:

        * the question's first word starts no training question (``question_starts``, when
          the model has the list): a kind of question it was never taught ("why ...", "who ...");
        * every word of the question is outside its vocabulary;
        * the top probability is below ``min_probability``, the threshold chosen on dev
          (`captioner.metrics.confidence.choose_min_probability`: below it the dev answers
          were more often wrong than right).
        """
        words = tokenize(question)[: self.max_question_length] if isinstance(question, str) else []
        if self.question_starts and words and words[0] not in self.question_starts:
            return f"questions starting with {words[0]!r} were not in its training data"
        if words and all(w not in self.vocabulary for w in words):
            return "none of the question's words is in its vocabulary"
        if probability < self.min_probability:
            return f"confidence {probability:.2f} is below its threshold {self.min_probability:.2f}"
        return None

    @property
    def hops(self):
        return self.classifier.hops if self.classifier.feature == "grid" else 0

    def get_config(self):
        config = {**super().get_config(), "classifier": keras.saving.serialize_keras_object(self.classifier),
                  "answers": list(self.answers), "max_question_length": self.max_question_length}
        if self.min_probability or self.question_starts:  # a file made before the rule keeps its config
            config.update(min_probability=self.min_probability, question_starts=list(self.question_starts))
        if self.tagger_config:
            config["tagger"] = self.tagger_config
        return config
