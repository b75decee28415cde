"""Generated clips whose activity labels and captions are true by construction.

A shape (circle, square, triangle) of one colour moves over a plain, slightly noisy
background: to the left, to the right, up, down, grows, shrinks, or bounces. The label is the
motion; the captions say colour, shape and motion ("a red circle moves to the left"). Each
clip has its own length and frame rate, so readers and samplers meet variable rates.

`make_synthetic_dataset(root, ...)` writes real video files (MJPG in AVI by default, or mp4v)
with cv2.VideoWriter in the UCF101 layout, plus an MSVD-style captions csv over the same
clips, so both readers of captioner.data read it::

    root/
      classInd.txt                        "1 Bounce" ... (UCF101 format)
      trainlist01.txt, testlist01.txt     UCF101 split 1 format (test = groups 1-7)
      <ClassName>/v_<ClassName>_gXX_cYY.avi
      captions.csv                        clip_id,caption (several rows per clip)
      labels.csv                          clip_id,label,color,shape,frames,fps,group
      train.txt, dev.txt, test.txt        clip ids (dev = groups 8-10, carved out of train)
"""

from __future__ import annotations

import csv
import os

import numpy as np

from captioner.io import atomic_path

# motion -> (UCF101-style class name, caption phrases)
MOTIONS = {
    "left": ("MoveLeft", ("moves to the left", "is moving left", "slides to the left")),
    "right": ("MoveRight", ("moves to the right", "is moving right", "slides to the right")),
    "up": ("MoveUp", ("moves up", "is moving upwards", "rises")),
    "down": ("MoveDown", ("moves down", "is moving downwards", "sinks")),
    "grow": ("Grow", ("grows", "is getting bigger", "grows larger")),
    "shrink": ("Shrink", ("shrinks", "is getting smaller", "shrinks away")),
    "bounce": ("Bounce", ("bounces", "is bouncing up and down", "bounces on the floor")),
}
COLORS = {  # RGB
    "red": (220, 40, 40),
    "green": (40, 190, 60),
    "blue": (50, 90, 235),
    "yellow": (235, 220, 40),
    "white": (245, 245, 245),
}
SHAPES = ("circle", "square", "triangle")
TEST_GROUPS = range(1, 8)   # UCF101 split 1 convention: groups 1-7 are test
DEV_GROUPS = range(8, 11)   # carved out of the train groups for model selection
FPS_CHOICES = (8, 10, 12, 15, 24, 25, 30)


def class_name(motion):
    return MOTIONS[motion][0]


def captions_for(motion, color, shape):
    """The reference captions of a clip: one per phrasing of the motion."""
    a, b, c = MOTIONS[motion][1]
    return [f"a {color} {shape} {a}", f"a {color} {shape} {b}", f"the {color} {shape} {c}"]


def _draw(img, shape, center, radius, color):
    import cv2

    cx, cy = center
    bgr = tuple(int(v) for v in color[::-1])
    s = 16  # draw at 1/16 px precision: smooth sub-pixel motion
    c = (int(round(cx * s)), int(round(cy * s)))
    r = max(int(round(radius * s)), s)
    if shape == "circle":
        cv2.circle(img, c, r, bgr, -1, cv2.LINE_AA, shift=4)
    elif shape == "square":
        h = int(round(r * 0.85))
        pts = np.array([[c[0] - h, c[1] - h], [c[0] + h, c[1] - h], [c[0] + h, c[1] + h], [c[0] - h, c[1] + h]])
        cv2.fillPoly(img, [pts.astype(np.int32)], bgr, cv2.LINE_AA, shift=4)
    elif shape == "triangle":
        pts = np.array([[c[0], c[1] - r], [c[0] + int(r * 0.95), c[1] + int(r * 0.7)],
                        [c[0] - int(r * 0.95), c[1] + int(r * 0.7)]])
        cv2.fillPoly(img, [pts.astype(np.int32)], bgr, cv2.LINE_AA, shift=4)
    else:
        raise ValueError(f"unknown shape {shape!r}")


