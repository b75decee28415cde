"""Which frames each word of a video caption looked at, as one PNG strip.

    figure = frame_attention_figure(result.frames, result.tokens, result.attention,
                                    timestamps=result.timestamps, title=result.text)

The strip has one row per generated word (then <end>, when the search reached it): the word
on the left, then every sampled frame, dimmed by how little of that word's attention it got
(brightness 0.35 + 0.65 * weight / the row's largest weight, so the frame the word looked at
most is at full brightness), with a bar under each frame whose length is the weight itself
(one row's weights sum to 1). A header row gives each frame's time in the clip.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from captioner.errors import InputError
from captioner.visualize.attention_overlay import _BACKGROUND, _TEXT, _fit_text, _font, _text_width, _wrap, \
    write_png_atomic

_BAR = (230, 120, 20)
_BAR_BACK = (225, 225, 225)


def _thumb(frame, size):
    image = Image.fromarray(np.asarray(frame, dtype=np.uint8))
    scale = size / max(image.size)
    return image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                        Image.Resampling.BILINEAR)


def frame_attention_figure(frames, words, attention, timestamps=None, title=None, thumb=96, font_size=14,
                           show_end=True):
    """A PIL RGB image: one row per word over the sampled frames (module docstring).

    frames (k, H, W, 3) uint8; words: the caption's words; attention (len(words) [+ 1], k),
    as `VideoCaptioner.caption` returns it; timestamps: k seconds, for the header row."""
    frames = np.asarray(frames)
    words = [str(w) for w in words]
    weights = np.asarray(attention, dtype=np.float32)
    if frames.ndim != 4 or frames.shape[-1] != 3 or len(frames) == 0:
        raise InputError(f"frames: expected (k, H, W, 3) with k >= 1, got shape {frames.shape}")
    k = len(frames)
    if weights.ndim != 2 or weights.shape[1] != k or weights.shape[0] not in (len(words), len(words) + 1):
        raise InputError(f"attention: expected shape ({len(words) + 1}, {k}) for {len(words)} words over {k} frames, "
                         f"got {weights.shape}")
    labels = list(words) + (["<end>"] if show_end and weights.shape[0] == len(words) + 1 else [])
    weights = weights[:len(labels)]
    thumbs = [_thumb(f, thumb) for f in frames]
    tw, th = thumbs[0].size
    font, small = _font(font_size), _font(max(9, font_size - 3))
    scratch = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_w = min(160, max([_text_width(scratch, w, font) for w in labels] + [40]) + 12)
    pad, bar_h, head_h = 6, 6, font_size + 8
    width = label_w + k * (tw + pad) + pad
    title_lines = _wrap(scratch, title, _font(font_size + 2), width - 2 * pad) if title else []
    title_h = len(title_lines) * (font_size + 8) + (pad if title_lines else 0)
    row_h = th + bar_h + pad + 2
    height = title_h + head_h + len(labels) * row_h + pad
    canvas = Image.new("RGB", (width, height), _BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    y = pad
    for line in title_lines:
        draw.text((pad, y), line, fill=_TEXT, font=_font(font_size + 2))
        y += font_size + 8
    y = title_h
    for j in range(k):
        text = f"{j + 1}" + (f" · {float(timestamps[j]):.1f}s" if timestamps is not None else "")
        text = _fit_text(draw, text, small, tw)
        draw.text((label_w + j * (tw + pad) + (tw - _text_width(draw, text, small)) // 2, y + 3), text, fill=_TEXT,
                  font=small)
    y += head_h
    for label, row in zip(labels, weights):
        peak = float(row.max()) if row.size else 0.0
        text = _fit_text(draw, label, font, label_w - 8)
        draw.text((pad, y + (th - font_size) // 2), text, fill=_TEXT, font=font)
        for j, (image, w) in enumerate(zip(thumbs, row)):
            x = label_w + j * (tw + pad)
            scale = 0.35 + 0.65 * (float(w) / peak if peak > 0 else 0.0)
            dimmed = np.clip(np.asarray(image, np.float32) * scale, 0, 255).astype(np.uint8)
            canvas.paste(Image.fromarray(dimmed), (x, y))
            draw.rectangle((x, y + th + 2, x + tw - 1, y + th + 1 + bar_h), fill=_BAR_BACK)
            filled = round(float(np.clip(w, 0.0, 1.0)) * (tw - 1))
            if filled > 0:
                draw.rectangle((x, y + th + 2, x + filled, y + th + 1 + bar_h), fill=_BAR)
        y += row_h
    return canvas


def save_frame_attention_png(path, frames, words, attention, timestamps=None, title=None, **kwargs):
    """Draw `frame_attention_figure(...)` and write it to `path` atomically; returns the path."""
    return write_png_atomic(path, frame_attention_figure(frames, words, attention, timestamps, title, **kwargs))
