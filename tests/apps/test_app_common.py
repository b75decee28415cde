"""apps/common.py: model loading once per process, image decoding errors, downloads."""

import io
import json

import numpy as np
import pytest
from PIL import Image

from app_support import REPO_ROOT, common
from captioner.errors import ImageError


def test_model_is_loaded_once_per_process(tiny_caption_model):
    path, sentence = tiny_caption_model
    model, lock = common.load_model(path)
    again, same_lock = common.load_model(path)
    assert again is model and same_lock is lock
    caption = model.caption([np.zeros((224, 224, 3), np.uint8)], beam_size=1)[0]
    assert caption.text == sentence


def test_decode_image_takes_the_first_gif_frame_as_rgb():
    frames = [Image.new("P", (20, 10), 1), Image.new("P", (20, 10), 2)]
    for f in frames:
        f.putpalette([0, 0, 0, 255, 0, 0, 0, 0, 255] + [0] * (256 * 3 - 9))
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    image = common.decode_image(buf.getvalue(), "a.gif")
    assert image.mode == "RGB" and image.size == (20, 10)
    assert np.asarray(image)[0, 0].tolist() == [255, 0, 0]  # the first frame, not the blue second


def _truncated_jpeg():
    buf = io.BytesIO()
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(buf, format="JPEG")
    return buf.getvalue()[:len(buf.getvalue()) // 2]


@pytest.mark.parametrize("data,reason", [
    (b"", "empty"),
    (_truncated_jpeg(), "cannot decode"),
    (b"%PDF-1.4 not an image", "not an image file"),
])
def test_decode_image_errors_name_the_file(data, reason):
    with pytest.raises(ImageError) as info:
        common.decode_image(data, "upload.bin")
    assert info.value.path == "upload.bin" and reason in info.value.reason


def test_list_samples_are_real_photos():
    samples = common.list_samples()
    assert len(samples) >= 3
    for path in samples:
        image = common.decode_image(path.read_bytes(), path.name)
        assert min(image.size) >= 200
    assert sum(p.stat().st_size for p in samples) < 1_000_000


def test_json_and_png_bytes_round_trip():
    from captioner.visualize import png_bytes

    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png_bytes(image)))), image)
    assert json.loads(common.json_bytes({"caption": "ein Hund", "score": -1.5})) == {"caption": "ein Hund",
                                                                                       "score": -1.5}
    assert common.safe_stem("../my photo (1).JPG") == "my_photo__1_"


def test_model_paths_default_to_assets_and_follow_env(monkeypatch, tmp_path):
    spec = common.MODELS["caption"]
    monkeypatch.delenv(spec.env_var, raising=False)
    assert spec.path == REPO_ROOT / "assets" / "models" / "flickr8k_web_attention.keras"
    monkeypatch.setenv(spec.env_var, str(tmp_path / "m.keras"))
    assert spec.path == tmp_path / "m.keras"


# ----------------------------------------------------------------------------- model cards

