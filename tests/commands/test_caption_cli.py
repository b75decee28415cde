"""`captioner caption` and scripts/caption_images.py end to end on a tiny saved captioner."""

import csv
import io
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from captioner.cli import main
from support.tiny_captioner import make_images, save_tiny_captioner

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return str(save_tiny_captioner(tmp_path_factory.mktemp("cli_model") / "tiny.keras"))


@pytest.fixture
def images(tmp_path):
    root = tmp_path / "images"
    good, broken = make_images(root)
    return str(root), good, broken


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO))
    return env


def test_caption_folder_to_jsonl_with_attention_pngs(model_path, images, tmp_path, capsys):
    root, good, broken = images
    out = tmp_path / "captions.jsonl"
    att = tmp_path / "attention"
    argv = ["caption", root, "--model", model_path, "--output", str(out), "--attention-dir", str(att),
            "--batch-size", "4", "--beam-size", "2", "--max-length", "5", "--no-progress"]
    assert main(argv) == 1  # broken files -> exit status 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["image"] for r in rows) == sorted(good + broken)
    errors = [r for r in rows if "error" in r]
    assert sorted(r["image"] for r in errors) == broken
    stderr = capsys.readouterr().err
    assert "2 failed" in stderr and all(b in stderr for b in broken)  # the summary names the files
    for r in rows:
        if "caption" in r:
            assert len(r["caption"].split()) <= 5
            with Image.open(r["attention"]) as im:
                im.load()
                assert im.format == "PNG"
    assert len(list(att.iterdir())) == len(good)

    assert main(argv) == 1  # rerun: nothing new, the broken files are still reported
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert again == rows
    assert "already done" in capsys.readouterr().err


def test_csv_to_stdout_and_shards(model_path, images, capsys):
    root, good, broken = images
    seen = []
    for i in range(2):
        globs = [os.path.join(root, pattern) for pattern in ("*.jpg", "*.JPEG", "*.png")]
        status = main(["caption", *globs, os.path.join(root, "nested"), os.path.join(root, "other"),
                       "--model", model_path, "--format", "csv", "--shard", f"{i}/2", "--no-progress"])
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        assert status == (1 if any(r["error"] for r in rows) else 0)
        seen.extend(r["image"] for r in rows)
    assert sorted(seen) == sorted(good + broken)  # the glob finds every image; shards partition them


def test_missing_default_model_says_how_to_train_it(monkeypatch, tmp_path, images, capsys):
    import captioner.commands.caption as caption_cmd

    monkeypatch.setattr(caption_cmd, "DEFAULT_MODEL", tmp_path / "assets" / "models" / "flickr8k_attention.keras")
    assert main(["caption", images[0]]) == 2
    err = capsys.readouterr().err
    assert "does not exist yet" in err and "captioner train caption" in err


def test_bad_arguments_are_named(model_path, images, capsys):
    root = images[0]
    assert main(["caption", root, "--model", model_path, "--shard", "2/2"]) == 2
    assert "--shard '2/2'" in capsys.readouterr().err
    assert main(["caption", root, "--model", str(Path(root) / "missing.keras")]) == 2
    assert "missing.keras not found" in capsys.readouterr().err
    assert main(["caption", str(Path(root) / "nothing-*.jpg"), "--model", model_path]) == 2
    assert "no images found" in capsys.readouterr().err


def test_exit_status_of_the_command_in_a_fresh_process(model_path, images, tmp_path):
    root, good, broken = images
    out = tmp_path / "cli.jsonl"
    proc = subprocess.run([sys.executable, "-m", "captioner", "caption", root, "--model", model_path,
                           "--output", str(out), "--no-progress"],
                          capture_output=True, text=True, env=_env(), timeout=900)
    assert proc.returncode == 1, proc.stderr
    assert len(out.read_text().splitlines()) == len(good) + len(broken)
    assert "notes.jpg" in proc.stderr


def test_script_runs_the_same_engine(model_path, images, tmp_path, monkeypatch):
    script = REPO / "scripts" / "caption_images.py"
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=_env(),
                          timeout=300)
    assert proc.returncode == 0 and "--attention-dir" in proc.stdout and "--shard" in proc.stdout

    root, good, broken = images
    out = tmp_path / "script.csv"
    monkeypatch.setattr(sys, "argv", [str(script), *good, "--model", model_path, "--output", str(out),
                                      "--no-progress"])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(script), run_name="__main__")
    assert exit_info.value.code == 0  # no broken file given
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))  # a .csv output -> csv format
    assert sorted(r["image"] for r in rows) == good and not any(r["error"] for r in rows)


BUNDLED = REPO / "assets" / "models" / "flickr8k_attention.keras"
FLICKR = REPO.parent / "shared" / "datasets" / "flickr8k"


@pytest.mark.slow
@pytest.mark.skipif(not BUNDLED.is_file(), reason=f"bundled model {BUNDLED} not trained yet")
@pytest.mark.skipif(not (FLICKR / "Images").is_dir(), reason=f"Flickr8k images not found at {FLICKR}")
def test_bundled_model_captions_dev_images(tmp_path):
    dev = (FLICKR / "Flickr_8k.devImages.txt").read_text().split()[:4]
    paths = [str(FLICKR / "Images" / name) for name in dev]
    out = tmp_path / "dev.jsonl"
    assert main(["caption", *paths, "--output", str(out), "--attention-dir", str(tmp_path / "att"),
                 "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["image"] for r in rows] == sorted(paths)
    assert all(len(r["caption"].split()) >= 3 for r in rows)


def test_a_directory_or_unwritable_output_is_one_line(model_path, images, tmp_path, capsys):
    """Issue 23 item 8: these were tracebacks."""
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for output, message in ((tmp_path, "is a directory"), (blocker / "out.jsonl", "cannot create its folder")):
        assert main(["caption", images[0], "--model", model_path, "--output", str(output), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert blocker.read_text() == "x"
