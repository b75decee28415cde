"""Hierarchical attention network for documents (Yang et al. 2016, "Hierarchical Attention
Networks for Document Classification"), in one Keras object:

    document (B, S, W) word ids: S sentences of W words, padded with 0
      -> WordEncoder: BiGRU over each sentence's words + word attention -> s_i (B, S, 2U_w)
      -> SentenceEncoder: BiGRU over s_1..s_S + sentence attention -> v (B, 2U_s)
      -> dropout -> Dense -> logits (B, K)

With ``tfidf=True`` the same word ids also feed a sparse linear branch, added to the logits
("wide and deep"): sublinear tf (1 + ln count) times idf (a frozen weight, fitted on the train
documents by :meth:`DocumentClassifier.fit_idf`, scikit-learn's smooth idf), L2-normalized, times
``tfidf_scale`` (10: with unit-norm features the branch's weights must grow large, and Adam moves
each weight by about one learning rate per step; scaled, the branch alone reaches 85.7% on the
20 Newsgroups dev split in 12 epochs against 82.8% unscaled), then one Dense (V -> K). It is
what a tf-idf linear SVM reads, inside the one model: the attention is
still the HAN's, and the saved file carries the idf like any weight (no pickled vectorizer).

With ``tfidf_terms`` (a list of words) the branch reads what scikit-learn's `TfidfVectorizer`
reads instead of the HAN's view: the words of scikit-learn's default analyzer (lower-cased,
``TERM_PATTERN``: two or more word characters) over the whole text, not only the sentences the
HAN reads (``max_sentences`` x ``max_words``), looked up in its own vocabulary (the train
documents' words in two or more of them). A document's first ``tfidf_max_terms`` distinct terms
travel as two more inputs, ``terms`` (B, U) ids (0: none) and ``term_counts`` (B, U), and the
branch is a bag of its kernel's rows. ``tfidf_ngrams=2`` makes word pairs terms too
(``ngram_range=(1, 2)``). On the 20 Newsgroups dev split a LinearSVC scores 87.08%
on the HAN's view and 87.79% on the whole text (scripts/newsgroups_views.py).

The vocabulary, the class labels and the reading settings (sentences and words per sentence
kept, long sentences split or cut) are in the config, so

    import captioner, keras
    model = keras.models.load_model("assets/models/newsgroups_han.keras")
    [result] = model.classify(["Subject: ...\\n\\nMy motorcycle ..."])
    result.label, result.probabilities, result.sentence_weights, result.word_weights

works in a fresh process. Text becomes sentences and words by
:func:`captioner.data.documents.to_hierarchy` (regular-expression sentences, Treebank words);
words are looked up lower-cased, but the result keeps them as written.
"""

from __future__ import annotations

import collections
import dataclasses
import re

import keras
import numpy as np
import tensorflow as tf

from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.word_encoder import WordEncoder
from captioner.models.calibration import Calibrated
from captioner.models.compiled import compiled_method
from captioner.models.ensemble import ClassifierEnsemble, from_member
from captioner.models.text_model import TextTaskModel
from captioner.text.vocabulary import Vocabulary

TERM_PATTERN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token_pattern
MAX_TERM_CHARS = 2_000_000  # characters of a text the term branch reads at most


def text_terms(text, ngrams=1):
    """The terms of a text as scikit-learn's default analyzer gives them (lower-cased, no accent
    stripping, ``TERM_PATTERN``), from its first ``MAX_TERM_CHARS`` characters; with ``ngrams``
    n > 1 also its word n-grams up to n joined by one space, in scikit-learn's order
    (``ngram_range=(1, n)``: all words, then all pairs, ...)."""
    words = TERM_PATTERN.findall(text[:MAX_TERM_CHARS].lower())
    terms = list(words)
    for n in range(2, int(ngrams) + 1):
        terms.extend(" ".join(words[i: i + n]) for i in range(len(words) - n + 1))
    return terms


