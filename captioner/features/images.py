"""Image loading that is safe for user files.

`load_image` honours EXIF orientation, converts every mode to RGB, refuses decompression
bombs and raises `ImageError` naming the file for anything unreadable, so batch jobs can
report the file and go on.
"""

import contextlib
import io
import os
import threading
import warnings

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from captioner.errors import ImageError
from captioner.features.paths import list_files

# A 20,000 x 20,000 image is 400 megapixels; anything larger is treated as a bomb.
MAX_PIXELS = 200_000_000

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff")
# The formats users mean by "images" (decided by the bytes, whatever the name); Pillow knows
# some 40 more (EPS, PSD, ICNS, FITS, ...), whose decoders are no business of a caption job.
# (JPEG covers MPO, the JPEG variant many phone cameras write.)
IMAGE_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF")


def _to_rgb(image):
    """Convert any PIL mode (L, P, RGBA, CMYK, I;16, ...) to RGB."""
    if image.mode == "RGB":
        return image
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16/32-bit greyscale: rescale to 8 bits instead of clipping.
        arr = np.asarray(image, dtype=np.float64)
        hi = arr.max() if arr.size else 0
        arr = arr * (255.0 / hi) if hi > 255 else arr
        return Image.fromarray(arr.clip(0, 255).astype(np.uint8), "L").convert("RGB")
    if image.mode == "F":
        arr = np.asarray(image, dtype=np.float64)
        lo, hi = (arr.min(), arr.max()) if arr.size else (0, 0)
        arr = (arr - lo) * (255.0 / (hi - lo)) if hi > lo else np.zeros_like(arr)
        return Image.fromarray(arr.astype(np.uint8), "L").convert("RGB")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        # Composite transparent pixels on white, as a viewer shows them.
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


_limit_lock = threading.Lock()
_limit_users = 0
_limit_saved = None


@contextlib.contextmanager
def pixel_limit():
    """Pillow's process-wide ``Image.MAX_IMAGE_PIXELS`` at MAX_PIXELS while any thread opens an
    image, and back to what it was when the last one is done. (A save and restore per call raced:
    two threads of the server could leave the raised limit in place for good, and what an upload
    was told then depended on what ran before it.)"""
    global _limit_users, _limit_saved
    with _limit_lock:
        if _limit_users == 0:
            _limit_saved = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = MAX_PIXELS
        _limit_users += 1
    try:
        yield
    finally:
        with _limit_lock:
            _limit_users -= 1
            if _limit_users == 0:
                Image.MAX_IMAGE_PIXELS = _limit_saved


def open_image(source, name=None):
    """Open `source` (path, bytes or file object) as an RGB PIL image.

    Raises ImageError(name, reason) for a missing, truncated, non-image or oversized file.
    """
    name = name or (str(source) if isinstance(source, (str, os.PathLike)) else "<upload>")
    if isinstance(source, (str, os.PathLike)):
        from captioner.features.paths import not_a_regular_file

        reason = not_a_regular_file(source)  # a FIFO named x.jpg would block the whole batch
        if reason:
            raise ImageError(name, reason)
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        with warnings.catch_warnings(), pixel_limit():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(source, formats=IMAGE_FORMATS) as image:
                image.seek(0)  # first frame of a GIF / animated WebP
                image = ImageOps.exif_transpose(image)
                image.load()
                return _to_rgb(image)
    except FileNotFoundError:
        raise ImageError(name, "file not found") from None
    except IsADirectoryError:
        raise ImageError(name, "is a directory, not an image") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageError(name, f"refused: too many pixels (decompression bomb?): {exc}") from None
    except UnidentifiedImageError:
        raise ImageError(name, "not an image file (unknown or unsupported format; JPEG, PNG, WebP, GIF, BMP "
                               "and TIFF are read)") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageError(name, f"cannot decode image: {exc}") from None


class TooManyPixels(ImageError):
    """An image with more pixels than the limit it was decoded under (a server answers 413)."""


def decode_image_bytes(data, name, max_pixels, limit_text=None, reserve=None):
    """Image bytes (an upload) -> an RGB PIL image, as `open_image`, with the size read from the
    header first: an image of more than `max_pixels` is refused before it is decoded (TooManyPixels,
    `limit_text` saying the limit). `reserve(pixels)`: a context manager held while the image
    decodes (a server's budget of pixels in flight). ImageError(name, reason) for an empty,
    non-image or truncated file. What the app's and the server's uploads go through."""
    if not data:
        raise ImageError(name, "the file is empty")
    limit_text = limit_text or f"at most {max_pixels} pixels"
    try:
        with pixel_limit(), Image.open(io.BytesIO(data), formats=IMAGE_FORMATS) as probe:  # the header only
            width, height = probe.size
    except Image.DecompressionBombError as exc:  # PIL refuses even to open it
        raise TooManyPixels(name, f"too many pixels: {exc} ({limit_text})") from None
    except Exception:  # noqa: BLE001 - open_image below names the problem
        width = height = 0
    if width * height > max_pixels:
        raise TooManyPixels(name, f"too many pixels: {width}x{height} ({limit_text})")
    with reserve(width * height) if reserve is not None else contextlib.nullcontext():
        try:
            return open_image(data, name=name)
        except ImageError:
            raise
        except Exception as exc:  # noqa: BLE001 - any decoder failure is a bad file, said plainly
            raise ImageError(name, f"cannot decode image: {type(exc).__name__}: {exc}") from None


