"""Fit a captioner's object tagger to its own training photos and save it with the model.

    python scripts/fit_object_tagger.py --model assets/models/flickr8k_attention.keras \\
        --images ../shared/datasets/flickr8k/Flickr_8k.trainImages.txt \\
        --image-dir ../shared/datasets/flickr8k/Images --min-images 3 --bonus 8 --threshold 0.5

    python scripts/fit_object_tagger.py --model assets/models/flickr8k_video_caption.keras \\
        --from-model assets/models/flickr8k_attention.keras

The second form gives a video captioner (or a VQA model) the tagger settings fitted for an image
captioner trained on the same photos (the video captioner's training clips are pans over them, the
VQA model's questions were made from their captions): its known classes, familiar-photo test,
search, bonus and threshold, nothing else.

Runs the captioner's backbone over the training photos (the list file names one photo per
line, as Flickr8k's split files do), finds the ImageNet classes the tagger is confident of on at
least --min-images of them (`captioner.tagging.fit_known`: the captioner learned how its
captions describe those, so their tags neither push words into a caption nor name it), fits
what a familiar photo is (`captioner.tagging.object_tagger.fit_familiar`: --familiar-centroids
k-means centroids of the photos' features, or with --familiar-test subspace their top
--familiar-dims principal directions, and the --familiar-quantile of held-out photos' closeness
to them; no tag of a photo that close steers; 0 centroids: no such test), and
rewrites the model file atomically (float16 weights, backbone by reference) with these tagger
settings in its config. The card gets this command and the settings in ``extra.object_tagger``.
Photos that cannot be read are skipped and counted.
"""

from __future__ import annotations

import argparse
import os
import sys



def pooled_features(model, paths, batch_size):
    """The pooled backbone features (N, C) of the readable photos, and the paths of those N."""
    import numpy as np

    out, kept, _ = model.encode_files(paths, batch_size,
                                      reduce=lambda f: f.mean(axis=1) if f.ndim == 3 else f)
    return np.concatenate(out), kept


