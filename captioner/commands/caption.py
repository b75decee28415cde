"""`captioner caption PATHS... [--model M] [--output OUT.jsonl] [--attention-dir DIR] [--shard I/N]`

Batch captioning of image files, folders (recursed) and globs with a saved ImageCaptioner;
see `captioner.inference.batch` for the engine (resume, sharding, broken files).
`scripts/caption_images.py` runs the same thing as a script.
"""

import argparse
import os
import sys
from pathlib import Path

from captioner.bundled import default_path

DEFAULT_MODEL = Path(default_path("caption"))  # the one registry: captioner.bundled
TRAIN_COMMAND = ("captioner train caption --data-dir ../shared/datasets/flickr8k --format flickr8k "
                 "--features work/flickr8k_lite0.h5 --output-dir runs/flickr8k_attention "
                 "--model-out assets/models/flickr8k_attention.keras")

DESCRIPTION = (
    "Caption images (files, folders recursed, globs) with a saved image captioner. One row per image: "
    '{"image", "caption", "score"} or {"image", "error"} for a file that cannot be read (reported and '
    "skipped; the exit status is then 1). With --output, rows are appended per batch and a rerun skips "
    "the images already in the file (resume after a kill, no duplicates). Without --output, rows go to "
    "stdout."
)


def add_arguments(p):
    p.add_argument("paths", nargs="+", metavar="PATHS", help="image files, folders (recursed) or globs")
    p.add_argument("--model", "-m", default=None,
                   help="saved ImageCaptioner .keras file (default: assets/models/flickr8k_attention.keras "
                        "in the repository)")
    p.add_argument("--beam-size", "-k", type=int, default=None, help="beam width (default: the model's)")
    p.add_argument("--alpha", type=float, default=None,
                   help="length penalty: score / length**alpha (default: the model's)")
    p.add_argument("--max-length", type=int, default=None, help="max generated words (default: the model's)")
    p.add_argument("--batch-size", "-b", type=int, default=32, help="images per model call (default 32)")
    p.add_argument("--output", "-o", default=None,
                   help="file to write (appended to and resumed when it exists); default: stdout")
    p.add_argument("--format", choices=("jsonl", "csv"), default=None,
                   help="output format (default: csv for a .csv output, else jsonl)")
    p.add_argument("--attention-dir", default=None,
                   help="write one PNG per image: the caption's words, each over its attention map")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="caption only shard I of N (0 <= I < N; a stable hash of each path decides), "
                        "so N hosts given the same PATHS split the work, each with its own --output")
    p.add_argument("--retry-errors", action="store_true",
                   help="caption again the images an earlier run of this --output recorded as failed")
    p.add_argument("--workers", type=int, default=None, help="image decoding threads")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                   help="name what the backbone's ImageNet head sees: confident object tags (WordNet words) "
                        "constrain the caption and JSON rows list them as \"objects\" (default: on; "
                        "--no-objects: the captioner alone)")
    p.add_argument("--tag-search", choices=("bonus", "constrained"), default=None,
                   help="how confident tags of novel objects steer the beam search: a bonus on their word, or "
                        "constrained beam search (the caption must hold the word; Anderson et al. 2017) "
                        "(default: the model's; docs/open_world.md compares them)")
    p.add_argument("--style", default=None, help="a captioner trained on several corpora: whose way of writing "
                   "(e.g. flickr8k: a sentence about people and what they do; web: alt-text naming the scene); "
                   "default: the model's (`captioner model set-defaults --style` changes it)")
    p.add_argument("--tag-deadline", type=int, default=None, metavar="N",
                   help="with --tag-search constrained: one tag's word within the caption's first N words "
                        "(0: anywhere; default: the model's)")


def register(subparsers):
    p = subparsers.add_parser("caption", help="caption image files in batches (jsonl/csv, attention PNGs)",
                              description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(func=run)


def resolve_model(path):
    """The model path to load; InputError with the training command when the default is missing."""
    from captioner.errors import InputError

    if path is None:
        if not DEFAULT_MODEL.is_file():
            raise InputError(f"the default model {DEFAULT_MODEL} does not exist yet; train it with\n  "
                             f"{TRAIN_COMMAND}\nor pass --model PATH")
        return str(DEFAULT_MODEL)
    if not os.path.isfile(path):
        raise InputError(f"model file {path} not found")
    return path


def run(args):
    from captioner.errors import InputError, check_search_options
    from captioner.features.images import list_images
    from captioner.inference.batch import caption_images, load_captioner, parse_shard

    shard = parse_shard(args.shard) if args.shard else None
    for name in ("beam_size", "max_length", "batch_size", "workers"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    check_search_options(args)  # upper bounds and --alpha (the lower bounds above)
    model_path = resolve_model(args.model)
    paths = list_images(args.paths)
    if not paths:
        raise InputError(f"no images found in {' '.join(args.paths)}")
    if args.tag_deadline is not None and args.tag_deadline < 0:
        raise InputError(f"--tag-deadline must be >= 0, got {args.tag_deadline}")
    model = load_captioner(model_path)
    steering = {k: v for k, v in (("search", args.tag_search), ("deadline", args.tag_deadline)) if v is not None}
    if steering and args.objects and model.can_tag_objects:
        model.set_tagger(**steering)  # this run only: the file is not rewritten
    if args.style is not None:
        model.set_style(args.style)  # this run only
    report = caption_images(
        paths, model, beam_size=args.beam_size, alpha=args.alpha, max_length=args.max_length,
        batch_size=args.batch_size, output=args.output, fmt=args.format, attention_dir=args.attention_dir,
        shard=shard, workers=args.workers, progress=not args.no_progress, retry_errors=args.retry_errors,
        objects=args.objects,
    )
    where = args.output or "stdout"
    shard_note = f" (shard {shard[0]}/{shard[1]}: {report.selected} of {len(paths)} images)" if shard else ""
    print(f"captioned {report.captioned} images ({report.images_per_second:.1f} img/s), "
          f"{report.skipped} already done, {len(report.failed)} failed -> {where}{shard_note}", file=sys.stderr)
    for path, error in report.failed:
        print(f"  failed: {path}: {error}", file=sys.stderr)
    if report.previous_errors:
        print(f"  {report.previous_errors} images failed in an earlier run (see the error rows in {where}; "
              f"--retry-errors tries them again)", file=sys.stderr)
    return report.exit_status


def main(argv=None):
    """Standalone entry point (scripts/caption_images.py): same options, same engine."""
    import logging

    from captioner.errors import CaptionerError

    parser = argparse.ArgumentParser(prog="caption_images.py", description=DESCRIPTION)
    add_arguments(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except CaptionerError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
