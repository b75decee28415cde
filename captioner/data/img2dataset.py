"""Reader for image-text pairs in the layout `img2dataset` writes (the tool LAION, Conceptual
Captions and most web caption sets are downloaded with).

Expected files (its "files" output format)::

    data_dir/
      00000/                  one folder per shard
        000000000.jpg         the photo
        000000000.txt         its caption (UTF-8, one line)
        000000000.json        source URL, original size, EXIF (read only for its "caption" when the .txt is missing)
        ...
      00001/
      ...

A split is one or more shard folders: ``split="00000+00001+00002"`` (or a list). The keys
img2dataset writes are global (shard 00001 starts at 000010000), so a photo's file name names it
across shards. A photo whose caption is missing, empty or not UTF-8, and a caption without its
photo, are skipped and counted in ``metadata["skipped"]`` (a warning names the first few); a
shard folder that does not exist is an InputError naming it.
"""

from __future__ import annotations

import json
import logging
import os

from captioner.data.caption_dataset import CaptionDataset
from captioner.errors import InputError

__all__ = ["load_img2dataset", "split_shards", "IMAGE_EXTENSIONS"]

log = logging.getLogger(__name__)
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")


def split_shards(split) -> list[str]:
    """"00000+00001" or ["00000", "00001"] -> ["00000", "00001"] (InputError when empty)."""
    shards = [s.strip() for s in (split.split("+") if isinstance(split, str) else split) if s and s.strip()]
    if not shards:
        raise InputError(f"img2dataset split {split!r}: name one or more shard folders, e.g. 00000+00001")
    return shards


def _caption(stem) -> tuple[str | None, str | None]:
    """(caption, None) from STEM.txt, else STEM.json's "caption"; (None, why) when there is none."""
    try:
        with open(stem + ".txt", "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        try:
            with open(stem + ".json", encoding="utf-8") as f:
                text = json.load(f).get("caption")
        except (OSError, ValueError, AttributeError):
            return None, "no .txt caption"
        raw = text.encode("utf-8") if isinstance(text, str) else b""
    except OSError as e:
        return None, f"caption cannot be read ({e.strerror})"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "caption is not UTF-8"
    text = " ".join(text.split())
    return (text, None) if text else (None, "empty caption")


def load_img2dataset(data_dir, split="00000", name="img2dataset") -> CaptionDataset:
    """The photos of the shard folders of `split` under `data_dir` with their captions (one each),
    in key order; see the module docstring."""
    images, captions, skipped = [], {}, []
    for shard in split_shards(split):
        folder = os.path.join(os.fspath(data_dir), shard)
        if not os.path.isdir(folder):
            raise InputError(f"{folder}: no such shard folder (img2dataset layout: DATA_DIR/00000/000000000.jpg "
                             "with .txt captions)")
        names = sorted(os.listdir(folder))
        photos = {os.path.splitext(n)[0]: n for n in names if n.lower().endswith(IMAGE_EXTENSIONS)}
        for stem in sorted({os.path.splitext(n)[0] for n in names if n.endswith(".txt")} - set(photos)):
            skipped.append((os.path.join(folder, stem + ".txt"), "caption without a photo"))
        for stem, file_name in sorted(photos.items()):
            path = os.path.abspath(os.path.join(folder, file_name))
            caption, why = _caption(os.path.join(folder, stem))
            if caption is None:
                skipped.append((path, why))
                continue
            images.append(path)
            captions[path] = [caption]
    if skipped:
        log.warning("%s: %d files skipped, e.g. %s", data_dir, len(skipped),
                    "; ".join(f"{p}: {why}" for p, why in skipped[:3]))
    if not images:
        raise InputError(f"{data_dir} split {split}: no photo with a caption found (img2dataset layout: "
                         "SHARD/KEY.jpg beside SHARD/KEY.txt)")
    split_name = "+".join(split_shards(split))
    return CaptionDataset(images, captions, name=name, split=split_name,
                          metadata={"skipped": len(skipped), "shards": split_shards(split)})
