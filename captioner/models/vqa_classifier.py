"""The trainable half of a VQA model: image features + question tokens -> answer logits.

Two kinds, trained on cached backbone features (the CNN never runs in training):

* ``"baseline"``, the seed's model: the pooled image vector and an LSTM encoding of the
  question, ``s = [h_q ; h_I]``, ``P(y | q, I) = softmax(V s + b)``;
* ``"attention"``, stacked attention (Yang et al. 2016): the question state queries the
  grid regions for ``hops`` hops (:class:`StackedAttention`), ``s = u^K``,
  ``P = softmax(V s + b)``; the attention maps come back for display;
* ``"blind"``, the question alone, ``s = h_q``, ``P = softmax(V s + b)`` (same embedding,
  LSTM and head as the others, no image weights): the language-prior baseline an image
  model must beat. It is fed the pooled vector like the baseline and ignores it.

With ``reduce_dim > 0`` a frozen linear map (set from a PCA of training features by
:meth:`set_reduction`) first takes the C backbone channels down to ``reduce_dim``; training
can feed features already reduced (last dim ``reduce_dim``), the saved model reduces the
backbone output itself. It makes training on cached features several times cheaper.

With ``fusion="product"`` the head also sees the elementwise product of the question
vector and the image vector (the last hop's attended regions, or h_I):
``s = [u^K ; h_q * v~^K]`` (attention), ``s = [h_q ; h_I ; h_q * h_I]`` (baseline), so
"does the colour the question names match the one in the image" is a direct feature.

With ``question_words=True`` the question vector also sees the average of its word
embeddings, ``h_q = tanh(W_q [h_T ; mean_t e_t] + b_q)``. Trained on easy-VQA, the plain
LSTM state learned the question's *type* first and hardly told "is there a circle?" from
"is there a triangle?" (state distance 0.24 against 3.9 between types), so yes/no
questions about shapes stayed near chance; the word average hands the named colour or
shape to the head directly.

With ``hidden_units > 0`` one ReLU layer sits between ``s`` and the softmax,
``P = softmax(V relu(W s + c) + b)``. The linear head of the papers cannot tell whether the
colour or shape a yes/no question names is the one in the image (s adds the two, and
"same or not" is not linearly separable in a sum): on easy-VQA the attention model with it
stalled at 85.7% dev accuracy, 80.6% on yes/no questions, while colour and shape questions
were 99.8-100% right.

Inputs are a dict: ``"image"`` (N, R, C) grid features (attention) or (N, P) pooled
(baseline); ``"question"`` (B, T) token ids, 0-padded; optional ``"image_index"`` (B,)
saying which of the N images each question is about (so a batch of questions about a few
images projects each image once). Without it, N == B.
"""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.layers.stacked_attention import StackedAttention
from captioner.models.compiled import compiled_method
from captioner.settings_groups import GroupedSettings

KINDS = {"attention": "grid", "baseline": "pooled", "blind": "pooled"}  # kind -> backbone feature it reads
FUSIONS = ("sum", "product")


@dataclasses.dataclass(frozen=True)
class VQANetwork:
    """The shape of the answer classifier: ``kind`` (attention, baseline or blind: `KINDS`),
    attention ``hops``, question embeddings and LSTM units, attention units, dropout, a ReLU hidden
    layer (0: none), a frozen PCA of the image features to ``reduce_dim`` (0: none), how question and
    image are fused ("sum" or "product"), and ``question_words``: the question vector also sees the
    average of its word embeddings."""

    kind: str = "attention"
    hops: int = 2
    embedding_dim: int = 128
    units: int = 256
    attention_units: int = 256
    dropout: float = 0.5
    hidden_units: int = 0
    reduce_dim: int = 0
    fusion: str = "sum"
    question_words: bool = False


