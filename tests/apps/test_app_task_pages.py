"""AppTest runs of the VQA, Translate, Entailment and Video pages on the real bundled models.

Each model is small (it loads in about a second) and answers in a second or two, so these
run with the fast tests; a test is skipped, with the reason, where its bundled model is absent.
The Caption page is pointed at an absent file so the app's first (default) page stops at once.
"""

import io
import json
import re

import numpy as np
import pytest

from app_support import APP, REPO_ROOT, common

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

TIMEOUT = 300  # the first run in a process imports TensorFlow and loads the model; the machine may be busy
MODELS = REPO_ROOT / "assets" / "models"
SAMPLES = REPO_ROOT / "assets" / "samples"


@pytest.fixture
def bundled_env(monkeypatch, tmp_path):
    """Every task page on its bundled model (no env overrides); the Caption page on an absent file."""
    monkeypatch.setenv("CAPTIONER_CAPTION_MODEL", str(tmp_path / "absent" / "caption.keras"))
    for key, spec in common.MODELS.items():
        if key != "caption":
            monkeypatch.delenv(spec.env_var, raising=False)


def needs(*names):
    missing = [n for n in names if not (MODELS / n).is_file()]
    return pytest.mark.skipif(bool(missing), reason=f"bundled model(s) absent: {', '.join(missing)}")


def open_page(page):
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def headings(at):
    return [m.value[4:] for m in at.markdown if m.value.startswith("### ")]


def percent(text):
    return float(text.rstrip("%")) / 100.0


