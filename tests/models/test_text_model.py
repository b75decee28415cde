"""The text task models' one loader names each kind of model and how to make one."""

import pytest

from captioner.errors import InputError


@pytest.mark.parametrize("module, loader, says", [
    ("document_classifier", "load_document_classifier", "model file not found (train one with `captioner train classify`)"),
    ("dialogue_responder", "load_dialogue_responder", "model file not found (train one with `captioner train respond`)"),
    ("language_model", "load_language_model", "model file not found (make one with `captioner train lm`)"),
    ("seq2seq", "load_translator", "model file not found"),
])
def test_a_missing_file_is_named_with_how_to_make_one(tmp_path, module, loader, says):
    import importlib

    load = getattr(importlib.import_module(f"captioner.models.{module}"), loader)
    with pytest.raises(InputError) as error:
        load(tmp_path / "absent.keras")
    assert str(error.value) == f"{tmp_path / 'absent.keras'}: {says}"


def test_another_kind_of_model_is_refused_by_name():
    from pathlib import Path

    from captioner.models.document_classifier import DocumentClassifier

    path = Path(__file__).resolve().parents[2] / "assets" / "models" / "easy_vqa.keras"
    with pytest.raises(InputError, match="holds a VQAModel, not a document classifier"):
        DocumentClassifier.load(path)