def render_clip(motion, color, shape, rng, num_frames=16, size=64):
    """Frames (num_frames, size, size, 3) uint8 RGB of one clip; the motion spans the clip."""
    if motion not in MOTIONS:
        raise ValueError(f"unknown motion {motion!r}; choose from {sorted(MOTIONS)}")
    rgb = COLORS[color] if isinstance(color, str) else color
    W = float(size)
    t = np.linspace(0.0, 1.0, num_frames)  # (T,) clip time
    r0 = rng.uniform(0.09, 0.13) * W
    margin = r0 + 1
    lo, hi = 0.18 * W, 0.82 * W
    if motion in ("left", "right"):
        a, b = rng.uniform(0.72, 0.84) * W, rng.uniform(0.16, 0.28) * W  # start right, end left
        if motion == "right":
            a, b = b, a
        xs, ys = a + (b - a) * t, np.full_like(t, rng.uniform(lo + 0.05 * W, hi - 0.05 * W))
        rs = np.full_like(t, r0)
    elif motion in ("up", "down"):
        a, b = rng.uniform(0.72, 0.84) * W, rng.uniform(0.16, 0.28) * W  # start low, end high
        if motion == "down":
            a, b = b, a
        ys, xs = a + (b - a) * t, np.full_like(t, rng.uniform(lo + 0.05 * W, hi - 0.05 * W))
        rs = np.full_like(t, r0)
    elif motion in ("grow", "shrink"):
        small, big = rng.uniform(0.05, 0.07) * W, rng.uniform(0.2, 0.26) * W
        a, b = (small, big) if motion == "grow" else (big, small)
        rs = a + (b - a) * t
        xs = np.full_like(t, rng.uniform(0.4, 0.6) * W)
        ys = np.full_like(t, rng.uniform(0.4, 0.6) * W)
    else:  # bounce: two hops off the floor
        floor = rng.uniform(0.74, 0.82) * W
        height = rng.uniform(0.4, 0.5) * W
        ys = floor - height * np.abs(np.sin(2.0 * np.pi * t))
        xs = np.full_like(t, rng.uniform(lo + 0.05 * W, hi - 0.05 * W))
        rs = np.full_like(t, r0)
    xs = np.clip(xs, margin, W - margin)
    ys = np.clip(ys, margin, W - margin)
    base = rng.integers(25, 95, size=3)  # muted background colour
    frames = []
    for x, y, r in zip(xs, ys, rs):
        img = np.empty((size, size, 3), np.uint8)
        noise = rng.normal(0.0, 4.0, size=(size, size, 1))
        img[:] = np.clip(base[None, None, ::-1] + noise, 0, 255).astype(np.uint8)  # BGR
        _draw(img, shape, (x, y), r, rgb)
        frames.append(img[..., ::-1])  # to RGB
    return np.stack(frames)


def write_video(path, frames, fps, codec="MJPG"):
    """Write RGB frames (T, H, W, 3) to `path` with cv2.VideoWriter, atomically."""
    import cv2

    h, w = frames.shape[1:3]
    suffix = os.path.splitext(path)[1]
    with atomic_path(path, suffix) as tmp:
        writer = cv2.VideoWriter(tmp, cv2.VideoWriter_fourcc(*codec), float(fps), (w, h))
        if not writer.isOpened():
            raise RuntimeError(f"{path}: cv2.VideoWriter cannot write codec {codec!r} with extension {suffix!r}")
        for f in frames:
            writer.write(np.ascontiguousarray(f[..., ::-1]))
        writer.release()