def model_pixels(image, size):
    """An opened RGB PIL image -> uint8 (height, width, 3) at `size` = (height, width): resized to
    exactly that shape without cropping (bilinear, antialiased), the geometry the bundled models were
    trained on. THE resize of the project: extraction, batch captioning, the server and the app go
    through it (and `tf_resize_like_pillow` is its graph twin, tested equal)."""
    height, width = size
    if image.size != (width, height):
        image = image.resize((width, height), Image.BILINEAR)
    return np.asarray(image, dtype=np.uint8)


def load_image(source, size=None, name=None):
    """Load `source` as an RGB uint8 array (H, W, 3); with `size=(height, width)`, `model_pixels`."""
    image = open_image(source, name=name)
    if size is not None:
        return model_pixels(image, size)
    return np.asarray(image, dtype=np.uint8)


def list_images(paths, recursive=True):
    """Expand files, folders (recursed) and globs into a sorted, de-duplicated list of files.

    Folders contribute files with an image extension; explicit files are kept whatever
    their extension so a broken or misnamed file is reported rather than silently skipped.
    """
    return list_files(paths, IMAGE_EXTENSIONS, recursive)


# Pillow's fixed-point resampling (libImaging/Resample.c, 8 bits per channel): weights are
# rounded to integers of PRECISION_BITS fractional bits, sums rounded half up and clipped.
_PRECISION_BITS = 32 - 8 - 2


def _pillow_taps(in_size, out_size):
    """(first input index (out,), integer weights (out, taps)) of Pillow's antialiased bilinear
    filter from `in_size` (scalar int tensor) to `out_size` (int) samples."""
    import tensorflow as tf

    f64 = tf.float64
    in_f = tf.cast(in_size, f64)
    scale = in_f / out_size
    filterscale = tf.maximum(scale, 1.0)
    support = filterscale  # the bilinear (triangle) filter has support 1
    taps = tf.cast(tf.math.ceil(support), tf.int32) * 2 + 1
    center = (tf.range(out_size, dtype=f64) + 0.5) * scale  # (out,)
    xmin = tf.maximum(tf.cast(center - support + 0.5, tf.int32), 0)  # C (int) casts truncate, as tf.cast
    xmax = tf.minimum(tf.cast(center + support + 0.5, tf.int32), in_size)  # (out,) exclusive
    x = xmin[:, None] + tf.range(taps)[None, :]  # (out, taps) absolute input index
    arg = (tf.cast(x, f64) - center[:, None] + 0.5) * (1.0 / filterscale)
    w = tf.maximum(1.0 - tf.abs(arg), 0.0)
    w = tf.where(x < xmax[:, None], w, 0.0)
    total = tf.reduce_sum(w, axis=1, keepdims=True)
    w = tf.where(total != 0.0, w / tf.where(total != 0.0, total, 1.0), w)
    kk = tf.floor(0.5 + w * float(1 << _PRECISION_BITS))  # the weights are >= 0
    return xmin, tf.minimum(x, in_size - 1), kk


def _pillow_pass(image, out_size, axis):
    """Resample uint8-valued float64 `image` (H, W, C) along `axis` (0 or 1) to `out_size`."""
    import tensorflow as tf

    _, index, kk = _pillow_taps(tf.shape(image)[axis], out_size)  # (out, taps)
    taps = tf.gather(image, index, axis=axis)  # axis 1: (H, out, taps, C); axis 0: (out, taps, W, C)
    if axis == 1:
        total = tf.einsum("hotc,ot->hoc", taps, kk)
    else:
        total = tf.einsum("otwc,ot->owc", taps, kk)
    half = float(1 << (_PRECISION_BITS - 1))
    return tf.clip_by_value(tf.floor((total + half) / float(1 << _PRECISION_BITS)), 0.0, 255.0)


def tf_resize_like_pillow(image, size):
    """Graph twin of `load_image`'s resize: uint8 (H, W, 3) -> uint8 (h, w, 3) at size=(h, w),
    Pillow's antialiased bilinear filter with its fixed-point arithmetic (horizontal pass, then
    vertical, each rounded to 8 bits), so the pixels equal Pillow's `Image.resize`."""
    import tensorflow as tf

    height, width = size
    x = tf.cast(image, tf.float64)
    shape = tf.shape(x)
    x = tf.cond(shape[1] != width, lambda: _pillow_pass(x, width, 1), lambda: x)
    x = tf.cond(shape[0] != height, lambda: _pillow_pass(x, height, 0), lambda: x)
    return tf.cast(tf.ensure_shape(x, [height, width, None]), tf.uint8)
