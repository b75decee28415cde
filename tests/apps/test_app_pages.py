"""AppTest runs of every page of apps/app.py: the main paths and the ways an upload goes wrong."""

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from app_support import APP, REPO_ROOT, common

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

TIMEOUT = 300  # the first run imports TensorFlow and loads the model; the machine may be busy


def run_app():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


SAMPLES = sorted(p.name for p in (REPO_ROOT / "assets" / "samples").iterdir()
                 if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp", ".gif"))


def caption_heading(at):
    return [m.value for m in at.markdown if m.value.startswith("### ")]


def test_caption_page_captions_the_first_sample_with_attention(app_env):
    _, sentence = app_env
    at = run_app()
    assert not at.error, [e.value for e in at.error]
    assert caption_heading(at) == [f"### {sentence}"]
    words = sentence.split()
    # the photo, the focused word's overlay, then one overlay per word and one for <end>
    captions = [img.captions[0] for img in at.image]
    assert captions[0] == SAMPLES[0]
    assert captions[1] == f"attention for “{words[0]}”"
    assert captions[2:] == [f"{i + 1}. {w}" for i, w in enumerate(words + ["<end>"])]
    hypotheses = at.table[0].value
    assert list(hypotheses.columns) == ["rank", "caption", "score"]
    assert len(hypotheses) == 3 and hypotheses["caption"][0] == sentence
    assert [b.label for b in at.get("download_button")] == [
        "Overlay PNG (all words)", f"Overlay PNG (“{words[0]}”)", "Caption and attention JSON"]
    at.selectbox(key="caption_sample").set_value(SAMPLES[-1]).run()
    assert not at.exception and at.image[0].captions[0] == SAMPLES[-1]
    assert caption_heading(at) == [f"### {sentence}"]


def test_caption_page_controls_and_word_slider(app_env):
    _, sentence = app_env
    words = sentence.split()
    at = run_app()
    at.slider(key="caption_beam").set_value(1).run()
    assert not at.exception
    assert len(at.table[0].value) == 1  # greedy: one hypothesis
    at.select_slider[0].set_value(2).run()
    assert not at.exception
    assert at.image[1].captions[0] == f"attention for “{words[2]}”"
    assert any(f":orange-background[**{words[2]}**]" in m.value for m in at.markdown)
    at.slider(key="caption_max_length").set_value(3).run()
    assert caption_heading(at) == [f"### {' '.join(words[:3])}"]
    assert any("maximum length (3 words)" in c.value for c in at.caption)
    # no <end> step when the length limit cut the caption
    assert [img.captions[0] for img in at.image][2:] == [f"{i + 1}. {w}" for i, w in enumerate(words[:3])]


def test_caption_page_uploaded_real_photo(app_env, real_photo_png):
    _, sentence = app_env
    at = run_app()
    at.file_uploader[0].upload("my coffee.png", real_photo_png, "image/png").run()
    assert not at.exception and not at.error
    assert caption_heading(at) == [f"### {sentence}"]
    assert at.image[0].captions[0] == "my coffee.png"
    assert at.selectbox[0].disabled  # the upload wins over the sample


def test_caption_page_gif_first_frame_and_webp(app_env):
    frames = [Image.new("RGB", (64, 48), c) for c in ((255, 0, 0), (0, 0, 255))]
    gif = io.BytesIO()
    frames[0].save(gif, format="GIF", save_all=True, append_images=frames[1:], duration=100)
    webp = io.BytesIO()
    frames[1].save(webp, format="WEBP")
    at = run_app()
    for name, data, mime in (("anim.gif", gif.getvalue(), "image/gif"), ("b.webp", webp.getvalue(), "image/webp")):
        at.file_uploader[0].set_value((name, data, mime)).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.image[0].captions[0] == name
        assert caption_heading(at)


def _truncated_jpeg():
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(buf, "JPEG")
    return buf.getvalue()[:len(buf.getvalue()) // 2]


@pytest.mark.parametrize("name,data,message", [
    ("broken.jpg", _truncated_jpeg(), "cannot decode image"),
    ("notes.png", b"these are my notes, not a picture\n", "not an image file"),
    ("empty.png", b"", "is empty"),
])
def test_caption_page_broken_upload_shows_an_error(app_env, name, data, message):
    at = run_app()
    at.file_uploader[0].set_value((name, data, "image/png")).run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and name in errors[0] and message in errors[0], errors
    assert not caption_heading(at) and not at.image


def test_caption_page_refuses_uploads_over_20_mb(app_env):
    at = run_app()
    at.file_uploader[0].set_value(("huge.png", b"\x89PNG" + b"\x00" * (20 * 2**20), "image/png")).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "huge.png" in errors[0] and "up to 20 MB" in errors[0], errors
    assert not at.image


def _png_header(width, height):
    """A PNG whose header claims width x height pixels (the data is one empty row, never decoded)."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00")) + chunk(b"IEND", b"")


@pytest.mark.parametrize("width,height,message", [
    (9000, 9000, "too many pixels: 9000x9000 (this app accepts at most 50 megapixels)"),  # over the app's limit
    (30000, 30000, "too many pixels: Image size (900000000 pixels) exceeds"),  # over Pillow's own limit too
])
def test_caption_page_refuses_decompression_bombs(app_env, width, height, message):
    at = run_app()
    at.file_uploader[0].set_value(("bomb.png", _png_header(width, height), "image/png")).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "bomb.png" in errors[0] and message in errors[0], errors


def test_caption_page_without_its_model_says_how_to_train_it(app_env, monkeypatch, tmp_path):
    monkeypatch.setenv("CAPTIONER_CAPTION_MODEL", str(tmp_path / "nope.keras"))
    monkeypatch.setenv("CAPTIONER_CAPTION_FLICKR8K_MODEL", str(tmp_path / "nope_either.keras"))
    at = run_app()
    assert "not here yet" in at.info[0].value
    assert at.code[0].value == card_command("assets/models/flickr8k_web_attention.keras")  # the bundled card's
    assert at.code[0].value.startswith("captioner train caption ")
    assert not caption_heading(at)


def test_caption_page_with_a_broken_model_file_shows_an_error(app_env, monkeypatch, tmp_path):
    broken = tmp_path / "broken.keras"
    broken.write_bytes(b"not a zip archive")
    monkeypatch.setenv("CAPTIONER_CAPTION_MODEL", str(broken))
    at = run_app()
    assert len(at.error) == 1 and "cannot be loaded" in at.error[0].value
    assert not caption_heading(at)


def card_command(model):
    """The training command in the card of a bundled model (what the app must show)."""
    from captioner.model_card import ModelCard

    return ModelCard.load(REPO_ROOT / model).training_command


PAGES = {
    "task_pages/vqa.py": {"CAPTIONER_VQA_MODEL": ("captioner train vqa ", "assets/models/photo_vqa.keras"),
                          "CAPTIONER_EASY_VQA_MODEL": ("captioner train vqa ", "assets/models/easy_vqa.keras")},
    "task_pages/translate.py": {  # the registry's default (captioner.bundled) first
        "CAPTIONER_TRANSLATE_EN_DE_MODEL": ("captioner train translate ", "assets/models/multi30k_en_de.keras"),
        "CAPTIONER_TRANSLATE_FR_EN_MODEL": ("captioner train translate ", "assets/models/anki_fr_en.keras")},
    "task_pages/transliterate.py": {
        "CAPTIONER_TRANSLITERATE_MODEL": ("captioner train transliterate ", "assets/models/dakshina_hi_translit.keras")},
    "task_pages/summarize.py": {
        "CAPTIONER_SUMMARIZE_MODEL": ("captioner train summarize ", "assets/models/bbc_headlines.keras"),
        "CAPTIONER_SUMMARIZE_NEWS_MODEL": ("captioner train summarize ", "assets/models/news_headlines.keras")},
    "task_pages/entailment.py": {"CAPTIONER_ENTAIL_MODEL": ("captioner train entail ", "assets/models/sick_entailment.keras")},
    "task_pages/classify.py": {"CAPTIONER_CLASSIFY_MODEL": ("captioner train classify ",
                                                           "assets/models/newsgroups_han.keras")},
    "task_pages/dialogue.py": {"CAPTIONER_DIALOGUE_MODEL": ("captioner train respond ", "assets/models/sgd_dialogue.keras")},
    "task_pages/video.py": {
        "CAPTIONER_VIDEO_CAPTION_MODEL": ("captioner train video-caption ", "assets/models/flickr8k_video_caption.keras"),
        "CAPTIONER_VIDEO_CLASSIFY_MODEL": ("captioner train video-classify ",
                                           "assets/models/flickr8k_video_activity.keras"),
        "CAPTIONER_SHAPES_VIDEO_CAPTION_MODEL": ("captioner train video-caption ",
                                                 "assets/models/shapes_video_caption.keras"),
        "CAPTIONER_SHAPES_VIDEO_CLASSIFY_MODEL": ("captioner train video-classify ",
                                                  "assets/models/shapes_video_classify.keras")},
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_pages_without_models_say_which_command_trains_them(app_env, page):
    at = run_app()
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error
    expected = list(PAGES[page].values())
    assert len(at.info) == len(expected) and all("not here yet" in i.value for i in at.info)
    assert len(at.code) == len(expected)
    for code, (command, model) in zip(at.code, expected):
        assert code.value.startswith(command) and code.value == card_command(model)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_pages_refuse_a_model_of_another_kind(app_env, page, monkeypatch):
    """A loadable .keras file of the wrong task (here the tiny captioner) is named as such, not used."""
    var = next(iter(PAGES[page]))
    monkeypatch.setenv(var, str(app_env[0]))
    at = run_app()
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "is a model of class `ImageCaptioner`; this page needs" in errors[0] and var in errors[0], errors
    command, model = PAGES[page][var]
    assert any(c.value.startswith(command) and c.value == card_command(model) for c in at.code)


def test_an_over_size_upload_replaces_the_previous_result_with_its_message(app_env):
    """Issue 23 item 9: the browser refused files over 20 MB itself, so the page never heard of
    them and went on showing the sample's caption. Now the browser sends up to
    UPLOAD_TRANSFER_MB and the page refuses with its message, nothing else on it."""
    at = run_app()
    assert caption_heading(at) and at.image  # the first sample, captioned
    assert at.file_uploader[0].proto.max_upload_size_mb == common.UPLOAD_TRANSFER_MB > common.MAX_UPLOAD_MB
    at.file_uploader[0].set_value(("big.jpg", b"\xff\xd8\xff" + b"\x00" * (25 * 2**20), "image/jpeg")).run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "big.jpg" in errors[0] and "up to 20 MB" in errors[0], errors
    assert not caption_heading(at) and not at.image
