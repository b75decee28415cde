"""The trainable half of an image captioner: annotation vectors -> words.

Works on cached backbone features, so training never runs the CNN. The same object decodes
through the one `Generator`, and `ImageCaptioner` wraps it with a backbone for pixels.
"""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.decoding import Decoding, Generator, Steering
from captioner.layers.attention_decoder import AttentionDecoder, DecoderDesign, doubly_stochastic_penalty
from captioner.settings_groups import GroupedSettings
from captioner.text.vocabulary import PAD_ID, START_ID, UNK_ID

# The model kinds of the Show-Attend-Tell paper comparison.
KINDS = {
    # kind: (features used, decoder context mode)
    "attention": ("grid", "attention"),   # Xu et al. 2015, soft attention
    "fc-init": ("pooled", "none"),         # Vinyals et al. 2015: image vector sets s0 only
    "fc-concat": ("pooled", "concat"),     # image vector concatenated to the input every step
}


class CaptionSearchMixin:
    """What a caption decoder (one, or an ensemble of them) offers `ImageCaptioner`: its kind's
    feature and beam decoding through its `generator`."""

    source_inputs = ("annotations",)  # what its generator decodes from (self-critical training reads it)

    @property
    def feature(self):
        return KINDS[self.kind][0]

    styles = {}  # a decoder trained on several corpora: {style name: its start token id} (CaptionDecoderModel)

    def generate(self, annotations, beam_size=3, alpha=0.0, max_length=20, start_tokens=None, **steering):
        """Beam-decode annotations (B, R, D) or pooled (B, D) (compiled). Returns a `Generation`.
        ``steering``: object tags (`captioner.tagging`) as soft lexical constraints (``token_bonus`` (B, V))
        or hard, disjunctive ones (``constraints`` (B, C, D) and ``constraint_deadline``: constrained
        beam search), as `Steering.of` takes them.
        ``start_tokens`` int32 (B,): each caption's first input token instead of ``<start>``, e.g. a
        style token (`style_tokens`); one more input of the compiled search."""
        inputs = (annotations,) if start_tokens is None else (annotations, start_tokens)
        return self.generator(*inputs, decoding=Decoding(beam_size, alpha, max_length),
                              steering=Steering.of(**steering))

    def _generate(self, annotations, beam_size, alpha, max_length, start_tokens=None):
        """`generate` uncompiled, for a caller's own graph (`ImageCaptioner.call`)."""
        inputs = (annotations,) if start_tokens is None else (annotations, start_tokens)
        return self.generator.search(*inputs, decoding=Decoding(beam_size, alpha, max_length))

    def style_tokens(self, style, batch_size):
        """int32 (B,) start tokens of `style` (a name of `styles`), or None for a decoder without styles.
        ValueError names the styles a decoder has when it has not this one."""
        if not self.styles:
            if style is not None:
                raise ValueError(f"style {style!r}: this captioner was trained on one corpus and has no styles")
            return None
        if style is None:
            style = next(iter(self.styles))
        if style not in self.styles:
            raise ValueError(f"style {style!r}: this captioner writes {', '.join(self.styles)}")
        return np.full((batch_size,), self.styles[style], np.int32)


@dataclasses.dataclass(frozen=True)
class CaptionNetwork:
    """The shape of the caption decoder: ``kind`` (`KINDS`: soft attention over the grid, or the
    pooled fc vector), the annotations' projection, word embeddings, LSTM and attention units,
    dropout, and the doubly stochastic attention penalty's weight (Xu et al. 2015, eq. 14)."""

    kind: str = "attention"
    projection_dim: int = 512
    embedding_dim: int = 256
    units: int = 512
    attention_units: int = 256
    dropout: float = 0.5
    attention_lambda: float = 1.0


