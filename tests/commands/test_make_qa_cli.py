"""`captioner make-qa` on a tiny generated token file."""

import json

from captioner.cli import main

CAPTIONS = {
    "dog1.jpg": ["A black dog is running on the beach .", "A dog runs on the beach .",
                 "A black dog is running .", "Two dogs are playing in the snow .", "A dog jumps over a fence ."],
    "dog2.jpg": ["A black dog is running on the beach .", "A dog runs on the beach .",
                 "The dog is running .", "A black dog jumps over a fence .", "Two dogs are playing in the snow ."],
    "man1.jpg": ["A man rides a bike down the street .", "The man is riding a bike .",
                 "A man in a red shirt rides a bike .", "A man riding a bike .", "A man is riding a bike ."],
    "man2.jpg": ["A man rides a bike down the street .", "A man in a red shirt is riding a bike .",
                 "A man riding a bike .", "A man climbs a rock .", "A man in a red shirt climbs a rock ."],
}


def write_tokens(path, extra=""):
    lines = [f"{image}#{k}\t{c}" for image, caps in CAPTIONS.items() for k, c in enumerate(caps)]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")


def test_writes_rows_and_stats_and_skips_images_without_captions(tmp_path, capsys):
    tokens, images = tmp_path / "tokens.txt", tmp_path / "list.txt"
    write_tokens(tokens)
    images.write_text("dog1.jpg\nnocaps.jpg\ndog2.jpg\nman1.jpg\nman2.jpg\n", encoding="utf-8")
    out, stats = tmp_path / "qa.jsonl", tmp_path / "stats.json"
    argv = ["make-qa", "--captions", str(tokens), "--images", str(images), "--output", str(out),
            "--stats", str(stats), "--min-answer-count", "2", "--seed", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "1 image(s)" in err and "nocaps.jpg" in err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(set(r) == {"image", "question", "answer", "type"} for r in rows)
    assert {r["image"] for r in rows} <= set(CAPTIONS)
    assert {"image": "dog1.jpg", "question": "how many dogs are playing in the snow?", "answer": "two",
            "type": "number"} in rows
    assert {"image": "man1.jpg", "question": "what is the man riding?", "answer": "bike", "type": "object"} in rows
    s = json.loads(stats.read_text())
    assert s["skipped_no_captions"] == 1 and sum(s["per_type"].values()) == len(rows)
    first = out.read_bytes()
    assert main(argv) == 0 and out.read_bytes() == first  # seeded


def test_malformed_token_line_names_file_and_line(tmp_path, capsys):
    tokens, images = tmp_path / "tokens.txt", tmp_path / "list.txt"
    write_tokens(tokens, extra="dog3.jpg#0 no tab on this line\n")
    images.write_text("dog1.jpg\n", encoding="utf-8")
    out = tmp_path / "qa.jsonl"
    assert main(["make-qa", "--captions", str(tokens), "--images", str(images), "--output", str(out)]) == 2
    n = sum(len(c) for c in CAPTIONS.values()) + 1
    assert f"tokens.txt:{n}" in capsys.readouterr().err
    assert not out.exists()


def test_no_listed_image_has_captions(tmp_path, capsys):
    tokens, images = tmp_path / "tokens.txt", tmp_path / "list.txt"
    write_tokens(tokens)
    images.write_text("other.jpg\n", encoding="utf-8")
    assert main(["make-qa", "--captions", str(tokens), "--images", str(images),
                 "--output", str(tmp_path / "qa.jsonl")]) == 2
    assert "none of its images" in capsys.readouterr().err


def test_absent_people_and_an_img2dataset_corpus(tmp_path, capsys):
    """Issue 69 item 1: 'how many people are there?' -> 'none' for photos no caption puts a person in
    (web alt-text names people by roles: "actor", "artist"); photos named by file name, from --corpus."""
    from support.training import write_shapes_img2dataset

    web = write_shapes_img2dataset(tmp_path / "web", shards=(("00000", 3),))
    (web / "00000" / "000000001.txt").write_text("actor attends the premiere of the film")
    out = tmp_path / "qa.jsonl"
    assert main(["make-qa", "--corpus", f"img2dataset:{web}:train=00000:dev=00000", "--absent-people",
                 "--min-answer-count", "1", "--output", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    none = {r["image"] for r in rows if r["question"] == "how many people are there?" and r["answer"] == "none"}
    assert none == {"000000000.jpg", "000000002.jpg"}  # the drawings; not the actor's photo
    tokens, images = tmp_path / "tokens.txt", tmp_path / "list.txt"
    write_tokens(tokens)
    images.write_text("dog1.jpg\nman1.jpg\n", encoding="utf-8")
    assert main(["make-qa", "--captions", str(tokens), "--images", str(images), "--output", str(out),
                 "--absent-people", "--min-answer-count", "1"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["image"] for r in rows if r["answer"] == "none"} == {"dog1.jpg"}
    # the same question where people are, with the count most captions agree on: it needs the photo
    assert {"image": "man1.jpg", "question": "how many people are there?", "answer": "one", "type": "number"} in rows
    assert main(["make-qa", "--captions", str(tokens), "--corpus", f"flickr8k:{tmp_path / 'f8k'}", "--output", str(out)]) == 2
    assert "not both" in capsys.readouterr().err
