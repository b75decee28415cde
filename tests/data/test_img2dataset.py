"""The img2dataset reader: shards as splits, one caption per photo, what a real download leaves
(a caption without its photo, an empty caption) skipped and counted, missing shards named."""

import pytest

from captioner.data import load_img2dataset
from captioner.errors import InputError
from support.training import write_shapes_img2dataset


def test_shards_are_splits_and_broken_pairs_are_skipped(tmp_path):
    root = write_shapes_img2dataset(tmp_path / "web")
    train = load_img2dataset(root, "00000")
    assert len(train) == 12 and train.metadata["skipped"] == 2 and train.split == "00000"
    first = train.image_paths[0]
    assert first.endswith("00000/000000000.jpg") and train.captions[first] == ["drawing of a red square on a dark background"]
    both = load_img2dataset(root, "00000+00001")
    assert len(both) == 18 and both.image_paths[:12] == train.image_paths
    assert load_img2dataset(root, ["00001"]).image_paths == both.image_paths[12:]


def test_a_missing_shard_or_an_empty_split_is_named(tmp_path):
    root = write_shapes_img2dataset(tmp_path / "web")
    with pytest.raises(InputError, match="00007: no such shard folder"):
        load_img2dataset(root, "00000+00007")
    with pytest.raises(InputError, match="name one or more shard folders"):
        load_img2dataset(root, "+")
    (root / "empty").mkdir()
    with pytest.raises(InputError, match="no photo with a caption"):
        load_img2dataset(root, "empty")


def test_a_caption_only_in_the_json_and_a_non_utf8_caption(tmp_path):
    root = write_shapes_img2dataset(tmp_path / "web", shards=(("00000", 3),))
    (root / "00000" / "000000000.txt").unlink()
    (root / "00000" / "000000000.json").write_text('{"caption": "a red square"}')
    (root / "00000" / "000000001.txt").write_bytes(b"caf\xe9")
    data = load_img2dataset(root, "00000")
    assert data.captions[data.image_paths[0]] == ["a red square"] and len(data) == 2
    assert data.metadata["skipped"] == 3