def no_errors(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def assert_model_card(at, model_file):
    """The folded "About this model" box names the model's card JSON, shows its training command
    and its metrics with their split."""
    from captioner.model_card import ModelCard

    card = ModelCard.load(MODELS / model_file)
    assert any(e.label.startswith("About this model") for e in at.expander)
    assert any(f"assets/models/{model_file.replace('.keras', '.json')}" in m.value for m in at.markdown)
    assert card.training_command in [c.value for c in at.code]
    assert any(f"Metrics on **{card.split}**" in m.value for m in at.markdown)


# ----------------------------------------------------------------------------- VQA

def easy_vqa_questions():
    return json.loads((SAMPLES / "easy_vqa" / "questions.json").read_text())


def open_easy_vqa_page():
    """The VQA page with the easy-VQA model picked (the photo model is the default when bundled)."""
    at = open_page("task_pages/vqa.py")
    radio = at.radio(key="vqa_model")
    if radio.value != common.MODELS["vqa_easy"]:
        radio.set_value(common.MODELS["vqa_easy"]).run()
    return at


@needs("easy_vqa.keras")
def test_vqa_page_answers_easy_vqa_questions_with_attention_per_hop(bundled_env):
    at = open_easy_vqa_page()
    no_errors(at)
    sample = at.selectbox(key="vqa_sample_vqa_easy").value
    pairs = easy_vqa_questions()[sample]
    question, truth = pairs[0]
    assert at.text_input(key="vqa_question_vqa_easy").value == question  # the first suggestion is asked at once
    assert headings(at) == [truth]
    assert [m.value for m in at.metric][1] == truth  # easy-VQA's own answer, shown beside the model's
    top = at.table[0].value
    assert list(top.columns) == ["rank", "answer", "probability"] and len(top) == 5
    probs = [percent(p) for p in top["probability"]]
    assert probs == sorted(probs, reverse=True) and 0.5 < probs[0] <= 1.0 and sum(probs) <= 1.0 + 1e-3
    assert top["answer"][0] == truth
    captions = [img.captions[0] for img in at.image]
    assert captions[0] == sample
    assert [c.split(":")[0] for c in captions[1:]] == ["hop 1", "hop 2"]  # one overlay per attention hop
    assert_model_card(at, "easy_vqa.keras")

    # a suggested question fills the box and is answered; another sample image is answered too
    other_q, other_truth = next((q, a) for q, a in pairs if a != truth)
    at.selectbox(key="vqa_suggestion_vqa_easy").set_value(other_q).run()
    no_errors(at)
    assert at.text_input(key="vqa_question_vqa_easy").value == other_q and headings(at) == [other_truth]
    other_sample = next(s for s in at.selectbox(key="vqa_sample_vqa_easy").options if s != sample)
    at.selectbox(key="vqa_sample_vqa_easy").set_value(other_sample).run()
    at.text_input(key="vqa_question_vqa_easy").set_value("what shape is in the image?").run()
    no_errors(at)
    assert at.image[0].captions[0] == other_sample
    assert headings(at)[0] in {"circle", "rectangle", "triangle"}


@needs("easy_vqa.keras")
def test_vqa_page_uploaded_image_unknown_words_and_empty_question(bundled_env):
    from PIL import Image

    buf = io.BytesIO()
    shape = Image.new("RGB", (64, 64), (255, 255, 255))
    shape.paste((0, 0, 255), (16, 16, 48, 48))  # a blue square on white, as easy-VQA draws rectangles
    shape.save(buf, format="PNG")
    at = open_easy_vqa_page()
    at.file_uploader[0].upload("my shape.png", buf.getvalue(), "image/png").run()
    at.text_input(key="vqa_question_vqa_easy").set_value("what color is the shape?").run()
    no_errors(at)
    assert at.image[0].captions[0] == "my shape.png" and at.selectbox(key="vqa_sample_vqa_easy").disabled
    assert headings(at) == ["blue"]
    assert len(at.image) == 3  # the image and two hops
    at.text_input(key="vqa_question_vqa_easy").set_value("what colour is the blob?").run()
    no_errors(at)
    assert any("“colour”" in w.value and "“blob”" in w.value for w in at.warning)
    at.text_input(key="vqa_question_vqa_easy").set_value("?!").run()
    assert not at.exception
    assert len(at.error) == 1 and "has no words" in at.error[0].value
    at.text_input(key="vqa_question_vqa_easy").set_value("   ").run()
    assert not at.exception and not at.error and not headings(at)
    assert any("Type a question" in i.value for i in at.info)


@needs("easy_vqa.keras")
@pytest.mark.parametrize("name,data,message", [
    ("notes.png", b"these are my notes, not a picture\n", "not an image file"),
    ("empty.png", b"", "is empty"),
])
def test_vqa_page_broken_upload_shows_an_error(bundled_env, name, data, message):
    at = open_page("task_pages/vqa.py")
    at.file_uploader[0].set_value((name, data, "image/png")).run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and name in errors[0] and message in errors[0], errors
    assert not headings(at) and not at.image


@needs("photo_vqa.keras")
def test_vqa_page_answers_about_a_photo_with_its_attention_map_and_says_when_it_does_not_know(bundled_env):
    at = open_page("task_pages/vqa.py")
    no_errors(at)
    assert at.radio(key="vqa_model").value == common.MODELS["vqa"]  # the photo model is the default
    assert at.radio(key="vqa_model").options == ["Photos (Flickr8k and web questions)", "easy-VQA shapes (toy)"]
    sample = at.selectbox(key="vqa_sample_vqa").value
    assert sample.endswith(".jpg")
    at.text_input(key="vqa_question_vqa").set_value("how many people are there?").run()
    no_errors(at)
    assert at.image[0].captions[0] == sample
    assert [img.captions[0].split(":")[0] for img in at.image[1:]] == ["hop 1", "hop 2"]  # 9x9 maps over the photo
    assert len(headings(at)) == 1
    at.text_input(key="vqa_question_vqa").set_value("why is the man smiling?").run()
    no_errors(at)
    assert headings(at) == ["don't know"]
    assert any("not in its training data" in w.value and "best guess" in w.value for w in at.warning)
    assert_model_card(at, "photo_vqa.keras")


# ----------------------------------------------------------------------------- Translate

def open_translator(key):
    """The Translate page on the bundled translator `key` (the first one present is the default)."""
    at = open_page("task_pages/translate.py")
    at.radio(key="translate_model").set_value(common.MODELS[key]).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@needs("multi30k_en_de.keras")
def test_translate_page_beam_hypotheses_and_alignment(bundled_env):
    at = open_translator("translate_en_de")
    no_errors(at)
    [translation] = headings(at)
    assert translation and translation != "(empty translation)"
    assert {"Ein", "Mann"} <= set(translation.split())  # "A man in a blue shirt ..." in German, cased
    hyps = at.table[0].value
    assert list(hyps.columns) == ["rank", "translation", "score"] and len(hyps) == 5  # the model's beam width
    scores = [float(s) for s in hyps["score"]]
    assert scores == sorted(scores, reverse=True) and hyps["translation"][0] == translation
    assert [img.captions[0] for img in at.image] == [f"alignment of “{translation}”"]
    result = list(at.session_state["translate_results"].values())[-1]  # the latest run: this sentence
    rows = np.asarray(result.attention)
    assert rows.shape == (len(result.attention_labels), len(result.source_tokens))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-4)  # each target word's alignment sums to 1
    assert [b.label for b in at.get("download_button")] == ["Translation JSON", "Alignment PNG"]
    assert_model_card(at, "multi30k_en_de.keras")

    at.slider(key="translate_beam").set_value(1).run()
    no_errors(at)
    assert len(at.table[0].value) == 1  # greedy: one hypothesis
    at.text_area[0].set_value("A dog runs through the grass.").run()
    no_errors(at)
    assert "Hund" in headings(at)[0].split()


