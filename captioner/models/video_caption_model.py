"""The trainable video captioner: per-frame features -> LSTM encoder -> attention decoder.

    features (B, N, D) (or grids (B, N, R, C)), mask (B, N)
      -> FrameEncoder: annotations (B, N, U), (h_T, c_T)
      -> AttentionDecoder(init_state="given", context="attention"): s0 = (h_T, c_T), soft
         attention over the N frame annotations (masked frames get no weight) -> words.

Works on cached features (training never runs the CNN) and decodes through the one
`Generator`; `VideoCaptioner` wraps it with the backbone for pixels.
"""

import keras
import tensorflow as tf

from captioner.decoding import Decoding, Generator, Steering
from captioner.layers.attention_decoder import AttentionDecoder, DecoderDesign
from captioner.layers.frame_encoder import FrameEncoder
from captioner.text.vocabulary import PAD_ID, START_ID, UNK_ID

FEATURES = ("pooled", "grid")


@keras.saving.register_keras_serializable(package="captioner")
class VideoCaptionModel(keras.Model):
    """({"features" (B, N, D), "mask" (B, N), "tokens" (B, T)}) -> logits (B, T, V)."""

    source_inputs = ("features", "mask")  # what its generator decodes from, in order (self-critical training)

    def __init__(self, vocab_size, feature_dim, feature="pooled", grid_regions=None, grid_channels=32,
                 projection_dim=256, units=256, embedding_dim=128, attention_units=128, dropout=0.3,
                 **kwargs):
        super().__init__(**kwargs)
        if feature not in FEATURES:
            raise ValueError(f"feature must be one of {FEATURES}, got {feature!r}")
        if feature == "grid" and not grid_regions:
            raise ValueError("feature='grid' needs grid_regions (h * w of the backbone grid)")
        self.vocab_size = int(vocab_size)
        self.feature_dim = int(feature_dim)
        self.feature = feature
        self.grid_regions = int(grid_regions) if feature == "grid" else None
        self.grid_channels = int(grid_channels)
        self.projection_dim = int(projection_dim)
        self.units = int(units)
        self.embedding_dim = int(embedding_dim)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.encoder = FrameEncoder(self.feature_dim, units=self.units, projection_dim=self.projection_dim,
                                    grid_regions=self.grid_regions, grid_channels=self.grid_channels,
                                    dropout=self.dropout, name="encoder")
        # s0 = h_T: the decoder has the encoder's width, so its state is the encoder's last state.
        self.decoder = AttentionDecoder(
            self.vocab_size, embedding_dim=self.embedding_dim, units=self.units,
            attention_units=self.attention_units, annotation_dim=self.units,
            design=DecoderDesign("lstm", "attention", "given"), dropout=self.dropout, name="decoder")
        self.encoder.build()
        self.decoder.build((None, None, self.units))
        self.built = True  # all sub-layers are built: weights load (resume) before any call
        # never generate <pad>, <unk> or <start>: a caption of real words only, one attention row per
        # word (a generated <pad> would be dropped from the words and leave its row behind)
        self.generator = Generator(self.decoder, self.encode, banned_ids=(PAD_ID, UNK_ID, START_ID))

    def encode(self, features, mask=None, training=False):
        """annotations (B, N, U), mask (B, N) bool, initial decoder state {"h", "c"}."""
        if mask is None:
            mask = tf.ones(tf.shape(features)[:2], tf.bool)
        mask = tf.cast(mask, tf.bool)
        annotations, state = self.encoder(features, mask=mask, training=training)
        return annotations, mask, state

    def call(self, inputs, training=False):
        annotations, mask, state = self.encode(inputs["features"], inputs.get("mask"), training=training)
        logits, _ = self.decoder(inputs["tokens"], annotations, annotation_mask=mask, initial_state=state,
                                 training=training)  # (B, T, V)
        return logits

    def generate(self, features, mask=None, beam_size=3, alpha=0.0, max_length=20, **steering):
        """Beam-decode features (B, N, ...) with mask (B, N) (compiled). Returns a `Generation`
        (its "attention" is (B, K, max_length, N): weights over frames for each word). ``steering``:
        object tags as the search takes them (``token_bonus``, or ``constraints`` and
        ``constraint_deadline``: `captioner.tagging`)."""
        features = tf.convert_to_tensor(features)
        if mask is None:
            mask = tf.ones(tf.shape(features)[:2], tf.bool)
        return self.generator(features, tf.cast(mask, tf.bool), decoding=Decoding(beam_size, alpha, max_length),
                              steering=Steering.of(**steering))

    def _generate(self, features, mask, beam_size, alpha, max_length):
        """`generate` uncompiled, for a caller's own graph (`VideoCaptioner.call`)."""
        return self.generator.search(features, mask, decoding=Decoding(beam_size, alpha, max_length))

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size, "feature_dim": self.feature_dim, "feature": self.feature,
            "grid_regions": self.grid_regions, "grid_channels": self.grid_channels,
            "projection_dim": self.projection_dim, "units": self.units, "embedding_dim": self.embedding_dim,
            "attention_units": self.attention_units, "dropout": self.dropout,
        }
