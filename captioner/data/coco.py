"""Reader for Karpathy's split files (``dataset_coco.json``, ``dataset_flickr8k.json``,
``dataset_flickr30k.json``; Karpathy & Fei-Fei 2015).

Schema (the fields used here)::

    {"dataset": "coco",
     "images": [{"filepath": "val2014",            # optional (COCO only)
                 "filename": "COCO_val2014_000000391895.jpg",
                 "split": "train" | "val" | "test" | "restval",
                 "sentences": [{"raw": "A man ...", "tokens": ["a", "man", ...]}, ...]},
                ...]}

Image paths are ``images_root/filepath/filename`` (or ``images_root/filename``).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from captioner.data.caption_dataset import CaptionDataset
from captioner.data.json_file import read_json
from captioner.errors import InputError

__all__ = ["load_coco_karpathy", "KARPATHY_SPLITS"]

KARPATHY_SPLITS = ("train", "val", "test", "restval")


def _captions_of(entry: dict, where: str) -> list[str]:
    sentences = entry.get("sentences")
    if not isinstance(sentences, list):
        raise InputError(f"{where}: 'sentences' must be a list")
    captions = []
    for j, sentence in enumerate(sentences):
        if not isinstance(sentence, dict):
            raise InputError(f"{where}: sentences[{j}] must be an object")
        raw = sentence.get("raw")
        if isinstance(raw, str) and raw.strip():
            captions.append(raw.strip())
            continue
        tokens = sentence.get("tokens")
        if isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens):
            captions.append(" ".join(tokens))
            continue
        raise InputError(f"{where}: sentences[{j}] has neither a 'raw' string nor a 'tokens' list")
    return captions


def load_coco_karpathy(
    json_path,
    images_root,
    split: str = "train",
    include_restval: bool = False,
    check_files: bool = True,
) -> CaptionDataset:
    """Load one split of a Karpathy-format caption file.

    Args:
        json_path: ``dataset_coco.json`` (or the flickr8k/flickr30k twin).
        images_root: folder the ``filepath``/``filename`` fields are relative to (for
            COCO the folder holding ``train2014/`` and ``val2014/``).
        split: ``"train"``, ``"val"``, ``"test"`` or ``"restval"``.
        include_restval: with ``split="train"``, also take the ``restval`` images (the
            usual 113k-image COCO training set).
        check_files: skip, with one warning, images whose file does not exist.

    Returns:
        A :class:`CaptionDataset` (raw captions; ``split`` is ``"train+restval"`` when
        restval is included), images in file order.

    Raises:
        InputError: unknown split, unreadable or malformed JSON (naming the file and the
            offending ``images[i]``).
    """
    if split not in KARPATHY_SPLITS:
        raise InputError(f"unknown split {split!r}; expected one of {list(KARPATHY_SPLITS)}")
    json_path = Path(json_path)
    data = read_json(json_path, encoding="utf-8-sig")
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise InputError(f"{json_path}: expected an object with an 'images' list (Karpathy split format)")
    wanted = {split} | ({"restval"} if include_restval and split == "train" else set())
    root = os.path.abspath(images_root)

    captions: dict[str, list[str]] = {}
    paths: list[str] = []
    no_sentences: list[str] = []
    for i, entry in enumerate(data["images"]):
        where = f"{json_path}: images[{i}]"
        if not isinstance(entry, dict):
            raise InputError(f"{where} must be an object")
        filename, entry_split = entry.get("filename"), entry.get("split")
        if not isinstance(filename, str) or not filename:
            raise InputError(f"{where} has no 'filename' string")
        if not isinstance(entry_split, str):
            raise InputError(f"{where} ({filename}) has no 'split' string")
        if entry_split not in wanted:
            continue
        filepath = entry.get("filepath") or ""
        if not isinstance(filepath, str):
            raise InputError(f"{where} ({filename}): 'filepath' must be a string")
        path = os.path.normpath(os.path.join(root, filepath, filename))
        image_captions = _captions_of(entry, f"{where} ({filename})")
        if not image_captions:
            no_sentences.append(filename)
            continue
        if path in captions:  # the same image listed twice: merge its captions
            captions[path].extend(image_captions)
        else:
            captions[path] = image_captions
            paths.append(path)

    name = str(data.get("dataset", "karpathy"))
    split_name = "+".join(s for s in ("train", "restval") if s in wanted) if split == "train" else split
    if no_sentences:
        warnings.warn(f"{json_path} [{split_name}]: {len(no_sentences)} image(s) have no sentences, skipped: "
                      + ", ".join(no_sentences[:5]), stacklevel=2)
    missing: list[str] = []
    if check_files:
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            warnings.warn(f"{json_path} [{split_name}]: {len(missing)} image file(s) not found under {root}, "
                          f"skipped: {shown}", stacklevel=2)
            missing_set = set(missing)
            paths = [p for p in paths if p not in missing_set]
            captions = {p: captions[p] for p in paths}
    return CaptionDataset(
        image_paths=paths,
        captions=captions,
        name=name,
        split=split_name,
        metadata={"json": str(json_path), "images_root": root,
                  "skipped_no_sentences": len(no_sentences), "skipped_no_file": len(missing)},
    )
