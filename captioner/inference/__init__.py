"""Inference engines built on the saved models: batch captioning of image files."""

from captioner.inference.batch import (
    CaptionReport,
    attention_png_name,
    caption_images,
    load_captioner,
    parse_shard,
    read_output,
    select_shard,
    shard_of,
)

__all__ = [
    "CaptionReport", "attention_png_name", "caption_images", "load_captioner", "parse_shard", "read_output",
    "select_shard", "shard_of",
]
