"""The whole video captioner in one Keras object: frames -> caption tokens, scores, and
attention over frames.

`VideoCaptioner` holds the backbone (preprocessing inside), the trained `VideoCaptionModel`
and the vocabulary (in its config, as JSON). Saved as one `.keras` file it loads in a fresh
process with `keras.models.load_model(path)` after `import captioner` (safe mode on):

    model = keras.models.load_model("assets/models/flickr8k_video_caption.keras")
    model({"frames": frames, "mask": mask})   # frames (B, N, H, W, 3) 0..255, mask (B, N)
    model.describe("clip.avi")                # VideoCaption: text, attention over frames, frames
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from captioner.models.pixel_model import CaptionSearch, PixelModel, deserialize
from captioner.models.video_caption_model import VideoCaptionModel  # noqa: F401  (registered)
from captioner.models.video_pipeline import FrameFeaturesMixin, VideoCaption


@keras.saving.register_keras_serializable(package="captioner")
class VideoCaptioner(FrameFeaturesMixin, CaptionSearch, PixelModel):
    """{"frames" (B, N, H, W, 3), "mask" (B, N)} -> beam_search dict (tokens, scores, attention ...)."""

    vocabulary_key = "vocabulary"

    def __init__(self, backbone, model, vocabulary, num_frames=8, sample_fps=0.0, beam_size=3, alpha=0.0,
                 max_length=20, training_config=None, **kwargs):
        super().__init__(backbone, vocabulary, training_config, **kwargs)
        self.model = deserialize(model)
        self.feature = self.model.feature
        self.set_sampling(num_frames, sample_fps)
        self.set_search_defaults(beam_size, alpha, max_length)
        self._fns = {}

    def call(self, inputs, beam_size=None, alpha=None, max_length=None):
        mask = tf.cast(inputs["mask"], tf.bool)
        features = self.frame_features(inputs["frames"], mask)
        return self.model._generate(features, mask, *self.search_options(beam_size, alpha, max_length))

    def generate(self, frames, mask, beam_size=None, alpha=None, max_length=None):
        """Compiled `call` on numpy batches; returns numpy arrays."""
        key = self.search_options(beam_size, alpha, max_length)
        if key not in self._fns:
            self._fns[key] = tf.function(lambda f, m: self.call({"frames": f, "mask": m}, *key),
                                         reduce_retracing=True)
        out = self._fns[key](tf.convert_to_tensor(frames), tf.convert_to_tensor(mask, tf.bool))
        return {k: v.numpy() for k, v in out.items()}

    def caption(self, sources, beam_size=None, alpha=None, max_length=None, batch_size=8):
        """Caption clips: paths, `SampledFrames`, or frame arrays (k, H, W, 3). One
        `VideoCaption` per source, in order; unreadable files raise ImageError naming them."""
        results = []
        for clips, frames, mask in self.clip_batches(sources, batch_size):
            out = self.generate(frames, mask, beam_size, alpha, max_length)
            results.extend(self.decode_outputs(out, clips))
        return results

    def describe(self, source, beam_size=None, alpha=None, max_length=None):
        """One clip -> `VideoCaption` (caption, beams, attention over frames, the frames)."""
        return self.caption([source], beam_size, alpha, max_length)[0]

    def decode_outputs(self, out, clips):
        results = []
        for b, clip in enumerate(clips):
            hyps = self.beams(out, b)
            steps = int(out["lengths"][b, 0])
            n = len(clip.frames)
            attention = out["attention"][b, 0, :steps, :n]  # (steps, k): masked frames carry no weight
            results.append(VideoCaption(
                source=clip.path, text=hyps[0][0], tokens=hyps[0][2], score=hyps[0][1],
                log_prob=float(out["log_probs"][b, 0]), attention=np.asarray(attention),
                hypotheses=[(t, s) for t, s, _ in hyps], frames=clip.frames, frame_indices=clip.indices,
                timestamps=clip.timestamps,
            ))
        return results

    def get_config(self):
        return {**super().get_config(), "model": keras.saving.serialize_keras_object(self.model),
                **self.sampling_config(), **self.search_config()}
