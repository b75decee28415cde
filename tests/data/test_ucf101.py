"""UCF101 layout reader: class index, split lists, group rule, dev groups, clear errors."""

import pytest

from captioner.data.ucf101 import load_ucf101, parse_clip_name, read_class_index
from captioner.errors import InputError


def make_layout(root, classes=("ApplyEyeMakeup", "Basketball"), groups=(1, 2, 8, 9, 12), clips=2):
    for cls in classes:
        (root / cls).mkdir(parents=True)
        for g in groups:
            for c in range(1, clips + 1):
                (root / cls / f"v_{cls}_g{g:02d}_c{c:02d}.avi").write_bytes(b"x")  # the reader never decodes


def test_parse_clip_name():
    assert parse_clip_name("Basketball/v_Basketball_g08_c03.avi") == ("Basketball", 8, 3)
    assert parse_clip_name("v_Apply_Eye_g1_c1.mp4") == ("Apply_Eye", 1, 1)
    assert parse_clip_name("random.avi") is None


def test_without_split_files_groups_1_to_7_are_test(tmp_path):
    make_layout(tmp_path)
    train = load_ucf101(tmp_path, "train")
    test = load_ucf101(tmp_path, "test")
    assert train.class_names == ["ApplyEyeMakeup", "Basketball"]  # sorted folders
    assert len(train) == 2 * 3 * 2 and len(test) == 2 * 2 * 2
    assert set(test.groups) == {1, 2} and set(train.groups) == {8, 9, 12}
    dev = load_ucf101(tmp_path, "dev", dev_groups=[8, 9])
    train2 = load_ucf101(tmp_path, "train", dev_groups=[8, 9])
    assert set(dev.groups) == {8, 9} and set(train2.groups) == {12}
    assert len(load_ucf101(tmp_path, "all")) == 20
    assert train.counts() == {"ApplyEyeMakeup": 6, "Basketball": 6}


def test_with_class_index_and_split_lists(tmp_path):
    make_layout(tmp_path)
    (tmp_path / "classInd.txt").write_text("1 Basketball\n2 ApplyEyeMakeup\n")
    (tmp_path / "trainlist01.txt").write_text(
        "Basketball/v_Basketball_g12_c01.avi 1\nApplyEyeMakeup/v_ApplyEyeMakeup_g08_c02.avi 2\n")
    (tmp_path / "testlist01.txt").write_text("Basketball/v_Basketball_g01_c01.avi\n")
    train = load_ucf101(tmp_path, "train")
    assert train.class_names == ["Basketball", "ApplyEyeMakeup"]
    assert train.labels == [0, 1] and train.video_paths[0].endswith("v_Basketball_g12_c01.avi")
    test = load_ucf101(tmp_path, "test")
    assert test.labels == [0] and len(test) == 1


def test_errors_name_the_file_and_line(tmp_path):
    make_layout(tmp_path)
    (tmp_path / "classInd.txt").write_text("1 Basketball\nApplyEyeMakeup\n")
    with pytest.raises(InputError, match=r"classInd.txt:2"):
        load_ucf101(tmp_path)
    (tmp_path / "classInd.txt").write_text("1 Basketball\n2 ApplyEyeMakeup\n")
    (tmp_path / "trainlist01.txt").write_text("Basketball/v_Basketball_g12_c01.avi 2\n")
    (tmp_path / "testlist01.txt").write_text("")
    with pytest.raises(InputError, match=r"trainlist01.txt:1: .* in folder Basketball but labelled ApplyEyeMakeup"):
        load_ucf101(tmp_path)
    (tmp_path / "trainlist01.txt").write_text("Basketball/v_Basketball_g20_c01.avi 1\n")
    with pytest.raises(InputError, match="missing"):
        load_ucf101(tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_ucf101(tmp_path / "nope")
    with pytest.raises(InputError, match="unknown split"):
        load_ucf101(tmp_path, "val")
    (tmp_path / "bad.txt").write_text("1 A\n3 B\n")
    with pytest.raises(InputError, match="without gaps"):
        read_class_index(tmp_path / "bad.txt")
