"""`captioner evaluate caption`: a captioner scored on each corpus's dev split through the batch
captioning path (broken photos left out and counted), one JSON row per corpus and a report; a
several-corpora captioner writes each corpus in its own style."""

import json

from captioner.cli import main
from support.tiny_captioner import save_tiny_captioner
from support.training import write_shapes_flickr8k, write_shapes_img2dataset


def test_each_corpus_is_scored_through_the_batch_path(tmp_path, capsys):
    model = save_tiny_captioner(tmp_path / "tiny.keras")
    flickr = write_shapes_flickr8k(tmp_path / "flickr8k")
    web = write_shapes_img2dataset(tmp_path / "web", shards=(("00000", 2), ("00001", 5)))
    (web / "00001" / "000000010.jpg").write_bytes(b"not a jpeg")  # a broken photo with a caption
    (web / "00001" / "000000010.txt").write_text("a broken photo")
    report = tmp_path / "report.json"
    argv = ["evaluate", "caption", "--model", str(model), "--corpus", f"flickr8k:{flickr}",
            "--corpus", f"img2dataset:{web}:train=00000:dev=00001", "--output", str(report), "--no-objects",
            "--captions-dir", str(tmp_path / "rows")]
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [r["images"] for r in rows] == [6, 5] and [r["failed"] for r in rows] == [0, 1]
    for row in rows:
        assert {"BLEU-4", "METEOR", "CIDEr", "caption_length", "distinct", "CHAIR_i"} <= set(row) and row["style"] is None
    saved = json.loads(report.read_text())
    assert saved["results"] == rows and saved["beam_size"] == 2
    assert len((tmp_path / "rows" / "web.jsonl").read_text().splitlines()) == 6  # the broken photo's error row
    assert main(argv) == 0  # a rerun resumes from the rows kept
    assert [json.loads(line)["CIDEr"] for line in capsys.readouterr().out.strip().splitlines()] == \
        [r["CIDEr"] for r in rows]
    assert main([*argv[:-2], "--style", "web"]) == 2
    assert "one corpus and has no styles" in capsys.readouterr().err
