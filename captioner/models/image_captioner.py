"""The whole inference model in one Keras object: pixels -> caption tokens, score, attention.

`ImageCaptioner` holds the backbone (a functional model whose preprocessing is inside), the
trained `CaptionDecoderModel` and the vocabulary (in its config, as JSON). Saved as one
`.keras` file, it loads in a fresh process with

    import captioner, keras
    model = keras.models.load_model("assets/models/flickr8k_attention.keras")  # safe_mode on

and `model.caption(images)` gives captions, scores and per-word attention maps.
"""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.text.tokenizer import detokenize
from captioner.text.vocabulary import Vocabulary


@dataclasses.dataclass
class Caption:
    text: str
    tokens: list          # words, without <start>/<end>
    score: float          # length-normalized log-probability used to rank
    log_prob: float       # summed log-probability
    attention: np.ndarray  # (len(tokens) + 1, h, w): one map per word, then the <end> step
    hypotheses: list      # [(text, score)] of every beam, best first


@keras.saving.register_keras_serializable(package="captioner")
class ImageCaptioner(keras.Model):
    """pixels (B, H, W, 3) RGB 0..255 -> {"tokens", "scores", "lengths", "attention", ...}."""

    def __init__(self, backbone, decoder, vocabulary, beam_size=3, alpha=0.0, max_length=20,
                 training_config=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(backbone, dict):
            backbone = keras.saving.deserialize_keras_object(backbone)
        if isinstance(decoder, dict):
            decoder = keras.saving.deserialize_keras_object(decoder)
        self.backbone = backbone
        self.decoder = decoder
        self.vocabulary_tokens = list(vocabulary.to_config()["tokens"]) if isinstance(vocabulary, Vocabulary) \
            else list(vocabulary)
        self.vocabulary = Vocabulary.from_config({"tokens": self.vocabulary_tokens}) \
            if not isinstance(vocabulary, Vocabulary) else vocabulary
        self.beam_size = int(beam_size)
        self.alpha = float(alpha)
        self.max_length = int(max_length)
        self.training_config = training_config or {}
        grid = backbone._outputs_struct["grid"].shape
        self.grid_shape = (int(grid[1]), int(grid[2]))
        self.input_size = (int(backbone.inputs[0].shape[1]), int(backbone.inputs[0].shape[2]))
        self._encode_fn = None
        self.built = True  # backbone and decoder hold all weights already

    def features(self, pixels):
        out = self.backbone(pixels, training=False)
        if self.decoder.feature == "grid":
            grid = out["grid"]
            return tf.reshape(grid, [tf.shape(grid)[0], -1, grid.shape[-1]])  # (B, R, C)
        return out["pooled"]  # (B, P)

    def call(self, pixels, beam_size=None, alpha=None, max_length=None):
        beam_size = self.beam_size if beam_size is None else beam_size
        alpha = self.alpha if alpha is None else alpha
        max_length = self.max_length if max_length is None else max_length
        return self.decoder._generate(self.features(pixels), int(beam_size), float(alpha), int(max_length))

    def generate(self, pixels, beam_size=None, alpha=None, max_length=None):
        """Compiled `call` for uint8/float pixel batches; returns numpy arrays."""
        return self.generate_from_features(self.encode(pixels), beam_size, alpha, max_length)

    def encode(self, pixels):
        """Compiled backbone: pixel batch -> the decoder's annotations (a tensor).

        `generate` is `encode` then `generate_from_features`; a batch job calls the two
        itself, so that the backbone runs on one batch while the beam search decodes the
        previous one."""
        if self._encode_fn is None:
            self._encode_fn = tf.function(self.features, reduce_retracing=True)
        return self._encode_fn(tf.convert_to_tensor(pixels))

    def generate_from_features(self, features, beam_size=None, alpha=None, max_length=None):
        """Compiled beam search over `encode`'s output (None: the model's defaults); numpy arrays."""
        out = self.decoder.generate(features,
                                    self.beam_size if beam_size is None else beam_size,
                                    self.alpha if alpha is None else alpha,
                                    self.max_length if max_length is None else max_length)
        return {k: v.numpy() for k, v in out.items()}

    def caption(self, images, beam_size=None, alpha=None, max_length=None, batch_size=16):
        """Caption images: paths, bytes, PIL images or arrays (any size; resized without crop).

        Returns one `Caption` per image, in order.
        """
        from captioner.features.images import load_image

        images = list(images)
        results = []
        h, w = self.input_size
        for start in range(0, len(images), batch_size):
            batch = []
            for img in images[start:start + batch_size]:
                if isinstance(img, np.ndarray) and img.shape[:2] == (h, w) and img.shape[-1] == 3:
                    batch.append(img)
                else:
                    batch.append(load_image(_as_source(img), size=(h, w)))
            out = self.generate(np.stack(batch).astype(np.uint8), beam_size, alpha, max_length)
            results.extend(self.decode_outputs(out))
        return results

    def decode_outputs(self, out):
        """Turn the output dict of `generate` into `Caption` objects."""
        captions = []
        gh, gw = self.grid_shape if self.decoder.feature == "grid" else (1, 1)
        for b in range(out["tokens"].shape[0]):
            hyps = []
            for k in range(out["tokens"].shape[1]):
                words = self.vocabulary.decode(out["tokens"][b, k].tolist())
                hyps.append((detokenize(words), float(out["scores"][b, k]), words))
            words = hyps[0][2]
            steps = int(out["lengths"][b, 0])
            attention = out["attention"][b, 0, :steps].reshape(steps, gh, gw)
            captions.append(Caption(
                text=hyps[0][0], tokens=words, score=hyps[0][1], log_prob=float(out["log_probs"][b, 0]),
                attention=attention, hypotheses=[(t, s) for t, s, _ in hyps],
            ))
        return captions

    def get_config(self):
        return {
            **super().get_config(),
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "decoder": keras.saving.serialize_keras_object(self.decoder),
            "vocabulary": self.vocabulary_tokens,
            "beam_size": self.beam_size, "alpha": self.alpha, "max_length": self.max_length,
            "training_config": self.training_config,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _as_source(img):
    """Accept a path, bytes, a PIL image or an array and return something load_image reads."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover
        Image = None
    if Image is not None and isinstance(img, Image.Image):
        import io
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()
    if isinstance(img, np.ndarray):
        import io
        from PIL import Image as PILImage
        arr = img if img.dtype == np.uint8 else np.clip(img, 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        PILImage.fromarray(arr).save(buf, format="PNG")
        return buf.getvalue()
    return img