@keras.saving.register_keras_serializable(package="captioner")
class VQAClassifier(GroupedSettings, keras.Model):
    GROUPS = {"network": VQANetwork}  # `VQAClassifier.of(vocab_size, answers, image_dim, hops=1, ...)`: flat

    def __init__(self, vocab_size, num_answers, image_dim, network: VQANetwork | None = None, **kwargs):
        super().__init__(**kwargs)
        net = network or VQANetwork()
        kind, hops, embedding_dim, units, attention_units = (net.kind, net.hops, net.embedding_dim, net.units,
                                                             net.attention_units)
        dropout, hidden_units, reduce_dim, fusion = net.dropout, net.hidden_units, net.reduce_dim, net.fusion
        question_words = net.question_words
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        self.vocab_size = int(vocab_size)
        self.num_answers = int(num_answers)
        self.image_dim = int(image_dim)
        self.kind = kind
        self.hops = int(hops)
        self.embedding_dim = int(embedding_dim)
        self.units = int(units)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.hidden_units = int(hidden_units)
        self.reduce_dim = int(reduce_dim)
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
        self.fusion = fusion
        self.question_words = bool(question_words)

        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True, name="embedding")
        self.question_lstm = keras.layers.LSTM(units, name="question_lstm")
        if self.question_words:
            self.question_dense = keras.layers.Dense(units, activation="tanh", name="question_dense")
            self.question_dense.build((None, units + embedding_dim))
        # v_I = tanh(W_I f + b_I): per region (attention) or of the pooled vector (baseline)
        if kind != "blind":
            self.image_projection = keras.layers.Dense(units, activation="tanh", name="image_projection")
        if kind == "attention":
            self.stacked_attention = StackedAttention(hops, attention_units, dim=units, name="stacked_attention")
        self.feature_dropout = keras.layers.Dropout(dropout)
        s_dim = units * ((2 if kind == "baseline" else 1) + (fusion == "product" and kind != "blind"))
        if self.hidden_units:
            self.hidden_dense = keras.layers.Dense(self.hidden_units, activation="relu", name="hidden")
            self.hidden_dense.build((None, s_dim))
        self.answer_dense = keras.layers.Dense(num_answers, name="answer")  # V s + b
        self.embedding.build((None, None))
        self.question_lstm.build((None, None, embedding_dim))
        if self.reduce_dim and kind == "blind":
            raise ValueError("the blind (question-only) model reads no image: reduce_dim must be 0")
        if self.reduce_dim:
            self.input_reduction = keras.layers.Dense(self.reduce_dim, trainable=False, name="input_reduction")
            self.input_reduction.build((None, image_dim))
        if kind != "blind":
            self.image_projection.build((None, self.reduce_dim or image_dim))
        self.answer_dense.build((None, self.hidden_units or s_dim))
        self.built = True  # all weights exist now: load_weights / --resume work before any call

    @property
    def feature(self):
        """Which backbone output the model reads: "grid" or "pooled"."""
        return KINDS[self.kind]

    def encode_question(self, tokens, training=False):
        tokens = tf.cast(tokens, "int32")
        embedded = self.embedding(tokens)  # (B, T, E), mask = tokens != 0
        mask = tf.not_equal(tokens, 0)
        h_q = self.question_lstm(embedded, mask=mask, training=training)  # (B, H): state at the last word
        if self.question_words:
            weights = tf.cast(mask, embedded.dtype)[..., None]  # (B, T, 1)
            words = tf.reduce_sum(embedded * weights, 1) / tf.maximum(tf.reduce_sum(weights, 1), 1.0)  # (B, E)
            h_q = self.question_dense(tf.concat([h_q, words], -1))  # (B, H)
        return h_q

    def forward(self, inputs, training=False):
        """Returns logits (B, A) and attention maps (B, hops, R) (baseline: (B, 0, 1))."""
        h_q = self.encode_question(inputs["question"], training=training)  # (B, H)
        if self.kind == "blind":  # the question alone: s = h_q
            s = self.feature_dropout(h_q, training=training)
            if self.hidden_units:
                s = self.feature_dropout(self.hidden_dense(s), training=training)
            return self.answer_dense(s), tf.zeros((tf.shape(s)[0], 0, 1), s.dtype)
        image = tf.cast(inputs["image"], self.compute_dtype)
        if self.reduce_dim and image.shape[-1] == self.image_dim:  # raw backbone features
            image = self.input_reduction(image)  # (N, [R,] reduce_dim)
        image_index = inputs.get("image_index")
        if image_index is not None:
            image_index = tf.cast(image_index, "int32")
        if self.kind == "attention":
            if image.shape.rank != 3:
                raise ValueError(f"the attention model takes grid features (N, R, C), got rank {image.shape.rank}")
            regions = self.feature_dropout(self.image_projection(image), training=training)  # (N, R, H)
            u, alphas = self.stacked_attention(h_q, regions, image_index=image_index)  # (B, H), (B, hops, R)
            s = u
            if self.fusion == "product":
                values = regions if image_index is None else tf.gather(regions, image_index)  # (B, R, H)
                attended = tf.einsum("br,brh->bh", alphas[:, -1], values)  # v~ of the last hop (B, H)
                s = tf.concat([u, h_q * attended], axis=-1)  # (B, 2H)
        else:
            if image.shape.rank == 3:  # (N, 1, P)
                image = tf.squeeze(image, 1)
            h_i = self.image_projection(image)  # (N, H)
            if image_index is not None:
                h_i = tf.gather(h_i, image_index)  # (B, H)
            s = tf.concat([h_q, h_i], axis=-1)  # s = [h_q ; h_I]  (B, 2H)
            if self.fusion == "product":
                s = tf.concat([s, h_q * h_i], axis=-1)  # (B, 3H)
            alphas = tf.zeros((tf.shape(s)[0], 0, 1), s.dtype)
        s = self.feature_dropout(s, training=training)
        if self.hidden_units:
            s = self.feature_dropout(self.hidden_dense(s), training=training)  # (B, hidden)
        logits = self.answer_dense(s)  # (B, A)
        return logits, alphas

    def call(self, inputs, training=False):
        return self.forward(inputs, training=training)[0]

    # the inference forward pass (logits, attention), compiled once per classifier
    forward_inference = compiled_method(lambda self, inputs: self.forward(inputs, training=False))

    def set_reduction(self, mean, components):
        """Make the frozen reduction x -> (x - mean) @ components; components (C, reduce_dim)."""
        components = np.asarray(components, "float32")
        if not self.reduce_dim or components.shape != (self.image_dim, self.reduce_dim):
            raise ValueError(f"components must be ({self.image_dim}, {self.reduce_dim}), got {components.shape}")
        self.input_reduction.set_weights([components, -np.asarray(mean, "float32") @ components])

    def reduce_features(self, features, batch_size=4096):
        """Apply the frozen reduction to a NumPy feature array (..., C) -> (..., reduce_dim) float32."""
        kernel, bias = self.input_reduction.get_weights()
        flat = np.asarray(features).reshape(-1, self.image_dim)
        out = np.empty((len(flat), self.reduce_dim), "float32")
        for i in range(0, len(flat), batch_size):
            out[i:i + batch_size] = flat[i:i + batch_size].astype("float32") @ kernel + bias
        return out.reshape(np.shape(features)[:-1] + (self.reduce_dim,))

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size, "num_answers": self.num_answers, "image_dim": self.image_dim,
            "kind": self.kind, "hops": self.hops, "embedding_dim": self.embedding_dim, "units": self.units,
            "attention_units": self.attention_units, "dropout": self.dropout, "hidden_units": self.hidden_units,
            "reduce_dim": self.reduce_dim, "fusion": self.fusion,
            "question_words": self.question_words,
        }