@dataclasses.dataclass
class DocumentClassification:
    label: str
    probabilities: dict           # {label: probability}
    sentences: list               # the words of each sentence read, as written: [[word, ...], ...]
    sentence_weights: list        # one per sentence (they sum to 1)
    word_weights: list            # per sentence, one per word (each sentence's sum to 1)
    truncated: bool = False       # the text had more sentences than the model reads

    def to_json(self, digits=4):
        return {"label": self.label,
                "probabilities": {k: round(v, 6) for k, v in self.probabilities.items()},
                "sentences": [" ".join(s) for s in self.sentences],
                "sentence_weights": [round(w, digits) for w in self.sentence_weights],
                "word_weights": [[round(w, digits) for w in ws] for ws in self.word_weights],
                "truncated": self.truncated}


class DocumentAPI(Calibrated):
    """Text in, labels out, written once for a HAN and for an ensemble of them: a class using it
    has ``attend(inputs)`` -> (logits, sentence weights, word weights), ``labels``, ``vocabulary``
    and the reading settings (``max_sentences``, ``max_words``, ``split_long``, and the term
    branch's ``tfidf_terms``, ``term_index``, ``tfidf_max_terms``, ``tfidf_ngrams``)."""

    @property
    def max_chars(self):
        """Characters of a text read at most: far more than the words the model reads (25 a word),
        so a 50 MB one-line file never reaches NLTK's tokenizer whole (its regex times out)."""
        return max(10_000, (self.max_sentences + 1) * self.max_words * 25)

    def read(self, text):
        """(sentences of words as written, truncated?) of one text, as the model reads it."""
        from captioner.data.documents import to_hierarchy

        cut = len(text) > self.max_chars
        sentences = to_hierarchy(text[: self.max_chars], self.max_sentences + 1, self.max_words, lower=False,
                                 split_long=self.split_long)
        return sentences[: self.max_sentences], cut or len(sentences) > self.max_sentences

    def encode(self, hierarchies):
        """[[words]] per document -> (B, max_sentences, max_words) int32 ids (words lower-cased)."""
        ids = np.zeros((len(hierarchies), self.max_sentences, self.max_words), np.int32)
        lookup = self.vocabulary.token_to_id
        for b, sentences in enumerate(hierarchies):
            for s, words in enumerate(sentences[: self.max_sentences]):
                row = [lookup(w.lower()) for w in words[: self.max_words]]
                ids[b, s, : len(row)] = row
        return ids

    def encode_terms(self, texts):
        """Texts -> {"terms" (B, U) int32, "term_counts" (B, U) float32}: each text's first
        ``tfidf_max_terms`` distinct terms of the branch's vocabulary, in order of appearance, and
        how often each occurs (U: the most any text has, at least 1)."""
        bags = []
        for text in texts:
            counts = collections.Counter(t for t in text_terms(text, self.tfidf_ngrams) if t in self.term_index)
            bags.append(list(counts.items())[: self.tfidf_max_terms])  # a Counter keeps first appearance order
        width = max([len(b) for b in bags] + [1])
        terms, counts = np.zeros((len(texts), width), np.int32), np.zeros((len(texts), width), np.float32)
        for i, bag in enumerate(bags):
            terms[i, : len(bag)] = [self.term_index[t] for t, _ in bag]
            counts[i, : len(bag)] = [n for _, n in bag]
        return {"terms": terms, "term_counts": counts}

    def inputs_of(self, texts, hierarchies):
        """The model's inputs for texts read as `hierarchies`: the (B, S, W) ids, or with
        tfidf_terms {"document", "terms", "term_counts"}."""
        ids = self.encode(hierarchies)
        return {"document": ids, **self.encode_terms(texts)} if self.tfidf_terms else ids

    @compiled_method
    def _predict_fn(self, x):
        logits, sentence_alpha, word_alpha = self.attend(x, training=False)
        return self.calibrated_softmax(logits), sentence_alpha, word_alpha

    def predict_attention(self, ids, batch_size=64):
        """(probabilities (B, K), sentence weights (B, S), word weights (B, S, W)) as numpy."""
        count = len(tf.nest.flatten(ids)[0])  # the (B, S, W) ids, or every array of the inputs dict
        outs = [self._predict_fn(tf.nest.map_structure(lambda v, i=i: tf.convert_to_tensor(v[i:i + batch_size]), ids))
                for i in range(0, count, batch_size)]
        if not outs:
            k, shape = len(self.labels), (ids["document"] if isinstance(ids, dict) else ids).shape
            return np.zeros((0, k), np.float32), np.zeros((0,) + shape[1:2], np.float32), np.zeros((0,) + shape[1:])
        return tuple(np.concatenate([o[j].numpy().astype(np.float32) for o in outs]) for j in range(3))

    def classify(self, texts, batch_size=64):
        """One :class:`DocumentClassification` per text, in order. A text without a word is an
        InputError naming its position."""
        from captioner.errors import InputError

        if isinstance(texts, str):
            raise TypeError("classify() takes a list of texts")
        read = [self.read(t) for t in texts]
        for i, (sentences, _) in enumerate(read):
            if not sentences:
                raise InputError(f"document {i + 1}: no words to classify")
        probs, sentence_alpha, word_alpha = self.predict_attention(self.inputs_of(texts, [r[0] for r in read]),
                                                                   batch_size)
        out = []
        for i, (sentences, truncated) in enumerate(read):
            shown = [s[: self.max_words] for s in sentences]
            out.append(DocumentClassification(
                label=self.labels[int(np.argmax(probs[i]))],
                probabilities={lab: float(probs[i, k]) for k, lab in enumerate(self.labels)},
                sentences=shown,
                sentence_weights=[float(a) for a in sentence_alpha[i, : len(shown)]],
                word_weights=[[float(a) for a in word_alpha[i, s, : len(words)]] for s, words in enumerate(shown)],
                truncated=truncated))
        return out


