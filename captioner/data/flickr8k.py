"""Reader for Flickr8k in its public layout (Hodosh, Young, Hockenmaier 2013).

Expected files (the names of the original distribution)::

    data_dir/
      Flickr8k.token.txt          <image>#<k><TAB><caption>, 5 captions per image
      Flickr_8k.trainImages.txt   one image file name per line
      Flickr_8k.devImages.txt
      Flickr_8k.testImages.txt
      Images/                     the JPEGs (the original zip calls it Flicker8k_Dataset/)
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from captioner.data.caption_dataset import CaptionDataset
from captioner.errors import InputError

__all__ = ["load_flickr8k", "read_flickr8k_captions", "SPLIT_FILES", "TOKEN_FILE", "IMAGE_DIRS"]

TOKEN_FILE = "Flickr8k.token.txt"
SPLIT_FILES = {
    "train": "Flickr_8k.trainImages.txt",
    "dev": "Flickr_8k.devImages.txt",
    "test": "Flickr_8k.testImages.txt",
}
# Image folder names, in order of preference ("Flicker8k_Dataset" is the original zip's spelling).
IMAGE_DIRS = ("Images", "Flicker8k_Dataset", "Flickr8k_Dataset")
_SPLIT_ALIASES = {"val": "dev"}


def _read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file (BOM and CR tolerated); clear errors when unreadable."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None


def read_flickr8k_captions(token_file) -> dict[str, list[str]]:
    """Parse ``Flickr8k.token.txt`` into ``{image file name: [caption, ...]}``.

    Captions keep their text (stripped) and are ordered by their ``#k`` number. Blank
    lines are skipped. A line without a tab, without a ``#<number>`` suffix on the image
    name, with an empty caption, or repeating an ``image#k`` raises InputError naming
    ``file:line``.
    """
    path = Path(token_file)
    numbered: dict[str, dict[int, str]] = {}
    seen_at: dict[tuple[str, int], int] = {}
    for line_no, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        where = f"{path}:{line_no}"
        if "\t" not in line:
            raise InputError(f"{where}: expected '<image>#<k><TAB><caption>', found no tab: {line[:80]!r}")
        key, caption = line.split("\t", 1)
        image, hash_sign, number = key.strip().rpartition("#")
        if not hash_sign or not image or not number.isdigit():
            raise InputError(f"{where}: expected '<image>#<k>' before the tab, found {key[:80]!r}")
        caption = caption.strip()
        if not caption:
            raise InputError(f"{where}: empty caption for {key!r}")
        k = int(number)
        if (image, k) in seen_at:
            raise InputError(f"{where}: {key!r} repeats line {seen_at[(image, k)]}")
        seen_at[(image, k)] = line_no
        numbered.setdefault(image, {})[k] = caption
    return {image: [caps[k] for k in sorted(caps)] for image, caps in numbered.items()}


def read_image_list(path) -> list[str]:
    """Image file names of a split or list file (one a line, blanks skipped), in order, duplicates
    dropped; InputError naming file:line for a line that is not one file name."""
    path = Path(path)
    names: list[str] = []
    seen: set[str] = set()
    for line_no, line in enumerate(_read_lines(path), start=1):
        name = line.strip()
        if not name:
            continue
        if any(c in name for c in "\t#/ "):
            raise InputError(f"{path}:{line_no}: expected one image file name per line, found {line[:80]!r}")
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _find_images_dir(data_dir: Path, images_dir) -> Path:
    if images_dir is not None:
        images_dir = Path(images_dir)
        if not images_dir.is_dir():
            raise InputError(f"{images_dir}: images directory not found")
        return images_dir
    for name in IMAGE_DIRS:
        if (data_dir / name).is_dir():
            return data_dir / name
    tried = ", ".join(str(data_dir / n) for n in IMAGE_DIRS)
    raise InputError(f"no Flickr8k images directory found (tried {tried}); pass images_dir=")


def _warn_skipped(what: str, names: list[str], reason: str) -> None:
    shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
    warnings.warn(f"{what}: {len(names)} image(s) {reason}, skipped: {shown}", stacklevel=3)


def load_flickr8k(data_dir, split: str = "train", images_dir=None, token_file=None) -> CaptionDataset:
    """Load one split of Flickr8k.

    Args:
        data_dir: folder holding the token and split files (and usually the images).
        split: ``"train"``, ``"dev"`` (alias ``"val"``) or ``"test"``.
        images_dir: the JPEG folder; default ``data_dir/Images`` or
            ``data_dir/Flicker8k_Dataset``.
        token_file: the caption file; default ``data_dir/Flickr8k.token.txt``.

    Returns:
        A :class:`CaptionDataset` with absolute image paths, in split-file order.
        Images listed in the split but lacking captions or an image file are skipped
        with one warning per cause (count and first names).

    Raises:
        InputError: unknown split, a missing split/token file or images folder (the
            message names the expected path), or a malformed line (``file:line``).
    """
    split_key = _SPLIT_ALIASES.get(split, split)
    if split_key not in SPLIT_FILES:
        raise InputError(f"unknown Flickr8k split {split!r}; expected one of {sorted(SPLIT_FILES)}")
    data_dir = Path(data_dir)
    split_file = data_dir / SPLIT_FILES[split_key]
    if not split_file.is_file():
        raise InputError(f"{split_file}: Flickr8k {split_key} split file not found (expected this path)")
    token_path = Path(token_file) if token_file is not None else data_dir / TOKEN_FILE
    if not token_path.is_file():
        raise InputError(f"{token_path}: Flickr8k caption file not found (expected this path)")
    images_path = _find_images_dir(data_dir, images_dir)

    names = read_image_list(split_file)
    captions = read_flickr8k_captions(token_path)
    present = set(os.listdir(images_path))
    what = f"Flickr8k {split_key} ({split_file})"
    no_captions = [n for n in names if n not in captions]
    if no_captions:
        _warn_skipped(what, no_captions, f"have no captions in {token_path}")
    no_file = [n for n in names if n in captions and n not in present]
    if no_file:
        _warn_skipped(what, no_file, f"have no image file in {images_path}")

    root = os.path.abspath(images_path)
    kept = [n for n in names if n in captions and n in present]
    paths = [os.path.join(root, n) for n in kept]
    return CaptionDataset(
        image_paths=paths,
        captions={p: list(captions[n]) for p, n in zip(paths, kept)},
        name="flickr8k",
        split=split_key,
        metadata={
            "split_file": str(split_file),
            "token_file": str(token_path),
            "images_dir": root,
            "skipped_no_captions": len(no_captions),
            "skipped_no_file": len(no_file),
        },
    )