@needs("multi30k_en_de.keras")
def test_translate_page_unknown_words_and_empty_input(bundled_env):
    at = open_translator("translate_en_de")
    # the bundled model reads SentencePiece pieces: only a word with a character never seen in
    # training is unknown ("zzqxv" is composed of known pieces)
    at.text_area[0].set_value("A man plays the 猫琴.").run()
    no_errors(at)
    assert any("does not know “猫琴.”" in c.value for c in at.caption), [c.value for c in at.caption]
    assert headings(at)[0]
    for text in ("", "   "):
        at.text_area[0].set_value(text).run()
        assert not at.exception and not at.error and not headings(at) and not at.image
        assert [i.value for i in at.info] == ["Type a sentence to translate."]


@needs("anki_fr_en.keras", "multi30k_en_de.keras")
def test_translate_page_says_when_the_text_is_in_the_other_models_language(bundled_env):
    """Issue 69 item 3: French pasted into English -> German came back as fluent invented German."""
    at = open_translator("translate_en_de")
    at.text_area[0].set_value("Nous sommes allés au marché samedi matin.").run()
    assert not at.exception and not headings(at)
    [warning] = [w.value for w in at.warning]
    assert "reads as the language of" in warning and "0 of" in warning
    at.text_area[0].set_value("A dog runs through the grass.").run()  # English: translated as before
    no_errors(at)
    assert not at.warning and headings(at)


@needs("anki_fr_en.keras")
def test_translate_page_french_to_english(bundled_env):
    at = open_translator("translate_fr_en")
    no_errors(at)
    assert at.text_area[0].value == "Jane visite l'Afrique en septembre."  # the page's French example
    [translation] = headings(at)
    assert translation.split()[:1] == ["Jane"] and "Africa" in translation, translation  # "jane" copied through <unk>
    assert [img.captions[0] for img in at.image] == [f"alignment of “{translation}”"]
    assert_model_card(at, "anki_fr_en.keras")


@needs("multi30k_en_de.keras")
def test_translate_page_lists_every_translator_present(bundled_env, monkeypatch, tmp_path):
    """With both files present the user picks the direction; here a link to the en-de file stands in for fr-en."""
    stand_in = tmp_path / "anki_fr_en.keras"
    stand_in.symlink_to(MODELS / "multi30k_en_de.keras")
    monkeypatch.setenv("CAPTIONER_TRANSLATE_FR_EN_MODEL", str(stand_in))
    at = open_page("task_pages/translate.py")
    no_errors(at)
    radio = at.radio(key="translate_model")
    # the registry's default (captioner.bundled, as for `captioner translate` and the server) first
    assert radio.options == ["English -> German (Multi30k)", "French -> English (Anki/Tatoeba)"]
    assert not any("not trained yet" in c.value for c in at.caption)
    at.text_area[0].set_value("Un homme.").run()
    no_errors(at)
    assert headings(at)


# ----------------------------------------------------------------------------- Entailment

