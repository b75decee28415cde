"""The in-memory form every caption reader returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from captioner.errors import InputError

__all__ = ["CaptionDataset"]


@dataclass
class CaptionDataset:
    """Images of one split and their reference captions.

    Attributes:
        image_paths: absolute image paths, in the split file's order, no duplicates.
        captions: ``{image path: [caption, ...]}``, raw caption text (not tokenized),
            at least one caption for every path in ``image_paths``.
        name: dataset name (``"flickr8k"``, ``"coco"``, ...).
        split: split name (``"train"``, ``"dev"``, ``"val"``, ...).
    """

    image_paths: list[str]
    captions: dict[str, list[str]]
    name: str = ""
    split: str = ""
    metadata: dict = field(default_factory=dict)

    item: ClassVar[str] = "image"  # what a path is, in messages
    per_path: ClassVar[tuple] = ("captions",)  # the {path: ...} fields a subset keeps for its paths

    def __post_init__(self):
        if len(set(self.image_paths)) != len(self.image_paths):
            raise InputError(f"{self.name}/{self.split}: duplicate {self.item} paths")
        missing = [p for p in self.image_paths if not self.captions.get(p)]
        if missing:
            raise InputError(f"{self.name}/{self.split}: {len(missing)} {self.item}s have no captions, "
                             f"e.g. {missing[0]}")

    def __len__(self) -> int:
        """Number of images."""
        return len(self.image_paths)

    @property
    def num_captions(self) -> int:
        """Total number of captions over all images."""
        return sum(len(self.captions[p]) for p in self.image_paths)

    def pairs(self) -> list[tuple[str, str]]:
        """Every ``(image path, caption)`` pair, images in order (one row per caption)."""
        return [(p, c) for p in self.image_paths for c in self.captions[p]]

    def subset(self, n: int) -> "CaptionDataset":
        """The first ``n`` images with their captions (for quick runs), of the same class."""
        paths = self.image_paths[:n]
        return dataclasses.replace(self, image_paths=paths, metadata=dict(self.metadata),
                                   **{key: {p: getattr(self, key)[p] for p in paths} for key in self.per_path})