@dataclasses.dataclass(frozen=True)
class HANNetwork:
    """The shape of the hierarchical attention network (Yang et al. 2016): word embeddings, the word
    and sentence GRUs' units (each direction), the attention MLPs' units, dropout."""

    embedding_dim: int = 50
    word_units: int = 50
    sentence_units: int = 50
    attention_units: int = 100
    dropout: float = 0.3


@dataclasses.dataclass(frozen=True)
class DocumentShape:
    """How a document is cut into the (sentences, words) grid: at most ``max_sentences`` of
    ``max_words``; ``split_long``: a longer sentence goes on in the next row instead of being cut."""

    max_sentences: int = 30
    max_words: int = 40
    split_long: bool = True


@dataclasses.dataclass(frozen=True)
class TfidfBranch:
    """The linear tf-idf branch added to the logits (``tfidf``; its L2 and input scale), over the
    whole vocabulary or over ``tfidf_terms`` (at most ``tfidf_max_terms``, n-grams up to
    ``tfidf_ngrams``, each dropped with ``tfidf_dropout`` in training): captioner/training/tfidf_branch.py."""

    tfidf: bool = False
    tfidf_l2: float = 0.0
    tfidf_scale: float = 10.0
    tfidf_terms: tuple | list | None = None
    tfidf_max_terms: int = 512
    tfidf_ngrams: int = 1
    tfidf_dropout: float = 0.0