@needs("sick_entailment.keras")
def test_entailment_page_label_probabilities_and_attention(bundled_env):
    at = open_page("task_pages/entailment.py")
    no_errors(at)
    assert at.text_area(key="entail_premise").value == "A man is playing a guitar"
    assert at.text_area(key="entail_hypothesis").value == "A man is not playing a guitar"
    [label] = headings(at)
    assert label == "CONTRADICTION"  # a negated copy of the premise
    probs = {m.label: percent(m.value) for m in at.metric}
    assert set(probs) == {"Neutral", "Entailment", "Contradiction"}
    assert abs(sum(probs.values()) - 1.0) < 0.002 and max(probs, key=probs.get) == "Contradiction"
    assert len(at.get("vega_lite_chart")) == 1  # the probability bar chart
    assert [img.captions[0] for img in at.image] == ["hypothesis-over-premise attention"]
    assert_model_card(at, "sick_entailment.keras")

    at.selectbox(key="entail_example").set_value(4).run()  # a passive paraphrase
    no_errors(at)
    assert at.text_area(key="entail_premise").value == "A woman is slicing an onion"
    assert headings(at) == ["ENTAILMENT"]

    at.selectbox(key="entail_example").set_value(1).run()  # man -> person, guitar -> instrument
    no_errors(at)
    [table] = at.dataframe  # the WordNet relations the bundled model was given
    rows = {(r["premise word"], r["hypothesis word"]): r for r in table.value.to_dict("records")}
    assert rows[("man", "person")]["relation (hypothesis word is the premise word's)"] == "hypernym"
    assert rows[("guitar", "instrument")]["relation (hypothesis word is the premise word's)"] == "hypernym"


@needs("sick_entailment.keras")
def test_entailment_page_bad_input(bundled_env):
    at = open_page("task_pages/entailment.py")
    at.text_area(key="entail_hypothesis").set_value("?!").run()
    assert not at.exception
    assert len(at.error) == 1 and "the hypothesis has no words" in at.error[0].value
    assert not headings(at) and not at.image
    at.text_area(key="entail_premise").set_value("").run()
    at.text_area(key="entail_hypothesis").set_value("").run()
    assert not at.exception and not at.error
    assert [i.value for i in at.info] == ["Type a premise and a hypothesis."]


# ----------------------------------------------------------------------------- Video

def sample_clips():
    return sorted(p.name for p in (SAMPLES / "video").glob("*.webm")) + sorted(
        f"shapes/{p.name}" for p in (SAMPLES / "video" / "shapes").glob("*.webm"))


@needs("flickr8k_video_caption.keras")
def test_video_page_default_is_the_real_captioner_on_a_real_clip(bundled_env):
    at = open_page("task_pages/video.py")
    no_errors(at)
    assert at.radio(key="video_model").value == common.MODELS["video_caption"]
    assert at.selectbox(key="video_sample").value == sample_clips()[0] == "arm_wrestling.webm"
    [caption] = headings(at)
    assert len(caption.split()) >= 4 and not {"square", "circle", "triangle"} & set(caption.split()), caption
    # the backbone's object tags, on by default as in `captioner video`; the result carries them
    assert at.toggle(key="video_objects").value and not at.toggle(key="video_objects").disabled
    assert list(at.session_state["video_results"])[-1][-1] is True  # asked with the tags
    captions = [img.captions[0] for img in at.image]
    assert captions[-1].startswith("attention strip") and len(captions[:-2]) == 8
    assert_model_card(at, "flickr8k_video_caption.keras")
    at.toggle(key="video_objects").set_value(False).run()  # the captioner alone: no tag is confident on
    no_errors(at)                                          # this clip, so the same caption
    assert list(at.session_state["video_results"])[-1][-1] is False and headings(at) == [caption]


@needs("shapes_video_caption.keras")
def test_video_page_caption_with_attention_over_frames(bundled_env):
    at = open_page("task_pages/video.py")
    at.radio(key="video_model").set_value(common.MODELS["video_caption_shapes"]).run()
    at.selectbox(key="video_sample").set_value("shapes/a_blue_square_grows.webm").run()
    no_errors(at)
    [caption] = headings(at)
    assert {"blue", "square"} <= set(caption.split()), caption
    hyps = at.table[0].value
    assert list(hyps.columns) == ["rank", "caption", "score"] and hyps["caption"][0] == caption
    captions = [img.captions[0] for img in at.image]
    frames, heatmap, strip = captions[:-2], captions[-2], captions[-1]
    assert len(frames) == 8 and heatmap == "attention over the sampled frames: one row per word"
    assert strip.startswith("attention strip")
    assert all(re.match(r"\d+ · \d+\.\d\d s · \d+%$", c) for c in frames), frames
    weights = [float(re.search(r"(\d+)%$", c).group(1)) for c in frames]
    assert abs(sum(weights) - 100) <= len(weights)  # one word's weights over the frames, rounded to 1%
    result = list(at.session_state["video_results"].values())[-1]  # the shapes clip (the default real one ran first)
    np.testing.assert_allclose(np.asarray(result.attention).sum(axis=1), 1.0, atol=1e-4)
    at.select_slider[0].set_value(2).run()  # the third word
    no_errors(at)
    assert any(f":orange-background[**{caption.split()[2]}**]" in m.value for m in at.markdown)
    assert_model_card(at, "shapes_video_caption.keras")


