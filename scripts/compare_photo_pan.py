#!/usr/bin/env python
"""Video captioner on held-out photo-pan clips vs the image captioner on the same photos.

    python scripts/compare_photo_pan.py --video-model assets/models/video_caption_photo_pan.keras \
        --pan-root /work/data/video_pan/photo_pan --output assets/models/video_caption_photo_pan_compare.json

Issue #7's target: on held-out photo-pan clips, caption scores within 10% of the image
captioner's on the same photos. End to end, from files:

* the video model captions each clip of the split (`--split`, default test) from its frames
  (`VideoCaptioner.caption`: frame sampling + backbone + LSTM encoder + beam search);
* the image captioner captions each clip's source photo (`ImageCaptioner.caption`);
* both are scored against the same references (the photo's five Flickr8k captions) with the
  same toolkit (coco-caption when Java is present), the same beam width and length penalty.

Before scoring it checks that no source photo of the split is a Flickr8k train photo (the
image captioner trained on those; the video model's train clips were made from them), and
writes every caption of both models beside the JSON (`<output stem>_captions.jsonl`).
"""

import argparse
import datetime
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))  # scripts/
METRICS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr")


def sha256(path, chunk=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def in_batches(items, size, desc):
    from tqdm.auto import tqdm

    with tqdm(total=len(items), desc=desc, unit="item", dynamic_ncols=True) as bar:
        for start in range(0, len(items), size):
            batch = items[start:start + size]
            yield batch
            bar.update(len(batch))


def model_card(path):
    """The JSON card beside a bundled model, when there is one (for its backbone and metrics)."""
    card = os.path.splitext(path)[0] + ".json"
    if not os.path.exists(card):
        return None
    with open(card, encoding="utf-8") as f:
        return json.load(f)


def compare(args):
    import keras

    import captioner  # noqa: F401  (registers the model classes)
    from captioner.data.msvd import load_msvd
    from captioner.data.photo_pan_video import read_sources
    from captioner.metrics import evaluate_captions, meteor_session
    from captioner.io import write_json

    root = args.pan_root
    data = load_msvd(os.path.join(root, "captions.csv"), os.path.join(root, "videos"),
                     os.path.join(root, f"{args.split}.txt"), split=args.split, name="photo_pan")
    if args.limit:
        data = data.subset(args.limit)
    clips = list(data.video_paths)
    ids = [data.ids[p] for p in clips]
    photo_of = read_sources(os.path.join(root, "sources.csv"))
    photos = [photo_of[k] for k in ids]
    refs = {k: data.captions[p] for k, p in zip(ids, clips)}

    # held-out check: no source photo may be a Flickr8k train photo
    train_photos = set(read_lines(os.path.join(args.flickr8k, "Flickr_8k.trainImages.txt")))
    dev_photos = set(read_lines(os.path.join(args.flickr8k, "Flickr_8k.devImages.txt")))
    leaked = sorted(set(photos) & train_photos)
    if leaked:
        raise SystemExit(f"{len(leaked)} {args.split} clip(s) come from Flickr8k train photos, e.g. {leaked[:3]}")
    held_out = {"split": args.split, "clips": len(ids), "distinct_photos": len(set(photos)),
                "photos_in_flickr8k_train": 0, "photos_in_flickr8k_dev": len(set(photos) & dev_photos)}
    dev_file = os.path.join(root, "dev.txt")
    if args.split != "dev" and os.path.exists(dev_file):  # the video model's selection clips
        held_out["photos_shared_with_video_dev_split"] = len(
            set(photos) & {photo_of[k] for k in read_lines(dev_file)})

    out = {"what": "photo-pan held-out clips: video captioner (from the clip's frames) vs image captioner "
                   "(on the clip's source photo), same references, beam width, length penalty and toolkit",
           "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
           "command": "python scripts/compare_photo_pan.py " + " ".join(sys.argv[1:]),
           "data": {"pan_root": os.path.abspath(root), "held_out": held_out},
           "beam_size": args.beam_size, "alpha": args.alpha, "max_length": args.max_length, "objects": args.objects,
           "models": {}}
    captions = {"video": {}, "image": {}}

    # 1. video captioner on the clips
    from captioner.models.keras_archive import check_keras_archive

    check_keras_archive(args.video_model)  # the zip's declared sizes, before Keras inflates anything
    video = keras.models.load_model(args.video_model)
    t = time.perf_counter()
    for batch in in_batches(list(zip(ids, clips)), args.batch_size, "video captioner (clips)"):
        results = video.caption([p for _, p in batch], beam_size=args.beam_size, alpha=args.alpha,
                                max_length=args.max_length, batch_size=len(batch), objects=args.objects)
        captions["video"].update({k: r.text for (k, _), r in zip(batch, results)})
    video_seconds = time.perf_counter() - t
    vcard = model_card(args.video_model) or {}
    out["models"]["video"] = {"path": args.video_model, "sha256": sha256(args.video_model),
                              "class": type(video).__name__, "feature": video.feature,
                              "frames_per_clip": video.num_frames,
                              "backbone": vcard.get("config", {}).get("backbone"),
                              "seconds": round(video_seconds, 1)}
    del video

    # 2. image captioner on the source photos
    check_keras_archive(args.image_model)
    image = keras.models.load_model(args.image_model)
    t = time.perf_counter()
    for batch in in_batches(list(zip(ids, photos)), args.batch_size, "image captioner (photos)"):
        results = image.caption([os.path.join(args.images_dir, ph) for _, ph in batch], beam_size=args.beam_size,
                                alpha=args.alpha, max_length=args.max_length, batch_size=len(batch),
                                objects=args.objects)
        captions["image"].update({k: r.text for (k, _), r in zip(batch, results)})
    image_seconds = time.perf_counter() - t
    icard = model_card(args.image_model) or {}
    out["models"]["image"] = {"path": args.image_model, "sha256": sha256(args.image_model),
                              "class": type(image).__name__,
                              "backbone": icard.get("config", {}).get("backbone"),
                              "seconds": round(image_seconds, 1)}
    del image

    # 3. same references, same toolkit
    scores = {}
    with meteor_session():
        for name in ("video", "image"):
            scores[name] = evaluate_captions(refs, captions[name], tool=args.tool, meteor=True)
    out["scores"] = scores
    ratio = {m: (scores["video"][m] / scores["image"][m] if scores["image"][m] else None) for m in METRICS
             if scores["video"].get(m) is not None and scores["image"].get(m) is not None}
    out["video_over_image"] = {m: round(r, 4) for m, r in ratio.items() if r is not None}
    out["within_10_percent"] = {m: r >= 0.9 for m, r in ratio.items() if r is not None}
    out["target_met"] = bool(out["within_10_percent"]) and all(out["within_10_percent"].values())
    out["same_caption"] = sum(captions["video"][k] == captions["image"][k] for k in ids) / len(ids)
    out["samples"] = [{"clip": k, "photo": photo_of[k], "video": captions["video"][k],
                       "image": captions["image"][k], "references": refs[k][:2]} for k in ids[:12]]
    write_json(args.output, out)
    captions_path = os.path.splitext(args.output)[0] + "_captions.jsonl"
    if not args.no_captions_file:
        with open(captions_path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"clip": k, "photo": ph, "video": captions["video"][k],
                                     "image": captions["image"][k]}) + "\n" for k, ph in zip(ids, photos))
    print(f"{'metric':8s} {'video':>8s} {'image':>8s} {'ratio':>7s}")
    for m in METRICS:
        v, i = scores["video"].get(m), scores["image"].get(m)
        if v is None or i is None:
            continue
        print(f"{m:8s} {v:8.2f} {i:8.2f} {ratio[m]:7.3f}{'' if ratio[m] >= 0.9 else '  (< 0.9)'}")
    print(f"target (every metric >= 0.9x the image captioner's): {'met' if out['target_met'] else 'missed'}")
    print(f"wrote {args.output}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--video-model", required=True, help="a VideoCaptioner .keras")
    p.add_argument("--image-model", default=os.path.join(HERE, "..", "assets", "models", "flickr8k_attention.keras"))
    p.add_argument("--pan-root", required=True, help="a photo-pan dataset (scripts/make_video_datasets.py)")
    p.add_argument("--flickr8k", default=os.path.join(HERE, "..", "..", "shared", "datasets", "flickr8k"),
                   help="Flickr8k folder (split lists; Images/ unless --images-dir)")
    p.add_argument("--images-dir", help="the source photos (default FLICKR8K/Images)")
    p.add_argument("--split", default="test")
    p.add_argument("--beam-size", type=int, default=3)
    p.add_argument("--alpha", type=float, default=0.0)
    p.add_argument("--max-length", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--tool", choices=("auto", "coco", "python"), default="auto")
    p.add_argument("--limit", type=int, default=None, help="only the first N clips of the split")
    p.add_argument("--output", required=True, help="results JSON")
    p.add_argument("--no-captions-file", action="store_true")
    p.add_argument("--objects", action="store_true",
                   help="both captioners name what the backbone's ImageNet head sees (captioner.tagging)")
    args = p.parse_args(argv)
    args.images_dir = args.images_dir or os.path.join(args.flickr8k, "Images")
    args.image_model = os.path.normpath(args.image_model)
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
