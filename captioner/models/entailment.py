"""3-way textual entailment (NEUTRAL / ENTAILMENT / CONTRADICTION) with attention between the
premise and the hypothesis: ESIM-lite (Chen et al. 2017), in one Keras object.

1. One shared `TextEncoder` (bidirectional GRU, the translator's encoder) makes annotations of
   the premise a (B, P, D) and of the hypothesis b (B, H, D).
2. Soft alignment e_ij = a_i . b_j: each hypothesis word attends over the premise words
   (Rocktaschel et al. 2016 word-by-word attention) and each premise word over the hypothesis.
3. Local inference [x; x~; x - x~; x * x~; exact-match flag] -> Dense+ReLU, then masked mean and
   max pooling over each sentence.
4. The pooled vectors and a few lexical pair features (word overlap both ways, negation words
   on each side, length ratio: `pair_features`) -> MLP -> 3 logits. Optionally (training only)
   the MLP's hidden layer also regresses SICK's relatedness score, an auxiliary loss.

Optionally (`relations`, from `build_relations`), KIM's external knowledge (Chen et al. 2018,
"Neural Natural Language Inference Models Enhanced with External Knowledge"): for every premise
word i and hypothesis word j a vector r_ij of WordNet relations (synonym, antonym, hypernym,
hyponym, co-hyponym) biases the alignment, e_ij += w . r_ij, and its attention-weighted sum
joins each word's local inference vector. The relations among the vocabulary's words are
stored in the config, so inference needs no WordNet (the WordNet side, `build_relations`,
`build_lexicon` and their readers, is `captioner.text.wordnet`).

The vocabulary and the tokenizer settings are in the config, so

    import captioner, keras
    model = keras.models.load_model("assets/models/sick_entailment.keras")
    model.entail(["A man is playing a guitar"], ["A man is not playing a guitar"])

works in a fresh process and returns labels, probabilities and the hypothesis-over-premise
attention matrix.
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.layers.text_encoder import TextEncoder
from captioner.models.text_model import TextTaskModel, untracked_table
from captioner.text.tokenizer import tokenize
from captioner.text.vocabulary import Vocabulary
from captioner.text.wordnet import (
    NUM_LEXICON_FEATURES, RELATIONS, WordRelations, lexicon_features,
)
from captioner.models.calibration import Calibrated
from captioner.models.compiled import compiled_method
from captioner.models.ensemble import ClassifierEnsemble, from_member

LABELS = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")
NEGATIONS = frozenset({"no", "not", "n't", "nobody", "none", "nothing", "never", "nowhere", "neither",
                       "nor", "without", "isn't", "aren't", "doesn't", "don't", "didn't", "wasn't",
                       "weren't", "can't", "cannot", "won't"})
NUM_PAIR_FEATURES = 9


def entail_tokens(text: str) -> list[str]:
    return tokenize(text, lower=True, keep_punct=False)


def pair_features(premise_tokens, hypothesis_tokens) -> np.ndarray:
    """Lexical features of a token pair, float32 (NUM_PAIR_FEATURES,):

    share of hypothesis words found in the premise, and of premise words in the hypothesis;
    Jaccard overlap of the word sets; negation words in the premise, in the hypothesis, their
    difference and whether exactly one side has any; hypothesis/premise length ratio; share of
    hypothesis words missing from the premise that are negations.
    """
    p, h = list(premise_tokens), list(hypothesis_tokens)
    ps, hs = set(p), set(h)
    h_in_p = sum(t in ps for t in h) / max(len(h), 1)
    p_in_h = sum(t in hs for t in p) / max(len(p), 1)
    jaccard = len(ps & hs) / max(len(ps | hs), 1)
    neg_p = sum(t in NEGATIONS for t in p)
    neg_h = sum(t in NEGATIONS for t in h)
    missing = [t for t in h if t not in ps]
    neg_missing = sum(t in NEGATIONS for t in missing) / max(len(missing), 1)
    return np.array([h_in_p, p_in_h, jaccard, min(neg_p, 3) / 3.0, min(neg_h, 3) / 3.0,
                     (neg_h - neg_p) / 3.0, float((neg_p > 0) != (neg_h > 0)),
                     len(h) / max(len(p), 1), neg_missing], np.float32)


@dataclasses.dataclass
class Entailment:
    label: str                    # NEUTRAL / ENTAILMENT / CONTRADICTION
    probabilities: dict           # {label: probability}
    premise_tokens: list
    hypothesis_tokens: list
    attention: np.ndarray | None  # (len(hypothesis_tokens), len(premise_tokens)): hypothesis over premise


class _TextPairAPI(Calibrated, TextTaskModel):
    """Strings in, `Entailment`s out: shared by the classifier and the ensemble of classifiers.
    Needs `vocabulary`, `max_length`, `features(p, h)` and `call(..., return_attention=True)`."""

    def prepare(self, premises, hypotheses):
        """Raw strings -> (inputs dict of numpy arrays, premise token lists, hypothesis token lists)."""
        pt = [entail_tokens(p)[: self.max_length] for p in premises]
        ht = [entail_tokens(h)[: self.max_length] for h in hypotheses]
        return self.encode_tokens(pt, ht), pt, ht

    def encode_tokens(self, pt, ht):
        v = self.vocabulary
        x = {"premise": v.encode_batch(pt, add_start=False, add_end=False),
             "hypothesis": v.encode_batch(ht, add_start=False, add_end=False),
             "features": np.stack([self.features(p, h) for p, h in zip(pt, ht)]).astype(np.float32)}
        if self.word_relations is not None:  # (B, P, H, R) uint8 eighths, padded like the tokens
            wp, wh = x["premise"].shape[1], x["hypothesis"].shape[1]
            x["relations"] = np.stack([self.word_relations.matrix(p, h, wp, wh) for p, h in zip(pt, ht)]) \
                if pt else np.zeros((0, wp, wh, len(RELATIONS)), np.uint8)
        return x

    @compiled_method
    def _predict_fn(self, x):
        logits, attention = self(x, training=False, return_attention=True)
        return self.calibrated_softmax(logits), attention

    def predict_proba(self, inputs):
        probs, attention = self._predict_fn({k: tf.convert_to_tensor(v) for k, v in inputs.items()})
        return probs.numpy(), attention.numpy()

    def entail(self, premises, hypotheses, batch_size=64):
        """One `Entailment` per (premise, hypothesis) pair, in order. Both must be non-empty
        strings with at least one word (else InputError naming the pair)."""
        from captioner.errors import InputError

        if isinstance(premises, str) or isinstance(hypotheses, str):
            raise TypeError("entail() takes lists of premises and hypotheses")
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise InputError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        out = []
        for start in range(0, len(premises), batch_size):
            inputs, pt, ht = self.prepare(premises[start:start + batch_size], hypotheses[start:start + batch_size])
            for i, (p, h) in enumerate(zip(pt, ht)):
                if not p or not h:
                    raise InputError(f"pair {start + i + 1}: the {'premise' if not p else 'hypothesis'} has no words")
            probs, attention = self.predict_proba(inputs)
            for i, (p, h) in enumerate(zip(pt, ht)):
                out.append(Entailment(LABELS[int(np.argmax(probs[i]))],
                                      {lab: float(probs[i, j]) for j, lab in enumerate(LABELS)},
                                      p, h, attention[i, :len(h), :len(p)]))
        return out


@dataclasses.dataclass(frozen=True)
class PairNetwork:
    """The shape of the ESIM-style classifier: embeddings, the BiGRU's units, the local-inference
    and hidden layers' units, dropout; ``use_pair_features``: the hand-made overlap features (and
    the lexicon's, given one) join the pooled vector; ``relatedness_weight`` > 0: SICK's relatedness
    score is also regressed from the hidden layer, an auxiliary loss of this weight (training only)."""

    embedding_dim: int = 128
    units: int = 128
    hidden_units: int = 128
    dropout: float = 0.3
    use_pair_features: bool = True
    relatedness_weight: float = 0.0


@keras.saving.register_keras_serializable(package="captioner")
class EntailmentClassifier(_TextPairAPI, keras.Model):
    """{"premise" (B, P), "hypothesis" (B, H), "features" (B, F)} -> logits (B, 3)."""

    GROUPS = {"network": PairNetwork}  # `EntailmentClassifier.of(vocabulary, units=8, ...)`: flat settings

    def __init__(self, vocabulary, network: PairNetwork | None = None, lexicon=None, relations=None, max_length=60,
                 training_config=None, **kwargs):
        super().__init__(**kwargs)
        net = network or PairNetwork()
        embedding_dim, units, hidden_units, dropout = net.embedding_dim, net.units, net.hidden_units, net.dropout
        use_pair_features, relatedness_weight = net.use_pair_features, net.relatedness_weight
        self.vocabulary = Vocabulary.coerce(vocabulary)
        self.embedding_dim = embedding_dim
        self.units = units
        self.hidden_units = hidden_units
        self.dropout = dropout
        self.use_pair_features = use_pair_features
        self.lexicon = untracked_table(lexicon)  # {"lemma", "general", "antonym"} from build_lexicon, or None
        self.max_length = int(max_length)
        # > 0: in training, also regress SICK's relatedness score (1-5, scaled to 0-1) from the
        # hidden layer, an auxiliary loss of this weight (inputs["relatedness"], training only)
        self.relatedness_weight = float(relatedness_weight)
        # {"base", "synonym", "antonym", "hypernym", "parents"} from build_relations, or None: KIM's r_ij
        self.relations = untracked_table(relations)
        self.word_relations = WordRelations(self.relations) if self.relations else None
        self.training_config = training_config or {}
        self.encoder = TextEncoder(len(self.vocabulary), embedding_dim=embedding_dim, units=units, cell="gru",
                                   bidirectional=True, num_layers=1, dropout=dropout, name="encoder")
        d = self.encoder.output_dim
        self.local = keras.layers.Dense(hidden_units, activation="relu", name="local_inference")
        self.hidden = keras.layers.Dense(hidden_units, activation="tanh", name="hidden")
        self.classify = keras.layers.Dense(len(LABELS), name="classify")
        self.drop = keras.layers.Dropout(dropout)
        self.encoder.build((None, None))
        self.local.build((None, None, 4 * d + 1 + (len(RELATIONS) if self.relations else 0)))
        if self.relations:  # e_ij += w . r_ij, w starts at 1 for every relation
            self.relation_attention = self.add_weight(shape=(len(RELATIONS),), initializer="ones",
                                                      name="relation_attention")
        pooled = 4 * hidden_units + self.num_features
        self.hidden.build((None, pooled))
        self.classify.build((None, hidden_units))
        if self.relatedness_weight:
            self.relate = keras.layers.Dense(1, name="relatedness")
            self.relate.build((None, hidden_units))
        self.built = True

    @property
    def num_features(self):
        if not self.use_pair_features:
            return 0
        return NUM_PAIR_FEATURES + (NUM_LEXICON_FEATURES if self.lexicon else 0)

    def features(self, premise_tokens, hypothesis_tokens):
        f = pair_features(premise_tokens, hypothesis_tokens)
        if self.lexicon:
            f = np.concatenate([f, lexicon_features(premise_tokens, hypothesis_tokens, self.lexicon)])
        return f

    def call(self, inputs, training=False, return_attention=False):
        premise, hypothesis = tf.cast(inputs["premise"], tf.int32), tf.cast(inputs["hypothesis"], tf.int32)
        a, mask_a, _ = self.encoder(premise, training=training)     # (B, P, D), (B, P)
        b, mask_b, _ = self.encoder(hypothesis, training=training)  # (B, H, D), (B, H)
        e = tf.einsum("bpd,bhd->bph", a, b)  # (B, P, H) alignment scores
        r = None
        if self.relations:  # KIM: WordNet relations of every word pair bias the alignment
            r = tf.cast(inputs["relations"], e.dtype) / 8.0  # (B, P, H, R)
            e = e + tf.einsum("bphr,r->bph", r, tf.cast(self.relation_attention, e.dtype))
        neg = tf.cast(-1e9, e.dtype)
        beta = tf.nn.softmax(tf.where(mask_b[:, None, :], e, neg), axis=2)   # premise word over hypothesis
        alpha = tf.nn.softmax(tf.where(mask_a[:, :, None], e, neg), axis=1)  # hypothesis word over premise
        a_tilde = tf.einsum("bph,bhd->bpd", beta, b)   # (B, P, D)
        b_tilde = tf.einsum("bph,bpd->bhd", alpha, a)  # (B, H, D)
        match_a = tf.reduce_any(tf.equal(premise[:, :, None], hypothesis[:, None, :]) & mask_b[:, None, :], axis=2)
        match_b = tf.reduce_any(tf.equal(hypothesis[:, :, None], premise[:, None, :]) & mask_a[:, None, :], axis=2)
        extra_a = extra_b = None
        if r is not None:  # each word's attention-weighted relations to the other sentence
            extra_a, extra_b = tf.einsum("bph,bphr->bpr", beta, r), tf.einsum("bph,bphr->bhr", alpha, r)
        v_a = self._local(a, a_tilde, match_a, extra_a, training)  # (B, P, K)
        v_b = self._local(b, b_tilde, match_b, extra_b, training)  # (B, H, K)
        pooled = [*_pool(v_a, mask_a), *_pool(v_b, mask_b)]  # 4 x (B, K)
        if self.use_pair_features:
            pooled.append(tf.cast(inputs["features"], v_a.dtype))
        x = self.hidden(self.drop(tf.concat(pooled, -1), training=training))
        logits = self.classify(self.drop(x, training=training))  # (B, 3)
        if training and self.relatedness_weight and "relatedness" in inputs:
            target = (tf.cast(inputs["relatedness"], tf.float32) - 1.0) / 4.0  # (B,) 1-5 -> 0-1
            predicted = tf.cast(self.relate(x)[:, 0], tf.float32)
            self.add_loss(self.relatedness_weight * tf.reduce_mean(tf.square(predicted - target)))
        if return_attention:
            return logits, tf.transpose(alpha, [0, 2, 1])  # (B, H, P)
        return logits

    def _local(self, x, x_tilde, match, extra, training):
        parts = [x, x_tilde, x - x_tilde, x * x_tilde, tf.cast(match, x.dtype)[..., None]]
        m = tf.concat(parts + ([extra] if extra is not None else []), -1)
        return self.local(self.drop(m, training=training))

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary": list(self.vocabulary.tokens), "embedding_dim": self.embedding_dim,
            "units": self.units, "hidden_units": self.hidden_units, "dropout": self.dropout,
            "use_pair_features": self.use_pair_features, "lexicon": self.lexicon and dict(self.lexicon),
            "max_length": self.max_length, "relatedness_weight": self.relatedness_weight,
            "relations": self.relations and dict(self.relations),
            "training_config": self.training_config,
        }


@keras.saving.register_keras_serializable(package="captioner")
class EntailmentEnsemble(ClassifierEnsemble, _TextPairAPI, keras.Model):
    """Classifiers trained apart (different seeds), one model: the probabilities combine the
    members' (`combine`: "mixture", their mean, by default; "product", their normalized geometric
    mean; the logits this returns are the log of the result), the attention is the mean of
    theirs. All members must read the same vocabulary, length limit and features, so one
    `prepare` serves them all."""

    member_class = EntailmentClassifier
    what = "an entailment ensemble"
    SHARED = ("vocabulary", "lexicon", "relations")  # what every member reads alike: saved once

    def same_reading(self):
        return {"vocabulary": lambda m: tuple(m.vocabulary.tokens), "max_length": lambda m: m.max_length,
                "features": lambda m: m.num_features, "lexicon": lambda m: m.lexicon, "relations": lambda m: m.relations}

    vocabulary = from_member("vocabulary")
    max_length = from_member("max_length")
    word_relations = from_member("word_relations")

    def features(self, premise_tokens, hypothesis_tokens):
        return self.members[0].features(premise_tokens, hypothesis_tokens)

    def call(self, inputs, training=False, return_attention=False):
        outs = [m(inputs, training=training, return_attention=True) for m in self.members]
        logits = self.combine_logits([x for x, _ in outs])
        if return_attention:
            return logits, tf.add_n([tf.cast(a, tf.float32) for _, a in outs]) / len(outs)
        return logits


def _pool(v, mask):
    """Masked mean and max over time: v (B, T, K), mask (B, T) -> 2 x (B, K)."""
    m = tf.cast(mask, v.dtype)[..., None]  # (B, T, 1)
    mean = tf.reduce_sum(v * m, 1) / tf.maximum(tf.reduce_sum(m, 1), 1.0)
    mx = tf.reduce_max(tf.where(m > 0, v, tf.cast(-1e9, v.dtype)), 1)
    return mean, mx


def load_entailment(path) -> EntailmentClassifier | EntailmentEnsemble:
    from captioner.models.loading import load_model_file

    return load_model_file(path, (EntailmentClassifier, EntailmentEnsemble), "an entailment classifier")
