#!/usr/bin/env python
"""Make the video datasets of captioner's video mode, reproducibly from a seed, and
(optionally) extract their per-frame features.

    python scripts/make_video_datasets.py --out /work/data/video --flickr8k ../shared/datasets/flickr8k \
        --seed 0 --extract

Writes
  OUT/synthetic/     generated shape clips (UCF101 layout + MSVD-style captions csv), see
                     captioner.data.synthetic_video
  OUT/photo_pan/     pans and zooms over Flickr8k photos (MSVD-style), see
                     captioner.data.photo_pan_video, with activities.csv: each clip's
                     activity mined from its captions (captioner.data.caption_activities)
and with --extract the feature stores OUT/synthetic_lite0_f8.h5, OUT/photo_pan_lite0_f8.h5
(held-out clips first, then train clips in the dataset's seeded order, so a run stopped
early still leaves a usable random subset; rerunning resumes).
"""

import argparse
import logging
import os
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="/work/data/video")
    p.add_argument("--flickr8k", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets",
                                                      "flickr8k"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--synthetic-groups", type=int, default=25)
    p.add_argument("--synthetic-clips-per-group", type=int, default=6)
    p.add_argument("--synthetic-size", type=int, default=64)
    p.add_argument("--photo-train", type=int, default=6000, help="photo-pan train clips (one per train photo)")
    p.add_argument("--photo-dev", type=int, default=250)
    p.add_argument("--photo-test", type=int, default=500)
    p.add_argument("--photo-size", type=int, default=256, help="clip side in pixels (the bundled real-scene "
                                                            "models: 256; before them 112)")
    p.add_argument("--skip-synthetic", action="store_true")
    p.add_argument("--skip-photo", action="store_true")
    p.add_argument("--extract", action="store_true", help="also extract per-frame features")
    p.add_argument("--num-frames", type=int, default=8)
    p.add_argument("--grid", action="store_true", help="also store the per-frame grid features")
    p.add_argument("--backbone", default="efficientnet_lite0")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from captioner.data.msvd import load_msvd
    from captioner.data.photo_pan_video import make_photo_pan_dataset
    from captioner.data.synthetic_video import make_synthetic_dataset

    syn_root = os.path.join(args.out, "synthetic")
    pan_root = os.path.join(args.out, "photo_pan")
    if not args.skip_synthetic:
        plan = make_synthetic_dataset(syn_root, groups=args.synthetic_groups,
                                      clips_per_group=args.synthetic_clips_per_group, seed=args.seed,
                                      size=args.synthetic_size)
        print(f"synthetic: {len(plan)} clips in {syn_root}")
    if not args.skip_photo:
        clips = make_photo_pan_dataset(pan_root, args.flickr8k, train_clips=args.photo_train,
                                       dev_clips=args.photo_dev, test_clips=args.photo_test, seed=args.seed,
                                       size=args.photo_size)
        print(f"photo-pan: {len(clips)} clips in {pan_root}")
        from captioner.data.caption_activities import write_activity_labels

        for split, counts in write_activity_labels(pan_root).items():
            print(f"photo-pan {split} activities: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if not args.extract:
        return 0
    from captioner.features.video_store import extract_video_features

    tag = f"{args.backbone.replace('efficientnet_', '')}_f{args.num_frames}"
    jobs = []
    if not args.skip_synthetic:
        order = []
        for split in ("test", "dev", "train"):
            d = load_msvd(os.path.join(syn_root, "captions.csv"), syn_root, os.path.join(syn_root, f"{split}.txt"))
            order += [(p, d.ids[p]) for p in d.video_paths]
        jobs.append((os.path.join(args.out, f"synthetic_{tag}.h5"), order))
    if not args.skip_photo:
        order = []
        for split in ("test", "dev", "train"):
            d = load_msvd(os.path.join(pan_root, "captions.csv"), os.path.join(pan_root, "videos"),
                          os.path.join(pan_root, f"{split}.txt"))
            order += [(p, d.ids[p]) for p in d.video_paths]
        jobs.append((os.path.join(args.out, f"photo_pan_{tag}.h5"), order))
    failed = 0
    for output, order in jobs:
        report = extract_video_features([p for p, _ in order], output, backbone=args.backbone,
                                        ids=[k for _, k in order], num_frames=args.num_frames, grid=args.grid)
        print(f"{output}: stored {report.stored} clips ({report.frames_per_second:.1f} frames/s), "
              f"{report.skipped} already present, {len(report.failed)} failed")
        failed += len(report.failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
