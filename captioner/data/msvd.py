"""Reader for MSVD-style caption csv files: clip ids and their captions.

Two csv forms are read, told apart by their header:

* the MSR Video Description Corpus file as distributed (``MSR Video Description
  Corpus.csv``): columns ``VideoID, Start, End, WorkerID, Source, AnnotationTime, Language,
  Description``; the clip id is ``<VideoID>_<Start>_<End>`` (the names of ``YouTubeClips/``)
  and only rows of one language (default English) are kept;
* a plain csv with a clip id column (``clip_id``, ``video_id``, ``video``, ``id`` or
  ``name``) and a caption column (``caption``, ``description``, ``sentence`` or ``text``),
  one row per caption, as `captioner.data.synthetic_video` and `photo_pan_video` write.

Videos are found under ``videos_dir`` (searched recursively) by file stem = clip id, any
video extension. A split is a text file of clip ids, one a line.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import warnings
from typing import ClassVar

from captioner.data.caption_dataset import CaptionDataset
from captioner.errors import InputError, text_file_errors

__all__ = ["VideoCaptionDataset", "load_msvd", "read_msvd_captions", "index_videos", "read_id_list"]

ID_COLUMNS = ("clip_id", "video_id", "videoid", "video", "id", "name")
CAPTION_COLUMNS = ("caption", "description", "sentence", "text")


@dataclasses.dataclass
class VideoCaptionDataset(CaptionDataset):
    """Clips of one split and their reference captions: a `CaptionDataset` whose paths are clips
    (`video_paths`, the same list as `image_paths`), with each clip's id (`ids`: {path: clip id})."""

    ids: dict = dataclasses.field(default_factory=dict)

    item: ClassVar[str] = "clip"
    per_path: ClassVar[tuple] = ("captions", "ids")

    @property
    def video_paths(self):
        return self.image_paths


def _open_csv(path):
    with text_file_errors(path), open(path, encoding="utf-8-sig", newline="") as f:
        try:
            return list(csv.reader(f))
        except csv.Error as e:
            raise InputError(f"{path}: malformed csv ({e})") from None


def read_msvd_captions(csv_path, language="English"):
    """{clip id: [caption, ...]} from an MSVD-style csv (either form), in file order."""
    rows = _open_csv(csv_path)
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise InputError(f"{csv_path}: empty csv")
    header = [h.strip().lower().replace(" ", "") for h in rows[0]]
    captions = {}
    if {"videoid", "start", "end", "description"} <= set(header):
        vid, st, en, desc = (header.index(k) for k in ("videoid", "start", "end", "description"))
        lang = header.index("language") if "language" in header else None
        for line_no, row in enumerate(rows[1:], start=2):
            if len(row) <= max(vid, st, en, desc):
                raise InputError(f"{csv_path}:{line_no}: expected {len(header)} columns, found {len(row)}")
            if lang is not None and language and row[lang].strip() != language:
                continue
            text = row[desc].strip()
            if text:
                captions.setdefault(f"{row[vid].strip()}_{row[st].strip()}_{row[en].strip()}", []).append(text)
        return captions
    id_col = next((header.index(c) for c in ID_COLUMNS if c in header), None)
    cap_col = next((header.index(c) for c in CAPTION_COLUMNS if c in header), None)
    if id_col is None or cap_col is None:
        raise InputError(
            f"{csv_path}:1: header {rows[0]!r} names no clip id column ({', '.join(ID_COLUMNS)}) and caption "
            f"column ({', '.join(CAPTION_COLUMNS)}), and is not the MSR Video Description Corpus header"
        )
    for line_no, row in enumerate(rows[1:], start=2):
        if len(row) <= max(id_col, cap_col):
            raise InputError(f"{csv_path}:{line_no}: expected {len(header)} columns, found {len(row)}")
        clip, text = row[id_col].strip(), row[cap_col].strip()
        if not clip:
            raise InputError(f"{csv_path}:{line_no}: empty clip id")
        if text:
            captions.setdefault(clip, []).append(text)
    return captions


def index_videos(videos_dir):
    """{file stem: absolute path} of every video file under `videos_dir` (recursive)."""
    from captioner.features.video import VIDEO_EXTENSIONS

    if not os.path.isdir(videos_dir):
        raise InputError(f"{videos_dir}: videos directory not found")
    found = {}
    for root, dirs, files in os.walk(videos_dir):
        dirs.sort()
        for f in sorted(files):
            stem, ext = os.path.splitext(f)
            if ext.lower() in VIDEO_EXTENSIONS:
                path = os.path.abspath(os.path.join(root, f))
                if stem in found:
                    raise InputError(f"{videos_dir}: two videos are named {stem!r}: {found[stem]} and {path}")
                found[stem] = path
    return found


def read_id_list(path):
    """Clip ids of a split file, one a line (blank lines skipped, duplicates dropped)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            ids = [line.strip() for line in f]
    except FileNotFoundError:
        raise InputError(f"{path}: split file not found") from None
    return list(dict.fromkeys(i for i in ids if i))


def load_msvd(csv_path, videos_dir, split_file=None, split="", language="English", name="msvd"):
    """Clips with captions, in split-file order (csv order without a split file).

    Clips without a video file or without captions are skipped with one warning each cause.
    """
    captions = read_msvd_captions(csv_path, language=language)
    videos = index_videos(videos_dir)
    wanted = read_id_list(split_file) if split_file else list(captions)
    no_caption = [c for c in wanted if c not in captions]
    no_video = [c for c in wanted if c in captions and c not in videos]
    for names, why in ((no_caption, f"have no captions in {csv_path}"), (no_video, f"have no video in {videos_dir}")):
        if names:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            warnings.warn(f"{name} {split or ''}: {len(names)} clip(s) {why}, skipped: {shown}", stacklevel=2)
    kept = [c for c in wanted if c in captions and c in videos]
    paths = [videos[c] for c in kept]
    return VideoCaptionDataset(
        image_paths=paths, captions={videos[c]: captions[c] for c in kept}, ids={videos[c]: c for c in kept},
        name=name, split=split,
        metadata={"csv": os.fspath(csv_path), "videos_dir": os.fspath(videos_dir),
                  "split_file": os.fspath(split_file) if split_file else None,
                  "skipped_no_captions": len(no_caption), "skipped_no_video": len(no_video)},
    )
