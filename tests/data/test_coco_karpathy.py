"""Karpathy-split JSON reader on tiny generated files."""

import json
import os
import warnings

import pytest

from captioner.data import load_coco_karpathy
from captioner.errors import InputError


def _image(filename, split, captions, filepath=None):
    entry = {"filename": filename, "split": split,
             "sentences": [{"raw": c, "tokens": c.lower().rstrip(".").split()} for c in captions]}
    if filepath is not None:
        entry["filepath"] = filepath
    return entry


def make_karpathy(tmp_path, images, dataset="coco", touch=True):
    for entry in images:
        path = tmp_path / "images" / entry.get("filepath", "") / entry["filename"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if touch:
            path.write_bytes(b"jpeg")
    json_path = tmp_path / f"dataset_{dataset}.json"
    json_path.write_text(json.dumps({"images": images, "dataset": dataset}), encoding="utf-8")
    return json_path, tmp_path / "images"


IMAGES = [
    _image("a.jpg", "train", ["A dog runs.", "A dog."], filepath="train2014"),
    _image("b.jpg", "restval", ["A cat sits."], filepath="val2014"),
    _image("c.jpg", "val", ["A man rides."], filepath="val2014"),
    _image("d.jpg", "test", ["Two kids play."], filepath="val2014"),
]


def test_splits_paths_and_captions(tmp_path):
    json_path, root = make_karpathy(tmp_path, IMAGES)
    train = load_coco_karpathy(json_path, root, "train")
    assert (train.name, train.split) == ("coco", "train")
    assert train.image_paths == [str(root / "train2014" / "a.jpg")]
    assert train.captions[train.image_paths[0]] == ["A dog runs.", "A dog."]
    both = load_coco_karpathy(json_path, root, "train", include_restval=True)
    assert both.split == "train+restval" and len(both) == 2
    assert [len(load_coco_karpathy(json_path, root, s)) for s in ("val", "test", "restval")] == [1, 1, 1]


def test_flickr_style_without_filepath(tmp_path):
    images = [_image("x.jpg", "train", ["One."]), _image("y.jpg", "test", ["Two."])]
    json_path, root = make_karpathy(tmp_path, images, dataset="flickr8k")
    ds = load_coco_karpathy(json_path, root, "train")
    assert ds.name == "flickr8k" and ds.image_paths == [os.path.join(str(root), "x.jpg")]


def test_tokens_used_when_raw_missing(tmp_path):
    images = [{"filename": "x.jpg", "split": "train", "sentences": [{"tokens": ["a", "dog"]}]}]
    json_path, root = make_karpathy(tmp_path, images)
    assert load_coco_karpathy(json_path, root, "train").captions[str(root / "x.jpg")] == ["a dog"]


def test_missing_files_skipped_with_warning(tmp_path):
    json_path, root = make_karpathy(tmp_path, IMAGES, touch=False)
    with pytest.warns(UserWarning, match="1 image file"):
        ds = load_coco_karpathy(json_path, root, "val")
    assert len(ds) == 0
    assert len(load_coco_karpathy(json_path, root, "val", check_files=False)) == 1


def test_images_without_sentences_skipped(tmp_path):
    json_path, root = make_karpathy(tmp_path, IMAGES + [_image("e.jpg", "val", [])])
    with pytest.warns(UserWarning, match="no sentences"):
        assert len(load_coco_karpathy(json_path, root, "val")) == 1


def test_not_json(tmp_path):
    bad = tmp_path / "dataset_coco.json"
    bad.write_text('{"images": [\n  {"filename": "a.jpg",,}\n]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"dataset_coco\.json:2: not valid JSON"):
        load_coco_karpathy(bad, tmp_path, "train")


@pytest.mark.parametrize(
    "payload, message",
    [
        ([], "'images' list"),
        ({"images": {}}, "'images' list"),
        ({"images": ["a.jpg"]}, r"images\[0\] must be an object"),
        ({"images": [{"split": "train", "sentences": []}]}, "no 'filename'"),
        ({"images": [{"filename": "a.jpg", "sentences": []}]}, "no 'split'"),
        ({"images": [{"filename": "a.jpg", "split": "train"}]}, "'sentences' must be a list"),
        ({"images": [{"filename": "a.jpg", "split": "train", "sentences": [{"raw": ""}]}]}, "neither"),
    ],
)
def test_malformed_structure(tmp_path, payload, message):
    path = tmp_path / "dataset_coco.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_coco_karpathy(path, tmp_path, "train")


def test_unknown_split_and_missing_file(tmp_path):
    json_path, root = make_karpathy(tmp_path, IMAGES)
    with pytest.raises(InputError, match="unknown split"):
        load_coco_karpathy(json_path, root, "dev")
    with pytest.raises(InputError, match="not found"):
        load_coco_karpathy(tmp_path / "missing.json", root, "train")


def test_no_warnings_on_clean_input(tmp_path):
    json_path, root = make_karpathy(tmp_path, IMAGES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_coco_karpathy(json_path, root, "train", include_restval=True)
