"""The video encoder: an LSTM over per-frame CNN features, masked for variable length.

    frames (B, N, D) pooled vectors, or (B, N, R, C) grids
      -> per-frame projection (Dense + ReLU; a grid is first reduced per region by a 1x1
         Dense to `grid_channels` and flattened, so where things are in the frame survives)
      -> LSTM over time (masked steps are skipped: the state carries over them)
      -> annotations (B, N, U), one per frame, and the last state h_T, c_T (B, U) at each
         clip's last real frame.

The caption model attends over the annotations and starts its decoder from (h_T, c_T)
(s0 = h_T, Venugopalan et al. 2015 with soft attention as Yao et al. 2015); the classifier
reads h_T (LRCN, Donahue et al. 2015).
"""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="captioner")
class FrameEncoder(keras.layers.Layer):
    def __init__(self, feature_dim, units=256, projection_dim=256, grid_regions=None, grid_channels=32,
                 dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.feature_dim = int(feature_dim)
        self.units = int(units)
        self.projection_dim = int(projection_dim)
        self.grid_regions = None if grid_regions is None else int(grid_regions)
        self.grid_channels = int(grid_channels)
        self.dropout = float(dropout)
        self.recurrent_dropout = float(recurrent_dropout)
        if self.grid_regions:
            self.region_dense = keras.layers.Dense(self.grid_channels, activation="relu", name="region_projection")
        self.projection = keras.layers.Dense(self.projection_dim, activation="relu", name="frame_projection")
        self.input_dropout = keras.layers.Dropout(self.dropout)
        self.lstm = keras.layers.LSTM(self.units, return_sequences=True, return_state=True,
                                      recurrent_dropout=self.recurrent_dropout, name="lstm")

    def build(self, input_shape=None):
        if self.grid_regions:
            self.region_dense.build((None, None, self.grid_regions, self.feature_dim))
            self.projection.build((None, None, self.grid_regions * self.grid_channels))
        else:
            self.projection.build((None, None, self.feature_dim))
        self.lstm.build((None, None, self.projection_dim))
        self.built = True

    def project(self, frames, training=False):
        """Per-frame vectors (B, N, projection_dim)."""
        frames = tf.cast(frames, self.compute_dtype)
        if self.grid_regions:
            x = self.region_dense(frames)  # (B, N, R, g)
            shape = tf.shape(x)
            x = tf.reshape(x, [shape[0], shape[1], self.grid_regions * self.grid_channels])  # (B, N, R*g)
        else:
            x = frames
        return self.input_dropout(self.projection(x), training=training)

    def call(self, frames, mask=None, training=False):
        """frames (B, N, D) or (B, N, R, C); mask (B, N) bool, True for real frames.

        Returns annotations (B, N, U) (zeros at masked steps) and state {"h", "c"} (B, U)."""
        x = self.project(frames, training=training)
        if mask is None:
            mask = tf.ones(tf.shape(x)[:2], tf.bool)
        mask = tf.cast(mask, tf.bool)
        outputs, h, c = self.lstm(x, mask=mask, training=training)  # (B, N, U), (B, U), (B, U)
        outputs = outputs * tf.cast(mask, outputs.dtype)[..., None]  # masked steps -> zeros
        return outputs, {"h": h, "c": c}

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {
            **super().get_config(),
            "feature_dim": self.feature_dim, "units": self.units, "projection_dim": self.projection_dim,
            "grid_regions": self.grid_regions, "grid_channels": self.grid_channels, "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
        }
