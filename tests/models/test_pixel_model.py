"""PixelModel, the one base of the four pixel wrappers: input size and grid shape through public
Keras API, the bundled files' configs read and written with the same keys, an ImageCaptioner
save -> load in a fresh process, the float32 inference copy."""

import json
import pathlib
import warnings
import zipfile

import keras
import numpy as np
import pytest

import captioner  # noqa: F401  (registers the classes)
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.models.pixel_model import PixelModel, inference_copy
from captioner.models.video_captioner import VideoCaptioner
from captioner.models.video_classifier import VideoClassifier
from captioner.models.vqa_model import VQAModel
from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary
from support.backbones import tiny_backbone  # 32x32 -> (4, 4, 12)
from support import fresh_python

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS = REPO / "assets" / "models"
WORDS = ["a", "dog", "cat", "runs", "on", "the", "grass"]


def tiny_captioner(kind="attention", seed=0):
    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(SPECIAL_TOKENS + tuple(WORDS))
    decoder = CaptionDecoderModel.of(len(vocab), annotation_dim=12, kind=kind, projection_dim=8, embedding_dim=8,
                                  units=16, attention_units=8, dropout=0.0)
    return ImageCaptioner(tiny_backbone(), decoder, vocab, beam_size=2, alpha=0.0, max_length=6,
                          training_config={"seed": seed})


def test_every_pixel_wrapper_shares_the_base():
    for cls in (ImageCaptioner, VQAModel, VideoCaptioner, VideoClassifier):
        assert issubclass(cls, PixelModel)
    assert "_outputs_struct" not in "".join(p.read_text() for p in (REPO / "captioner").rglob("*.py"))


def test_input_size_grid_shape_and_features_from_the_backbone():
    model = tiny_captioner()
    assert model.input_size == (32, 32) and model.grid_shape == (4, 4)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    assert model.features(pixels).shape == (2, 16, 12)  # (B, R, C): grid regions
    assert tiny_captioner(kind="fc-init").features(pixels).shape == (2, 12)  # (B, P): pooled
    assert model.load_pixels(np.zeros((50, 70, 3), np.uint8)).shape == (32, 32, 3)  # resized
    same = pixels[0].astype(np.float32)
    assert model.load_pixels(same).dtype == np.uint8 and np.array_equal(model.load_pixels(same), pixels[0])


def test_config_keys_and_round_trip():
    model = tiny_captioner()
    config = model.get_config()
    assert {"backbone", "decoder", "vocabulary", "beam_size", "alpha", "max_length", "training_config"} <= set(config)
    assert config["vocabulary"] == list(SPECIAL_TOKENS) + WORDS and config["training_config"] == {"seed": 0}
    clone = ImageCaptioner.from_config(json.loads(json.dumps(config)))
    assert clone.vocabulary_tokens == config["vocabulary"] and clone.grid_shape == (4, 4)
    assert (clone.beam_size, clone.alpha, clone.max_length) == (2, 0.0, 6)


BUNDLED = {  # file -> (class, the config keys the file was saved with besides name/trainable/dtype)
    "flickr8k_attention.keras": (ImageCaptioner, {"backbone", "decoder", "vocabulary", "beam_size", "alpha",
                                                  "max_length", "training_config"}),
    "flickr8k_web_attention.keras": (ImageCaptioner, {"backbone", "decoder", "vocabulary", "beam_size", "alpha",
                                                      "max_length", "training_config", "style", "style_chooser"}),
    "easy_vqa.keras": (VQAModel, {"backbone", "classifier", "question_vocabulary", "answers",
                                  "max_question_length", "training_config"}),
    "photo_vqa.keras": (VQAModel, {"backbone", "classifier", "question_vocabulary", "answers",
                                      "max_question_length", "training_config", "min_probability",
                                      "question_starts"}),
    **{name: (VideoCaptioner, {"backbone", "model", "vocabulary", "num_frames", "sample_fps", "beam_size", "alpha",
                               "max_length", "training_config"})
       for name in ("shapes_video_caption.keras", "flickr8k_video_caption.keras")},
    **{name: (VideoClassifier, {"backbone", "model", "class_names", "num_frames", "sample_fps", "training_config"})
       for name in ("shapes_video_classify.keras", "flickr8k_video_activity.keras")},
}


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_files_load_and_write_the_same_config(name):
    path = MODELS / name
    if not path.exists():
        pytest.skip(f"{path} not bundled")
    cls, keys = BUNDLED[name]
    with zipfile.ZipFile(path) as z:
        saved = json.loads(z.read("config.json"))
    assert saved["class_name"] == cls.__name__ and saved["module"] == cls.__module__
    model = keras.models.load_model(path)
    assert type(model) is cls
    config = model.get_config()
    assert keys <= set(saved["config"]) and set(config) == set(saved["config"])
    for key in keys - {"backbone", "decoder", "classifier", "model"}:
        assert json.loads(json.dumps(config[key])) == saved["config"][key], key