@needs("shapes_video_classify.keras")
def test_video_page_activity_label_of_samples_and_an_uploaded_gif(bundled_env):
    from PIL import Image

    from captioner.data.synthetic_video import render_clip

    at = open_page("task_pages/video.py")
    at.radio(key="video_model").set_value(common.MODELS["video_classify_shapes"]).run()
    at.selectbox(key="video_sample").set_value("shapes/a_blue_square_grows.webm").run()
    no_errors(at)
    assert headings(at) == ["Grow"]  # a_blue_square_grows.webm
    assert percent(at.metric[0].value) > 0.5
    assert len(at.get("vega_lite_chart")) == 1  # the probabilities of every activity
    frames = [img.captions[0] for img in at.image]
    assert len(frames) == 8 and all(re.match(r"\d+ · \d+\.\d\d s · \d+%$", c) for c in frames), frames
    assert percent(frames[-1].split(" · ")[-1]) > 0.5  # P(Grow) after the last frame: the label's own

    clip = render_clip("left", "green", "triangle", np.random.default_rng(7), num_frames=12, size=64)
    gif = io.BytesIO()
    images = [Image.fromarray(f) for f in clip]
    images[0].save(gif, format="GIF", save_all=True, append_images=images[1:], duration=80, loop=0)
    at.file_uploader[0].set_value(("my clip.gif", gif.getvalue(), "image/gif")).run()
    no_errors(at)
    assert at.selectbox(key="video_sample").disabled
    assert headings(at) == ["MoveLeft"]
    assert at.image[0].captions[0] == "my clip.gif"  # a GIF is shown as itself


BROKEN_VIDEOS = [
    ("notes.mp4", b"these are my notes, not a video\n" * 20, "cannot open as a video"),
    ("empty.avi", b"", "is empty"),
    ("huge.webm", b"\x1a\x45\xdf\xa3" + b"\x00" * (20 * 2**20), "up to 20 MB"),
    # issue 23: an HLS playlist naming a file on the server is refused by its bytes, never followed
    ("evil.m3u8", f"#EXTM3U\n#EXTINF:1.0,\nfile://{SAMPLES / 'video' / 'shapes' / 'a_blue_square_grows.webm'}\n"
                  "#EXT-X-ENDLIST\n".encode(), "not a video container"),
]


@needs("shapes_video_classify.keras")
def test_video_page_broken_uploads_show_an_error(bundled_env):
    """Each broken upload in turn on one page (the page's default clip is captioned once): one
    error naming the file and what is wrong, no result of the previous upload left."""
    at = open_page("task_pages/video.py")
    at.radio(key="video_model").set_value(common.MODELS["video_classify_shapes"]).run()
    for name, data, message in BROKEN_VIDEOS:
        at.file_uploader[0].set_value((name, data, "video/mp4")).run()
        assert not at.exception, [e.message for e in at.exception]
        errors = [e.value for e in at.error]
        assert len(errors) == 1 and name in errors[0] and message in errors[0], (name, errors)
        assert not headings(at) and not at.image, name


# ----------------------------------------------------------------------------- Transliterate