def clip_plan(groups=25, clips_per_group=6, seed=0):
    """The clips of a dataset, as dicts (one per clip), deterministic from `seed`.

    Each (group, class) has `clips_per_group` clips; colours and shapes are drawn so every
    colour x shape pair appears for each motion."""
    rng = np.random.default_rng(seed)
    pairs = [(c, s) for c in COLORS for s in SHAPES]
    plan = []
    for motion in MOTIONS:
        order = []
        while len(order) < groups * clips_per_group:
            order.extend(rng.permutation(len(pairs)).tolist())
        k = 0
        for g in range(1, groups + 1):
            for c in range(1, clips_per_group + 1):
                color, shape = pairs[order[k]]
                k += 1
                name = class_name(motion)
                plan.append({
                    "clip_id": f"v_{name}_g{g:02d}_c{c:02d}", "class_name": name, "label": motion,
                    "color": color, "shape": shape, "group": g,
                    "split": "test" if g in TEST_GROUPS else ("dev" if g in DEV_GROUPS else "train"),
                    "seed": int(rng.integers(2**31)),
                })
    return plan


def make_synthetic_dataset(root, groups=25, clips_per_group=6, seed=0, size=64, frame_range=(12, 24),
                           fps_choices=FPS_CHOICES, codec="MJPG", progress=True):
    """Write the dataset described in the module docstring under `root`. Clips already
    written are kept (resumable); the csv and split files are rewritten. Returns the plan."""
    from tqdm.auto import tqdm

    from captioner.io import write_json

    ext = ".mp4" if codec.lower() in ("mp4v", "avc1") else ".avi"
    plan = clip_plan(groups, clips_per_group, seed)
    os.makedirs(root, exist_ok=True)
    for clip in tqdm(plan, desc="synthetic clips", unit="clip", disable=not progress):
        rng = np.random.default_rng(clip["seed"])
        clip["frames"] = int(rng.integers(frame_range[0], frame_range[1] + 1))
        clip["fps"] = int(rng.choice(fps_choices))
        clip["path"] = f"{clip['class_name']}/{clip['clip_id']}{ext}"
        target = os.path.join(root, clip["path"])
        frames = render_clip(clip["label"], clip["color"], clip["shape"], rng, clip["frames"], size)
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            write_video(target, frames, clip["fps"], codec)
    names = sorted({c["class_name"] for c in plan})
    index = {n: i + 1 for i, n in enumerate(names)}
    _write_lines(os.path.join(root, "classInd.txt"), [f"{index[n]} {n}" for n in names])
    _write_lines(os.path.join(root, "trainlist01.txt"),
                 [f"{c['path']} {index[c['class_name']]}" for c in plan if c["split"] != "test"])
    _write_lines(os.path.join(root, "testlist01.txt"), [c["path"] for c in plan if c["split"] == "test"])
    for split in ("train", "dev", "test"):
        _write_lines(os.path.join(root, f"{split}.txt"), [c["clip_id"] for c in plan if c["split"] == split])
    with atomic_path(os.path.join(root, "captions.csv")) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["clip_id", "caption"])
            for c in plan:
                for cap in captions_for(c["label"], c["color"], c["shape"]):
                    w.writerow([c["clip_id"], cap])
    with atomic_path(os.path.join(root, "labels.csv")) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["clip_id", "label", "class_name", "color", "shape", "frames", "fps", "group", "split"])
            for c in plan:
                w.writerow([c[k] for k in ("clip_id", "label", "class_name", "color", "shape", "frames", "fps",
                                           "group", "split")])
    write_json(os.path.join(root, "dataset.json"), {
        "generator": "captioner.data.synthetic_video.make_synthetic_dataset",
        "seed": seed, "groups": groups, "clips_per_group": clips_per_group, "size": size,
        "frame_range": list(frame_range), "fps_choices": list(fps_choices), "codec": codec,
        "clips": len(plan), "splits": {s: sum(c["split"] == s for c in plan) for s in ("train", "dev", "test")},
    })
    return plan


def _write_lines(path, lines):
    with atomic_path(path, ".txt") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
