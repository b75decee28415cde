"""Activities mined from captions: the voting rule on hand-worked cases, the labels file, and
the clip lists the video-classify recipe reads."""

import csv

import pytest

from captioner.data.caption_activities import (
    CLASS_NAMES,
    OTHER,
    activity_of,
    activity_votes,
    load_clip_labels,
    read_clip_labels,
    write_activity_labels,
)
from captioner.errors import InputError


def test_votes_count_captions_not_words():
    votes = activity_votes(["A dog runs and runs .", "Two dogs running", "a dog in the grass"])
    assert votes["running"] == 2 and sum(votes.values()) == 2


def test_three_of_five_agreeing_give_the_label():
    caps = ["A boy jumps into the pool .", "A child jumping into water", "A kid leaps", "A boy in a pool",
            "Someone near the water"]
    assert activity_of(caps) == "jumping"


def test_two_of_five_is_other():
    caps = ["A man climbs a rock", "A man climbing", "A man outdoors", "A man in the sun", "A man"]
    assert activity_of(caps) == OTHER
    assert activity_of(caps, min_votes=2) == "climbing"


def test_most_votes_win_and_ties_go_to_the_listed_order():
    caps = ["A dog runs with a ball", "A dog running with a ball", "The dog is running", "A dog runs",
            "A dog carries a ball"]
    assert activity_of(caps) == "running"  # 4 votes against playing ball's 3
    tie = ["A skateboarder jumps", "A boy jumps on his skateboard", "A skater jumping", "A boy outside", "A ramp"]
    assert activity_of(tie) == "skateboarding"  # 3 each: skateboarding is listed before jumping


def test_whole_words_only():
    assert activity_of(["A ballerina", "a ballerina dancing", "the ballerina", "ballerinas", "ballet"]) == OTHER
    assert activity_of(["A man on skis", "A skier", "Skiing down", "x", "y"]) == "skiing/snowboarding"


@pytest.fixture
def pan_root(tmp_path):
    root = tmp_path / "pan"
    (root / "videos").mkdir(parents=True)
    clips = {"a_pan_left": ["A dog runs"] * 5, "b_zoom_in": ["A man sits on a bench"] * 4 + ["A man"],
             "c_pan_up": ["A red car", "A street", "Cars", "A road", "Traffic"]}
    with open(root / "captions.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["clip_id", "caption"])
        for k, caps in clips.items():
            w.writerows([k, c] for c in caps)
            (root / "videos" / f"{k}.avi").write_bytes(b"x")
    (root / "train.txt").write_text("a_pan_left\nb_zoom_in\n")
    (root / "dev.txt").write_text("c_pan_up\n")
    (root / "test.txt").write_text("")
    return root


def test_write_and_load_labels(pan_root):
    counts = write_activity_labels(str(pan_root))
    assert counts["train"]["running"] == 1 and counts["train"]["sitting"] == 1 and counts["dev"][OTHER] == 1
    assert set(counts["train"]) == set(CLASS_NAMES)
    labels = read_clip_labels(str(pan_root / "activities.csv"))
    assert labels == {"a_pan_left": "running", "b_zoom_in": "sitting", "c_pan_up": OTHER}
    train = load_clip_labels(str(pan_root / "activities.csv"), str(pan_root / "videos"), str(pan_root / "train.txt"))
    assert train.class_names == ["running", "sitting", OTHER]  # found labels sorted, other last
    assert [train.class_names[y] for y in train.labels] == ["running", "sitting"]
    assert train.video_paths[0].endswith("a_pan_left.avi")
    dev = load_clip_labels(str(pan_root / "activities.csv"), str(pan_root / "videos"), str(pan_root / "dev.txt"),
                           train.class_names)
    assert dev.labels == [2]


def test_bad_label_files_name_the_file_and_line(pan_root):
    bad = pan_root / "bad.csv"
    bad.write_text("id,label\na,running\n")
    with pytest.raises(InputError, match="bad.csv: expected a header"):
        read_clip_labels(str(bad))
    bad.write_text("clip_id,label\na_pan_left,\n")
    with pytest.raises(InputError, match=r"bad.csv:2: expected"):
        read_clip_labels(str(bad))
    with pytest.raises(InputError, match="labels file not found"):
        read_clip_labels(str(pan_root / "missing.csv"))
    bad.write_text("clip_id,label\na_pan_left,running\n")
    with pytest.raises(InputError, match="'b_zoom_in' has no label"):
        load_clip_labels(str(bad), str(pan_root / "videos"), str(pan_root / "train.txt"))
    bad.write_text("clip_id,label\na_pan_left,flying\nb_zoom_in,running\n")
    with pytest.raises(InputError, match="label 'flying', not one of"):
        load_clip_labels(str(bad), str(pan_root / "videos"), str(pan_root / "train.txt"), ["running", OTHER])