@keras.saving.register_keras_serializable(package="captioner")
class DocumentClassifier(DocumentAPI, TextTaskModel, keras.Model):
    """{"document": (B, S, W) int} (or the array itself) -> logits (B, K)."""

    model_kind = "a document classifier"
    train_hint = " (train one with `captioner train classify`)"

    GROUPS = {"network": HANNetwork, "shape": DocumentShape, "branch": TfidfBranch}

    def __init__(self, vocabulary, labels, network: HANNetwork | None = None, shape: DocumentShape | None = None,
                 branch: TfidfBranch | None = None, training_config=None, **kwargs):
        super().__init__(**kwargs)
        net, shape, branch = network or HANNetwork(), shape or DocumentShape(), branch or TfidfBranch()
        embedding_dim, word_units, sentence_units = net.embedding_dim, net.word_units, net.sentence_units
        attention_units, dropout = net.attention_units, net.dropout
        max_sentences, max_words, split_long = shape.max_sentences, shape.max_words, shape.split_long
        tfidf, tfidf_l2, tfidf_scale, tfidf_terms = branch.tfidf, branch.tfidf_l2, branch.tfidf_scale, branch.tfidf_terms
        tfidf_max_terms, tfidf_ngrams, tfidf_dropout = branch.tfidf_max_terms, branch.tfidf_ngrams, branch.tfidf_dropout
        self.vocabulary = Vocabulary.coerce(vocabulary)
        self.labels = tuple(str(label) for label in labels)
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels must be two or more distinct names, got {list(self.labels)}")
        self.embedding_dim = int(embedding_dim)
        self.word_units = int(word_units)
        self.sentence_units = int(sentence_units)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.max_sentences = int(max_sentences)
        self.max_words = int(max_words)
        self.split_long = bool(split_long)
        self.tfidf = bool(tfidf)
        self.tfidf_l2 = float(tfidf_l2)
        self.tfidf_scale = float(tfidf_scale)
        self.tfidf_terms = tuple(str(t) for t in tfidf_terms) if tfidf_terms else None
        if self.tfidf_terms and not self.tfidf:
            raise ValueError("tfidf_terms is the vocabulary of the tf-idf branch: it needs tfidf=True")
        if self.tfidf_terms and len(set(self.tfidf_terms)) != len(self.tfidf_terms):
            raise ValueError("tfidf_terms must be distinct words")
        self.tfidf_max_terms = int(tfidf_max_terms)
        self.tfidf_ngrams = int(tfidf_ngrams)
        self.tfidf_dropout = float(tfidf_dropout)
        if self.tfidf_dropout and not self.tfidf_terms:
            raise ValueError("tfidf_dropout drops terms of the tfidf_terms branch: it needs tfidf_terms")
        if self.tfidf_ngrams < 1 or (self.tfidf_ngrams > 1 and not self.tfidf_terms):
            raise ValueError(f"tfidf_ngrams must be >= 1, and above 1 only with tfidf_terms; got {tfidf_ngrams}")
        self.term_index = {t: i for i, t in enumerate(self.tfidf_terms, start=1)} if self.tfidf_terms else None
        self.training_config = training_config or {}
        self.word_encoder = WordEncoder(len(self.vocabulary), embedding_dim=self.embedding_dim, units=self.word_units,
                                        attention_units=self.attention_units, dropout=self.dropout, name="words")
        self.sentence_encoder = SentenceEncoder(self.word_encoder.output_dim, units=self.sentence_units,
                                                attention_units=self.attention_units, dropout=self.dropout,
                                                name="sentences")
        self.drop = keras.layers.Dropout(self.dropout)
        self.classifier = keras.layers.Dense(len(self.labels), name="classify")
        self.word_encoder.build()
        self.sentence_encoder.build()
        self.classifier.build((None, self.sentence_encoder.output_dim))
        if self.tfidf:
            vocab_size = len(self.tfidf_terms) + 1 if self.tfidf_terms else len(self.vocabulary)  # terms: 0 is none
            self.idf = self.add_weight(name="idf", shape=(vocab_size,), initializer="ones", trainable=False)
            regularizer = keras.regularizers.L2(self.tfidf_l2) if self.tfidf_l2 else None
            self.sparse_classifier = keras.layers.Dense(len(self.labels), kernel_regularizer=regularizer,
                                                        name="classify_tfidf")
            self.sparse_classifier.build((None, vocab_size))
            self.term_drop = keras.layers.Dropout(self.tfidf_dropout)
        self.built = True

    # -- the network ------------------------------------------------------------------------
    def attend(self, inputs, training=False):
        """document (B, S, W), or {"document"} and, with tfidf_terms, {"terms", "term_counts"}
        -> (logits (B, K), sentence weights (B, S), word weights (B, S, W)). With ``tfidf``, an
        inputs dict may carry {"branch_logits" (B, K)}: they stand for the branch's own."""
        document = inputs["document"] if isinstance(inputs, dict) else inputs
        sentences, word_alpha, sentence_mask = self.word_encoder(document, training=training)  # (B, S, D)
        vector, sentence_alpha, _ = self.sentence_encoder(sentences, mask=sentence_mask, training=training)
        logits = self.classifier(self.drop(vector, training=training))  # (B, K)
        if self.tfidf and isinstance(inputs, dict) and "branch_logits" in inputs:
            # the branch's logits given (stacking: out-of-fold logits of a frozen branch while the HAN trains)
            logits = logits + tf.cast(inputs["branch_logits"], logits.dtype)
        elif self.tfidf_terms:  # a bag of the kernel's rows: Dense over the dense features, without them
            terms, weights = self.term_weights(inputs, training=training)
            rows = tf.gather(tf.cast(self.sparse_classifier.kernel, tf.float32), terms)  # (B, U, K)
            wide = tf.einsum("bu,buk->bk", self.tfidf_scale * weights, rows) + tf.cast(self.sparse_classifier.bias,
                                                                                      tf.float32)
            logits = logits + tf.cast(wide, logits.dtype)
        elif self.tfidf:
            logits = logits + tf.cast(self.sparse_classifier(self.tfidf_scale * self.tfidf_features(document)), logits.dtype)
        return logits, sentence_alpha, word_alpha

    def term_weights(self, inputs, training=False):
        """{"terms" (B, U), "term_counts" (B, U)} -> (terms int32, L2-normalized sublinear tf-idf
        of each (B, U) float32; 0 where no term). Training with ``tfidf_dropout`` p drops each term
        with probability p before the normalization (dropout on the inputs of a linear model is an
        adaptive L2 penalty: Wager et al. 2013, "Dropout Training as Adaptive Regularization")."""
        if not isinstance(inputs, dict) or "terms" not in inputs:
            raise ValueError("a model with tfidf_terms reads {'document', 'terms', 'term_counts'} "
                             "(DocumentClassifier.inputs_of(texts) makes them)")
        terms = tf.cast(inputs["terms"], tf.int32)
        counts = tf.cast(inputs["term_counts"], tf.float32)
        present = (terms > 0) & (counts > 0)
        tf_ = tf.where(present, 1.0 + tf.math.log(tf.maximum(counts, 1.0)), 0.0)
        tfidf = tf_ * tf.gather(tf.cast(self.idf, tf.float32), terms)
        if self.tfidf_dropout and training:
            tfidf = self.term_drop(tfidf, training=True)
        return terms, tf.math.l2_normalize(tfidf, axis=-1)

    def term_counts(self, document):
        """(B, S, W) ids -> (B, V) float32 counts of each vocabulary word (padding, <start>, <end>
        and <unk> not counted: scikit-learn's vectorizer drops out-of-vocabulary words too)."""
        ids = tf.reshape(tf.cast(document, tf.int32), [tf.shape(document)[0], -1])
        counts = tf.math.bincount(ids, minlength=len(self.vocabulary), maxlength=len(self.vocabulary), axis=-1,
                                  dtype=tf.float32)
        return counts * tf.constant([0.0] * 4 + [1.0] * (len(self.vocabulary) - 4), tf.float32)

    def tfidf_features(self, document):
        """(B, S, W) ids -> (B, V) L2-normalized sublinear tf-idf, float32 (unscaled); with
        tfidf_terms, the inputs dict -> (B, terms + 1) (column 0: none)."""
        if self.tfidf_terms:
            terms, weights = self.term_weights(document)
            b = tf.broadcast_to(tf.range(tf.shape(terms)[0])[:, None], tf.shape(terms))
            return tf.scatter_nd(tf.stack([b, terms], -1), weights, [tf.shape(terms)[0], len(self.tfidf_terms) + 1])
        counts = self.term_counts(document)
        tf_ = tf.where(counts > 0, 1.0 + tf.math.log(tf.maximum(counts, 1.0)), 0.0)
        return tf.math.l2_normalize(tf_ * tf.cast(self.idf, tf.float32), axis=-1)

    def fit_idf(self, ids, batch_size=256):
        """Set the idf weight from training documents, (N, S, W) ids or the inputs dict:
        ln((1 + N) / (1 + df)) + 1."""
        if not self.tfidf:
            raise ValueError("fit_idf needs a model built with tfidf=True")
        if self.tfidf_terms:  # a document's terms are distinct: df is their count
            terms = np.asarray(ids["terms"] if isinstance(ids, dict) else ids)
            df = np.bincount(terms[terms > 0], minlength=len(self.tfidf_terms) + 1).astype(np.float64)
            self.idf.assign((np.log((1.0 + len(terms)) / (1.0 + df)) + 1.0).astype(np.float32))
            return
        ids = ids["document"] if isinstance(ids, dict) else ids
        df = np.zeros(len(self.vocabulary), np.float64)
        for i in range(0, len(ids), batch_size):
            df += (self.term_counts(tf.convert_to_tensor(ids[i:i + batch_size])).numpy() > 0).sum(0)
        self.idf.assign((np.log((1.0 + len(ids)) / (1.0 + df)) + 1.0).astype(np.float32))

    def call(self, inputs, training=False):
        return self.attend(inputs, training=training)[0]

    def get_config(self):
        return {**super().get_config(), "vocabulary": list(self.vocabulary.tokens), "labels": list(self.labels),
                "embedding_dim": self.embedding_dim, "word_units": self.word_units,
                "sentence_units": self.sentence_units, "attention_units": self.attention_units,
                "dropout": self.dropout, "max_sentences": self.max_sentences, "max_words": self.max_words,
                "split_long": self.split_long, "training_config": self.training_config,
                **({"tfidf": True, "tfidf_l2": self.tfidf_l2, "tfidf_scale": self.tfidf_scale} if self.tfidf else {}),
                **({"tfidf_terms": list(self.tfidf_terms), "tfidf_max_terms": self.tfidf_max_terms,
                    **({"tfidf_ngrams": self.tfidf_ngrams} if self.tfidf_ngrams > 1 else {}),
                    **({"tfidf_dropout": self.tfidf_dropout} if self.tfidf_dropout else {})}
                   if self.tfidf_terms else {})}


