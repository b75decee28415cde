"""Fitting a captioner's object tagger to the photos it was trained on, and teaching it words from
labelled photos: the library of `captioner model fit-tagger` and `captioner model learn-words`.

fit-tagger runs the captioner's backbone over its training photos (or reads a `captioner extract`
store of them), finds the ImageNet classes the tagger is confident of on at least `min_images` of
them (:func:`captioner.tagging.object_tagger.fit_known`: the captioner learned how its captions
describe those, so their tags neither push words into a caption nor name it; with `captions`, a
class is known only from photos whose captions name it), fits what a familiar photo is
(:func:`captioner.tagging.object_tagger.fit_familiar`: k-means centroids of the photos' features,
or their top principal directions, and the `familiar_quantile` of held-out photos' closeness to
them; no tag of a photo that close steers; 0 centroids: no such test). ``copy_tagger`` gives a video
captioner or a VQA model the settings fitted for an image captioner of the same photos.

learn-words gives each word of a folder of folders (one per word, of photos that show it) a logistic
regression on the backbone's features (:mod:`captioner.tagging.learned_words`: DCC's lexical
classifiers, Hendricks et al. 2016), its F1-best cut-off from 5-fold cross-validation; a photo it
says yes to gets the word as a tag that the beam search puts into the caption.

Each rewrites the model file atomically (float16 weights, backbone by reference); photos that
cannot be read are skipped and counted. The command records itself in the card.
"""

from __future__ import annotations

import os

import numpy as np

from captioner.errors import InputError


def card_settings(model):
    """The tagger's settings for the card: the known classes, the centroids and the learned words'
    weights are counted, not listed."""
    settings = model.object_tagger().config()
    if settings.get("familiar"):
        settings["familiar"] = (f"{settings['fitted_familiar_centroids']} centroids"
                                if "fitted_familiar_centroids" in settings
                                else f"a mean and {settings['fitted_familiar_dims']} principal directions") + \
            " (float16, in the model's config)"
    if settings.get("learned_weights"):
        settings["learned_weights"] = (f"{len(settings['learned_words'])} logistic regressions "
                                       "(float32, in the model's config)")
    return settings


def _load_tagging_model(path, kinds=None):
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.models.vqa_model import VQAModel

    if kinds == "image":
        model = load_model_file(path, ImageCaptioner, "an image captioner")
    else:
        model = load_model_file(path, (ImageCaptioner, VideoCaptioner, VQAModel), "a captioner or a VQA model")
    if not model.can_tag_objects:
        raise InputError(f"{path}: its backbone {model.backbone.name!r} has no ImageNet head to tag with")
    return model


def _listed_photos(list_file, image_dir):
    from captioner.errors import text_file_errors

    with text_file_errors(list_file):
        with open(list_file, encoding="utf-8") as f:
            paths = [os.path.join(image_dir, line.strip()) for line in f if line.strip()]
    if not paths:
        raise InputError(f"{list_file}: names no photo")
    return paths


def _save(model, path):
    from captioner.models.storage import save_model, storage_record

    save_model(model, path)
    return storage_record(model, path)


def copy_tagger(model_path, from_model):
    """Give `model_path` the tagger settings of the captioner `from_model`; -> the card record."""
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.video_captioner import VideoCaptioner

    model = _load_tagging_model(model_path)
    source = load_model_file(from_model, (ImageCaptioner, VideoCaptioner), "a captioner")
    if source.backbone.name != model.backbone.name:
        raise InputError(f"{from_model} tags with {source.backbone.name}, {model_path} has {model.backbone.name}")
    model.set_tagger(**source.tagger_config)
    storage = _save(model, model_path)
    return {"object_tagger": {**card_settings(model), "known": len(source.tagger_config.get("known", [])),
                              "copied_from": os.path.basename(from_model)}, "storage": storage}


