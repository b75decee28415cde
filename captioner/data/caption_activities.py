"""Activity labels mined from image captions, and clip lists labelled with them.

No labelled real activity video can be had on these machines, but Flickr8k's five captions
per photo say what people and animals are doing. The rule (`activity_of`):

1. each class below has a word pattern (whole words, lower-cased caption);
2. a caption votes for every class whose pattern it contains;
3. the photo's label is the class with the most votes, if at least `min_votes` (3) of its
   five captions voted for it, i.e. most captions agree; ties go to the class listed first
   (specific sports before general postures: "a boy jumps on his skateboard" with three
   votes each is skateboarding);
4. otherwise the photo is "other".

On Flickr8k train this labels 2,970 of 6,000 photos with one of 12 activities (running 527,
playing ball 455, jumping 320, sitting 315, standing 275, walking 259, riding a bike 255,
skateboarding 150, skiing/snowboarding 142, climbing 119, swimming 87, surfing 66) and 3,030
"other".

`write_activity_labels(pan_root)` labels the clips of a photo-pan dataset
(captioner.data.photo_pan_video) from their captions and writes `activities.csv`
(clip_id,label) beside its captions; `load_clip_labels` reads such a file with a split list
into the `VideoLabelDataset` that the video-classify recipe trains on.
"""

from __future__ import annotations

import collections
import csv
import os
import re

from captioner.data.ucf101 import VideoLabelDataset
from captioner.errors import InputError

OTHER = "other"

# class -> whole-word pattern; the order breaks ties (specific before general)
ACTIVITY_PATTERNS = {
    "swimming": r"swim\w*|diving|dives|dive",
    "surfing": r"surf\w*",
    "skiing/snowboarding": r"ski|skis|skier\w*|skiing|snowboard\w*|sled\w*",
    "climbing": r"climb\w*",
    "riding a bike": r"bike\w*|bicycl\w*|biker\w*|cyclist\w*|bmx",
    "skateboarding": r"skateboard\w*|skater\w*|skating",
    "playing ball": r"ball|soccer|football|basketball|baseball|volleyball|rugby|tennis",
    "jumping": r"jump\w*|leap\w*",
    "running": r"run|runs|running|ran|sprint\w*|chas\w+|racing|races",
    "walking": r"walk\w*|hik\w+",
    "sitting": r"sit|sits|sitting|seated",
    "standing": r"stand|stands|standing",
}
_COMPILED = {k: re.compile(r"\b(?:" + v + r")\b") for k, v in ACTIVITY_PATTERNS.items()}
CLASS_NAMES = [*ACTIVITY_PATTERNS, OTHER]


def activity_votes(captions):
    """{class: number of captions that mention it} over `captions` (strings)."""
    votes = collections.Counter()
    for caption in captions:
        text = caption.lower()
        for name, pattern in _COMPILED.items():
            if pattern.search(text):
                votes[name] += 1
    return votes


def activity_of(captions, min_votes=3):
    """The activity most of `captions` agree on (module docstring's rule), else "other"."""
    votes = activity_votes(captions)
    best = max((votes[k] for k in ACTIVITY_PATTERNS), default=0)
    if best < min_votes:
        return OTHER
    return next(k for k in ACTIVITY_PATTERNS if votes[k] == best)


def write_activity_labels(pan_root, min_votes=3):
    """Label every clip of the photo-pan dataset at `pan_root` from its captions.

    Writes `pan_root/activities.csv` (clip_id,label; atomically) and returns
    {split: {class: clips}} over the split lists found beside it."""
    from captioner.data.msvd import read_id_list, read_msvd_captions
    from captioner.io import atomic_path

    captions = read_msvd_captions(os.path.join(pan_root, "captions.csv"))
    labels = {clip: activity_of(caps, min_votes) for clip, caps in captions.items()}
    with atomic_path(os.path.join(pan_root, "activities.csv"), ".csv") as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["clip_id", "label"])
            w.writerows(sorted(labels.items()))
    counts = {}
    for split in ("train", "dev", "test"):
        split_file = os.path.join(pan_root, f"{split}.txt")
        if os.path.exists(split_file):
            c = collections.Counter(labels[k] for k in read_id_list(split_file) if k in labels)
            counts[split] = {name: c.get(name, 0) for name in CLASS_NAMES}
    return counts


def read_clip_labels(path):
    """{clip id: label} from a clip_id,label CSV; InputError naming the file and line."""
    try:
        f = open(path, encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(f"{path}: labels file not found") from None
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or [h.strip() for h in header[:2]] != ["clip_id", "label"]:
            raise InputError(f"{path}: expected a header 'clip_id,label', found {header!r}")
        out = {}
        for line_no, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != 2 or not row[0].strip() or not row[1].strip():
                raise InputError(f"{path}:{line_no}: expected 'clip_id,label', found {row!r}")
            out[row[0].strip()] = row[1].strip()
    return out


def load_clip_labels(labels_csv, videos_dir, split_file, class_names=None, split=""):
    """The clips of `split_file` (ids, one a line) with their labels from `labels_csv`, as a
    VideoLabelDataset over `class_names` (default: the labels found, sorted, "other" last)."""
    from captioner.data.msvd import index_videos, read_id_list

    labels = read_clip_labels(labels_csv)
    if class_names is None:
        found = sorted(set(labels.values()) - {OTHER})
        class_names = found + ([OTHER] if OTHER in labels.values() else [])
    index = {n: i for i, n in enumerate(class_names)}
    videos = index_videos(videos_dir)
    paths, ys = [], []
    for k in read_id_list(split_file):
        if k not in labels:
            raise InputError(f"{split_file}: clip {k!r} has no label in {labels_csv}")
        if k not in videos:
            raise InputError(f"{split_file}: clip {k!r} has no video file in {videos_dir}")
        if labels[k] not in index:
            raise InputError(f"{labels_csv}: clip {k!r} has label {labels[k]!r}, not one of {class_names}")
        paths.append(videos[k])
        ys.append(index[labels[k]])
    return VideoLabelDataset(paths, ys, list(class_names), [0] * len(paths), name=os.path.basename(labels_csv),
                             split=split)
