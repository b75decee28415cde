"""The whole activity classifier in one Keras object: frames -> class probabilities.

    model = keras.models.load_model("assets/models/flickr8k_video_activity.keras")  # after `import captioner`
    model({"frames": frames, "mask": mask})   # {"probabilities" (B, K), "frame_probabilities" (B, N, K)}
    model.describe("clip.avi")                # VideoLabel: label, probabilities, frames
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from captioner.models.calibration import Calibrated
from captioner.models.pixel_model import PixelModel, deserialize
from captioner.models.video_classifier_model import VideoClassifierModel  # noqa: F401  (registered)
from captioner.models.video_pipeline import FrameFeaturesMixin, VideoLabel
from captioner.models.compiled import compiled_method


@keras.saving.register_keras_serializable(package="captioner")
class VideoClassifier(Calibrated, FrameFeaturesMixin, PixelModel):
    def __init__(self, backbone, model, class_names, num_frames=8, sample_fps=0.0, training_config=None,
                 **kwargs):
        super().__init__(backbone, training_config=training_config, **kwargs)
        self.model = deserialize(model)
        self.class_names = [str(c) for c in class_names]
        if len(self.class_names) != self.model.num_classes:
            raise ValueError(f"{len(self.class_names)} class names for a {self.model.num_classes}-way classifier")
        self.set_sampling(num_frames, sample_fps)
        self.feature = self.model.feature

    def call(self, inputs):
        mask = tf.cast(inputs["mask"], tf.bool)
        features = self.frame_features(inputs["frames"], mask)
        logits, frame_logits = self.model.classify(features, mask)
        return {"probabilities": self.calibrated_softmax(logits),  # (B, K)
                "frame_probabilities": self.calibrated_softmax(frame_logits)}  # (B, N, K)

    _fn = compiled_method(lambda self, frames, mask: self.call({"frames": frames, "mask": mask}))

    def predict_frames(self, frames, mask):
        out = self._fn(tf.convert_to_tensor(frames), tf.convert_to_tensor(mask, tf.bool))
        return {k: v.numpy() for k, v in out.items()}

    def classify(self, sources, batch_size=8):
        """Label clips (paths, `SampledFrames`, frame arrays); one `VideoLabel` each, in order."""
        results = []
        for clips, frames, mask in self.clip_batches(sources, batch_size):
            out = self.predict_frames(frames, mask)
            for b, clip in enumerate(clips):
                p = out["probabilities"][b]
                order = np.argsort(-p)
                results.append(VideoLabel(
                    source=clip.path, label=self.class_names[order[0]], probability=float(p[order[0]]),
                    probabilities={self.class_names[i]: float(p[i]) for i in order},
                    frame_probabilities=out["frame_probabilities"][b, :len(clip.frames)],
                    frames=clip.frames, frame_indices=clip.indices, timestamps=clip.timestamps,
                ))
        return results

    def describe(self, source):
        return self.classify([source])[0]

    def get_config(self):
        return {**super().get_config(), "model": keras.saving.serialize_keras_object(self.model),
                "class_names": self.class_names, **self.sampling_config()}
