"""tf_resize_like_pillow: Pillow's antialiased bilinear resize in TensorFlow, bit for bit."""

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from captioner.features.images import tf_resize_like_pillow


@pytest.mark.parametrize("shape, size", [
    ((300, 451), (260, 260)), ((512, 512), (260, 260)), ((224, 224), (260, 260)), ((37, 61), (224, 224)),
    ((1000, 17), (9, 33)), ((260, 260), (260, 260)), ((260, 400), (260, 260)), ((5, 5), (1, 1)),
])
def test_equals_pillow(shape, size):
    rng = np.random.default_rng(sum(shape))
    image = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    image[: shape[0] // 2] = 255 - np.arange(shape[1], dtype=np.uint8)[None, :, None]  # smooth part too
    want = np.asarray(Image.fromarray(image).resize((size[1], size[0]), Image.BILINEAR))
    got = tf_resize_like_pillow(tf.constant(image), size).numpy()
    assert got.dtype == np.uint8 and got.shape == (*size, 3)
    np.testing.assert_array_equal(got, want)


def test_inside_a_graph_with_unknown_input_size():
    fn = tf.function(lambda x: tf_resize_like_pillow(x, (20, 30)),
                     input_signature=[tf.TensorSpec((None, None, 3), tf.uint8)])
    image = np.random.default_rng(0).integers(0, 256, (45, 77, 3), dtype=np.uint8)
    want = np.asarray(Image.fromarray(image).resize((30, 20), Image.BILINEAR))
    np.testing.assert_array_equal(fn(tf.constant(image)).numpy(), want)
