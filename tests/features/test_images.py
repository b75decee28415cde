import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from captioner.errors import ImageError
from captioner.features.images import list_images, load_image, open_image


def _png_with_size(path, width, height):
    """A tiny valid PNG whose header claims width x height (a decompression bomb)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16))
                     + chunk(b"IEND", b""))


def test_exif_orientation_is_applied(tmp_path):
    arr = np.zeros((20, 40, 3), np.uint8)
    arr[:, :20] = 255  # left half white
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise on display
    path = tmp_path / "rotated.jpg"
    Image.fromarray(arr).save(path, exif=exif, quality=95)
    out = load_image(path)
    assert out.shape == (40, 20, 3)  # displayed portrait
    assert out[:20].mean() > 200 and out[20:].mean() < 60  # white half is now on top


@pytest.mark.parametrize("mode", ["L", "P", "RGBA", "CMYK", "I;16", "LA", "1", "F"])
def test_any_mode_becomes_rgb(tmp_path, mode):
    img = Image.new("RGB", (16, 12), (200, 30, 30))
    if mode == "I;16":
        img = Image.fromarray((np.arange(192).reshape(12, 16) * 300).astype(np.uint16))
    elif mode == "F":
        img = Image.fromarray(np.linspace(0, 1, 192, dtype=np.float32).reshape(12, 16))
    else:
        img = img.convert(mode)
    ext = "tif" if mode in ("I;16", "CMYK", "F") else "png"
    path = tmp_path / f"img.{ext}"
    img.save(path)
    out = load_image(path)
    assert out.dtype == np.uint8 and out.shape == (12, 16, 3)


def test_transparent_pixels_composite_on_white(tmp_path):
    img = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    path = tmp_path / "clear.png"
    img.save(path)
    assert load_image(path).min() == 255


def test_resize_without_crop(tmp_path):
    path = tmp_path / "wide.png"
    Image.new("RGB", (100, 50), (10, 20, 30)).save(path)
    out = load_image(path, size=(224, 224))
    assert out.shape == (224, 224, 3)
    assert tuple(out[0, 0]) == (10, 20, 30)


def test_gif_first_frame(tmp_path):
    frames = [Image.new("RGB", (8, 8), c) for c in ((255, 0, 0), (0, 0, 255))]
    path = tmp_path / "anim.gif"
    frames[0].save(path, save_all=True, append_images=frames[1:])
    out = load_image(path)
    assert out[..., 0].mean() > 200 and out[..., 2].mean() < 50


def test_decompression_bomb_is_refused(tmp_path):
    path = tmp_path / "bomb.png"
    _png_with_size(path, 50_000, 50_000)
    with pytest.raises(ImageError, match="bomb"):
        load_image(path)


@pytest.mark.parametrize("content,reason", [
    (b"", "not an image"),
    (b"hello, I am text", "not an image"),
])
def test_garbage_files(tmp_path, content, reason):
    path = tmp_path / "broken.jpg"
    path.write_bytes(content)
    with pytest.raises(ImageError, match=reason) as info:
        load_image(path)
    assert "broken.jpg" in str(info.value)


def test_truncated_jpeg(tmp_path):
    path = tmp_path / "cut.jpg"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(path)
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ImageError, match="cut.jpg"):
        load_image(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ImageError, match="not found"):
        load_image(tmp_path / "nope.png")
    with pytest.raises(ImageError, match="directory"):
        load_image(tmp_path)


def test_bytes_source_and_name():
    with pytest.raises(ImageError, match="upload.png"):
        open_image(b"nope", name="upload.png")


def test_list_images_recurses_folders_and_globs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").mkdir()
    for rel in ("x.jpg", "a/y.PNG", "a/b/z.webp", "a/notes.txt"):
        (tmp_path / rel).write_bytes(b"")
    found = list_images([tmp_path])
    assert [p.split(str(tmp_path))[1] for p in found] == ["/x.jpg", "/a/y.PNG", "/a/b/z.webp"]
    assert list_images([str(tmp_path / "*.jpg")]) == [str(tmp_path / "x.jpg")]
    # explicit files are kept whatever their extension, duplicates removed
    explicit = str(tmp_path / "a" / "notes.txt")
    assert list_images([explicit, explicit]) == [explicit]


@pytest.mark.parametrize("fmt", ["PPM", "ICO", "PCX", "TGA", "SGI", "IM", "DDS"])
def test_only_the_formats_users_mean_are_decoded(tmp_path, fmt):
    """Issue 23 item 10: Pillow accepted all of its ~43 formats."""
    from PIL import Image

    from captioner.features.images import open_image

    path = tmp_path / "photo.png"  # the name says PNG; the bytes decide
    Image.new("RGB", (16, 16), (200, 10, 10)).save(path, format=fmt)
    with pytest.raises(ImageError, match="not an image file"):
        open_image(path)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF"])
def test_the_usual_formats_still_decode(tmp_path, fmt):
    from PIL import Image

    from captioner.features.images import open_image

    path = tmp_path / "photo.bin"
    Image.new("RGB", (16, 16), (200, 10, 10)).save(path, format=fmt)
    assert open_image(path).size == (16, 16)


def test_the_pixel_limit_is_restored_when_threads_interleave():
    """Two threads opening images at once (the server): the first raises Pillow's limit, the last
    one out restores it, whatever the order they leave in (a save and restore per call left the
    raised limit behind when the first one in left first)."""
    import threading

    from PIL import Image

    from captioner.features.images import MAX_PIXELS, pixel_limit

    before = Image.MAX_IMAGE_PIXELS
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with pixel_limit():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second():
        a_in.wait(10)
        with pixel_limit():
            b_in.set()
            a_out.wait(10)
            assert Image.MAX_IMAGE_PIXELS == MAX_PIXELS  # still raised while this one decodes

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert a_out.is_set() and Image.MAX_IMAGE_PIXELS == before


def test_many_threads_decoding_leave_pillows_limit_as_it_was(tmp_path):
    import io
    from concurrent.futures import ThreadPoolExecutor

    from PIL import Image

    from captioner.features.images import open_image

    before = Image.MAX_IMAGE_PIXELS
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (10, 20, 30)).save(buffer, "PNG")
    with ThreadPoolExecutor(8) as pool:
        sizes = list(pool.map(lambda _: open_image(buffer.getvalue()).size, range(200)))
    assert set(sizes) == {(64, 48)} and Image.MAX_IMAGE_PIXELS == before
