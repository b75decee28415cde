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
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(common.png_bytes(image)))), image)
    assert json.loads(common.json_bytes({"caption": "ein Hund", "score": -1.5})) == {"caption": "ein Hund",
                                                                                       "score": -1.5}
    assert common.safe_stem("../my photo (1).JPG") == "my_photo__1_"


def test_model_paths_default_to_assets_and_follow_env(monkeypatch, tmp_path):
    spec = common.MODELS["caption"]
    monkeypatch.delenv(spec.env_var, raising=False)
    assert spec.path == REPO_ROOT / "assets" / "models" / "flickr8k_attention.keras"
    monkeypatch.setenv(spec.env_var, str(tmp_path / "m.keras"))
    assert spec.path == tmp_path / "m.keras"
