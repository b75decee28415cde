"""The batch captioning engine on a tiny random-weight captioner and generated image files."""

import csv
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from captioner.errors import InputError
from captioner.features.images import list_images
from captioner.inference import (
    attention_png_name,
    caption_images,
    parse_shard,
    read_output,
    select_shard,
    shard_of,
)


def _jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_parse_shard():
    assert parse_shard("0/1") == (0, 1)
    assert parse_shard(" 3 / 8 ") == (3, 8)
    for bad in ("8/8", "1/0", "-1/4", "a/b", "3", "1/2/3"):
        with pytest.raises(InputError, match="I/N|0 <= I < N"):
            parse_shard(bad)


def test_shards_partition_any_path_list_exactly():
    paths = [f"data/dir{i % 7}/img_{i:04d}.jpg" for i in range(300)]
    shards = [select_shard(paths, (i, 4)) for i in range(4)]
    assert sorted(p for s in shards for p in s) == sorted(paths)  # union is everything ...
    assert sum(len(s) for s in shards) == len(paths)  # ... and nothing is in two shards
    assert all(40 < len(s) < 110 for s in shards)  # a hash split, roughly balanced
    # stable: the shard of a path depends on that path alone, not on the other paths
    assert select_shard(paths[:50], (2, 4)) == [p for p in shards[2] if p in paths[:50]]
    assert shard_of("data/dir1/img_0001.jpg", 4) == shard_of("data/dir1/img_0001.jpg", 4)
    assert select_shard(paths, None) == sorted(paths)


def test_attention_png_names_do_not_collide_for_same_basename():
    a, b = attention_png_name("x/cat.jpg"), attention_png_name("y/cat.jpg")
    assert a != b and a.startswith("cat-") and a.endswith(".png")
    assert attention_png_name("x/cat.jpg") == a


