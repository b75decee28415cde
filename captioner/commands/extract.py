"""`captioner extract IMAGES... --backbone NAME --output features.h5`"""

import sys

from captioner.backbones import BACKBONES, DEFAULT_BACKBONE


def register(subparsers):
    p = subparsers.add_parser(
        "extract", help="extract backbone grid + pooled features of images into an HDF5 store",
        description="Extract features of images (files, folders, globs) into an HDF5 feature store. "
                    "Resumable: a rerun skips images already stored. Unreadable files are reported and skipped.",
    )
    p.add_argument("images", nargs="+", help="image files, folders (recursed) or globs")
    p.add_argument("--backbone", default=DEFAULT_BACKBONE, choices=BACKBONES)
    p.add_argument("--backbone-weights", default="imagenet",
                   help="'imagenet' (default), a local weights file, or 'none' for random weights")
    p.add_argument("--output", "-o", required=True, help="HDF5 file to create or extend")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--workers", type=int, default=None, help="image decoding threads")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from captioner.features.extract import extract_features, image_ids_for
    from captioner.features.images import list_images

    paths = list_images(args.images)
    if not paths:
        print(f"captioner extract: no images found in {' '.join(args.images)}", file=sys.stderr)
        return 2
    weights = None if args.backbone_weights.lower() == "none" else args.backbone_weights
    report = extract_features(
        paths, args.output, backbone=args.backbone, weights=weights,
        ids=image_ids_for(paths, roots=args.images), batch_size=args.batch_size,
        workers=args.workers, progress=not args.no_progress,
    )
    print(f"stored {report.stored} images ({report.images_per_second:.1f} img/s), "
          f"{report.skipped} already present, {len(report.failed)} failed -> {args.output}")
    for _path, error in report.failed:
        print(f"  failed: {error}", file=sys.stderr)
    return 1 if report.failed else 0
