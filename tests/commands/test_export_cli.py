"""`captioner export`: SavedModel and TFLite files from a .keras model, and clear errors."""

import importlib.util
from pathlib import Path

import pytest

from captioner.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("tiny_captioner_export_cli", REPO / "tests" / "inference" / "tiny_captioner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.save_tiny_captioner(tmp_path_factory.mktemp("export_cli") / "tiny.keras"))


def test_export_saved_model_and_tflite(model_path, tmp_path, capsys):
    import tensorflow as tf

    assert main(["export", model_path, "--output", str(tmp_path / "saved")]) == 0
    assert "wrote SavedModel" in capsys.readouterr().err
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    assert "serving_default" in loaded.signatures and "caption_pixels" in loaded.signatures
    assert main(["export", model_path, "--format", "tflite", "-o", str(tmp_path / "b.tflite")]) == 0
    assert (tmp_path / "b.tflite").stat().st_size > 0
    assert "wrote TFLite backbone" in capsys.readouterr().err


def test_export_errors_name_the_input(model_path, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["export", str(tmp_path / "missing.keras"), "-o", str(tmp_path / "out")]) == 2
    assert "missing.keras" in capsys.readouterr().err
    assert main(["export", model_path, "-o", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["export", model_path, "-f", "tflite", "-o", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    import keras

    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    other.save(tmp_path / "dense.keras")
    assert main(["export", str(tmp_path / "dense.keras"), "-o", str(tmp_path / "x")]) == 2
    assert "not an image captioner or a translator" in capsys.readouterr().err
