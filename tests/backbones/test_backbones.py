"""Backbones: real ImageNet predictions from the offline EfficientNet-Lite0 weights, and the
grid / pooled interface of every backbone."""

import numpy as np
import pytest
from PIL import Image

from captioner.backbones import get_backbone
from captioner.errors import WeightsError

# ImageNet-1k class indices (the standard synset order).
CAT_CLASSES = {281, 282, 283, 284, 285}  # tabby, tiger cat, Persian, Siamese, Egyptian cat
ESPRESSO = 967


@pytest.fixture(scope="module")
def lite0():
    return get_backbone("efficientnet_lite0")


def _photo(fn, size=224):
    return np.asarray(Image.fromarray(fn()).convert("RGB").resize((size, size), Image.BILINEAR))


def test_efficientnet_lite0_predicts_real_photos(lite0):
    skdata = pytest.importorskip("skimage.data")
    pixels = np.stack([_photo(skdata.chelsea), _photo(skdata.coffee)]).astype("float32")
    logits = lite0.model.predict(pixels, verbose=0)["logits"]
    top5 = np.argsort(-logits, axis=-1)[:, :5]
    assert CAT_CLASSES & set(top5[0]), f"chelsea (a cat) predicted as {top5[0]}"
    assert ESPRESSO in top5[1], f"coffee (espresso) predicted as {top5[1]}"
    assert top5[0, 0] in CAT_CLASSES and top5[1, 0] == ESPRESSO  # and top-1 too


def test_lite0_interface(lite0):
    assert lite0.input_size == (224, 224)
    assert lite0.grid_shape == (7, 7)
    assert lite0.grid_channels == 1280 and lite0.pooled_dim == 1280
    grid, pooled = lite0.features(np.zeros((2, 224, 224, 3), np.uint8))
    assert grid.shape == (2, 49, 1280) and pooled.shape == (2, 1280)
    np.testing.assert_allclose(pooled, grid.mean(1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,size,grid,channels,pooled", [
    ("inception_v3", 299, (8, 8), 2048, 2048),
    ("resnet50", 224, (7, 7), 2048, 2048),
    ("vgg16", 224, (14, 14), 512, 4096),  # pooled = fc7
    ("mobilenet_v2", 224, (7, 7), 1280, 1280),
])
def test_keras_application_shapes(name, size, grid, channels, pooled):
    bb = get_backbone(name, weights=None)
    assert bb.input_size == (size, size)
    assert bb.grid_shape == grid and bb.grid_channels == channels and bb.pooled_dim == pooled


def test_keras_application_from_a_weights_file(tmp_path):
    bb = get_backbone("mobilenet_v2", weights=None)
    base = [layer for layer in bb.model.layers if layer.name.endswith("_features")][0]
    inner = base.get_layer("Conv1")
    path = tmp_path / "mobilenet_v2.weights.h5"
    # Save the include_top network's weights, as Keras' files hold them, and load by path.
    import keras
    net = keras.applications.MobileNetV2(weights=None)
    net.get_layer("Conv1").set_weights([np.full_like(w, 0.5) for w in net.get_layer("Conv1").get_weights()])
    net.save_weights(path)
    loaded = get_backbone("mobilenet_v2", weights=str(path))
    inner = [layer for layer in loaded.model.layers if layer.name.endswith("_features")][0].get_layer("Conv1")
    assert np.all(inner.get_weights()[0] == 0.5)


def test_imagenet_download_failure_says_how_to_pass_a_file(monkeypatch):
    import keras

    def offline(*args, **kwargs):
        raise Exception("URL fetch failure: [Errno -2] Name or service not known")

    # Simulate the offline download exactly where Keras does it; online this would download.
    monkeypatch.setattr(keras.utils, "get_file", offline)
    monkeypatch.setattr("keras.src.applications.mobilenet_v2.file_utils.get_file", offline)
    with pytest.raises(WeightsError, match="pass its path"):
        get_backbone("mobilenet_v2", weights="imagenet")


def test_unknown_backbone():
    with pytest.raises(WeightsError, match="unknown backbone"):
        get_backbone("alexnet")


def test_lite_weights_file_missing(tmp_path):
    with pytest.raises(WeightsError, match="not found"):
        get_backbone("efficientnet_lite0", weights=str(tmp_path / "missing.pth"))


def test_efficientnet_lite2_predicts_real_photos_on_its_9x9_grid():
    """Lite2 (the bundled captioner's backbone): 260 px in, 9x9x1280 grid, real predictions."""
    skdata = pytest.importorskip("skimage.data")
    lite2 = get_backbone("efficientnet_lite2")
    assert lite2.input_size == (260, 260) and lite2.grid_shape == (9, 9) and lite2.grid_channels == 1280
    pixels = np.stack([_photo(skdata.chelsea, 260), _photo(skdata.coffee, 260)]).astype("float32")
    logits = lite2.model.predict(pixels, verbose=0)["logits"]
    top1 = np.argmax(logits, axis=-1)
    assert top1[0] in CAT_CLASSES, f"chelsea (a cat) predicted as {top1[0]}"
    assert top1[1] == ESPRESSO, f"coffee (espresso) predicted as {top1[1]}"


def test_feature_model_drops_the_classifier_and_shares_the_weights(lite0):
    from captioner.backbones.backbone import features_only

    slim = lite0.feature_model
    assert set(slim.output) == {"grid", "pooled"} and "logits" in lite0.model.output
    assert lite0.model.count_params() - slim.count_params() == 1280 * 1000 + 1000
    assert features_only(slim) is slim
    pixels = np.random.default_rng(0).integers(0, 256, (1, *lite0.input_size, 3)).astype(np.uint8)
    full, part = lite0.model(pixels), slim(pixels)
    np.testing.assert_array_equal(full["pooled"].numpy(), part["pooled"].numpy())
    np.testing.assert_array_equal(full["grid"].numpy(), part["grid"].numpy())
