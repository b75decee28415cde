"""`captioner export`: SavedModel and TFLite files from a .keras model, and clear errors."""

import pytest

from captioner.cli import main


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    from support.tiny_captioner import save_tiny_captioner

    return str(save_tiny_captioner(tmp_path_factory.mktemp("export_cli") / "tiny.keras"))


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


def test_export_never_deletes_a_folder_it_did_not_write(model_path, tmp_path, capsys, monkeypatch):
    """Issue 40 item 1: a folder of other files, `.`, or a symbolic link is refused and left whole."""
    target = tmp_path / "d"
    (target / "sub").mkdir(parents=True)
    (target / "notes.txt").write_text("keep")
    assert main(["export", model_path, "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert "not a SavedModel written by `captioner export`" in err and len(err.strip().splitlines()) == 1
    assert (target / "notes.txt").read_text() == "keep" and (target / "sub").is_dir()

    monkeypatch.chdir(target)
    assert main(["export", model_path, "--output", "."]) == 2
    assert "current folder" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt", "sub"]

    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    assert main(["export", model_path, "--output", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert (target / "notes.txt").read_text() == "keep"


def test_export_replaces_its_own_earlier_export_and_fills_an_empty_folder(model_path, tmp_path, capsys):
    import json

    out = tmp_path / "saved"
    out.mkdir()  # empty: used
    assert main(["export", model_path, "--output", str(out)]) == 0
    marker = json.loads((out / "captioner_export.json").read_text())
    assert marker["written_by"] == "captioner export" and marker["source"] == model_path
    (out / "stale.txt").write_text("from the first export")  # an earlier export is replaced whole
    assert main(["export", model_path, "--output", str(out)]) == 0
    assert not (out / "stale.txt").exists() and (out / "saved_model.pb").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".export")]  # no temporaries left


def test_export_into_an_unwritable_place_is_one_line(model_path, tmp_path, capsys):
    (tmp_path / "plain").write_text("a file, so nothing can be made under it")
    for fmt, out in (("saved_model", "plain/saved"), ("tflite", "plain/b.tflite")):
        assert main(["export", model_path, "-f", fmt, "-o", str(tmp_path / out)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "plain" in err and "Traceback" not in err