def test_image_captioner_save_load_in_a_fresh_process_gives_the_same_captions(tmp_path):
    model = tiny_captioner()
    images = np.random.default_rng(1).integers(0, 256, (3, 32, 32, 3)).astype(np.uint8)
    expected = [(c.text, round(c.score, 5), c.attention.shape) for c in model.caption(list(images))]
    path, arrays = tmp_path / "tiny.keras", tmp_path / "images.npy"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.save(path)
    np.save(arrays, images)
    code = ("import json, keras, numpy as np, captioner\n"
            f"m = keras.models.load_model({str(path)!r})\n"
            f"caps = m.caption(list(np.load({str(arrays)!r})))\n"
            "print(json.dumps([type(m).__name__, m.grid_shape, m.input_size, m.training_config,"
            " [(c.text, round(c.score, 5), c.attention.shape) for c in caps]]))\n")
    name, grid, size, training_config, got = json.loads(fresh_python.last_line(code, timeout=600))
    assert (name, grid, size, training_config) == ("ImageCaptioner", [4, 4], [32, 32], {"seed": 0})
    assert [(t, s, tuple(a)) for t, s, a in got] == expected


def test_inference_copy_is_float32_with_the_same_weights():
    vocab_size = len(SPECIAL_TOKENS) + len(WORDS)
    decoder = CaptionDecoderModel.of(vocab_size, annotation_dim=12, kind="attention", projection_dim=8,
                                  embedding_dim=8, units=16, attention_units=8, dropout=0.0, dtype="mixed_bfloat16")
    model = ImageCaptioner(tiny_backbone(), decoder, Vocabulary(SPECIAL_TOKENS + tuple(WORDS)))
    copy = inference_copy(model.decoder)
    assert copy is not model.decoder and copy.dtype_policy.name == "float32"
    assert len(copy.get_weights()) == len(decoder.get_weights())
    for a, b in zip(copy.get_weights(), decoder.get_weights()):
        np.testing.assert_array_equal(a, b)


def backbone_with_classifier(size=32):
    """The tiny backbone plus an ImageNet-style classifier output that nothing downstream uses."""
    base = tiny_backbone(size)
    logits = keras.layers.Dense(5, name="predictions")(base.output["pooled"])
    return keras.Model(base.inputs, {**base.output, "logits": logits}, name="tiny_backbone")


@pytest.mark.parametrize("kind", ["image", "video"])
def test_without_classifier_drops_the_backbone_head_and_keeps_every_output(tmp_path, kind):
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + tuple(WORDS))
    if kind == "image":
        head = CaptionDecoderModel.of(len(vocab), annotation_dim=12, kind="attention", projection_dim=8, embedding_dim=8,
                                   units=16, attention_units=8, dropout=0.0)
        model = ImageCaptioner(backbone_with_classifier(), head, vocab, beam_size=2, max_length=6)
        inputs = list(np.random.default_rng(1).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8))
    else:
        from captioner.models.video_caption_model import VideoCaptionModel

        head = VideoCaptionModel(len(vocab), 12, units=8, projection_dim=8, embedding_dim=8, attention_units=8)
        model = VideoCaptioner(backbone_with_classifier(), head, vocab, num_frames=3, beam_size=2, max_length=5)
        inputs = list(np.random.default_rng(1).integers(0, 256, (2, 3, 32, 32, 3)).astype(np.uint8))
    slim = model.without_classifier()
    assert "logits" not in slim.backbone.output and "logits" in model.backbone.output
    assert slim.count_params() == model.count_params() - (12 * 5 + 5)  # the Dense(5) on the 12-d pooled vector
    assert slim.without_classifier() is slim  # nothing left to drop
    expected = [(c.text, c.score) for c in model.caption(inputs)]
    assert [(c.text, c.score) for c in slim.caption(inputs)] == expected
    path = tmp_path / "slim.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        slim.save(path)
    loaded = keras.models.load_model(path)
    assert "logits" not in loaded.backbone.output
    assert [(c.text, round(c.score, 5)) for c in loaded.caption(inputs)] == [(t, round(s, 5)) for t, s in expected]


def test_slim_backbone_command_rewrites_the_file_and_records_it_in_the_card(tmp_path):
    from captioner.cli import main
    from captioner.model_card import ModelCard

    model = ImageCaptioner(backbone_with_classifier(), tiny_captioner().decoder, Vocabulary(SPECIAL_TOKENS + tuple(WORDS)))
    path = tmp_path / "m.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.save(path)
    ModelCard(model="m.keras", task="caption", command="captioner train caption ...", seed=0).save(path)
    assert main(["model", "slim-backbone", "--model", str(path)]) == 0
    loaded = keras.models.load_model(path)
    assert "logits" not in loaded.backbone.output
    card = ModelCard.find(path)
    assert card.commands[-1].startswith("captioner model slim-backbone --model")
    assert card.extra["slim_backbone"]["parameters"]["before"] - card.extra["slim_backbone"]["parameters"]["after"] == 65
    assert main(["model", "slim-backbone", "--model", str(path)]) == 0  # again: nothing to drop, the file is left alone
    assert len(ModelCard.find(path).commands) == 2
