import io
import os

import numpy as np
import pytest
from PIL import Image

from captioner.errors import InputError
from captioner.visualize import (
    alignment_heatmap,
    attention_overlay,
    caption_attention_figure,
    png_bytes,
    save_alignment_heatmap,
    save_caption_attention_png,
    upsample_attention,
)


def _grey(h=60, w=90, value=128):
    return np.full((h, w, 3), value, np.uint8)


def _brightness(img):
    return img.astype(np.float64).mean(axis=-1)  # (H, W)


def test_overlay_shape_dtype_and_peak_brightens_the_right_region():
    image = _grey()
    amap = np.zeros((4, 6), np.float32)
    amap[0, 5] = 1.0  # top-right cell
    out = attention_overlay(image, amap)
    assert out.shape == image.shape and out.dtype == np.uint8
    b = _brightness(out)
    top_right = b[:15, -15:].mean()
    bottom_left = b[-15:, :15].mean()
    assert top_right > bottom_left + 60
    assert np.unravel_index(np.argmax(b), b.shape)[1] > 60  # brightest pixel is on the right
    # moving the peak moves the bright region
    amap2 = np.zeros((4, 6), np.float32)
    amap2[3, 0] = 1.0
    b2 = _brightness(attention_overlay(image, amap2))
    assert b2[-15:, :15].mean() > b2[:15, -15:].mean() + 60


def test_overlay_is_smooth_not_blocky():
    amap = np.zeros((7, 7), np.float32)
    amap[3, 3] = 1.0
    up = upsample_attention(amap, (224, 224))
    assert up.shape == (224, 224) and up.min() >= 0.0 and up.max() == pytest.approx(1.0)
    # neighbouring pixels differ little (a nearest-neighbour upsampling jumps by 1 at cell edges)
    assert np.abs(np.diff(up, axis=0)).max() < 0.1 and np.abs(np.diff(up, axis=1)).max() < 0.1
    peak = np.unravel_index(np.argmax(up), up.shape)
    assert abs(peak[0] - 112) <= 16 and abs(peak[1] - 112) <= 16


def test_uniform_map_favours_no_region_and_non_uint8_images_are_accepted():
    out = attention_overlay(_grey().astype(np.float32), np.full((3, 3), 1 / 9))
    assert out.dtype == np.uint8 and out.std() < 1.0
    grey2d = attention_overlay(np.full((20, 30), 100, np.uint8), np.eye(2))
    assert grey2d.shape == (20, 30, 3)


@pytest.mark.parametrize("image, amap, match", [
    (np.zeros((10, 10, 5), np.uint8), np.ones((2, 2)), "RGB image"),
    (np.zeros((10, 10, 3), np.uint8), np.ones((2, 2, 2)), "2-D array"),
    (np.zeros((10, 10, 3), np.uint8), np.array([[np.nan, 1.0]]), "NaN"),
])
def test_overlay_rejects_bad_input(image, amap, match):
    with pytest.raises(InputError, match=match):
        attention_overlay(image, amap)


def test_caption_figure_grid_and_png(tmp_path):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (120, 160, 3)).astype(np.uint8)
    words = ["a", "dog", "runs", "on", "the", "grass"]
    attention = rng.random((len(words) + 1, 7, 7)).astype(np.float32)
    fig = caption_attention_figure(image, words, attention, title="a dog runs on the grass", columns=4, panel=100)
    assert isinstance(fig, Image.Image) and fig.mode == "RGB"
    # 7 panels (image + 6 words) in 4 columns: 2 rows of 100-pixel-wide panels
    assert 4 * 100 < fig.width < 4 * 100 + 60
    assert 2 * 75 < fig.height < 2 * 75 + 150
    decoded = Image.open(io.BytesIO(png_bytes(fig)))
    assert decoded.format == "PNG" and decoded.size == fig.size
    # the maps are drawn: other maps give another figure, the same maps the same one
    same = caption_attention_figure(image, words, attention, title="a dog runs on the grass", columns=4, panel=100)
    other = caption_attention_figure(image, words, attention[::-1], title="a dog runs on the grass", columns=4,
                                     panel=100)
    assert np.array_equal(np.asarray(fig), np.asarray(same))
    assert not np.array_equal(np.asarray(fig), np.asarray(other))
    path = save_caption_attention_png(tmp_path / "fig.png", image, words, attention, title="t")
    assert os.listdir(tmp_path) == ["fig.png"]  # written atomically: no temp file left
    with Image.open(path) as im:
        im.load()
        assert im.format == "PNG"


def test_caption_figure_shows_end_step_and_empty_caption():
    image = np.zeros((32, 32, 3), np.uint8)
    one_row = caption_attention_figure(image, ["a", "b"], np.ones((3, 2, 2)), columns=10, panel=50)
    with_end = caption_attention_figure(image, ["a", "b"], np.ones((3, 2, 2)), columns=10, panel=50, show_end=True)
    assert with_end.width > one_row.width  # one more panel
    empty = caption_attention_figure(image, [], np.ones((1, 2, 2)), title="(empty caption)")
    assert empty.width < one_row.width * 2


def test_caption_figure_rejects_mismatched_attention():
    with pytest.raises(InputError, match=r"expected shape \(3, h, w\) for 2 words"):
        caption_attention_figure(np.zeros((8, 8, 3), np.uint8), ["a", "b"], np.ones((5, 2, 2)))


def test_alignment_heatmap_png(tmp_path):
    src = ["the", "cat", "sat", "<end>"]
    tgt = ["le", "chat", "était", "assis", "<end>"]
    weights = np.full((5, 4), 0.02)
    weights[[0, 1, 2, 3, 4], [0, 1, 2, 2, 3]] = 0.94
    png = alignment_heatmap(src, tgt, weights, title="fr-en")
    img = Image.open(io.BytesIO(png))
    assert img.format == "PNG"
    arr = np.asarray(img.convert("L"))
    assert (arr < 30).mean() > 0.05 and (arr > 225).mean() > 0.05  # dark cells and bright cells/labels
    bigger = Image.open(io.BytesIO(alignment_heatmap(src * 3, tgt * 3, np.tile(weights, (3, 3)))))
    assert bigger.width > img.width and bigger.height > img.height
    path = save_alignment_heatmap(tmp_path / "align.png", src, tgt, weights)
    with Image.open(path) as im:
        assert im.format == "PNG"
    with pytest.raises(InputError, match="does not match 5 target x 4 source"):
        alignment_heatmap(src, tgt, weights.T)
