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
from captioner.models.compiled import compiled_method


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
    style: str | None = None  # a several-corpora captioner: the corpus style it wrote in


@keras.saving.register_keras_serializable(package="captioner")
class ImageCaptioner(CaptionSearch, PixelModel):
    """pixels (B, H, W, 3) RGB 0..255 -> {"tokens", "scores", "lengths", "attention", ...}."""

    vocabulary_key = "vocabulary"

    def __init__(self, backbone, decoder, vocabulary, beam_size=3, alpha=0.0, max_length=20,
                 training_config=None, tagger=None, style=None, style_chooser=None, **kwargs):
        super().__init__(backbone, vocabulary, training_config, **kwargs)
        self.tagger_config = dict(tagger or {})  # ObjectTagger settings (bonus, known classes, ...); {}: its defaults
        self.decoder = deserialize(decoder)
        self.feature = self.decoder.feature
        self.set_search_defaults(beam_size, alpha, max_length)
        # a decoder trained on several corpora writes in the style of any of them (`styles`); this one by
        # default, or "auto": per photo, the corpus whose training photos it is most like (`style_chooser`,
        # captioner.tagging.style_choice, fitted by `captioner model fit-styles`)
        self.style_chooser_config = dict(style_chooser or {})
        self.style = style
        self._check_style(style)

    _encode_fn = compiled_method(lambda self, pixels: self.features(pixels))  # (B, H, W, 3) -> annotations

    def set_style(self, style):
        """Write in `style` (one of `styles`, or "auto") unless told otherwise; InputError naming the
        styles there are."""
        from captioner.errors import InputError

        try:
            self._check_style(style)
        except ValueError as exc:
            raise InputError(f"--style {style}: {exc}") from None
        self.style = style

    def _check_style(self, style):
        if style == "auto":
            if not self.style_chooser_config:
                raise ValueError("style 'auto' needs the styles' photos fitted (`captioner model fit-styles`); "
                                 f"this captioner writes {', '.join(self.styles) or 'one style'}")
            return
        self.decoder.style_tokens(style, 1)  # ValueError for a style the decoder has not

    def style_chooser(self):
        """The `StyleChooser` of style="auto" (None where none was fitted)."""
        if not self.style_chooser_config:
            return None
        from captioner.tagging.style_choice import StyleChooser

        chooser = self.__dict__.get("_style_chooser")
        if chooser is None:
            chooser = self.__dict__["_style_chooser"] = StyleChooser(self.style_chooser_config)
        return chooser

    def set_style_chooser(self, config):
        """Fit result of `captioner.tagging.style_choice.fit_style_centroids` (its styles must be the
        decoder's)."""
        unknown = [s for s in config["styles"] if s not in self.styles]
        if unknown:
            raise ValueError(f"style chooser: {unknown} are not styles of this captioner ({self.styles})")
        self.style_chooser_config = dict(config)
        self.__dict__.pop("_style_chooser", None)

    def start_tokens(self, style, features):
        """(int32 (B,) first input tokens or None, [style name of each photo] or None) of `features`
        written in `style` (None: the model's; "auto": each photo's nearest corpus)."""
        style = self.style if style is None else style
        if style != "auto":
            start = self.decoder.style_tokens(style, len(features))
            return start, (None if start is None else [style or self.styles[0]] * len(features))
        features = np.asarray(features, np.float32)
        chosen = self.style_chooser().choose(features.mean(axis=1) if features.ndim == 3 else features)
        return np.array([self.decoder.styles[s] for s in chosen], np.int32), chosen

    @property
    def styles(self):
        """The styles this captioner writes (the corpora it was trained on, in order), [] for one corpus."""
        return list(self.decoder.styles)

    @property
    def style_options(self):
        """The styles a caller may ask for: `styles`, then "auto" where a chooser was fitted."""
        return self.styles + (["auto"] if self.style_chooser_config else [])

    def call(self, pixels, beam_size=None, alpha=None, max_length=None):
        features = self.features(pixels)
        return self.decoder._generate(features, *self.search_options(beam_size, alpha, max_length),
                                      self.graph_start_tokens(features))

    def graph_start_tokens(self, features, style=None):
        """int32 (B,) first input tokens of `features` in a TensorFlow graph (`call`, the exported
        SavedModel); None for a captioner of one corpus (<start>). ``style``: None for the model's
        default style, or a scalar string tensor (a per-request input): "" for the default, a style
        name, or "auto" (each photo's nearest corpus, the same choice as `start_tokens`) where a
        chooser was fitted; any other string fails the graph with the styles there are."""
        if style is None or not self.styles:
            return self._graph_start(features, self.style)
        names = ["", *self.style_options]
        options = tf.stack([self._graph_start(features, name or self.style) for name in names])  # (N, B)
        matches = tf.equal(tf.constant(names), style)  # (N,)
        check = tf.debugging.Assert(tf.reduce_any(matches), [
            tf.constant(f"style: this captioner writes {', '.join(names[1:])} ('' = its default); got"), style])
        with tf.control_dependencies([check]):
            return tf.gather(options, tf.argmax(tf.cast(matches, tf.int32)))  # (B,)

    def _graph_start(self, features, style):
        if style == "auto":
            pooled = tf.reduce_mean(features, axis=1) if features.shape.rank == 3 else features
            chooser = self.style_chooser()
            return chooser.choose_in_graph(pooled, [self.decoder.styles[s] for s in chooser.styles])
        start = self.decoder.style_tokens(style, 1)
        return None if start is None else tf.fill(tf.shape(features)[:1], int(start[0]))  # (B,)

    def generate(self, pixels, beam_size=None, alpha=None, max_length=None, style=None):
        """Compiled `call` for uint8/float pixel batches; returns numpy arrays."""
        return self.generate_from_features(self.encode(pixels), beam_size, alpha, max_length, style=style)

    def encode(self, pixels):
        """Compiled backbone: pixel batch -> the decoder's annotations (a tensor).

        `generate` is `encode` then `generate_from_features`; a batch job calls the two
        itself, so that the backbone runs on one batch while the beam search decodes the
        previous one."""
        return self._encode_fn(tf.convert_to_tensor(pixels))

    def generate_from_features(self, features, beam_size=None, alpha=None, max_length=None, objects=False,
                               pixels=None, style=None):
        """Compiled beam search over `encode`'s output (None: the model's defaults); numpy arrays.

        objects=True: the backbone's ImageNet head tags each image (`object_tagger`), confident
        tags of novel classes steer the search (a bonus, or constraints: the tagger's `search`),
        and the output gains "objects": [[Tag]] per image. pixels: the batch `features` was encoded
        from, which learned words read at their larger input sizes (needed only then). style: one of
        `styles` (None: the model's default style), for a captioner trained on several corpora."""
        tags, steering = None, {}
        if objects:
            features_np = np.asarray(features)
            grid = features_np.ndim == 3
            tags, steering = self.tag_objects(features_np.mean(axis=1) if grid else features_np,
                                              features_np if grid else None, pixels=pixels)
        options = self.search_options(beam_size, alpha, max_length)
        start, styles = self.start_tokens(style, features)
        inputs = (features,) if start is None else (features, start)
        out = self.steered_search(lambda f, *s, **kw: self.decoder.generate(f, *options, **kw, start_tokens=(
            s[0] if s else None)), inputs, steering)
        if tags is not None:
            self.finish_tagged(out, tags, steering, options[1])
        if styles is not None:
            out["styles"] = styles
        return out

    def caption(self, images, beam_size=None, alpha=None, max_length=None, batch_size=16, objects=False, style=None):
        """Caption images: paths, bytes, PIL images or arrays (any size; resized without crop).

        objects=True: name what the backbone's ImageNet head sees (`captioner.tagging`; what
        `captioner caption` does by default);
        False (default here, as the exported SavedModel decodes): the captioner alone. style: one of `styles`
        (a captioner trained on several corpora; None: its default). One `Caption` per image, in order.
        """
        images = list(images)
        results = []
        for start in range(0, len(images), batch_size):
            batch = np.stack([self.load_pixels(img) for img in images[start:start + batch_size]])
            out = self.generate_from_features(self.encode(batch), beam_size, alpha, max_length,
                                              objects=objects and self.can_tag_objects, pixels=batch, style=style)
            results.extend(self.decode_outputs(out))
        return results

    def decode_outputs(self, out):
        """Turn the output dict of `generate` into `Caption` objects."""
        captions = []
        gh, gw = self.grid_shape if self.feature == "grid" else (1, 1)
        from captioner.text.tokenizer import detokenize

        for b in range(out["tokens"].shape[0]):
            hyps = self.beams(out, b)
            words, text = hyps[0].words, hyps[0].text
            steps = int(out["lengths"][b, 0])
            attention = out["attention"][b, 0, :steps].reshape(steps, gh, gw)
            # the tag word -> the class's own name where it alone is confident (the text only:
            # `tokens` stay the decoded words, one attention map each)
            named, objects = self.name_tagged(words, out["objects"][b] if "objects" in out else [])
            if named != words:
                text = detokenize(named)
            captions.append(Caption(
                text=text, tokens=words, score=hyps[0].score, log_prob=hyps[0].log_prob,
                attention=attention, hypotheses=[(h.text, h.score) for h in hyps], objects=objects,
                style=out["styles"][b] if "styles" in out else None,
            ))
        return captions

    def get_config(self):
        return {**super().get_config(), "decoder": keras.saving.serialize_keras_object(self.decoder),
                **self.search_config(), **({"tagger": self.tagger_config} if self.tagger_config else {}),
                **({"style": self.style} if self.style is not None else {}),
                **({"style_chooser": self.style_chooser_config} if self.style_chooser_config else {})}