@keras.saving.register_keras_serializable(package="captioner")
class DocumentEnsemble(ClassifierEnsemble, DocumentAPI, TextTaskModel, keras.Model):
    """HANs trained apart (seeds), one model used like one: the label probabilities combine the
    members' (``combine``: "mixture", their mean, by default; "product", their normalized
    geometric mean), the sentence and word weights shown are the mean of theirs. Every member
    reads a text alike (vocabulary, labels, sentences and words kept, the term branch's terms), so
    one reading serves them all and what they share is saved once."""

    member_class = DocumentClassifier
    what = "a document classifier ensemble"
    model_kind = "a document classifier"
    SHARED = ("vocabulary", "labels", "tfidf_terms")
    minimum = 2

    def same_reading(self):
        return {"vocabulary": lambda m: tuple(m.vocabulary.tokens), "labels": lambda m: m.labels,
                "reading": lambda m: (m.max_sentences, m.max_words, m.split_long),
                "terms": lambda m: (m.tfidf_terms, m.tfidf_max_terms, m.tfidf_ngrams) if m.tfidf_terms else None}

    # how a text is read: member 1's (same_reading checked that every member reads alike)
    vocabulary, labels = from_member("vocabulary"), from_member("labels")
    max_sentences, max_words, split_long = from_member("max_sentences"), from_member("max_words"), from_member("split_long")
    tfidf_terms, term_index = from_member("tfidf_terms"), from_member("term_index")
    tfidf_max_terms, tfidf_ngrams = from_member("tfidf_max_terms"), from_member("tfidf_ngrams")

    def attend(self, inputs, training=False):
        """As a member's: (log-probabilities (B, K), mean sentence weights, mean word weights)."""
        outs = [m.attend(inputs, training=training) for m in self.members]
        mean = [tf.add_n([tf.cast(o[j], tf.float32) for o in outs]) / len(outs) for j in (1, 2)]
        return self.combine_logits([o[0] for o in outs]), mean[0], mean[1]


def load_document_classifier(path) -> DocumentClassifier | DocumentEnsemble:
    from captioner.models.loading import load_model_file

    return load_model_file(path, (DocumentClassifier, DocumentEnsemble), DocumentClassifier.model_kind,
                           hint=DocumentClassifier.train_hint)
