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
from captioner.text.tokenizer import detokenize
from captioner.models.compiled import compiled_method


@keras.saving.register_keras_serializable(package="captioner")
class VideoCaptioner(FrameFeaturesMixin, CaptionSearch, PixelModel):
    """{"frames" (B, N, H, W, 3), "mask" (B, N)} -> beam_search dict (tokens, scores, attention ...)."""

    vocabulary_key = "vocabulary"
    tag_medium = "video"  # a described caption: "a video of a switch"

    def __init__(self, backbone, model, vocabulary, num_frames=8, sample_fps=0.0, beam_size=3, alpha=0.0,
                 max_length=20, training_config=None, tagger=None, **kwargs):
        super().__init__(backbone, vocabulary, training_config, **kwargs)
        self.tagger_config = dict(tagger or {})  # ObjectTagger settings (known classes, search); {}: its defaults
        self.model = deserialize(model)
        self.feature = self.model.feature
        self.set_sampling(num_frames, sample_fps)
        self.set_search_defaults(beam_size, alpha, max_length)

    _features_fn = compiled_method(lambda self, frames, mask: self.frame_features(frames, mask))

    def call(self, inputs, beam_size=None, alpha=None, max_length=None):
        mask = tf.cast(inputs["mask"], tf.bool)
        features = self.frame_features(inputs["frames"], mask)
        return self.model._generate(features, mask, *self.search_options(beam_size, alpha, max_length))

    def generate(self, frames, mask, beam_size=None, alpha=None, max_length=None, objects=False):
        """`call` on numpy batches: the backbone compiled once, the search through the model's one
        Generator (compiled per setting); returns numpy arrays.

        objects=True: the backbone's ImageNet head tags each clip (on its frames' mean pooled
        features), confident tags of novel classes steer the search as they do the image
        captioner's (`captioner.tagging`), and the output gains "objects": [[Tag]] per clip."""
        mask = tf.convert_to_tensor(mask, tf.bool)
        features = self._features_fn(tf.convert_to_tensor(frames), mask)  # (B, N, D) or (B, N, R, C)
        tags, steering = None, {}
        if objects:
            f = np.asarray(features)
            f = f.mean(axis=2) if f.ndim == 4 else f  # (B, N, C): each frame's pooled features
            m = np.asarray(mask, np.float32)[:, :, None]
            tags, steering = self.tag_objects((f * m).sum(1) / np.maximum(m.sum(1), 1.0), f, m[..., 0])
        options = self.search_options(beam_size, alpha, max_length)
        out = self.steered_search(lambda f, m, **kw: self.model.generate(f, m, *options, **kw), (features, mask),
                                  steering)
        if tags is not None:
            self.finish_tagged(out, tags, steering, options[1])
        return out

    def caption(self, sources, beam_size=None, alpha=None, max_length=None, batch_size=8, objects=False):
        """Caption clips: paths, `SampledFrames`, or frame arrays (k, H, W, 3). One
        `VideoCaption` per source, in order; unreadable files raise ImageError naming them.
        objects=True: name what the backbone's ImageNet head sees (see `generate`)."""
        results = []
        for clips, frames, mask in self.clip_batches(sources, batch_size):
            out = self.generate(frames, mask, beam_size, alpha, max_length, objects=objects and self.can_tag_objects)
            results.extend(self.decode_outputs(out, clips))
        return results

    def describe(self, source, beam_size=None, alpha=None, max_length=None, objects=False):
        """One clip -> `VideoCaption` (caption, beams, attention over frames, the frames)."""
        return self.caption([source], beam_size, alpha, max_length, objects=objects)[0]

    def decode_outputs(self, out, clips):
        results = []
        for b, clip in enumerate(clips):
            hyps = self.beams(out, b)
            best = hyps[0]
            named, objects = self.name_tagged(best.words, out["objects"][b] if "objects" in out else [])
            text = detokenize(named) if named != best.words else best.text
            steps = int(out["lengths"][b, 0])
            n = len(clip.frames)
            attention = out["attention"][b, 0, :steps, :n]  # (steps, k): masked frames carry no weight
            results.append(VideoCaption(
                source=clip.path, text=text, tokens=best.words, score=best.score,
                log_prob=best.log_prob, attention=np.asarray(attention),
                hypotheses=[(h.text, h.score) for h in hyps], frames=clip.frames, frame_indices=clip.indices,
                timestamps=clip.timestamps, objects=objects,
            ))
        return results

    def get_config(self):
        return {**super().get_config(), "model": keras.saving.serialize_keras_object(self.model),
                **self.sampling_config(), **self.search_config(),
                **({"tagger": self.tagger_config} if self.tagger_config else {})}
