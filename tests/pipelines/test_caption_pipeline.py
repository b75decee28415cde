"""`captioner pipeline caption`: the Apache Beam RunInference pipeline on the DirectRunner gives
the rows of `captioner caption` (same captions, same error rows), one per input file."""

import glob
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("apache_beam")

from captioner.cli import main  # noqa: E402
from captioner.errors import InputError  # noqa: E402
from support.tiny_captioner import make_images, save_tiny_captioner  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "assets" / "samples"
BUNDLED = REPO / "assets" / "models" / "flickr8k_attention.keras"


def read_shards(prefix):
    rows = []
    for shard in sorted(glob.glob(f"{prefix}-*")):
        with open(shard, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def run_pipeline(inputs, output, model, **kwargs):
    import apache_beam as beam

    from captioner.pipelines.caption import build_caption_pipeline, counters

    pipeline = beam.Pipeline(runner="DirectRunner")
    build_caption_pipeline(pipeline, inputs, str(output), str(model), **kwargs)
    result = pipeline.run()
    result.wait_until_finish()
    return counters(result)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(model path, image folder, good paths, broken paths)."""
    root = tmp_path_factory.mktemp("pipeline")
    model = save_tiny_captioner(root / "tiny.keras")
    good, broken = make_images(root / "images")
    return str(model), str(root / "images"), good, broken


@pytest.fixture(scope="module")
def folder_run(tiny, tmp_path_factory):
    """The pipeline over the image folder (recursed) and, overlapping it, a glob of its top level."""
    model, root, _, _ = tiny
    out = tmp_path_factory.mktemp("out") / "captions"
    counts = run_pipeline([root, os.path.join(root, "*.jpg")], out, model, max_batch_size=3, num_shards=2)
    return out, counts


def test_one_row_per_file_and_the_rows_of_captioner_caption(tiny, folder_run):
    from captioner.features.images import list_images
    from captioner.inference.batch import caption_images, load_captioner

    model_path, root, good, broken = tiny
    out, counts = folder_run
    assert sorted(glob.glob(f"{out}-*")) == [f"{out}-00000-of-00002.jsonl", f"{out}-00001-of-00002.jsonl"]
    rows = read_shards(out)
    assert sorted(r["image"] for r in rows) == sorted(good + broken)  # each once, readme.txt not listed
    assert counts == {"captioned": len(good), "failed": len(broken)}

    class Lines:
        def __init__(self):
            self.text = ""

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    stream = Lines()
    report = caption_images(list_images([root]), load_captioner(model_path), batch_size=4, progress=False,
                            stream=stream)
    assert report.captioned == len(good)
    expected = {r["image"]: r for r in map(json.loads, stream.text.splitlines())}
    got = {r["image"]: r for r in rows}
    assert got.keys() == expected.keys()
    for image, row in got.items():
        want = expected[image]
        assert row.keys() == want.keys(), image
        if "error" in want:
            assert row["error"] == want["error"]
        else:
            assert row["caption"] == want["caption"], image
            assert row["score"] == pytest.approx(want["score"], abs=1e-3)


def test_handler_decodes_bytes_and_returns_error_rows(tiny):
    from captioner.pipelines.caption import ImageCaptionerModelHandler

    model_path, _, good, broken = tiny
    handler = ImageCaptionerModelHandler(model_path, beam_size=1, max_batch_size=4)
    assert handler.batch_elements_kwargs() == {"min_batch_size": 1, "max_batch_size": 4}
    model = handler.load_model()
    batch = [(p, Path(p).read_bytes()) for p in (good[0], broken[0], good[1])]
    rows = handler.run_inference(batch, model)
    assert [r["image"] for r in rows] == [p for p, _ in batch]
    assert "caption" in rows[0] and "caption" in rows[2]
    assert "error" in rows[1] and "\n" not in rows[1]["error"]
    assert handler.get_num_bytes(batch) == sum(len(d) for _, d in batch)
    assert rows[0]["caption"] == model.caption([good[0]], beam_size=1)[0].text


def test_a_batch_whose_model_call_raises_becomes_error_rows(tiny, tmp_path, monkeypatch):
    from captioner.pipelines import caption as pipeline_module

    model_path, root, good, _ = tiny

    def explode(self, batch, model, inference_args=None):
        raise MemoryError("out of memory (simulated)")

    monkeypatch.setattr(pipeline_module.ImageCaptionerModelHandler, "run_inference", explode)
    out = tmp_path / "rows"
    counts = run_pipeline([os.path.join(root, "*.png")], out, model_path)
    rows = read_shards(out)
    pngs = sorted(p for p in good if os.path.dirname(p) == root and p.endswith(".png"))
    assert sorted(r["image"] for r in rows) == pngs
    assert all("captioning failed: MemoryError" in r["error"] and "simulated" in r["error"] for r in rows)
    assert counts == {"captioned": 0, "failed": len(pngs)}


def test_unreadable_and_oversized_files_are_error_rows(monkeypatch, tmp_path):
    from captioner.pipelines import caption as pipeline_module

    big = tmp_path / "big.jpg"
    big.write_bytes(b"x" * 100)
    fn = pipeline_module.ReadImageFiles()
    monkeypatch.setattr(pipeline_module, "MAX_IMAGE_BYTES", 50)
    (out,) = list(fn.process((str(big), 100)))
    assert out.tag == "errors" and "too large" in out.value["error"] and out.value["image"] == str(big)
    (out,) = list(fn.process((str(big), None)))  # size unknown: read, then refused
    assert out.tag == "errors" and "too large" in out.value["error"]
    (out,) = list(fn.process((str(tmp_path / "gone.jpg"), 10)))
    assert out.tag == "errors" and "cannot read" in out.value["error"] and "gone.jpg" in out.value["image"]
    monkeypatch.setattr(pipeline_module, "MAX_IMAGE_BYTES", 1000)
    assert list(fn.process((str(big), 100))) == [(str(big), b"x" * 100)]


def test_bad_inputs_are_refused_before_the_pipeline_runs(tiny, tmp_path):
    import apache_beam as beam

    from captioner.pipelines.caption import build_caption_pipeline

    model_path, root, _, _ = tiny
    pipeline = beam.Pipeline(runner="DirectRunner")
    with pytest.raises(InputError, match="nothing-here.*matches no file"):
        build_caption_pipeline(pipeline, [str(tmp_path / "nothing-here*.jpg")], str(tmp_path / "o"), model_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="empty.*no image files"):
        build_caption_pipeline(pipeline, [str(tmp_path / "empty")], str(tmp_path / "o"), model_path)
    with pytest.raises(InputError, match="missing.keras not found"):
        build_caption_pipeline(pipeline, [root], str(tmp_path / "o"), str(tmp_path / "missing.keras"))
    not_a_model = tmp_path / "notes.keras"
    not_a_model.write_text("hello")
    with pytest.raises(InputError, match="notes.keras"):
        build_caption_pipeline(pipeline, [root], str(tmp_path / "o"), str(not_a_model))


def test_cli_passes_beam_options_and_reports(tiny, tmp_path, capsys, monkeypatch):
    from captioner.pipelines import caption as pipeline_module

    model_path, root, good, broken = tiny
    loads, batches = [], []
    load, infer = pipeline_module.ImageCaptionerModelHandler.load_model, pipeline_module.ImageCaptionerModelHandler.run_inference
    monkeypatch.setattr(pipeline_module.ImageCaptionerModelHandler, "load_model",
                        lambda self: loads.append(1) or load(self))
    monkeypatch.setattr(pipeline_module.ImageCaptionerModelHandler, "run_inference",
                        lambda self, batch, model, args=None: batches.append(len(batch)) or infer(self, batch, model))
    out = tmp_path / "cli" / "caps"
    code = main(["pipeline", "caption", "--input", os.path.join(root, "nested", "*"), "--output", str(out),
                 "--model", model_path, "--batch-size", "2", "--runner", "DirectRunner", "--no-progress"])
    nested = [p for p in good + broken if os.path.dirname(p) == os.path.join(root, "nested")]
    assert code == 1  # nested/truncated.jpg is broken
    rows = read_shards(out)
    assert sorted(r["image"] for r in rows) == sorted(nested)
    assert len(loads) == 1 and sum(batches) == len(nested) and max(batches) <= 2 and len(batches) >= 2  # loaded once
    err = capsys.readouterr().err
    assert f"captioned {len(nested) - 1} images, 1 failed" in err and "DirectRunner" in err
    assert main(["pipeline", "caption", "--input", root, "--output", str(out), "--model", model_path,
                 "--batch-size", "0"]) == 2
    assert "--batch-size must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # options nobody takes are still refused by other commands
        main(["caption", root, "--runner", "DirectRunner"])


@pytest.mark.slow
def test_bundled_model_three_photos_and_a_broken_file_same_as_captioner_caption(tmp_path, capsys):
    """The real bundled captioner on 3 real photos + a text file named .jpg: the pipeline's
    captions are exactly those of `captioner caption`, and the text file is one error row."""
    if not BUNDLED.is_file():
        pytest.skip("bundled model missing")
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ("cat.jpg", "coffee.jpg", "grace_hopper.jpg"):
        shutil.copy(SAMPLES / name, photos / name)
    (photos / "broken.jpg").write_text("this is a text file, not a JPEG\n")
    out = tmp_path / "beam" / "captions"
    assert main(["pipeline", "caption", "--input", str(photos / "*.jpg"), "--output", str(out),
                 "--runner", "DirectRunner", "--no-progress"]) == 1
    rows = {r["image"]: r for r in read_shards(out)}
    assert main(["caption", str(photos), "--output", str(tmp_path / "cli.jsonl"), "--no-progress"]) == 1
    expected = {r["image"]: r for r in map(json.loads, (tmp_path / "cli.jsonl").read_text().splitlines())}
    assert rows.keys() == expected.keys() and len(rows) == 4
    errors = [image for image, r in rows.items() if "error" in r]
    assert errors == [str(photos / "broken.jpg")]
    assert rows[errors[0]]["error"] == expected[errors[0]]["error"]
    for image, row in rows.items():
        if "caption" in row:
            assert row["caption"] == expected[image]["caption"] and row["caption"]
            assert np.isclose(row["score"], expected[image]["score"], atol=1e-3)


def test_a_name_that_is_not_utf8_and_a_fifo_are_error_rows_and_the_others_are_captioned(tiny, tmp_path):
    """Issue 40 item 12: `a\\xffb.jpg` crashed the whole pipeline (158-line traceback, no shards)."""
    import shutil

    model, _, good, _ = tiny
    folder = tmp_path / "odd"
    folder.mkdir()
    shutil.copy(good[0], folder / "ok.jpg")
    shutil.copy(good[0], os.fsdecode(os.fsencode(str(folder)) + b"/a\xffb.jpg"))
    os.mkfifo(folder / "x.jpg")  # item 11: a FIFO named like an image is never opened
    counts = run_pipeline([str(folder)], tmp_path / "out" / "c", model)
    rows = {os.path.basename(r["image"]): r for r in read_shards(tmp_path / "out" / "c")}
    assert counts == {"captioned": 1, "failed": 2}
    assert "caption" in rows["ok.jpg"] and "not valid UTF-8" in rows["a\\xffb.jpg"]["error"]
    assert "not a regular file (a FIFO)" in rows["x.jpg"]["error"]


def test_a_killed_runs_temporaries_are_removed_and_a_second_run_refused(tmp_path):
    """Issue 40 item 15: a killed pipeline left beam-temp-* folders behind."""
    import fcntl

    from captioner.errors import InputError
    from captioner.pipelines.caption import output_run

    prefix = tmp_path / "out" / "captions"
    stale = tmp_path / "out" / "beam-temp-captions-0123abcd"
    stale.mkdir(parents=True)
    (stale / "part").write_text("half")
    other = tmp_path / "out" / "beam-temp-other-0123abcd"  # another prefix's: kept
    other.mkdir()
    with output_run(str(prefix)):
        assert not stale.exists() and other.exists()
        with open(str(prefix) + ".lock", "a") as f:
            with pytest.raises(OSError):
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(InputError, match="another pipeline is writing"):
            with output_run(str(prefix)):
                pass
    assert not os.path.exists(str(prefix) + ".lock")
    with pytest.raises(InputError, match="cannot be written"):
        (tmp_path / "plain").write_text("a file")
        with output_run(str(tmp_path / "plain" / "captions")):
            pass
