"""Clips made from real photos by pans and zooms (a "Ken Burns" camera), keeping the photos'
captions.

No labelled real video can be had on these machines, so these clips give the video
captioner real image content whose captions are true of every frame: a window over the photo
pans left, right, up or down, or zooms in or out, and the clip keeps all of the photo's
reference captions. Flickr8k photos are read with `captioner.data.load_flickr8k`.

`make_photo_pan_dataset(root, flickr8k_dir, ...)` writes the MSVD-style layout that
`captioner.data.msvd.load_msvd` reads::

    root/
      videos/<clip_id>.avi     clip_id = <photo stem>_<motion>
      captions.csv             clip_id,caption (the photo's captions, one row each)
      sources.csv              clip_id,image,motion,split
      train.txt, dev.txt, test.txt   clip ids

Train clips come from Flickr8k train photos; dev and test clips from Flickr8k dev photos (split
in two halves), which no captioner of this project trains on, so an image captioner and a
video captioner can be compared on the same held-out photos (`source_photos` finds each clip's
photo; the comparison itself, which needs models and metrics, is in scripts/compare_photo_pan.py).
"""

from __future__ import annotations

import csv
import os

import numpy as np

from captioner.data.synthetic_video import write_video
from captioner.io import atomic_path, write_json

PAN_MOTIONS = ("pan_left", "pan_right", "pan_up", "pan_down", "zoom_in", "zoom_out")


def camera_path(motion, rng, num_frames):
    """Crop boxes (num_frames, 4) as fractions (x0, y0, x1, y1) of the photo."""
    t = np.linspace(0.0, 1.0, num_frames)[:, None]  # (T, 1)
    if motion.startswith("pan"):
        side = rng.uniform(0.62, 0.75)
        free = 1.0 - side
        across = rng.uniform(0.0, free)  # position on the other axis
        a, b = np.array([0.0]), np.array([free])
        if motion in ("pan_left", "pan_up"):  # the view moves left/up: window from right/bottom to left/top
            a, b = b, a
        pos = a + (b - a) * t  # (T, 1)
        if motion in ("pan_left", "pan_right"):
            x0, y0 = pos[:, 0], np.full(num_frames, across)
        else:
            x0, y0 = np.full(num_frames, across), pos[:, 0]
        return np.stack([x0, y0, x0 + side, y0 + side], 1)
    if motion in ("zoom_in", "zoom_out"):
        small = rng.uniform(0.55, 0.7)
        cx, cy = rng.uniform(small / 2, 1 - small / 2, size=2)  # zoom centre keeps the window inside
        sides = 1.0 + (small - 1.0) * t[:, 0]  # (T,) 1 -> small
        if motion == "zoom_out":
            sides = sides[::-1]
        # Interpolate the centre from the photo centre (full view) to (cx, cy) (tight view).
        frac = (1.0 - sides) / (1.0 - small)
        centres_x = 0.5 + (cx - 0.5) * frac
        centres_y = 0.5 + (cy - 0.5) * frac
        x0, y0 = centres_x - sides / 2, centres_y - sides / 2
        return np.stack([x0, y0, x0 + sides, y0 + sides], 1)
    raise ValueError(f"unknown camera motion {motion!r}; choose from {PAN_MOTIONS}")


def render_pan(image, boxes, size=112):
    """Frames (T, size, size, 3) uint8: each box of `image` (H, W, 3) resized to size x size."""
    import cv2

    h, w = image.shape[:2]
    frames = []
    for x0, y0, x1, y1 in boxes:
        # Sub-pixel crop: an affine map of the box onto the output square (smooth motion).
        sx, sy = (x1 - x0) * w / size, (y1 - y0) * h / size
        m = np.array([[sx, 0.0, x0 * w + 0.5 * sx - 0.5], [0.0, sy, y0 * h + 0.5 * sy - 0.5]], np.float64)
        interp = cv2.INTER_AREA if sx > 1.0 else cv2.INTER_LINEAR
        frame = cv2.warpAffine(image, m, (size, size), flags=interp | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REFLECT)
        frames.append(frame)
    return np.stack(frames)