def card_settings(model):
    """The tagger's settings for the card: the known classes, the centroids and the learned words' weights
    are counted, not listed."""
    settings = model.object_tagger().config()
    if settings.get("familiar"):
        settings["familiar"] = (f"{settings['fitted_familiar_centroids']} centroids" if "fitted_familiar_centroids" in settings
                                else f"a mean and {settings['fitted_familiar_dims']} principal directions") + \
            " (float16, in the model's config)"
    if settings.get("learned_weights"):
        settings["learned_weights"] = f"{len(settings['learned_words'])} logistic regressions (float32, in the model's config)"
    return settings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a captioner .keras file, image or video (rewritten in place)")
    parser.add_argument("--images", help="a text file naming the training photos, one per line")
    parser.add_argument("--image-dir", help="the folder those names are in")
    parser.add_argument("--features", help="a `captioner extract` store holding those photos (instead of running the "
                        "backbone over them; it must be the captioner's backbone)")
    parser.add_argument("--from-model", help="instead of fitting: copy the tagger settings of this captioner")
    parser.add_argument("--min-images", type=int, default=3)
    parser.add_argument("--bonus", type=float, default=8.0, help="nats on a novel object's word (times its probability)")
    parser.add_argument("--threshold", type=float, default=0.5, help="a tag at least this probable is confident")
    parser.add_argument("--search", choices=("bonus", "constrained"), default="bonus",
                        help="how a steering tag enters the beam search: a bonus on its word, or a constraint")
    parser.add_argument("--deadline", type=int, default=0,
                        help="constrained: one tag's word within the caption's first N words (0: anywhere)")
    parser.add_argument("--known-probability", type=float, default=None,
                        help="a class is seen on a training photo when its tag is at least this probable (default: --threshold)")
    parser.add_argument("--familiar-centroids", type=int, default=64,
                        help="k-means centroids of the training photos for the familiar-photo test (0: none)")
    parser.add_argument("--familiar-test", choices=("centroids", "subspace"), default="centroids",
                        help="familiar = close to one of --familiar-centroids k-means centroids, or little outside the "
                        "span of the training photos' top --familiar-dims principal directions")
    parser.add_argument("--familiar-dims", type=int, default=64,
                        help="subspace: principal directions of the training photos' features")
    parser.add_argument("--familiar-quantile", type=float, default=0.05,
                        help="this share of held-out training photos falls below the familiar threshold")
    parser.add_argument("--captions", help="the photos' captions (Flickr8k.token.txt format): a class is known only "
                        "from photos whose captions name it (the captioner learned its word)")
    parser.add_argument("--describe", choices=("sentence", "object"), default="sentence",
                        help="object: an unfamiliar photo's caption is its steering object alone ('a photo of ...')")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    if not args.from_model and not (args.images and args.image_dir):
        parser.error("give --images and --image-dir (fit), or --from-model (copy)")
    if args.min_images < 1 or not 0 < args.threshold <= 1 or not 0 <= args.bonus <= 100 or args.batch_size < 1:
        parser.error("--min-images >= 1, 0 < --threshold <= 1, 0 <= --bonus <= 100, --batch-size >= 1")
    if args.deadline < 0:
        parser.error("--deadline must be >= 0")
    if args.familiar_centroids < 0 or args.familiar_dims < 1 or not 0 < args.familiar_quantile < 1:
        parser.error("--familiar-centroids >= 0, --familiar-dims >= 1 and 0 < --familiar-quantile < 1")

    import captioner  # noqa: F401  registers the classes
    from captioner.model_card import ModelCard
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.storage import save_model, storage_record
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.models.vqa_model import VQAModel
    from captioner.tagging.object_tagger import fit_familiar, fit_known

    model = load_model_file(args.model, (ImageCaptioner, VideoCaptioner, VQAModel), "a captioner or a VQA model")
    if not model.can_tag_objects:
        sys.exit(f"error: {args.model}: its backbone {model.backbone.name!r} has no ImageNet head to tag with")
    if args.from_model:
        source = load_model_file(args.from_model, (ImageCaptioner, VideoCaptioner), "a captioner")
        if source.backbone.name != model.backbone.name:
            sys.exit(f"error: {args.from_model} tags with {source.backbone.name}, {args.model} has {model.backbone.name}")
        model.set_tagger(**source.tagger_config)
        save_model(model, args.model)
        record = {**card_settings(model), "known": len(source.tagger_config.get("known", [])),
                  "copied_from": os.path.basename(args.from_model)}
        ModelCard.record_step(args.model, "scripts/fit_object_tagger.py", argv if argv is not None else sys.argv[1:],
                              extra={"object_tagger": record, "storage": storage_record(model, args.model)})
        print(f"{args.model}: tagger settings of {args.from_model} ({record['known']} known classes)")
        return 0
    with open(args.images, encoding="utf-8") as f:
        paths = [os.path.join(args.image_dir, line.strip()) for line in f if line.strip()]
    if not paths:
        sys.exit(f"error: {args.images}: names no photo")
    if args.features:
        from captioner.features.store import FeatureStore

        with FeatureStore(args.features, backbone=model.backbone.name) as store:
            names = [os.path.basename(p) for p in paths]
            pooled, kept = store.load(names, grid=False)["pooled"].astype("float32"), paths
    else:
        pooled, kept = pooled_features(model, paths, args.batch_size)
    skipped = len(paths) - len(kept)
    captions = None
    if args.captions:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.text import tokenize

        by_name = read_flickr8k_captions(args.captions)
        missing = [os.path.basename(p) for p in kept if os.path.basename(p) not in by_name]
        if missing:
            sys.exit(f"error: {args.captions}: no captions for {len(missing)} of the photos, e.g. {missing[0]}")
        captions = [[tokenize(c) for c in by_name[os.path.basename(p)]] for p in kept]
    model.set_tagger(bonus=args.bonus, threshold=args.threshold, search=args.search, deadline=args.deadline,
                     describe=args.describe)
    settings = fit_known(model.object_tagger(), pooled, args.min_images, args.known_probability, captions)
    if args.familiar_centroids:
        model.tagger_config = {k: v for k, v in model.tagger_config.items() if "familiar" not in k}
        settings.update(fit_familiar(pooled, args.familiar_centroids, args.familiar_quantile, test=args.familiar_test,
                                     dims=args.familiar_dims))
    else:  # no familiar-photo test: forget one fitted before
        model.tagger_config = {k: v for k, v in model.tagger_config.items() if "familiar" not in k}
    model.set_tagger(**settings)
    save_model(model, args.model)
    record = {**card_settings(model), "known": len(settings["known"]), "skipped_photos": skipped}
    ModelCard.record_step(args.model, "scripts/fit_object_tagger.py", argv if argv is not None else sys.argv[1:],
                          extra={"object_tagger": record, "storage": storage_record(model, args.model)})
    print(f"{args.model}: {len(settings['known'])} known classes from {len(pooled)} photos "
          f"({skipped} skipped); {args.search} search, bonus {args.bonus}, threshold {args.threshold}, deadline "
          f"{args.deadline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
