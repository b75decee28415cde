"""The TensorFlow image decoding of exported models gives `open_image`'s pixels: EXIF
orientation of JPEGs (all eight values, both byte orders, Pillow's own EXIF and a hand-made
one), PNG alpha composited on white bit-exactly (RGBA and grey + alpha, every alpha value), and
no orientation for a broken or missing EXIF."""

import io
import struct

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from captioner.features.images import load_image
from captioner.features.tf_images import decode_rgb, jpeg_orientation


def _photo(h=24, w=40):
    y, x = np.mgrid[0:h, 0:w]
    arr = np.stack([x * 255 // w, y * 255 // h, (x + y) * 255 // (w + h)], -1).astype(np.uint8)
    arr[2:6, 3:9] = (250, 10, 10)  # a red patch near the top-left: every orientation looks different
    return arr


def _exif(orientation, big_endian, kind=3):
    """A minimal APP1 payload: "Exif\\0\\0", TIFF header, IFD0 with a Make tag and Orientation."""
    e = ">" if big_endian else "<"
    head = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
    make = struct.pack(e + "HHI4s", 0x010F, 2, 4, b"cam\0")  # ASCII, fits in the value field
    value = struct.pack(e + "H2x", orientation) if kind == 3 else struct.pack(e + "I", orientation)
    orient = struct.pack(e + "HHI", 0x0112, kind, 1) + value
    return b"Exif\0\0" + head + struct.pack(e + "H", 2) + make + orient + struct.pack(e + "I", 0)


def _jpeg(exif=None):
    buf = io.BytesIO()
    Image.fromarray(_photo()).save(buf, "JPEG", quality=92, **({"exif": exif} if exif is not None else {}))
    return buf.getvalue()


def _pillow_exif(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def _same(data, size=None):
    want = load_image(data, size=size)
    got = decode_rgb(tf.constant(data)).numpy()
    if size is not None:
        from captioner.export.saved_model import decode_image

        got = decode_image(tf.constant(data), size).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("big_endian", [False, True])
def test_jpeg_orientation_matches_pillow(orientation, big_endian):
    data = _jpeg(_exif(orientation, big_endian))
    assert int(jpeg_orientation(tf.constant(data))) == orientation
    _same(data)
    _same(data, size=(9, 13))


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_pillow_written_exif_and_long_values(orientation):
    for data in (_jpeg(_pillow_exif(orientation)), _jpeg(_exif(orientation, True, kind=4))):
        assert int(jpeg_orientation(tf.constant(data))) == orientation
        _same(data)


def test_no_or_broken_exif_leaves_the_image_as_stored():
    plain = _jpeg()
    assert int(jpeg_orientation(tf.constant(plain))) == 1
    _same(plain)
    for value in (0, 9, 65535):
        data = _jpeg(_exif(value, False))
        assert int(jpeg_orientation(tf.constant(data))) == 1
        _same(data)
    # an IFD offset pointing far outside the file, and a truncated Exif header
    bad = _exif(6, False)
    bad = bad[:10] + struct.pack("<I", 0x7FFFFFF0) + bad[14:]
    assert int(jpeg_orientation(tf.constant(_jpeg(bad)))) == 1
    assert int(jpeg_orientation(tf.constant(b"\xff\xd8\xff\xe1\x00\x08Exif"))) == 1
    assert int(jpeg_orientation(tf.constant(b""))) == 1


@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_png_alpha_is_composited_on_white_like_pillow(mode):
    rng = np.random.default_rng(0)
    color = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    alpha = np.arange(256, dtype=np.uint8).reshape(16, 16)  # every alpha value once
    rgba = np.dstack([color, alpha])
    image = Image.fromarray(rgba, "RGBA")
    if mode == "LA":
        image = Image.fromarray(np.dstack([color[..., 0], alpha]), "LA")
    buf = io.BytesIO()
    image.save(buf, "PNG")
    _same(buf.getvalue())
    _same(buf.getvalue(), size=(7, 5))


def test_opaque_png_and_grey_png_unchanged():
    for arr, mode in ((_photo(), "RGB"), (_photo()[..., 0], "L")):
        buf = io.BytesIO()
        Image.fromarray(arr, mode).save(buf, "PNG")
        _same(buf.getvalue())


def test_real_photo_with_every_orientation():
    sample = __import__("pathlib").Path(__file__).resolve().parents[2] / "assets" / "samples" / "cat.jpg"
    arr = load_image(sample)[:, :-37]  # not square
    for orientation in (1, 5, 6, 7, 8):
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, "JPEG", quality=90, exif=_pillow_exif(orientation))
        _same(buf.getvalue(), size=(260, 260))
