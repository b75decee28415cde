"""The trainable activity classifier (LRCN style): P(y | video) = softmax(V h_T + b).

    features (B, N, D) (or grids (B, N, R, C)), mask (B, N)
      -> FrameEncoder: per-frame outputs h_1..h_N (B, N, U) and h_T at the last real frame
      -> logits V h_T + b (B, K).

The same V, b applied to every h_t give per-frame predictions ("how sure the model was
after seeing t frames"), which the app can draw.
"""

import keras
import tensorflow as tf

from captioner.layers.frame_encoder import FrameEncoder
from captioner.models.video_caption_model import FEATURES


@keras.saving.register_keras_serializable(package="captioner")
class VideoClassifierModel(keras.Model):
    """({"features" (B, N, D), "mask" (B, N)}) -> logits (B, K)."""

    def __init__(self, num_classes, feature_dim, feature="pooled", grid_regions=None, grid_channels=32,
                 projection_dim=256, units=256, dropout=0.3, **kwargs):
        super().__init__(**kwargs)
        if feature not in FEATURES:
            raise ValueError(f"feature must be one of {FEATURES}, got {feature!r}")
        if feature == "grid" and not grid_regions:
            raise ValueError("feature='grid' needs grid_regions (h * w of the backbone grid)")
        self.num_classes = int(num_classes)
        self.feature_dim = int(feature_dim)
        self.feature = feature
        self.grid_regions = int(grid_regions) if feature == "grid" else None
        self.grid_channels = int(grid_channels)
        self.projection_dim = int(projection_dim)
        self.units = int(units)
        self.dropout = float(dropout)
        self.encoder = FrameEncoder(self.feature_dim, units=self.units, projection_dim=self.projection_dim,
                                    grid_regions=self.grid_regions, grid_channels=self.grid_channels,
                                    dropout=self.dropout, name="encoder")
        self.state_dropout = keras.layers.Dropout(self.dropout)
        self.classifier = keras.layers.Dense(self.num_classes, name="V")
        self.encoder.build()
        self.classifier.build((None, self.units))
        self.built = True  # all sub-layers are built: weights load (resume) before any call

    def classify(self, features, mask=None, training=False):
        """(logits (B, K), per-frame logits (B, N, K))."""
        if mask is None:
            mask = tf.ones(tf.shape(features)[:2], tf.bool)
        outputs, state = self.encoder(features, mask=tf.cast(mask, tf.bool), training=training)
        logits = self.classifier(self.state_dropout(state["h"], training=training))  # (B, K)
        frame_logits = self.classifier(outputs)  # (B, N, K)
        return logits, frame_logits

    def call(self, inputs, training=False):
        return self.classify(inputs["features"], inputs.get("mask"), training=training)[0]

    def get_config(self):
        return {
            **super().get_config(),
            "num_classes": self.num_classes, "feature_dim": self.feature_dim, "feature": self.feature,
            "grid_regions": self.grid_regions, "grid_channels": self.grid_channels,
            "projection_dim": self.projection_dim, "units": self.units, "dropout": self.dropout,
        }