@needs("dakshina_hi_translit.keras")
def test_transliterate_page_words_n_best_and_character_alignment(bundled_env):
    at = open_page("task_pages/transliterate.py")
    no_errors(at)
    [line] = headings(at)  # the example: "main ghar ja raha hoon. namaste duniya, India!"
    assert line.endswith("!") and ". " in line and ", " in line  # punctuation kept
    assert not any(c.isascii() and c.isalpha() for c in line)  # every Latin word transliterated
    hyps = at.table[0].value
    # the model's beam, re-ranked by its rescorer: the combined score and the model's own
    assert list(hyps.columns) == ["rank", "transliteration", "score", "model score"] and len(hyps) == 10
    scores = [float(s) for s in hyps["score"]]
    assert scores == sorted(scores, reverse=True) and line.startswith(hyps["transliteration"][0])
    assert len(at.image) == 1 and at.image[0].captions[0] == f"alignment of “{hyps['transliteration'][0]}”"
    line_result, cache = list(at.session_state["translit_results"].values())[-1]
    result = cache["main"]
    rows = np.asarray(result.attention)
    assert rows.shape == (len(result.attention_labels), len("main"))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-4)
    assert [b.label for b in at.get("download_button")] == ["Transliteration JSON", "Alignment PNG"]
    assert_model_card(at, "dakshina_hi_translit.keras")

    at.select_slider(key="translit_word").set_value(7).run()  # "8. India"
    no_errors(at)
    assert at.image[0].captions[0] == f"alignment of “{cache['india'].text}”"
    at.slider(key="translit_beam").set_value(1).run()
    no_errors(at)
    assert len(at.table[0].value) == 1  # greedy: one hypothesis
    at.text_area[0].set_value("привет").run()
    no_errors(at)
    assert any("Cyrillic" in c.value for c in at.caption)
    assert [i.value for i in at.info] == ["There is no word in Latin letters to transliterate here."]
    at.text_area[0].set_value("  ").run()
    assert not at.exception and not at.error and not at.image
    assert [i.value for i in at.info] == ["Type a word or a sentence in Latin letters."]
# ----------------------------------------------------------------------------- Headline (summarize)

@needs("bbc_headlines.keras")
def test_summarize_page_headline_shaded_source_and_alignment(bundled_env):
    at = open_page("task_pages/summarize.py")
    no_errors(at)
    [headline] = headings(at)
    assert headline and headline != "(empty headline)"
    result = list(at.session_state["summarize_results"].values())[-1]
    rows = np.asarray(result.attention)
    assert rows.shape == (len(result.attention_labels), len(result.source_tokens))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-4)
    shaded = [m.value for m in at.markdown if m.value.startswith('<div style="line-height: 2">')]
    assert len(shaded) == 1 and shaded[0].count("<span") == len(result.source_tokens)
    assert [img.captions[0] for img in at.image] == [f"alignment of “{headline}”"]
    assert [b.label for b in at.get("download_button")] == ["Headline JSON", "Alignment PNG"]
    assert_model_card(at, "bbc_headlines.keras")
    at.slider(key="summarize_beam").set_value(1).run()
    no_errors(at)
    assert len(at.table[0].value) == 1  # greedy: one hypothesis
    at.text_area[0].set_value("   ").run()
    assert not at.exception and not at.error and not headings(at)
    assert [i.value for i in at.info] == ["Paste an article to summarize."]


@needs("bbc_headlines.keras", "news_headlines.keras")
def test_summarize_page_switches_to_the_news_category_model(bundled_env):
    at = open_page("task_pages/summarize.py")
    at.radio(key="summarize_model").set_value(common.MODELS["summarize_news"]).run()
    no_errors(at)
    [headline] = headings(at)
    assert headline and headline != "(empty headline)"
    result = list(at.session_state["summarize_results"].values())[-1]
    assert "paris" in result.source_tokens and result.attention.shape[1] == len(result.source_tokens)
    assert_model_card(at, "news_headlines.keras")
# ----------------------------------------------------------------------------- Classify

@needs("newsgroups_han.keras")
def test_classify_page_on_the_bundled_han_says_what_decides_besides_the_attention(bundled_env):
    """The bundled HAN is stacked on a LinearSVC (its card's --tfidf-init svm): the page says the
    label adds that branch, and that the shading is the network's attention, not its evidence."""
    at = open_page("task_pages/classify.py")
    no_errors(at)
    assert headings(at) == ["rec.motorcycles"]  # the page's own motorcycle example
    said = [c.value for c in at.caption if "tf-idf branch" in c.value]
    assert len(said) == 1 and "LinearSVC" in said[0] and "not that branch's evidence" in said[0], said
    assert_model_card(at, "newsgroups_han.keras")