def make_photo_pan_dataset(root, flickr8k_dir, train_clips=None, dev_clips=250, test_clips=500, seed=0,
                           size=112, num_frames=16, fps=12, codec="MJPG", progress=True):
    """Write photo-pan clips under `root` (layout in the module docstring); resumable.

    `train_clips` photos (None: all) are drawn from Flickr8k train in a seeded order, one clip
    each; dev and test clips from disjoint halves of Flickr8k dev. Returns the clip list."""
    from tqdm.auto import tqdm

    from captioner.data import load_flickr8k
    from captioner.features.images import load_image

    rng = np.random.default_rng(seed)
    train = load_flickr8k(flickr8k_dir, split="train")
    dev = load_flickr8k(flickr8k_dir, split="dev")
    train_order = rng.permutation(len(train.image_paths))
    dev_order = rng.permutation(len(dev.image_paths))
    if dev_clips + test_clips > len(dev_order):
        raise ValueError(f"dev_clips + test_clips = {dev_clips + test_clips} > {len(dev_order)} dev photos")
    n_train = len(train_order) if train_clips is None else min(train_clips, len(train_order))
    chosen = [("train", train, i) for i in train_order[:n_train]]
    chosen += [("dev", dev, i) for i in dev_order[:dev_clips]]
    chosen += [("test", dev, i) for i in dev_order[dev_clips:dev_clips + test_clips]]
    ext = ".mp4" if codec.lower() in ("mp4v", "avc1") else ".avi"
    os.makedirs(os.path.join(root, "videos"), exist_ok=True)
    clips = []
    for split, data, i in tqdm(chosen, desc="photo-pan clips", unit="clip", disable=not progress):
        photo = data.image_paths[i]
        clip_rng = np.random.default_rng([seed, int(i), 0 if split == "train" else 1])
        motion = PAN_MOTIONS[int(clip_rng.integers(len(PAN_MOTIONS)))]
        stem = os.path.splitext(os.path.basename(photo))[0]
        clip_id = f"{stem}_{motion}"
        target = os.path.join(root, "videos", clip_id + ext)
        boxes = camera_path(motion, clip_rng, num_frames)
        if not os.path.exists(target):
            image = load_image(photo)
            write_video(target, render_pan(image, boxes, size), fps, codec)
        clips.append({"clip_id": clip_id, "image": os.path.basename(photo), "motion": motion, "split": split,
                      "captions": data.captions[photo]})
    with atomic_path(os.path.join(root, "captions.csv")) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["clip_id", "caption"])
            for c in clips:
                for cap in c["captions"]:
                    w.writerow([c["clip_id"], cap])
    with atomic_path(os.path.join(root, "sources.csv")) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["clip_id", "image", "motion", "split"])
            for c in clips:
                w.writerow([c["clip_id"], c["image"], c["motion"], c["split"]])
    for split in ("train", "dev", "test"):
        with atomic_path(os.path.join(root, f"{split}.txt"), ".txt") as tmp:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("".join(c["clip_id"] + "\n" for c in clips if c["split"] == split))
    write_json(os.path.join(root, "dataset.json"), {
        "generator": "captioner.data.photo_pan_video.make_photo_pan_dataset",
        "source": os.path.abspath(flickr8k_dir), "seed": seed, "size": size, "num_frames": num_frames,
        "fps": fps, "codec": codec, "motions": list(PAN_MOTIONS),
        "splits": {s: sum(c["split"] == s for c in clips) for s in ("train", "dev", "test")},
        "note": "train clips from Flickr8k train photos; dev/test clips from disjoint halves of Flickr8k dev",
    })
    return clips


def read_sources(sources_csv):
    """{clip id: photo file name} from a photo-pan dataset's sources.csv."""
    with open(sources_csv, encoding="utf-8", newline="") as f:
        return {row["clip_id"]: row["image"] for row in csv.DictReader(f)}


def source_photos(sources_csv, images_dir, clip_ids):
    """The photo file behind each clip id of `clip_ids` (in order), joined to `images_dir`,
    from a photo-pan dataset's sources.csv. InputError when `images_dir` is None or a clip has
    no photo listed."""
    from captioner.errors import InputError

    if images_dir is None:
        raise InputError("comparing with an image captioner needs the photos' folder (--compare-images-dir)")
    photo_of = read_sources(sources_csv)
    missing = [k for k in clip_ids if k not in photo_of]
    if missing:
        raise InputError(f"{sources_csv}: no photo listed for {len(missing)} clip(s), e.g. {missing[:3]}")
    return [os.path.join(images_dir, photo_of[k]) for k in clip_ids]
