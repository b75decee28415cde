"""The frame-attention strip: one row per word over the sampled frames, dimmed by weight."""

import numpy as np
import pytest
from PIL import Image

from captioner.errors import InputError
from captioner.visualize.frame_attention import frame_attention_figure, save_frame_attention_png


def frames(k=4, size=32):
    return np.full((k, size, size, 3), 200, np.uint8)


def test_rows_and_dimming_follow_the_weights():
    weights = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5], [0.25, 0.25, 0.25, 0.25]], np.float32)
    small = frame_attention_figure(frames(), ["a", "dog"], weights[:2], show_end=False, thumb=32)
    full = frame_attention_figure(frames(), ["a", "dog"], weights, timestamps=[0, 0.5, 1, 1.5], thumb=32)
    assert full.height - small.height == 32 + 6 + 6 + 2  # the <end> row added
    pixels = np.asarray(full)
    # the first word's row: frame 1 at full brightness, frame 2 dimmed to 0.35
    label_w = full.width - 4 * (32 + 6) - 6
    head = full.height - 3 * (32 + 6 + 6 + 2) - 6
    y = head + 16
    bright = pixels[y, label_w + 16]
    dim = pixels[y, label_w + (32 + 6) + 16]
    assert bright[0] == 200 and abs(int(dim[0]) - 70) <= 1


def test_title_and_png(tmp_path):
    path = save_frame_attention_png(str(tmp_path / "s.png"), frames(3), ["hi"], np.full((2, 3), 1 / 3),
                                    title="hi there")
    with Image.open(path) as im:
        assert im.format == "PNG" and im.mode == "RGB"


@pytest.mark.parametrize("shape", [(2, 5), (5, 4), (4,)])
def test_shape_mismatch_is_an_input_error(shape):
    with pytest.raises(InputError, match="attention: expected shape"):
        frame_attention_figure(frames(), ["a", "dog"], np.zeros(shape))
    with pytest.raises(InputError, match="frames: expected"):
        frame_attention_figure(np.zeros((0, 8, 8, 3)), [], np.zeros((1, 0)))
