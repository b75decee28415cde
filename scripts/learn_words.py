"""Teach an image captioner words its training captions never gave it, from labelled photos.

    python scripts/learn_words.py --model my_captioner.keras --words photos_by_word/ \\
        --negatives ../shared/datasets/flickr8k/Flickr_8k.trainImages.txt \\
        --image-dir ../shared/datasets/flickr8k/Images \\
        --captions ../shared/datasets/flickr8k/Flickr8k.token.txt

``--words`` holds one folder per word, named by the word ("guitar/", "kayak/"), of photos that show
it; ``--negatives`` names photos that may not (the captioner's own training photos: with
``--captions``, one whose captions name a word counts as a photo of it). Each word gets a logistic
regression on the backbone's features of those photos (`captioner.tagging.learned_words`: DCC's
lexical classifiers, Hendricks et al. 2016), its F1-best cut-off from 5-fold cross-validation; a
photo it says yes to gets the word as a tag, which the beam search puts into the caption (the
tagger's search: constraints or a bonus). A word must be in the captioner's vocabulary (it has an
embedding for it, even if its training captions never said it: ``captioner train caption
--hold-out-words``). The model file is rewritten atomically with the words in its tagger settings
(``--search constrained`` sets the search too); the card gets this command and each word's
cross-validated F1. Photos that cannot be read are skipped, named and counted.
"""

from __future__ import annotations

import argparse
import os
import sys


def region_batches(model, paths, batch_size, kernel, bias):
    """`region_features` of the readable photos (N, F), the paths of those N, and [(path, error)] skipped."""
    import numpy as np

    from captioner.tagging.learned_words import region_features

    out, kept, skipped = model.encode_files(paths, batch_size, reduce=lambda f: region_features(kernel, bias, f))
    width = kernel.shape[0] + kernel.shape[1]
    return (np.concatenate(out) if out else np.zeros((0, width), np.float32)), kept, skipped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="an image captioner .keras file (rewritten in place)")
    parser.add_argument("--words", required=True, help="a folder of folders, one per word, of photos that show it")
    parser.add_argument("--negatives", required=True, help="a text file naming photos, one per line (the training photos)")
    parser.add_argument("--image-dir", required=True, help="the folder the --negatives names are in")
    parser.add_argument("--captions", help="the --negatives photos' captions (Flickr8k.token.txt format): a photo "
                        "whose captions name a word is a photo of it")
    parser.add_argument("--search", choices=("bonus", "constrained"), help="also set the tagger's search")
    parser.add_argument("--strength", type=float, default=0.002, help="inverse L2 strength of the regressions")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    if args.strength <= 0 or args.batch_size < 1:
        parser.error("--strength > 0 and --batch-size >= 1")
    if not os.path.isdir(args.words):
        parser.error(f"--words {args.words}: not a folder")
    words = sorted(d for d in os.listdir(args.words) if os.path.isdir(os.path.join(args.words, d)))
    if not words:
        sys.exit(f"error: {args.words}: no word folders in it (one folder per word, of photos of it)")

    import numpy as np

    import captioner  # noqa: F401  registers the classes
    from captioner.features.images import list_images
    from captioner.model_card import ModelCard
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.storage import save_model, storage_record
    from captioner.tagging.learned_words import fit_words
    from captioner.tagging.object_tagger import imagenet_head

    model = load_model_file(args.model, ImageCaptioner, "an image captioner")
    if not model.can_tag_objects:
        sys.exit(f"error: {args.model}: its backbone {model.backbone.name!r} has no ImageNet head to tag with")
    missing = [w for w in words if w not in model.vocabulary]
    if missing:
        sys.exit(f"error: {args.words}: the words {missing} are not in {args.model}'s vocabulary (it has no "
                 "embedding for them; train it with them in its vocabulary, e.g. --hold-out-words)")
    with open(args.negatives, encoding="utf-8") as f:
        negatives = [os.path.join(args.image_dir, line.strip()) for line in f if line.strip()]
    positives = {w: list_images([os.path.join(args.words, w)]) for w in words}
    empty = [w for w, paths in positives.items() if not paths]
    if empty:
        sys.exit(f"error: {args.words}: no photos in the folders {empty}")
    paths = [p for w in words for p in positives[w]] + negatives
    kernel, bias = imagenet_head(model.backbone.name)
    features, kept, skipped = region_batches(model, paths, args.batch_size, kernel, bias)
    named = {}
    if args.captions:
        from captioner.data.flickr8k import read_flickr8k_captions
        from captioner.text import tokenize

        by_name = read_flickr8k_captions(args.captions)
        for path in negatives:
            said = {t for c in by_name.get(os.path.basename(path), []) for t in tokenize(c)}
            named[path] = {w for w in words if w in said or w + "s" in said}
    folder_of = {p: w for w in words for p in positives[w]}
    labels = np.array([[folder_of.get(p) == w or w in named.get(p, ()) for w in words] for p in kept])
    try:
        settings = fit_words(features, labels, words, model.vocabulary, strength=args.strength)
    except ValueError as exc:
        sys.exit(f"error: {exc}")
    model.set_tagger(**settings, **({"search": args.search} if args.search else {}))
    save_model(model, args.model)
    report = settings["fitted_learned"]
    record = {"words": report["words"], "photos": report["photos"], "strength": args.strength,
              "skipped_photos": len(skipped)}
    ModelCard.record_step(args.model, "scripts/learn_words.py", argv if argv is not None else sys.argv[1:],
                          extra={"learned_words": record, "storage": storage_record(model, args.model)})
    for word, r in report["words"].items():
        print(f"{word}: {r['photos']} photos of it, 5-fold F1 {r['cv_f1']}, cut-off {r['cutoff']}")
    print(f"{args.model}: learned {len(words)} word(s) from {len(kept)} photos ({len(skipped)} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
