"""What the two video inference models share: frames -> per-frame backbone features (only
for real frames), clip preparation from paths or arrays, and the result types. Loading a
video model is `captioner.models.loading.load_video_model`:

    from captioner.models.loading import load_video_model
    model = load_video_model("assets/models/flickr8k_video_caption.keras")  # or flickr8k_video_activity.keras
    result = model.describe("clip.avi")        # or an array of frames (k, H, W, 3) RGB
    result.to_json()
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import tensorflow as tf

@dataclasses.dataclass
class VideoCaption:
    """A caption of one clip, with what the app draws."""

    source: str
    text: str
    tokens: list
    score: float               # length-normalized log-probability used to rank
    log_prob: float            # summed log-probability
    attention: np.ndarray      # (len(tokens) + 1, k): weights over the k sampled frames per word, then <end>
    hypotheses: list           # [(text, score)] of every beam, best first
    frames: np.ndarray         # (k, H, W, 3) uint8 RGB: the sampled frames, at the model's input size
    frame_indices: np.ndarray  # (k,) frame numbers in the file
    timestamps: np.ndarray     # (k,) seconds
    objects: list = dataclasses.field(default_factory=list)  # objects=True: the tags, as Caption.objects

    def to_json(self):
        return {"source": self.source, "caption": self.text, "score": round(self.score, 4),
                "log_prob": round(self.log_prob, 4),
                "hypotheses": [{"caption": t, "score": round(s, 4)} for t, s in self.hypotheses],
                "frames": [int(i) for i in self.frame_indices],
                "timestamps": [round(float(t), 3) for t in self.timestamps],
                "attention": np.round(self.attention, 4).tolist(),
                **({"objects": self.objects} if self.objects else {})}


@dataclasses.dataclass
class VideoLabel:
    """An activity label of one clip."""

    source: str
    label: str
    probability: float
    probabilities: dict        # {class name: probability}, most probable first
    frame_probabilities: np.ndarray  # (k, K): softmax(V h_t + b) after each sampled frame
    frames: np.ndarray
    frame_indices: np.ndarray
    timestamps: np.ndarray

    def to_json(self, top=5):
        return {"source": self.source, "label": self.label, "probability": round(self.probability, 4),
                "probabilities": {k: round(v, 4) for k, v in list(self.probabilities.items())[:top]},
                "frames": [int(i) for i in self.frame_indices],
                "timestamps": [round(float(t), 3) for t in self.timestamps]}


class FrameFeaturesMixin:
    """For `PixelModel` subclasses (`features(pixels)`, `input_size`) that sample `num_frames`
    frames per clip (`sample_fps`: frames per second, 0 for evenly spread)."""

    def set_sampling(self, num_frames, sample_fps):
        self.num_frames = int(num_frames)
        self.sample_fps = float(sample_fps or 0.0)

    def sampling_config(self):
        return {"num_frames": self.num_frames, "sample_fps": self.sample_fps}

    def frame_features(self, frames, mask):
        """frames (B, N, H, W, 3) 0..255, mask (B, N) -> features (B, N, D) or (B, N, R, C),
        zeros at masked frames; the backbone runs only on the real frames."""
        mask = tf.cast(mask, tf.bool)
        index = tf.where(mask)  # (M, 2): (clip, frame) of every real frame
        pixels = tf.gather_nd(frames, index)  # (M, H, W, 3)
        out = self.features(pixels)  # (M, D) or (M, R, C)
        shape = tf.concat([tf.shape(mask, out_type=tf.int64), tf.shape(out, out_type=tf.int64)[1:]], 0)
        return tf.scatter_nd(index, out, shape)  # (B, N, ...)

    def prepare(self, source):
        """A `SampledFrames` at the model's input size from a path, a SampledFrames, or frames."""
        from captioner.features.video import SampledFrames, frames_from_arrays, sample_frames

        if isinstance(source, SampledFrames):
            if source.frames.shape[1:3] == tuple(self.input_size) and len(source.frames) <= self.num_frames:
                return dataclasses.replace(source, num_frames=self.num_frames)
            return frames_from_arrays(source.frames, self.num_frames, self.input_size, name=source.path)
        if isinstance(source, (str, os.PathLike)):
            return sample_frames(source, num_frames=self.num_frames, fps=self.sample_fps or None,
                                 size=self.input_size)
        return frames_from_arrays(source, self.num_frames, self.input_size)

    def batch(self, clips):
        """Stack SampledFrames into (frames (B, N, H, W, 3) uint8, mask (B, N))."""
        frames, masks = zip(*(c.padded() for c in clips))
        return np.stack(frames), np.stack(masks)

    def clip_batches(self, sources, batch_size):
        """Yield (clips, frames, mask) for `sources` (paths, `SampledFrames`, frame arrays),
        `batch_size` clips at a time, in order."""
        sources = list(sources)
        for start in range(0, len(sources), batch_size):
            clips = [self.prepare(s) for s in sources[start:start + batch_size]]
            yield (clips, *self.batch(clips))