def test_reading_cards_imports_neither_tensorflow_nor_keras():
    import subprocess
    import sys

    script = ("import sys; sys.path.insert(0, 'apps'); import common\n"
              "cards = [common.spec_card(s).card for s in common.MODELS.values()]\n"
              "assert all(c is not None and c.split for c in cards), cards\n"
              "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'imported'\n"
              "assert sys.modules['captioner.bundled'] and sys.modules['captioner.model_card']\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("key", sorted(common.MODELS))
def test_training_command_is_the_cards(key, monkeypatch):
    from captioner.model_card import ModelCard

    spec = common.MODELS[key]
    monkeypatch.delenv(spec.env_var, raising=False)
    card = ModelCard.load(spec.path)
    assert common.training_command(spec) == card.training_command
    assert card.training_command.startswith(f"captioner train {spec.train_task} ")
    assert common.spec_card(spec).card.metrics == card.metrics


def test_missing_model_takes_its_command_from_the_card_beside_it_else_the_bundled_one(monkeypatch, tmp_path):
    from captioner.model_card import ModelCard

    spec = common.MODELS["entail"]
    bundled = ModelCard.load(spec.bundled_path)
    monkeypatch.setenv(spec.env_var, str(tmp_path / "gone" / "sick.keras"))  # neither model nor card there
    assert common.training_command(spec) == bundled.training_command
    mine = ModelCard(model="sick.keras", task="entail", command="captioner train entail --seed 7",
                     metrics={"split": "SICK TRIAL", "accuracy": 50.0})
    mine.save(tmp_path / "gone" / "sick.keras")  # the user deleted their model; its card is still there
    assert common.training_command(spec) == "captioner train entail --seed 7"
    (tmp_path / "gone" / "sick.json").write_text("{not json", encoding="utf-8")
    assert common.training_command(spec) == bundled.training_command  # an unreadable card: the bundled one
    assert "not valid JSON" in common.read_model_card(spec.path).error


def _card_view(key, missing):
    import sys

    sys.path.insert(0, "apps")
    import common

    spec = common.MODELS[key]
    if missing:
        common.show_missing_model(spec, "to test")
    else:
        common.show_model_card(spec)


@pytest.mark.parametrize("key", ["caption", "video_caption", "translate_en_de"])
def test_card_view_shows_the_cards_command_and_metrics(key, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from captioner.model_card import ModelCard

    spec = common.MODELS[key]
    monkeypatch.delenv(spec.env_var, raising=False)
    monkeypatch.chdir(REPO_ROOT)
    card = ModelCard.load(spec.path)
    at = AppTest.from_function(_card_view, args=(key, False), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert [c.value for c in at.code] == [card.training_command]
    markdown = "\n".join(m.value for m in at.markdown)
    assert f"Metrics on **{card.split}**" in markdown and spec.bundled_path.with_suffix(".json").name in markdown
    assert json.loads(at.json[0].value) == card.metrics
    if len(card.commands) > 1:  # every step in order, the training command among them
        assert all(f"{i}. `{c}`" in markdown for i, c in enumerate(card.commands, 1))


def test_missing_model_view_shows_the_bundled_cards_command(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from captioner.model_card import ModelCard

    spec = common.MODELS["video_caption"]
    monkeypatch.setenv(spec.env_var, str(tmp_path / "deleted.keras"))
    monkeypatch.chdir(REPO_ROOT)
    at = AppTest.from_function(_card_view, args=("video_caption", True), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "not here yet" in at.info[0].value
    assert [c.value for c in at.code] == [ModelCard.load(spec.bundled_path).training_command]


def test_the_app_listens_on_loopback_unless_told_otherwise():
    """Issue 43 item 4: `make app` and `streamlit run apps/app.py` bind to 127.0.0.1; exposing the
    demo is an explicit APP_ADDRESS."""
    import tomllib

    config = tomllib.loads((common.REPO_ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    makefile = (common.REPO_ROOT / "Makefile").read_text()
    assert "APP_ADDRESS ?= 127.0.0.1" in makefile and "--server.address $(APP_ADDRESS)" in makefile


def test_every_page_takes_its_models_and_defaults_from_the_one_registry():
    from captioner import bundled

    assert {k: (m.file, m.task, m.default) for k, m in common.MODELS.items()} == \
        {m.key: (m.file, m.task, m.default) for m in bundled.MODELS}
    for task in ("ask", "translate", "summarize"):
        assert common.task_models(task)[0].file == bundled.default_model(task).file


def test_the_words_the_tags_put_in_are_marked():
    objects = [{"word": "cat", "name": "Egyptian cat", "steered": True, "named": True},
               {"word": "dog", "name": "golden retriever", "steered": False, "named": False},
               {"word": "cup", "name": "cup", "steered": True, "named": False}]
    text = "an egyptian cat next to a cup and a dog"
    assert common.mark_tag_words(text, objects) == \
        "an :blue-background[egyptian cat] next to a :blue-background[cup] and a dog"
    assert common.mark_tag_words("a cupboard", objects[2:]) == "a cupboard"  # whole words only
    assert common.mark_tag_words("a dog", []) == "a dog"


def test_the_tag_line_names_where_each_tag_came_from():
    imagenet = {"word": "cat", "name": "Egyptian cat", "probability": 0.91}
    assert common.tag_summary([imagenet]) == "Objects (the backbone's ImageNet head): **cat** (Egyptian cat, 91%)"
    learned = {"word": "bike", "name": "bike", "probability": 0.876, "learned": True}
    assert common.tag_summary([learned, imagenet]) == (
        "Objects (the backbone's ImageNet head and the words learned from labelled photos): "
        "**bike** (learned word, 88%), **cat** (Egyptian cat, 91%)")