def test_one_row_per_image_and_broken_files_reported(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    paths = list_images([root])
    assert sorted(paths) == sorted(good + broken)  # nested folders recursed, readme.txt ignored
    out = tmp_path / "out" / "captions.jsonl"
    report = caption_images(paths, tiny_model, batch_size=3, output=str(out), progress=False)
    rows = _jsonl(out)
    assert [r["image"] for r in rows] == sorted(paths)
    assert report.captioned == len(good) and report.skipped == 0 and report.exit_status == 1
    assert sorted(p for p, _ in report.failed) == broken
    for r in rows:
        if r["image"] in broken:
            assert set(r) == {"image", "error"} and r["error"]
        else:
            assert set(r) == {"image", "caption", "score"}
            assert isinstance(r["caption"], str) and isinstance(r["score"], float)
    errors = {r["image"]: r["error"] for r in rows if "error" in r}
    assert "truncated" in errors[os.path.join(root, "nested", "truncated.jpg")]
    assert "not an image" in errors[os.path.join(root, "notes.jpg")]
    # the engine gives the captions of the Python API
    expected = tiny_model.caption(good)
    got = {r["image"]: r for r in rows}
    for path, cap in zip(good, expected):
        assert got[path]["caption"] == cap.text
        assert got[path]["score"] == pytest.approx(cap.score, abs=1e-4)


def test_rerun_skips_done_images_and_redoes_a_truncated_last_line(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    paths = list_images([root])
    out = str(tmp_path / "captions.jsonl")
    caption_images(paths, tiny_model, batch_size=4, output=out, progress=False)
    first = _jsonl(out)

    report = caption_images(paths, tiny_model, batch_size=4, output=out, progress=False)
    assert (report.captioned, report.skipped, report.failed) == (0, len(paths), [])
    assert report.previous_errors == len(broken) and report.exit_status == 1  # still incomplete
    assert _jsonl(out) == first  # nothing appended: no duplicates

    # a kill in the middle of writing leaves half a line: it is dropped and that image redone
    with open(out, "rb") as f:
        data = f.read()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    with open(out, "wb") as f:
        f.write(data[: last_start + (len(data) - last_start) // 2])
    report = caption_images(paths, tiny_model, batch_size=4, output=out, progress=False)
    assert report.skipped == len(paths) - 1
    assert report.captioned + len(report.failed) == 1
    again = _jsonl(out)  # every line parses again
    assert sorted(r["image"] for r in again) == sorted(paths)
    assert again[-1] == first[-1]


def test_retry_errors_captions_fixed_files_once(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    out = str(tmp_path / "captions.jsonl")
    caption_images(list_images([root]), tiny_model, output=out, progress=False)
    notes = os.path.join(root, "notes.jpg")
    Image.fromarray(np.full((20, 30, 3), 90, np.uint8)).save(notes, format="JPEG")  # the file was fixed
    report = caption_images(list_images([root]), tiny_model, output=out, progress=False, retry_errors=True)
    assert report.captioned == 1 and [p for p, _ in report.failed] == [os.path.join(root, "nested", "truncated.jpg")]
    rows = _jsonl(out)
    assert len(rows) == len(good) + len(broken)  # no duplicates
    assert [set(r) for r in rows if r["image"] == notes] == [{"image", "caption", "score"}]


def test_csv_output_and_resume(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    paths = list_images([root])
    out = str(tmp_path / "captions.csv")
    report = caption_images(paths[:4], tiny_model, batch_size=2, output=out, progress=False)
    report = caption_images(paths, tiny_model, batch_size=2, output=out, progress=False)
    assert report.skipped == 4
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["image", "caption", "score", "error", "attention"]
    assert sorted(r["image"] for r in rows) == sorted(paths)
    for r in rows:
        assert bool(r["error"]) == (r["image"] in broken)
        if r["image"] not in broken:
            float(r["score"])  # every captioned row has a numeric score
    assert read_output(out, "csv")[0]["image"] == rows[0]["image"]


def test_shards_write_disjoint_outputs_covering_every_image(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    paths = list_images([root])
    seen = []
    for i in range(3):
        out = str(tmp_path / f"part-{i}.jsonl")
        report = caption_images(paths, tiny_model, output=out, shard=f"{i}/3", progress=False)
        rows = _jsonl(out) if os.path.exists(out) else []
        assert report.selected == len(rows)
        seen.extend(r["image"] for r in rows)
    assert sorted(seen) == sorted(paths)


def test_attention_pngs_one_per_image_and_decodable(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    out = str(tmp_path / "captions.jsonl")
    attention = tmp_path / "attention"
    caption_images(list_images([root]), tiny_model, output=out, attention_dir=str(attention), progress=False)
    rows = [r for r in _jsonl(out) if "caption" in r]
    pngs = [r["attention"] for r in rows]
    assert len(set(pngs)) == len(good)  # the two cat.jpg do not collide
    assert sorted(os.listdir(attention)) == sorted(os.path.basename(p) for p in pngs)  # no temp files left
    for r in rows:
        with Image.open(r["attention"]) as im:
            im.load()
            assert im.format == "PNG" and im.width > 64 and im.height > 64


def test_stdout_stream_and_foreign_output_refused(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    stream = io.StringIO()
    report = caption_images(good[:2], tiny_model, stream=stream, progress=False)
    lines = stream.getvalue().splitlines()
    assert report.exit_status == 0 and [json.loads(x)["image"] for x in lines] == good[:2]

    foreign = tmp_path / "notes.jsonl"
    foreign.write_text("just some notes\nnot json\n")
    with pytest.raises(InputError, match=r"notes.jsonl:1: not a JSON line"):
        caption_images(good[:1], tiny_model, output=str(foreign), progress=False)
    assert foreign.read_text() == "just some notes\nnot json\n"  # untouched


@pytest.mark.parametrize("name,content", [
    ("notes.jsonl", b"just some notes\nnot json\nmy last line, no newline"),  # lost its last line before
    ("one.jsonl", b"a single line with no newline"),  # was wiped and overwritten, exit 0, before
    ("rows.jsonl", b'{"image": "a.jpg", "caption": "x"}\n{"other": 1'),  # a JSON file, not ours
    ("table.csv", b"name,value"),  # a CSV that is not ours, header unfinished
    ("bin.jsonl", b"\xff\xfe\x00 binary"),
])
def test_a_file_that_is_not_captioner_output_is_never_touched(tiny_model, image_dir, tmp_path, name, content):
    """Issue 23 item 3: check first, touch nothing that is not captioner output."""
    root, good, broken = image_dir
    foreign = tmp_path / name
    foreign.write_bytes(content)
    with pytest.raises(InputError, match="is this a captioner output file"):
        caption_images(good[:1], tiny_model, output=str(foreign), progress=False)
    assert foreign.read_bytes() == content


def test_a_whole_last_row_without_its_newline_is_kept(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    out = tmp_path / "c.jsonl"
    out.write_text(json.dumps({"image": good[0], "caption": "kept", "score": -1.0}))
    report = caption_images(good[:2], tiny_model, output=str(out), progress=False)
    rows = _jsonl(str(out))
    assert report.skipped == 1 and report.captioned == 1
    assert rows[0] == {"image": good[0], "caption": "kept", "score": -1.0} and rows[1]["image"] == good[1]


def test_half_a_first_line_or_header_is_resumed(tiny_model, image_dir, tmp_path):
    root, good, broken = image_dir
    out = tmp_path / "c.jsonl"
    out.write_bytes(b'{"image": "/x/half')  # a kill in the first batch's write
    report = caption_images(good[:1], tiny_model, output=str(out), progress=False)
    assert report.captioned == 1 and [r["image"] for r in _jsonl(str(out))] == good[:1]
    csv_out = tmp_path / "c.csv"
    csv_out.write_bytes(b"image,capt")
    report = caption_images(good[:1], tiny_model, output=str(csv_out), progress=False)
    assert report.captioned == 1 and csv_out.read_text().startswith("image,caption,score,error,attention\n")


def test_second_writer_on_the_same_output_is_refused(tiny_model, image_dir, tmp_path):
    fcntl = pytest.importorskip("fcntl")
    root, good, broken = image_dir
    out = tmp_path / "captions.jsonl"
    with open(out, "ab") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(InputError, match="another captioning process"):
            caption_images(good[:1], tiny_model, output=str(out), progress=False)


def test_attention_dir_needs_an_attention_model(image_dir, tmp_path):
    from support.tiny_captioner import build_tiny_captioner

    root, good, broken = image_dir
    model = build_tiny_captioner(kind="fc-init")
    with pytest.raises(InputError, match="soft-attention model"):
        caption_images(good, model, attention_dir=str(tmp_path / "att"), progress=False)


def test_word_attention_keeps_each_map_with_its_word(tiny_model):
    """<pad>/<start> steps (a barely trained model can emit them) are dropped with their maps."""
    from captioner.inference.batch import word_attention
    from captioner.text.vocabulary import END_ID, PAD_ID, START_ID

    vocab = tiny_model.vocabulary
    gh, gw = tiny_model.grid_shape
    a, dog = vocab.token_to_id("a"), vocab.token_to_id("dog")
    tokens = np.array([[[a, PAD_ID, dog, START_ID, END_ID, PAD_ID]]])  # (B=1, K=1, T=6)
    attention = np.arange(6 * gh * gw, dtype=np.float32).reshape(1, 1, 6, gh * gw)  # (B, K, T, R)
    out = {"tokens": tokens, "lengths": np.array([[5]]), "attention": attention}
    words, maps = word_attention(tiny_model, out, 0)
    assert words == ["a", "dog"]
    np.testing.assert_array_equal(maps, attention[0, 0, [0, 2, 4]].reshape(3, gh, gw))


def test_a_fifo_named_like_an_image_is_an_error_row_not_a_hang(tiny_model, image_dir, tmp_path):
    """Issue 40 item 11: a FIFO named x.jpg hung the batch (a read blocks until a writer comes)."""
    import signal

    root, good, broken = image_dir
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(open(good[0], "rb").read())
    os.mkfifo(folder / "x.jpg")
    out = tmp_path / "c.jsonl"
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("the FIFO was opened")))
    signal.alarm(120)
    try:
        report = caption_images(list_images([str(folder)]), tiny_model, output=str(out), progress=False)
    finally:
        signal.alarm(0)
    rows = {os.path.basename(r["image"]): r for r in _jsonl(str(out))}
    assert report.captioned == 1 and "caption" in rows["a.jpg"]
    assert "not a regular file (a FIFO)" in rows["x.jpg"]["error"]
