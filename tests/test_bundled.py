"""The one registry of bundled models: every file is there, one default per task, and every
entry point (CLI, server, app, pipeline) takes its default from it."""

import argparse

import pytest

from captioner import bundled


def test_every_registered_model_is_bundled_with_its_card_and_each_task_has_one_default():
    for model in bundled.MODELS:
        assert model.bundled_path.is_file(), model.file
        assert model.bundled_path.with_suffix(".json").is_file(), model.file
    for task in bundled.TASKS:
        assert bundled.default_model(task).task == task
    assert {p.name for p in bundled.MODELS_DIR.glob("*.keras")} == {m.file for m in bundled.MODELS}


def test_the_environment_variable_moves_the_default_everywhere(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPTIONER_VQA_MODEL", str(tmp_path / "mine.keras"))
    assert bundled.default_path("ask") == str(tmp_path / "mine.keras")
    monkeypatch.setenv("CAPTIONER_VQA_MODEL", "relative/mine.keras")
    assert bundled.default_path("ask") == str(bundled.REPO_ROOT / "relative" / "mine.keras")


def _defaults_of(parser, command):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.dest: a.default for a in sub._actions}


def test_cli_server_and_app_agree_on_each_default():
    from captioner.cli import build_parser
    from captioner.serving import app as server

    parser = build_parser()
    for command, task in (("translate", "translate"), ("transliterate", "transliterate"),
                          ("summarize", "summarize"), ("entail", "entail"),
                          ("classify", "classify"), ("respond", "respond"), ("chat", "respond"),
                          ("generate", "generate"), ("evaluate-lm", "generate")):
        assert _defaults_of(parser, command)["model"] == bundled.default_path(task), command
    from captioner.commands import ask, caption, summarize, video

    assert str(caption.DEFAULT_MODEL) == bundled.default_path("caption")  # --model None means this one
    assert str(ask.DEFAULT_MODEL) == bundled.default_path("ask") and summarize.DEFAULT_MODEL == bundled.default_path("summarize")
    assert video.DEFAULT_MODELS == {"caption": bundled.default_path("video-caption"),
                                    "classify": bundled.default_path("video-classify")}
    for task in server.TASKS:  # the server's /v1/ask answers photos with the photo model, not the toy one
        assert str(server.default_model_path(task)) == bundled.default_path(task)
    assert server.default_model_path("ask").endswith("photo_vqa.keras")


def test_the_assets_fit_their_size_budget():
    """Issue 39: every user clones assets/; a new model version has to fit the one budget."""
    from captioner.bundled import ASSETS_BUDGET_BYTES, assets_bytes

    size = assets_bytes()
    assert size <= ASSETS_BUDGET_BYTES, (
        f"assets/ holds {size / 1e6:.1f} MB, over its budget of {ASSETS_BUDGET_BYTES / 1e6:.0f} MB "
        "(captioner/bundled.py): store models lean (captioner model store-lean) or drop one")


def test_the_history_of_assets_fits_its_budget():
    """Issue 70 item 7: every old version of a bundled model stays in a full clone; what one submission
    may add is the room left under ASSETS_HISTORY_BUDGET_BYTES (a shallow clone has no history to check)."""
    from captioner.bundled import ASSETS_HISTORY_BUDGET_BYTES, assets_history_bytes

    size = assets_history_bytes()
    if size is None:
        pytest.skip("not a full git clone")
    assert size <= ASSETS_HISTORY_BUDGET_BYTES, (
        f"assets/ history holds {size / 1e6:.1f} MB, over its budget of {ASSETS_HISTORY_BUDGET_BYTES / 1e6:.0f} MB "
        "(captioner/bundled.py): bundle one new model version per issue, at its end")
