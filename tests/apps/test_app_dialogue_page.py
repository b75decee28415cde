"""The Dialogue page (AppTest) on a tiny dialogue model saved here: answers, attention over the
earlier turns, a new dialogue, and the page without its model."""


import pytest

from app_support import APP
from support import dialogue as ds

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402



@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("dialogue_app") / "d.keras"
    ds.tiny_responder().inference_copy().save(path)
    return path


def test_dialogue_page_answers_and_shows_turn_attention(app_env, monkeypatch, tiny_model):
    monkeypatch.setenv("CAPTIONER_DIALOGUE_MODEL", str(tiny_model))
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.switch_page("task_pages/dialogue.py").run()
    assert not at.exception and not at.error
    at.chat_input(key="dialogue_input").set_value("I want a table in rome.").run()
    assert not at.exception and not at.error
    assert len(at.chat_message) == 2 and at.chat_message[0].markdown[0].value == "I want a table in rome."
    at.chat_input(key="dialogue_input").set_value("At seven please.").run()
    assert len(at.chat_message) == 4 and len(at.session_state["dialogue_turns"][3][2]) == 3
    at.button(key="dialogue_reset").click().run()
    assert not at.exception and len(at.chat_message) == 0


def test_dialogue_page_with_a_words_attention_model(app_env, monkeypatch, tmp_path):
    """attend="words": the page shows each turn's share (the sum over its words) the same way."""
    path = tmp_path / "words.keras"
    ds.tiny_responder(attend="words").inference_copy().save(path)
    monkeypatch.setenv("CAPTIONER_DIALOGUE_MODEL", str(path))
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.switch_page("task_pages/dialogue.py").run()
    at.chat_input(key="dialogue_input").set_value("I want a table in rome.").run()
    at.chat_input(key="dialogue_input").set_value("At seven please.").run()
    assert not at.exception and not at.error and len(at.chat_message) == 4
    shares = at.session_state["dialogue_turns"][3][2]
    assert len(shares) == 3 and abs(sum(shares) - 1) < 1e-4


def test_dialogue_page_without_its_model_says_how_to_train_it(app_env):
    at = AppTest.from_file(str(APP), default_timeout=300).run()
    at.switch_page("task_pages/dialogue.py").run()
    assert not at.exception and not at.error
    assert len(at.info) == 1 and "not here yet" in at.info[0].value
    assert at.code[0].value.startswith("captioner train respond")
