"""Attention overlays on images and alignment heat maps for sequence models."""

from captioner.visualize.alignment_heatmap import alignment_figure, alignment_heatmap, save_alignment_heatmap
from captioner.visualize.attention_overlay import (
    attention_overlay,
    caption_attention_figure,
    png_bytes,
    save_caption_attention_png,
    upsample_attention,
    write_png_atomic,
)

__all__ = [
    "alignment_figure", "alignment_heatmap", "attention_overlay", "caption_attention_figure", "png_bytes",
    "save_alignment_heatmap", "save_caption_attention_png", "upsample_attention", "write_png_atomic",
]
