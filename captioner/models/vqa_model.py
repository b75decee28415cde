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
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.errors import InputError
from captioner.models.pixel_model import PixelModel, deserialize
from captioner.models.vqa_classifier import VQAClassifier  # noqa: F401  (registered)
from captioner.text.tokenizer import tf_tokenize, tokenize
from captioner.text.vocabulary import PAD_ID, UNK, VocabularyLookup


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
        return out


@keras.saving.register_keras_serializable(package="captioner")
class VQAModel(PixelModel):
    vocabulary_key = "question_vocabulary"

    def __init__(self, backbone, classifier, question_vocabulary, answers, max_question_length=30,
                 training_config=None, min_probability=0.0, question_starts=None, **kwargs):
        super().__init__(backbone, question_vocabulary, training_config, **kwargs)
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
        self._predict_fn = None

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
        return {"probabilities": tf.nn.softmax(tf.cast(logits, "float32"), -1),
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

    def predict_ids(self, pixels, token_ids, image_index=None):
        """Compiled forward pass: pixels (N, H, W, 3), ids (B, T), image_index (B,) or None."""
        if self._predict_fn is None:
            @tf.function(reduce_retracing=True)
            def fn(pixels, question, image_index):
                return self({"pixels": pixels, "question": question, "image_index": image_index})
            self._predict_fn = fn
        if image_index is None:
            image_index = np.arange(len(token_ids))
        out = self._predict_fn(tf.convert_to_tensor(pixels), tf.convert_to_tensor(token_ids, tf.int32),
                               tf.convert_to_tensor(image_index, tf.int32))
        return {k: v.numpy() for k, v in out.items()}

    def answer_batch(self, images, questions, top_k=5, batch_size=32):
        """Answer ``questions[i]`` about ``images[i]``; one :class:`VQAAnswer` each, in order.

        ``images`` may also be a single image (every question is about it). Identical image
        paths are loaded and run through the backbone once. Errors (unreadable image, empty
        question) raise; see `captioner ask` for a batch that reports them row by row.
        """
        questions = list(questions)
        if isinstance(images, (list, tuple)):
            images = list(images)
            if len(images) != len(questions):
                raise InputError(f"{len(images)} images for {len(questions)} questions")
        else:
            images = [images] * len(questions)
        encoded = [self.encode_question(q) for q in questions]
        results = []
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
            out = self.predict_ids(np.stack(pixels), ids, np.array(index))
            for row, i in enumerate(chunk):
                results.append(self.make_answer(questions[i], encoded[i], out["probabilities"][row],
                                            out["attention"][row], top_k))
        return results

    def answer(self, image, question, top_k=5):
        """Answer one question about one image: a :class:`VQAAnswer`."""
        return self.answer_batch([image], [question], top_k=top_k)[0]

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
        return config
