"""Attention maps drawn over images: one overlay, and a caption's word-by-word figure.

`attention_overlay` upsamples a coarse attention map (the backbone grid, e.g. 7x7) smoothly
to the image size, normalises it and blends an OpenCV colormap over a version of the image
dimmed where attention is low, so the attended region stands out as in Xu et al. (2015).
`caption_attention_figure` lays out the image and one panel per word of a caption, each
panel the word over its attention map; `save_caption_attention_png` writes it atomically.

Drawing uses PIL + OpenCV only (no pyplot state), so it is safe to call from worker threads.
"""

import functools
import io
import os

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from captioner.errors import InputError

COLORMAPS = {
    "inferno": cv2.COLORMAP_INFERNO, "jet": cv2.COLORMAP_JET, "turbo": cv2.COLORMAP_TURBO,
    "viridis": cv2.COLORMAP_VIRIDIS, "magma": cv2.COLORMAP_MAGMA, "hot": cv2.COLORMAP_HOT,
    "plasma": cv2.COLORMAP_PLASMA, "parula": cv2.COLORMAP_PARULA,
}
DEFAULT_COLORMAP = "inferno"  # luminance rises with the value: attended regions look brighter

_BACKGROUND = (255, 255, 255)
_TEXT = (20, 20, 20)


def as_rgb_uint8(image, name="image"):
    """Return `image` (PIL image or array (H, W, 3) / (H, W)) as a uint8 RGB array."""
    if isinstance(image, Image.Image):
        image = np.asarray(image.convert("RGB"))
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.repeat(arr[..., None], 3, axis=-1)
    if arr.ndim != 3 or arr.shape[-1] not in (3, 4) or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InputError(f"{name}: expected an RGB image array (H, W, 3), got shape {arr.shape}")
    arr = arr[..., :3]
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.number):
            raise InputError(f"{name}: expected numeric pixels, got dtype {arr.dtype}")
        arr = np.clip(np.nan_to_num(arr.astype(np.float64)), 0, 255).round().astype(np.uint8)
    return np.ascontiguousarray(arr)


def _colormap_id(colormap):
    if isinstance(colormap, (int, np.integer)):
        return int(colormap)
    try:
        return COLORMAPS[str(colormap).lower()]
    except KeyError:
        raise InputError(f"unknown colormap {colormap!r}; choose from {', '.join(sorted(COLORMAPS))}") from None


def upsample_attention(alpha_map, size, normalize=True):
    """Resize an attention map (h, w) smoothly to `size` = (H, W); values in [0, 1].

    Bicubic interpolation, clipped to the original value range (bicubic overshoots), then
    min-max normalised (a uniform map becomes all zeros: nothing stands out). With
    `normalize=False` the values are only clipped to [0, 1].
    """
    amap = np.asarray(alpha_map, dtype=np.float32)
    if amap.ndim == 1 and amap.size == 1:
        amap = amap.reshape(1, 1)
    if amap.ndim != 2 or amap.size == 0:
        raise InputError(f"attention map: expected a 2-D array (h, w), got shape {amap.shape}")
    if not np.all(np.isfinite(amap)):
        raise InputError("attention map: contains NaN or infinite values")
    height, width = int(size[0]), int(size[1])
    lo, hi = float(amap.min()), float(amap.max())
    up = cv2.resize(amap, (width, height), interpolation=cv2.INTER_CUBIC)  # (H, W)
    up = np.clip(up, lo, hi)
    if normalize:
        if hi - lo <= 1e-6 * max(abs(hi), abs(lo)) or hi - lo <= 1e-12:  # (near) uniform map
            return np.zeros((height, width), np.float32)
        lo, hi = float(up.min()), float(up.max())  # the peak of the smooth map becomes 1
        return ((up - lo) / max(hi - lo, 1e-12)).astype(np.float32)
    return np.clip(up, 0.0, 1.0).astype(np.float32)


def attention_overlay(image_rgb, alpha_map, colormap=DEFAULT_COLORMAP, opacity=0.5, dim=0.4, normalize=True):
    """Blend attention `alpha_map` (h, w) over `image_rgb` (H, W, 3) uint8 -> (H, W, 3) uint8.

    The map is upsampled smoothly to the image size and normalised to [0, 1] (see
    `upsample_attention`); the image is dimmed towards `dim` of its brightness where the
    map is 0 (kept as is where it is 1), and the colormap of the map is blended over it
    with `opacity`.
    """
    image = as_rgb_uint8(image_rgb)
    if not 0.0 <= opacity <= 1.0:
        raise InputError(f"opacity must be in [0, 1], got {opacity}")
    if not 0.0 <= dim <= 1.0:
        raise InputError(f"dim must be in [0, 1], got {dim}")
    height, width = image.shape[:2]
    weight = upsample_attention(alpha_map, (height, width), normalize=normalize)  # (H, W) in [0, 1]
    heat_bgr = cv2.applyColorMap(np.round(weight * 255).astype(np.uint8), _colormap_id(colormap))
    heat = heat_bgr[..., ::-1].astype(np.float32)  # (H, W, 3) RGB
    lit = image.astype(np.float32) * (dim + (1.0 - dim) * weight[..., None])  # (H, W, 3)
    out = (1.0 - opacity) * lit + opacity * heat
    return np.clip(out, 0, 255).round().astype(np.uint8)