@keras.saving.register_keras_serializable(package="captioner")
class CaptionDecoderModel(CaptionSearchMixin, GroupedSettings, keras.Model):
    """(annotations (B, R, D), input tokens (B, T)) -> logits (B, T, V).

    annotations are the backbone grid (R = h*w) for kind "attention" and the pooled vector
    as one region (R = 1) for the fc kinds. A Dense+ReLU projects them to `projection_dim`
    first (shared by training and decoding). In training the doubly stochastic attention
    penalty lambda * sum_i (1 - sum_t alpha_ti)^2 (Xu et al. eq. 14) is added as a loss.
    """

    GROUPS = {"network": CaptionNetwork}  # `CaptionDecoderModel.of(vocab_size, annotation_dim, units=8, ...)`

    def __init__(self, vocab_size, annotation_dim, network: CaptionNetwork | None = None, styles=None, **kwargs):
        super().__init__(**kwargs)
        net = network or CaptionNetwork()
        kind, projection_dim, embedding_dim, units = net.kind, net.projection_dim, net.embedding_dim, net.units
        attention_units, dropout, attention_lambda = net.attention_units, net.dropout, net.attention_lambda
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        self.vocab_size = vocab_size
        self.annotation_dim = annotation_dim
        self.kind = kind
        self.projection_dim = projection_dim
        self.embedding_dim = embedding_dim
        self.units = units
        self.attention_units = attention_units
        self.dropout = dropout
        self.attention_lambda = attention_lambda
        # several corpora: each caption starts with its corpus's style token instead of <start>
        self.styles = {str(k): int(v) for k, v in (styles or {}).items()}
        if any(not 0 <= v < vocab_size for v in self.styles.values()):
            raise ValueError(f"styles: token ids must be < vocab_size {vocab_size}, got {self.styles}")
        self.projection = keras.layers.Dense(projection_dim, activation="relu", name="projection")
        self.annotation_dropout = keras.layers.Dropout(dropout / 2)
        self.decoder = AttentionDecoder(
            vocab_size, embedding_dim=embedding_dim, units=units, attention_units=attention_units,
            annotation_dim=projection_dim, design=DecoderDesign("lstm", KINDS[kind][1], "mean"), dropout=dropout,
            name="decoder")
        self.projection.build((None, None, annotation_dim))
        self.decoder.build((None, None, projection_dim))
        self.built = True  # every weight exists now: checkpoints can be loaded before any call
        # never generate <pad>, <unk>, <start> or a style token: a caption of real words only; a style
        # token comes in as the first input token (the generator's start-token path)
        self.generator = Generator(
            self.decoder, lambda x, start=None: (self.project(x), None, None) + (() if start is None else (start,)),
            banned_ids=(PAD_ID, UNK_ID, START_ID, *self.styles.values()))

    def transfer_word_weights(self, word_ids, vectors):
        """DCC's transfer (Hendricks et al. 2016) for words the training captions never held: their
        input embedding rows, and their output layer's columns and biases (how
        likely the decoder says them, and after what), set to their word vectors (`vectors`: (V, G),
        a row per vocabulary id; all-zero rows: no vector) mapped by the least-squares linear map
        from [vector, 1] to those weights over every other word that has a vector. A held-out word
        then reads and scores like the seen words near it, instead of keeping the untrained rows
        (and the bias training pushed down because no caption ever said it)."""
        ids = np.asarray(sorted({int(i) for i in word_ids}), np.int64)
        if not len(ids):
            return
        vectors = np.asarray(vectors, np.float64)
        if vectors.shape[0] != self.vocab_size:
            raise ValueError(f"transfer_word_weights: {vectors.shape[0]} word vectors for {self.vocab_size} words")
        with_bias = np.hstack([vectors, np.ones((len(vectors), 1))])
        has_vector = np.abs(vectors).sum(axis=1) > 0
        seen = np.setdiff1d(np.flatnonzero(has_vector[4:]) + 4, ids)  # not <pad>, <start>, <end>, <unk>

        def remap(rows):  # (V, D) -> the same with the held-out rows mapped from their vectors
            rows = np.array(rows, np.float64)
            mapping, *_ = np.linalg.lstsq(with_bias[seen], rows[seen], rcond=None)
            rows[ids] = with_bias[ids] @ mapping
            return rows

        embedding = self.decoder.embedding.embeddings
        embedding.assign(remap(embedding.numpy()).astype(embedding.dtype))
        kernel, bias = self.decoder.vocab_dense.kernel, self.decoder.vocab_dense.bias  # (H, V), (V,)
        kernel.assign(remap(kernel.numpy().T).T.astype(kernel.dtype))
        bias.assign(remap(bias.numpy()[:, None])[:, 0].astype(bias.dtype))

    def project(self, annotations, training=False):
        annotations = tf.cast(annotations, self.compute_dtype)
        if annotations.shape.rank == 2:  # pooled vector -> one region
            annotations = annotations[:, None, :]
        return self.annotation_dropout(self.projection(annotations), training=training)  # (B, R, P)

    def call(self, inputs, training=False):
        annotations = self.project(inputs["annotations"], training=training)
        tokens = inputs["tokens"]
        logits, alphas = self.decoder(tokens, annotations, training=training)  # (B,T,V), (B,T,R)
        if training and self.kind == "attention" and self.attention_lambda:
            # in float32 whatever the compute dtype: Keras sums this with the (float32) loss,
            # and under mixed_bfloat16 a bf16 sum over T steps would also lose precision
            penalty = doubly_stochastic_penalty(alphas, tokens != PAD_ID)  # (B,)
            self.add_loss(self.attention_lambda * tf.reduce_mean(penalty) / tf.cast(tf.shape(tokens)[1], tf.float32))
        return logits

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size, "annotation_dim": self.annotation_dim, "kind": self.kind,
            "projection_dim": self.projection_dim, "embedding_dim": self.embedding_dim,
            "units": self.units, "attention_units": self.attention_units, "dropout": self.dropout,
            "attention_lambda": self.attention_lambda,
            **({"styles": dict(self.styles)} if self.styles else {}),
        }


@keras.saving.register_keras_serializable(package="captioner")
def masked_sparse_ce(y_true, logits):
    """Per-token cross-entropy ignoring <pad> targets, scaled so Keras' mean is the masked mean."""
    y_true = tf.cast(y_true, tf.int32)
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(y_true, tf.cast(logits, tf.float32))  # (B, T)
    mask = tf.cast(y_true != PAD_ID, ce.dtype)
    scale = tf.cast(tf.size(mask), ce.dtype) / tf.maximum(tf.reduce_sum(mask), 1.0)
    return ce * mask * scale
