"""Generated clips: the motion each label names is really in the pixels; the files are real
videos that both readers read."""

import csv
import os

import numpy as np
import pytest

from captioner.data.msvd import load_msvd
from captioner.data.synthetic_video import COLORS, MOTIONS, captions_for, clip_plan, make_synthetic_dataset, render_clip
from captioner.data.ucf101 import load_ucf101
from captioner.features.video import sample_frames


def shape_stats(frames, color):
    """Per frame: centroid x, centroid y and area of the pixels close to `color`."""
    target = np.array(COLORS[color], np.float32)
    out = []
    for f in frames.astype(np.float32):
        hit = np.abs(f - target).sum(-1) < 60
        ys, xs = np.nonzero(hit)
        out.append((xs.mean(), ys.mean(), hit.sum()))
    return np.array(out)


@pytest.mark.parametrize("motion", sorted(MOTIONS))
def test_render_clip_does_what_the_label_says(motion):
    frames = render_clip(motion, "red", "square", np.random.default_rng(3), num_frames=13, size=64)
    assert frames.shape == (13, 64, 64, 3)
    assert frames.dtype == np.uint8
    x, y, area = shape_stats(frames, "red").T
    if motion == "left":
        assert x[-1] < x[0] - 20 and np.all(np.diff(x) < 0.5)
    elif motion == "right":
        assert x[-1] > x[0] + 20 and np.all(np.diff(x) > -0.5)
    elif motion == "up":  # image y grows downwards
        assert y[-1] < y[0] - 20 and np.all(np.diff(y) < 0.5)
    elif motion == "down":
        assert y[-1] > y[0] + 20 and np.all(np.diff(y) > -0.5)
    elif motion == "grow":
        assert area[-1] > 4 * area[0] and np.all(np.diff(area) >= -3)
    elif motion == "shrink":
        assert area[0] > 4 * area[-1] and np.all(np.diff(area) <= 3)
    elif motion == "bounce":  # leaves the floor, comes back, leaves again
        assert y.min() < y[0] - 15 and abs(y[-1] - y[0]) < 3 and abs(y[len(y) // 2] - y[0]) < 8
    if motion not in ("grow", "shrink"):
        assert area.std() < 0.1 * area.mean()


def test_captions_and_plan_are_deterministic_and_balanced():
    assert captions_for("left", "red", "circle")[0] == "a red circle moves to the left"
    a, b = clip_plan(25, 6, seed=4), clip_plan(25, 6, seed=4)
    assert a == b and a != clip_plan(25, 6, seed=5)
    assert len(a) == 25 * 6 * len(MOTIONS)
    for motion in MOTIONS:  # every colour x shape pair appears for every motion
        pairs = {(c["color"], c["shape"]) for c in a if c["label"] == motion}
        assert len(pairs) == 15


def test_dataset_is_written_in_both_layouts(tmp_path):
    root = tmp_path / "syn"
    plan = make_synthetic_dataset(root, groups=11, clips_per_group=1, seed=0, size=32, frame_range=(6, 9),
                                  progress=False)
    assert len(plan) == 77
    train = load_ucf101(root, "train", dev_groups=range(8, 11))
    dev = load_ucf101(root, "dev", dev_groups=range(8, 11))
    test = load_ucf101(root, "test")
    assert (len(train), len(dev), len(test)) == (7, 21, 49)
    assert train.class_names == sorted(name for name, _ in MOTIONS.values())
    by_id = {c["clip_id"]: c for c in plan}
    for path, label in zip(test.video_paths, test.labels):
        clip = by_id[os.path.splitext(os.path.basename(path))[0]]
        assert test.class_names[label] == clip["class_name"]
    caps = load_msvd(root / "captions.csv", root, root / "test.txt", split="test")
    assert len(caps) == 49
    for path in caps.video_paths:
        clip = by_id[caps.ids[path]]
        assert caps.captions[path] == captions_for(clip["label"], clip["color"], clip["shape"])
        s = sample_frames(path, num_frames=4)  # a real video file with its own length and rate
        assert s.frame_count == clip["frames"] and s.fps == pytest.approx(clip["fps"])
    with open(root / "labels.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 77
    again = make_synthetic_dataset(root, groups=11, clips_per_group=1, seed=0, size=32, frame_range=(6, 9),
                                   progress=False)
    assert again == plan  # rerun: same plan, existing files kept
