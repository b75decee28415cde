"""Image decoding in TensorFlow ops, the graph twin of `captioner.features.images.open_image`
for what an exported model meets in practice, so that a SavedModel captions a phone photo or a
transparent PNG as the Keras model does:

* EXIF orientation of JPEGs: the Orientation tag (0x0112) of IFD0 in the APP1 "Exif" segment,
  either byte order, applied as Pillow's `ImageOps.exif_transpose` does (values 2..8; anything
  else, or no EXIF, leaves the image as it is).
* PNG alpha (colour types 4, grey + alpha, and 6, RGBA): transparent pixels composited on white
  with the integer arithmetic of Pillow's `Image.alpha_composite` (libImaging/AlphaComposite.c),
  bit-exact.

Not done here (the Python path does them): orientation stored in XMP or in PNG/WebP EXIF
chunks, palette or grey PNGs made transparent by a tRNS chunk, transparent GIFs.

All parsing reads a fixed-size head of the bytes through `tf.gather` with clamped indices, so a
truncated or hostile header gives "no orientation", never an out-of-range error.
"""

import tensorflow as tf

_HEAD = 1 << 18  # bytes of a JPEG searched for the Exif segment (APP segments are <= 64 KiB each)
_MAX_SEGMENTS = 32  # JPEG segments walked before the Exif segment
_MAX_ENTRIES = 64  # IFD0 entries read (Orientation is among the first few)


def _head(data, size):
    """The first `size` bytes of scalar string `data` as int32 (size,), zero-padded."""
    n = tf.minimum(tf.strings.length(data), size)
    raw = tf.cast(tf.io.decode_raw(tf.strings.substr(data, 0, n), tf.uint8), tf.int32)  # (n,)
    return tf.pad(raw, [[0, size - n]])  # (size,)


def jpeg_orientation(data):
    """EXIF orientation (int32 scalar, 1..8; 1 when absent or unreadable) of JPEG bytes."""
    b = _head(data, _HEAD)  # (HEAD,)

    def at(pos):
        return tf.gather(b, tf.clip_by_value(pos, 0, _HEAD - 1))

    exif_magic = tf.constant([0x45, 0x78, 0x69, 0x66, 0, 0])  # "Exif\0\0"

    def cond(i, pos, found):
        return (i < _MAX_SEGMENTS) & (found < 0) & (pos + 4 < _HEAD)

    def body(i, pos, found):
        marker = at(pos + 1)
        length = at(pos + 2) * 256 + at(pos + 3)  # includes its own two bytes
        valid = (at(pos) == 0xFF) & (marker != 0xDA) & (marker != 0xD9) & (length >= 2)
        is_exif = valid & (marker == 0xE1) & tf.reduce_all(at(pos + 4 + tf.range(6)) == exif_magic)
        found = tf.where(is_exif, pos + 10, found)
        # an invalid marker ends the walk (pos past the head)
        pos = tf.where(valid, pos + 2 + length, _HEAD)
        return i + 1, pos, found

    _, _, tiff = tf.while_loop(cond, body, [tf.constant(0), tf.constant(2), tf.constant(-1)])
    little = (at(tiff) == 0x49) & (at(tiff + 1) == 0x49)  # "II"; "MM" is big-endian

    def u16(pos):
        lo, hi = at(pos), at(pos + 1)
        return tf.where(little, lo + 256 * hi, 256 * lo + hi)

    def u32(pos):
        return tf.where(little, u16(pos) + 65536 * u16(pos + 2), 65536 * u16(pos) + u16(pos + 2))

    ifd = tiff + u32(tiff + 4)
    count = u16(ifd)
    entries = ifd + 2 + 12 * tf.range(_MAX_ENTRIES)  # (E,)
    tags, kinds = u16(entries), u16(entries + 2)
    values = tf.where(kinds == 4, u32(entries + 8), u16(entries + 8))  # SHORT (3) as Pillow writes, or LONG
    hit = (tf.range(_MAX_ENTRIES) < count) & (tags == 0x0112) & ((kinds == 3) | (kinds == 4))
    value = tf.reduce_max(tf.where(hit, values, 0))  # one Orientation tag
    ok = (tiff >= 0) & (tiff + 8 < _HEAD) & ((at(tiff) == 0x49) | (at(tiff) == 0x4D)) & (value >= 1) & (value <= 8)
    return tf.where(ok, value, 1)


def apply_orientation(image, orientation):
    """(H, W, C) image -> as displayed for EXIF `orientation` (Pillow's exif_transpose)."""
    def transpose(x):
        return tf.transpose(x, [1, 0, 2])

    branches = [
        lambda: image,                               # 1: as stored
        lambda: image[:, ::-1],                      # 2: mirrored left-right
        lambda: image[::-1, ::-1],                   # 3: rotated 180
        lambda: image[::-1],                         # 4: mirrored top-bottom
        lambda: transpose(image),                    # 5: transposed
        lambda: tf.image.rot90(image, k=3),          # 6: rotated 90 clockwise (Pillow ROTATE_270)
        lambda: transpose(image)[::-1, ::-1],        # 7: transverse
        lambda: tf.image.rot90(image, k=1),          # 8: rotated 90 counter-clockwise (Pillow ROTATE_90)
    ]
    return tf.switch_case(tf.clip_by_value(orientation - 1, 0, 7), branches)


def png_has_alpha(data):
    """Whether PNG bytes declare an alpha channel (IHDR colour type 4 or 6)."""
    b = _head(data, 32)
    signature = tf.constant([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    ihdr = tf.constant([0x49, 0x48, 0x44, 0x52])
    return (tf.reduce_all(b[:8] == signature) & tf.reduce_all(b[12:16] == ihdr)
            & ((b[25] == 4) | (b[25] == 6)))


def composite_on_white(rgba):
    """uint8 (H, W, 4) -> uint8 (H, W, 3): Pillow's alpha_composite over opaque white, bit-exact.

    With an opaque background its fixed-point formula (PRECISION_BITS 7) reduces to
    out = div255((src * a + 255 * (255 - a)) * 128 + 128 * 128) >> 7, div255(x) = ((x >> 8) + x) >> 8."""
    x = tf.cast(rgba, tf.int32)
    color, a = x[..., :3], x[..., 3:]  # (H, W, 3), (H, W, 1)
    tmp = color * a * 128 + 255 * (255 - a) * 128 + (0x80 << 7)
    out = tf.bitwise.right_shift(tf.bitwise.right_shift(tf.bitwise.right_shift(tmp, 8) + tmp, 8), 7)
    return tf.cast(out, tf.uint8)


def decode_rgb(data):
    """Encoded image bytes (scalar string) -> uint8 (H, W, 3) as `open_image` gives it: JPEG with
    libjpeg's accurate integer DCT (Pillow's; TensorFlow's default is the fast one) and its EXIF
    orientation, PNG with alpha composited on white, other formats by `tf.io.decode_image`
    (first frame, grey repeated to RGB)."""
    def jpeg():
        image = tf.io.decode_jpeg(data, channels=3, dct_method="INTEGER_ACCURATE")  # (H, W, 3)
        return apply_orientation(image, jpeg_orientation(data))

    def other():
        return tf.cond(
            png_has_alpha(data),
            lambda: composite_on_white(tf.io.decode_png(data, channels=4)),
            lambda: tf.ensure_shape(tf.io.decode_image(data, channels=3, expand_animations=False, dtype=tf.uint8),
                                    [None, None, 3]))

    return tf.ensure_shape(tf.cond(tf.io.is_jpeg(data), jpeg, other), [None, None, 3])