def fit_tagger(model_path, images, image_dir, features=None, min_images=3, bonus=8.0, threshold=0.5, search="bonus",
               deadline=0, known_probability=None, familiar_centroids=64, familiar_test="centroids", familiar_dims=64,
               familiar_quantile=0.05, captions=None, describe="sentence", batch_size=32):
    """Fit the tagger of `model_path` to the photos `images` (a list file) names in `image_dir`, or to
    `images` given as a list of photo paths (several corpora: `corpus_photos`); `captions` a
    Flickr8k.token.txt file or {file name: [caption, ...]}; -> (card record, photos used, photos skipped)."""
    from captioner.tagging.object_tagger import fit_familiar, fit_known

    if min_images < 1 or not 0 < threshold <= 1 or not 0 <= bonus <= 100 or batch_size < 1 or deadline < 0:
        raise InputError("--min-images >= 1, 0 < --threshold <= 1, 0 <= --bonus <= 100, --batch-size >= 1 and "
                         "--deadline >= 0")
    if familiar_centroids < 0 or familiar_dims < 1 or not 0 < familiar_quantile < 1:
        raise InputError("--familiar-centroids >= 0, --familiar-dims >= 1 and 0 < --familiar-quantile < 1")
    model = _load_tagging_model(model_path)
    paths = list(images) if isinstance(images, (list, tuple)) else _listed_photos(images, image_dir)
    if features:
        from captioner.features.store import FeatureStore

        with FeatureStore(features, backbone=model.backbone.name) as store:
            pooled = store.load([os.path.basename(p) for p in paths], grid=False)["pooled"].astype("float32")
            kept = paths
    else:
        out, kept, _ = model.encode_files(paths, batch_size, reduce=lambda f: f.mean(axis=1) if f.ndim == 3 else f)
        pooled = np.concatenate(out) if out else np.zeros((0, 1), np.float32)
    if not len(kept):
        raise InputError(f"{images}: none of its photos could be read")
    said = None
    if captions:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.text import tokenize

        by_name = captions if isinstance(captions, dict) else read_flickr8k_captions(captions)
        missing = [os.path.basename(p) for p in kept if os.path.basename(p) not in by_name]
        if missing:
            raise InputError(f"{captions}: no captions for {len(missing)} of the photos, e.g. {missing[0]}")
        said = [[tokenize(c) for c in by_name[os.path.basename(p)]] for p in kept]
    model.set_tagger(bonus=bonus, threshold=threshold, search=search, deadline=deadline, describe=describe)
    settings = fit_known(model.object_tagger(), pooled, min_images, known_probability, said)
    # a test fitted before is forgotten (and fitted again unless --familiar-centroids 0)
    model.tagger_config = {k: v for k, v in model.tagger_config.items() if "familiar" not in k}
    if familiar_centroids:
        settings.update(fit_familiar(pooled, familiar_centroids, familiar_quantile, test=familiar_test,
                                     dims=familiar_dims))
    model.set_tagger(**settings)
    storage = _save(model, model_path)
    skipped = len(paths) - len(kept)
    record = {"object_tagger": {**card_settings(model), "known": len(settings["known"]), "skipped_photos": skipped},
              "storage": storage}
    return record, len(kept), skipped


def learn_words(model_path, words_dir, negatives, image_dir, captions=None, search=None, strength=0.002,
                batch_size=32, scales=()):
    """Teach the image captioner `model_path` the words of `words_dir`'s folders; -> (card record,
    {word: {photos, cv_f1, cutoff}}, photos used, [(path, error)] skipped). scales: larger input sides
    (px) whose backbone regions the words also read (`learned_words.word_features`)."""
    from captioner.features.images import list_images
    from captioner.tagging.learned_words import check_scales, feature_count, fit_words, word_features
    from captioner.tagging.object_tagger import imagenet_head

    if strength <= 0 or batch_size < 1:
        raise InputError("--strength > 0 and --batch-size >= 1")
    try:
        scales = check_scales(scales)
    except ValueError as exc:
        raise InputError(f"--scales: {exc}") from None
    if not os.path.isdir(words_dir):
        raise InputError(f"--words {words_dir}: not a folder")
    words = sorted(d for d in os.listdir(words_dir) if os.path.isdir(os.path.join(words_dir, d)))
    if not words:
        raise InputError(f"{words_dir}: no word folders in it (one folder per word, of photos of it)")
    model = _load_tagging_model(model_path, "image")
    missing = [w for w in words if w not in model.vocabulary]
    if missing:
        raise InputError(f"{words_dir}: the words {missing} are not in {model_path}'s vocabulary (it has no "
                         "embedding for them; train it with them in its vocabulary, e.g. --hold-out-words)")
    negative_paths = _listed_photos(negatives, image_dir)
    positives = {w: list_images([os.path.join(words_dir, w)]) for w in words}
    empty = [w for w, paths in positives.items() if not paths]
    if empty:
        raise InputError(f"{words_dir}: no photos in the folders {empty}")
    paths = [p for w in words for p in positives[w]] + negative_paths
    kernel, bias = imagenet_head(model.backbone.name)

    def encode(pixels):
        scaled = [model.scaled_regions(pixels, size) for size in scales]
        return word_features(kernel, bias, np.asarray(model.encode(pixels)), scaled=scaled)

    out, kept, skipped = model.encode_files(paths, batch_size, encode=encode)
    features = np.concatenate(out) if out else np.zeros((0, feature_count(kernel, scales)), np.float32)
    named = {}
    if captions:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.text import tokenize

        by_name = read_flickr8k_captions(captions)
        for path in negative_paths:
            said = {t for c in by_name.get(os.path.basename(path), []) for t in tokenize(c)}
            named[path] = {w for w in words if w in said or w + "s" in said}
    folder_of = {p: w for w in words for p in positives[w]}
    labels = np.array([[folder_of.get(p) == w or w in named.get(p, ()) for w in words] for p in kept])
    try:
        settings = fit_words(features, labels, words, model.vocabulary, strength=strength, scales=scales)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    model.set_tagger(**settings, **({"search": search} if search else {}))
    storage = _save(model, model_path)
    report = settings["fitted_learned"]
    record = {"learned_words": {"words": report["words"], "photos": report["photos"], "strength": strength,
                                **({"scales": scales} if scales else {}), "skipped_photos": len(skipped)},
              "storage": storage}
    return record, report["words"], len(kept), skipped
