"""The Classify page (AppTest) on a tiny HAN saved here: label, probabilities, the text shaded
by both attentions, an uploaded Latin-1 post, a binary upload refused, and empty text."""


import pytest

from app_support import APP
from support import han

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402



@pytest.fixture(scope="module")
def tiny_han(tmp_path_factory):
    path = tmp_path_factory.mktemp("han_app") / "han.keras"
    han.tiny_classifier(seed=0).inference_copy().save(path)
    return path


def _open(app_env, monkeypatch, model):
    monkeypatch.setenv("CAPTIONER_CLASSIFY_MODEL", str(model))
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.switch_page("task_pages/classify.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _document_html(at):
    return [m.value for m in at.markdown if m.value.startswith('<div class="han-document">')]


def test_classify_page_shows_label_and_both_attentions(app_env, monkeypatch, tiny_han):
    at = _open(app_env, monkeypatch, tiny_han)
    assert not at.error
    label = [m.value[4:] for m in at.markdown if m.value.startswith("### ")]
    assert len(label) == 1 and label[0] in han.TOPICS
    [doc] = _document_html(at)
    assert "First bike advice" in doc or "First" in doc  # the Subject is read as the first sentence
    assert doc.count("rgba(220,40,40,") >= 3 and "rgba(40,90,220," in doc
    assert not [c.value for c in at.caption if "tf-idf branch" in c.value]  # a HAN alone: nothing else decides
    at.text_area(key="classify_text").set_value("   ").run()
    assert not at.exception and any("Type or paste" in i.value for i in at.info) and not _document_html(at)


def test_classify_page_uploads(app_env, monkeypatch, tiny_han):
    at = _open(app_env, monkeypatch, tiny_han)
    post = "Subject: Caf\xe9 rockets\n\nThe rocket in orbit.\n".encode("latin-1")
    at.file_uploader(key="classify_upload").set_value(("post.txt", post, "text/plain")).run()
    assert not at.exception and not at.error
    [doc] = _document_html(at)
    assert "Café" in doc and "orbit" in doc
    at.file_uploader(key="classify_upload").set_value(("x.bin", b"\x00\x01binary", "application/octet-stream")).run()
    assert not at.exception and len(at.error) == 1 and "x.bin" in at.error[0].value and "binary" in at.error[0].value


def test_classify_page_without_its_model_says_how_to_train_it(app_env):
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.switch_page("task_pages/classify.py").run()
    assert not at.exception and not at.error
    assert len(at.info) == 1 and "not here yet" in at.info[0].value
    assert at.code[0].value.startswith("captioner train classify")
