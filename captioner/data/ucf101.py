"""Reader for activity clips in UCF101's layout (Soomro, Zamir, Shah 2012).

    root/
      <ClassName>/v_<ClassName>_gXX_cYY.avi   XX: group (1-25), YY: clip within the group
      classInd.txt          optional: "<index> <ClassName>" (1-based), one a line
      trainlist0K.txt       optional: "<ClassName>/<file> <index>"
      testlist0K.txt        optional: "<ClassName>/<file>"

With split files, split K's lists are used. Without them, split 1's rule applies: groups 1-7
are test, the rest train. Class indices follow classInd.txt when present, else the sorted
class folder names. `dev_groups` carves a validation split out of train by group (clips of
one group share actors and scenes, so they must not straddle train and dev).
"""

from __future__ import annotations

import dataclasses
import os
import re

from captioner.errors import InputError

__all__ = ["VideoLabelDataset", "load_ucf101", "parse_clip_name", "read_class_index"]

CLIP_NAME = re.compile(r"^v_(?P<cls>.+)_g(?P<group>\d+)_c(?P<clip>\d+)$")
DEFAULT_TEST_GROUPS = tuple(range(1, 8))


@dataclasses.dataclass
class VideoLabelDataset:
    """Clips of one split with integer labels into `class_names`."""

    video_paths: list
    labels: list
    class_names: list
    groups: list
    name: str = ""
    split: str = ""
    metadata: dict = dataclasses.field(default_factory=dict)

    def __len__(self):
        return len(self.video_paths)

    def counts(self):
        out = [0] * len(self.class_names)
        for y in self.labels:
            out[y] += 1
        return dict(zip(self.class_names, out))


def parse_clip_name(filename):
    """(class name, group, clip) of ``v_<Class>_gXX_cYY.<ext>``; None when it does not match."""
    stem = os.path.splitext(os.path.basename(filename))[0]
    m = CLIP_NAME.match(stem)
    if not m:
        return None
    return m.group("cls"), int(m.group("group")), int(m.group("clip"))


def read_class_index(path):
    """[class names] in index order from classInd.txt ("<1-based index> <name>")."""
    entries = {}
    try:
        lines = open(path, encoding="utf-8-sig").read().splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit():
            raise InputError(f"{path}:{line_no}: expected '<index> <ClassName>', found {line[:80]!r}")
        i = int(parts[0])
        if i in entries:
            raise InputError(f"{path}:{line_no}: index {i} repeats")
        entries[i] = parts[1]
    if sorted(entries) != list(range(1, len(entries) + 1)):
        raise InputError(f"{path}: class indices must be 1..{len(entries)} without gaps")
    return [entries[i] for i in range(1, len(entries) + 1)]


def _read_list(path, root, index):
    """[(relative path, class name or None)] of a train/test list."""
    out = []
    for line_no, line in enumerate(open(path, encoding="utf-8-sig").read().splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        rel = parts[0].replace("\\", "/")
        cls = rel.split("/")[0] if "/" in rel else None
        if len(parts) > 1:
            if not parts[1].isdigit() or not 1 <= int(parts[1]) <= len(index):
                raise InputError(f"{path}:{line_no}: class index {parts[1]!r} is not in 1..{len(index)}")
            listed = index[int(parts[1]) - 1]
            if cls is not None and cls != listed:
                raise InputError(f"{path}:{line_no}: {rel} is in folder {cls} but labelled {listed}")
            cls = listed
        if cls is None:
            parsed = parse_clip_name(rel)
            cls = parsed[0] if parsed else None
        if cls is None:
            raise InputError(f"{path}:{line_no}: cannot tell the class of {rel!r}")
        out.append((rel, cls))
    return out


def load_ucf101(root, split="train", split_id=1, dev_groups=(), test_groups=DEFAULT_TEST_GROUPS):
    """Load one split ("train", "dev", "test" or "all") of a UCF101-layout folder.

    `dev_groups`: groups moved from train to "dev". Missing files listed in a split file
    raise InputError naming the list and the file.
    """
    from captioner.features.video import VIDEO_EXTENSIONS

    if split not in ("train", "dev", "test", "all"):
        raise InputError(f"unknown split {split!r}; expected train, dev, test or all")
    if not os.path.isdir(root):
        raise InputError(f"{root}: UCF101 root folder not found")
    class_ind = os.path.join(root, "classInd.txt")
    folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    class_names = read_class_index(class_ind) if os.path.exists(class_ind) else folders
    if not class_names:
        raise InputError(f"{root}: no class folders and no classInd.txt")
    label_of = {n: i for i, n in enumerate(class_names)}
    train_list = os.path.join(root, f"trainlist{split_id:02d}.txt")
    test_list = os.path.join(root, f"testlist{split_id:02d}.txt")
    entries = []  # (relative path, class, part)
    if os.path.exists(train_list) and os.path.exists(test_list):
        entries += [(rel, cls, "train") for rel, cls in _read_list(train_list, root, class_names)]
        entries += [(rel, cls, "test") for rel, cls in _read_list(test_list, root, class_names)]
        source = f"{os.path.basename(train_list)}, {os.path.basename(test_list)}"
    else:
        for cls in folders:
            for f in sorted(os.listdir(os.path.join(root, cls))):
                if os.path.splitext(f)[1].lower() in VIDEO_EXTENSIONS:
                    parsed = parse_clip_name(f)
                    part = "test" if parsed and parsed[1] in test_groups else "train"
                    entries.append((f"{cls}/{f}", cls, part))
        source = f"groups {min(test_groups)}-{max(test_groups)} as test" if test_groups else "all train"
    paths, labels, groups = [], [], []
    missing = []
    dev_groups = set(dev_groups)
    for rel, cls, part in entries:
        if cls not in label_of:
            where = class_ind if os.path.exists(class_ind) else "the class folders"
            raise InputError(f"{root}: class {cls!r} of {rel} is not in {where}")
        parsed = parse_clip_name(rel)
        group = parsed[1] if parsed else 0
        if part == "train" and group in dev_groups:
            part = "dev"
        if split != "all" and part != split:
            continue
        path = os.path.abspath(os.path.join(root, rel))
        if not os.path.isfile(path):
            missing.append(rel)
            continue
        paths.append(path)
        labels.append(label_of[cls])
        groups.append(group)
    if missing:
        raise InputError(f"{root}: {len(missing)} listed clip(s) are missing, e.g. {missing[:3]}")
    return VideoLabelDataset(paths, labels, list(class_names), groups, name="ucf101", split=split,
                             metadata={"root": os.path.abspath(root), "source": source,
                                       "dev_groups": sorted(dev_groups)})
