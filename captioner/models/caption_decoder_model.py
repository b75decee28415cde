"""The trainable half of an image captioner: annotation vectors -> words.

Works on cached backbone features, so training never runs the CNN. The same object decodes
through the one `Generator`, and `ImageCaptioner` wraps it with a backbone for pixels.
"""

import keras
import tensorflow as tf

from captioner.decoding import Generator
from captioner.layers.attention_decoder import AttentionDecoder, doubly_stochastic_penalty
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

    @property
    def feature(self):
        return KINDS[self.kind][0]

    def generate(self, annotations, beam_size=3, alpha=0.0, max_length=20, token_bonus=None, constraints=None,
                 constraint_deadline=0):
        """Beam-decode annotations (B, R, D) or pooled (B, D) (compiled). Returns a `Generation`.
        Object tags (`captioner.tagging`) as soft lexical constraints (``token_bonus`` (B, V)) or
        hard, disjunctive ones (``constraints`` (B, C, D): constrained beam search)."""
        return self.generator(annotations, beam_size=beam_size, alpha=alpha, max_length=max_length,
                              token_bonus=token_bonus, constraints=constraints,
                              constraint_deadline=constraint_deadline)

    def _generate(self, annotations, beam_size, alpha, max_length):
        """`generate` uncompiled, for a caller's own graph (`ImageCaptioner.call`)."""
        return self.generator.search(annotations, beam_size=beam_size, alpha=alpha, max_length=max_length)


@keras.saving.register_keras_serializable(package="captioner")
class CaptionDecoderModel(CaptionSearchMixin, keras.Model):
    """(annotations (B, R, D), input tokens (B, T)) -> logits (B, T, V).

    annotations are the backbone grid (R = h*w) for kind "attention" and the pooled vector
    as one region (R = 1) for the fc kinds. A Dense+ReLU projects them to `projection_dim`
    first (shared by training and decoding). In training the doubly stochastic attention
    penalty lambda * sum_i (1 - sum_t alpha_ti)^2 (Xu et al. eq. 14) is added as a loss.
    """

    def __init__(self, vocab_size, annotation_dim, kind="attention", projection_dim=512,
                 embedding_dim=256, units=512, attention_units=256, dropout=0.5,
                 attention_lambda=1.0, **kwargs):
        super().__init__(**kwargs)
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
        self.projection = keras.layers.Dense(projection_dim, activation="relu", name="projection")
        self.annotation_dropout = keras.layers.Dropout(dropout / 2)
        self.decoder = AttentionDecoder(
            vocab_size, embedding_dim=embedding_dim, units=units, attention_units=attention_units,
            annotation_dim=projection_dim, cell="lstm", context=KINDS[kind][1], init_state="mean",
            gate=True, deep_output=True, dropout=dropout, name="decoder",
        )
        self.projection.build((None, None, annotation_dim))
        self.decoder.build((None, None, projection_dim))
        self.built = True  # every weight exists now: checkpoints can be loaded before any call
        # never generate <pad>, <unk> or <start>: a caption of real words only
        self.generator = Generator(self.decoder, lambda x: (self.project(x), None, None),
                                   banned_ids=(PAD_ID, UNK_ID, START_ID))

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
        }


@keras.saving.register_keras_serializable(package="captioner")
def masked_sparse_ce(y_true, logits):
    """Per-token cross-entropy ignoring <pad> targets, scaled so Keras' mean is the masked mean."""
    y_true = tf.cast(y_true, tf.int32)
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(y_true, tf.cast(logits, tf.float32))  # (B, T)
    mask = tf.cast(y_true != PAD_ID, ce.dtype)
    scale = tf.cast(tf.size(mask), ce.dtype) / tf.maximum(tf.reduce_sum(mask), 1.0)
    return ce * mask * scale