@functools.lru_cache(maxsize=8)
def _font(size):
    """DejaVu Sans (shipped with matplotlib) if present, else Pillow's built-in scalable font."""
    try:
        import matplotlib

        path = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
        if os.path.exists(path):
            return ImageFont.truetype(path, size)
    except (ImportError, OSError):  # pragma: no cover - matplotlib is a requirement
        pass
    return ImageFont.load_default(size=size)


def _text_width(draw, text, font):
    left, _, right, _ = draw.textbbox((0, 0), text, font=font)
    return right - left


def _fit_text(draw, text, font, width):
    """Shorten `text` with an ellipsis until it fits in `width` pixels."""
    if _text_width(draw, text, font) <= width:
        return text
    while text and _text_width(draw, text + "…", font) > width:
        text = text[:-1]
    return text + "…"


def _wrap(draw, text, font, width):
    """Greedy word wrap of `text` to lines at most `width` pixels wide."""
    lines = []
    for paragraph in str(text).splitlines() or [""]:
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if _text_width(draw, trial, font) <= width or not line:
                line = trial
            else:
                lines.append(line)
                line = word
        lines.append(_fit_text(draw, line, font, width))
    return lines


def _panel_size(image_shape, panel):
    """(height, width) of a panel whose longer side is `panel` pixels, keeping the aspect ratio."""
    h, w = image_shape[:2]
    scale = panel / max(h, w)
    return max(1, round(h * scale)), max(1, round(w * scale))


def caption_attention_figure(image, words, attention, title=None, columns=5, panel=224,
                             colormap=DEFAULT_COLORMAP, show_end=False, font_size=18):
    """A grid: the image, then one panel per word (the word above its attention overlay).

    Args:
        image: the captioned image (H, W, 3) uint8 array or PIL image, any size.
        words: the caption's words (no <start>/<end>).
        attention: (len(words) + 1, h, w) one map per word then the <end> step, as
            `ImageCaptioner.caption` returns; (len(words), h, w) is accepted too.
        title: text written above the grid (wrapped), e.g. the caption and its score.
        columns: panels per row; panel: pixels of each panel's longer side.
        show_end: also draw the map of the <end> step.

    Returns a PIL RGB image.
    """
    rgb = as_rgb_uint8(image)
    words = [str(w) for w in words]
    maps = np.asarray(attention, dtype=np.float32)
    if maps.ndim == 2 and maps.shape[0] in (len(words), len(words) + 1):  # (steps, R) with R = 1
        maps = maps[:, :, None]
    if maps.ndim != 3 or maps.shape[0] not in (len(words), len(words) + 1):
        raise InputError(f"attention: expected shape ({len(words) + 1}, h, w) for {len(words)} words, "
                         f"got {maps.shape}")
    labels = list(words)
    if show_end and maps.shape[0] == len(words) + 1:
        labels.append("<end>")
    maps = maps[:len(labels)]
    if columns < 1 or panel < 8:
        raise InputError(f"columns must be >= 1 and panel >= 8, got {columns}, {panel}")

    ph, pw = _panel_size(rgb.shape, panel)
    shown = cv2.resize(rgb, (pw, ph), interpolation=cv2.INTER_AREA if max(rgb.shape[:2]) > panel
                       else cv2.INTER_LINEAR)  # (ph, pw, 3)
    tiles = [("image", shown)] + [(label, attention_overlay(shown, m, colormap=colormap))
                                  for label, m in zip(labels, maps)]
    cols = min(columns, len(tiles))
    rows = -(-len(tiles) // cols)
    font = _font(font_size)
    title_font = _font(font_size + 2)
    pad = 8
    label_h = font_size + 10
    width = cols * pw + (cols + 1) * pad
    scratch = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    title_lines = _wrap(scratch, title, title_font, width - 2 * pad) if title else []
    title_h = len(title_lines) * (font_size + 8) + (pad if title_lines else 0)
    height = title_h + rows * (label_h + ph + pad) + pad
    canvas = Image.new("RGB", (width, height), _BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    y = pad
    for line in title_lines:
        draw.text((pad, y), line, fill=_TEXT, font=title_font)
        y += font_size + 8
    for i, (label, tile) in enumerate(tiles):
        r, c = divmod(i, cols)
        x0 = pad + c * (pw + pad)
        y0 = title_h + pad + r * (label_h + ph + pad)
        text = _fit_text(draw, label, font, pw)
        draw.text((x0 + (pw - _text_width(draw, text, font)) // 2, y0 + 2), text, fill=_TEXT, font=font)
        canvas.paste(Image.fromarray(tile), (x0, y0 + label_h))
    return canvas


def png_bytes(figure):
    """Encode a PIL image (or an RGB uint8 array) as PNG bytes."""
    if not isinstance(figure, Image.Image):
        figure = Image.fromarray(np.asarray(figure, dtype=np.uint8))
    buf = io.BytesIO()
    figure.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def write_png_atomic(path, data):
    """Write PNG bytes (or a PIL image) to `path` atomically; returns the path."""
    from captioner.io import atomic_path

    if isinstance(data, Image.Image):
        data = png_bytes(data)
    with atomic_path(path, ".png") as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
    return os.fspath(path)


def save_caption_attention_png(path, image, words, attention, title=None, **kwargs):
    """Draw `caption_attention_figure(...)` and write it to `path` atomically; returns the path."""
    return write_png_atomic(path, caption_attention_figure(image, words, attention, title=title, **kwargs))

