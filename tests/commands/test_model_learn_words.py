"""`captioner model learn-words`: a captioner learns a word from a folder of photos of it, a broken
photo is skipped and named, and the saved captioner puts the word into the caption of such a photo;
a card counts the words' weights instead of listing them."""

import keras
import numpy as np
import pytest
from PIL import Image

from captioner.cli import main
from captioner.inference.tagger_fitting import card_settings
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.text import Vocabulary
from captioner.text.vocabulary import SPECIAL_TOKENS

WORDS = ("a", "man", "is", "sitting", "on", "bench", "dog", "kayak")


def colour_backbone(size=16):
    """pixels -> features that follow the photo's mean colour (a fixed random projection), named as the
    variant whose ImageNet head the tagger reads."""
    x = keras.Input((size, size, 3))
    pooled = keras.layers.Dense(1280, kernel_initializer=keras.initializers.RandomNormal(seed=0))(
        keras.layers.GlobalAveragePooling2D()(keras.layers.Rescaling(1 / 255.0)(x)))
    return keras.Model(x, {"grid": keras.layers.Reshape((1, 1, 1280))(pooled), "pooled": pooled},
                       name="efficientnet_lite0")


def write_photo(path, colour, rng):
    pixels = np.clip(np.asarray(colour) + rng.normal(0, 20, (16, 16, 3)), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).save(path)


@pytest.fixture
def setup(tmp_path):
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + WORDS)
    model = ImageCaptioner(colour_backbone(), CaptionDecoderModel.of(len(vocab), annotation_dim=1280, kind="attention",
                                                                  projection_dim=8, embedding_dim=8, units=8,
                                                                  attention_units=8, dropout=0.0),
                           vocab, beam_size=2, max_length=5)
    model.save(tmp_path / "captioner.keras")
    rng = np.random.default_rng(0)
    (tmp_path / "words" / "kayak").mkdir(parents=True)
    for i in range(12):
        write_photo(tmp_path / "words" / "kayak" / f"k{i}.jpg", (200, 40, 40), rng)  # red
    (tmp_path / "words" / "kayak" / "broken.jpg").write_bytes(b"not a photo")
    (tmp_path / "train").mkdir()
    names = []
    for i in range(30):
        write_photo(tmp_path / "train" / f"t{i}.jpg", (40, 40 + 5 * i, 200), rng)  # blues and greens
        names.append(f"t{i}.jpg")
    (tmp_path / "train.txt").write_text("\n".join(names) + "\n")
    (tmp_path / "captions.txt").write_text("".join(f"{n}#0\ta man is sitting on a bench\n" for n in names))
    return tmp_path


def test_a_word_learned_from_a_folder_of_photos_is_put_into_their_captions(setup, capsys):
    args = ["--model", str(setup / "captioner.keras"), "--words", str(setup / "words"),
            "--negatives", str(setup / "train.txt"), "--image-dir", str(setup / "train"),
            "--captions", str(setup / "captions.txt"), "--search", "constrained", "--batch-size", "8"]
    assert main(["model", "learn-words", *args]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "broken.jpg" in captured.err
    assert "kayak: 12 photos of it" in captured.out and "from 42 photos (1 skipped)" in captured.out
    model = keras.models.load_model(setup / "captioner.keras")
    assert model.tagger_config["learned_words"] == ["kayak"] and model.tagger_config["search"] == "constrained"
    rng = np.random.default_rng(5)
    write_photo(setup / "red.jpg", (200, 40, 40), rng)
    write_photo(setup / "blue.jpg", (40, 80, 200), rng)
    red, blue = model.caption([model.load_pixels(str(setup / "red.jpg")), model.load_pixels(str(setup / "blue.jpg"))],
                              objects=True)
    assert "kayak" in red.tokens and any(o["word"] == "kayak" and o["learned"] and o["steered"] for o in red.objects)
    assert not any(o["word"] == "kayak" and o["steered"] for o in blue.objects)
    # a card lists the words' count, not their weights
    settings = card_settings(model)
    assert settings["learned_words"] == ["kayak"] and settings["learned_weights"].startswith("1 logistic regressions")


def test_a_word_outside_the_vocabulary_is_named(setup, capsys):
    (setup / "words" / "guitar").mkdir()
    args = ["--model", str(setup / "captioner.keras"), "--words", str(setup / "words"),
            "--negatives", str(setup / "train.txt"), "--image-dir", str(setup / "train")]
    assert main(["model", "learn-words", *args]) != 0
    assert "['guitar'] are not in" in capsys.readouterr().err


def test_words_learned_at_a_larger_scale_read_the_enlarged_photo_on_every_path(setup, capsys):
    """--scales: the words also read each photo enlarged; the saved model computes the same features
    wherever it tags (its caption method, the batch CLI), and a caller without pixels is told why."""
    from captioner.errors import InputError

    args = ["--model", str(setup / "captioner.keras"), "--words", str(setup / "words"),
            "--negatives", str(setup / "train.txt"), "--image-dir", str(setup / "train"),
            "--captions", str(setup / "captions.txt"), "--search", "constrained", "--scales", "32"]
    assert main(["model", "learn-words", *args]) == 0
    model = keras.models.load_model(setup / "captioner.keras")
    assert model.tagger_config["learned_scales"] == [32]
    assert len(model.tagger_config["learned_weights"]) > len(card_settings(model)["learned_weights"])
    rng = np.random.default_rng(5)
    write_photo(setup / "red.jpg", (200, 40, 40), rng)
    write_photo(setup / "blue.jpg", (40, 80, 200), rng)
    pixels = np.stack([model.load_pixels(str(setup / "red.jpg")), model.load_pixels(str(setup / "blue.jpg"))])
    grid = model.scaled_regions(pixels, 32)
    assert grid.shape == (2, 1, 1280)
    red, blue = model.caption(list(pixels), objects=True)
    assert "kayak" in red.tokens and any(o["word"] == "kayak" and o["steered"] for o in red.objects)
    assert not any(o["word"] == "kayak" and o["steered"] for o in blue.objects)
    with pytest.raises(InputError, match=r"\[32\] px: tagging needs its pixels"):
        model.generate_from_features(model.encode(pixels), objects=True)
    capsys.readouterr()
    assert main(["caption", "--model", str(setup / "captioner.keras"), "--no-progress",
                 str(setup / "red.jpg"), str(setup / "blue.jpg")]) == 0
    import json

    rows = {r["image"].rsplit("/", 1)[-1]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["red.jpg"]["caption"] == red.text and rows["blue.jpg"]["caption"] == blue.text


def test_bad_scales_are_named(setup, capsys):
    args = ["--model", str(setup / "captioner.keras"), "--words", str(setup / "words"),
            "--negatives", str(setup / "train.txt"), "--image-dir", str(setup / "train"), "--scales", "8"]
    assert main(["model", "learn-words", *args]) != 0
    assert "--scales: learned-word scales must be distinct input sides of 32-2048 pixels" in capsys.readouterr().err
