"""Flickr8k reader on tiny generated files, plus the real copy in ../shared/datasets when present."""

import os
import warnings
from pathlib import Path

import pytest

from captioner.data import load_flickr8k, read_flickr8k_captions
from captioner.errors import InputError

REAL_FLICKR8K = Path(__file__).parents[2].parent / "shared/datasets/flickr8k"


def make_flickr8k(root: Path, images_dir="Images", n=4, captions_per_image=5, missing_file=(), no_captions=()):
    """Write a tiny Flickr8k layout: images img0..img{n-1}.jpg, train = first 3, dev = the rest."""
    names = [f"img{i}.jpg" for i in range(n)]
    (root / images_dir).mkdir(parents=True)
    lines = []
    for name in names:
        if name not in missing_file:
            (root / images_dir / name).write_bytes(b"\xff\xd8 not really a jpeg")
        if name in no_captions:
            continue
        # Captions written out of order to check sorting by #k.
        for k in reversed(range(captions_per_image)):
            lines.append(f"{name}#{k}\tCaption {k} of {name} .")
    (root / "Flickr8k.token.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "Flickr_8k.trainImages.txt").write_text("\n".join(names[:3]) + "\n", encoding="utf-8")
    (root / "Flickr_8k.devImages.txt").write_text("\n".join(names[3:]) + "\n", encoding="utf-8")
    return names


def test_loads_splits_with_absolute_paths_and_ordered_captions(tmp_path):
    names = make_flickr8k(tmp_path)
    train = load_flickr8k(tmp_path, "train")
    assert (train.name, train.split, len(train)) == ("flickr8k", "train", 3)
    assert train.image_paths == [str(tmp_path / "Images" / n) for n in names[:3]]
    assert all(os.path.isabs(p) for p in train.image_paths)
    first = train.captions[train.image_paths[0]]
    assert first == [f"Caption {k} of img0.jpg ." for k in range(5)]
    dev = load_flickr8k(tmp_path, "dev")
    assert len(dev) == 1 and load_flickr8k(tmp_path, "val").image_paths == dev.image_paths


def test_original_zip_folder_name_and_explicit_paths(tmp_path):
    make_flickr8k(tmp_path, images_dir="Flicker8k_Dataset")
    ds = load_flickr8k(tmp_path, "train")
    assert all("Flicker8k_Dataset" in p for p in ds.image_paths)
    moved = tmp_path / "elsewhere.txt"
    (tmp_path / "Flickr8k.token.txt").rename(moved)
    ds2 = load_flickr8k(tmp_path, "train", images_dir=tmp_path / "Flicker8k_Dataset", token_file=moved)
    assert ds2.image_paths == ds.image_paths


def test_missing_split_file_names_expected_path(tmp_path):
    make_flickr8k(tmp_path)
    with pytest.raises(InputError, match=r"Flickr_8k\.testImages\.txt.*not found"):
        load_flickr8k(tmp_path, "test")


def test_missing_token_file_and_images_dir(tmp_path):
    make_flickr8k(tmp_path)
    with pytest.raises(InputError, match="Flickr8k.token.txt"):
        load_flickr8k(tmp_path, "train", token_file=tmp_path / "Flickr8k.token.txt.missing")
    os.rename(tmp_path / "Images", tmp_path / "pics")
    with pytest.raises(InputError, match="images directory"):
        load_flickr8k(tmp_path, "train")
    with pytest.raises(InputError, match="not found"):
        load_flickr8k(tmp_path, "train", images_dir=tmp_path / "nope")


def test_unknown_split(tmp_path):
    make_flickr8k(tmp_path)
    with pytest.raises(InputError, match="unknown Flickr8k split"):
        load_flickr8k(tmp_path, "restval")


def test_images_without_captions_or_files_are_skipped_with_a_warning(tmp_path):
    make_flickr8k(tmp_path, missing_file=("img1.jpg",), no_captions=("img2.jpg",))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load_flickr8k(tmp_path, "train")
    assert [os.path.basename(p) for p in ds.image_paths] == ["img0.jpg"]
    messages = [str(w.message) for w in caught]
    assert any("1 image(s) have no captions" in m and "img2.jpg" in m for m in messages)
    assert any("1 image(s) have no image file" in m and "img1.jpg" in m for m in messages)
    assert ds.metadata["skipped_no_captions"] == 1 and ds.metadata["skipped_no_file"] == 1


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("img0.jpg#5 no tab here", "no tab"),
        ("img0.jpg\tCaption without number", "<image>#<k>"),
        ("img0.jpg#x\tCaption with a bad number", "<image>#<k>"),
        ("img0.jpg#6\t   ", "empty caption"),
    ],
)
def test_malformed_token_lines_name_file_and_line(tmp_path, bad_line, message):
    make_flickr8k(tmp_path)
    token_file = tmp_path / "Flickr8k.token.txt"
    lines = token_file.read_text(encoding="utf-8").splitlines()
    lines.insert(2, bad_line)  # becomes line 3
    token_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"Flickr8k\.token\.txt:3: .*{message}"):
        load_flickr8k(tmp_path, "train")


def test_repeated_caption_number_names_both_lines(tmp_path):
    token_file = tmp_path / "tokens.txt"
    token_file.write_text("a.jpg#0\tOne .\na.jpg#1\tTwo .\na.jpg#0\tAgain .\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"tokens\.txt:3: 'a\.jpg#0' repeats line 1"):
        read_flickr8k_captions(token_file)


def test_malformed_split_line(tmp_path):
    make_flickr8k(tmp_path)
    (tmp_path / "Flickr_8k.trainImages.txt").write_text("img0.jpg\nimg1.jpg#0\tcaption\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"trainImages\.txt:2"):
        load_flickr8k(tmp_path, "train")


def test_blank_lines_crlf_and_bom_are_tolerated(tmp_path):
    token_file = tmp_path / "tokens.txt"
    token_file.write_bytes("\ufeffa.jpg#0\tFirst .\r\n\r\na.jpg#1\tSecond .\r\n".encode("utf-8"))
    assert read_flickr8k_captions(token_file) == {"a.jpg": ["First .", "Second ."]}


def test_not_utf8(tmp_path):
    token_file = tmp_path / "tokens.txt"
    token_file.write_bytes(b"a.jpg#0\tCaf\xe9\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_flickr8k_captions(token_file)


@pytest.mark.skipif(not REAL_FLICKR8K.is_dir(), reason=f"real Flickr8k copy not at {REAL_FLICKR8K}")
def test_real_flickr8k_copy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shared copy is complete: no skipped images
        train = load_flickr8k(REAL_FLICKR8K, "train")
        dev = load_flickr8k(REAL_FLICKR8K, "dev")
    assert (len(train), len(dev)) == (6000, 1000)
    assert all(len(train.captions[p]) == 5 for p in train.image_paths)
    assert all(len(dev.captions[p]) == 5 for p in dev.image_paths)
    assert not set(train.image_paths) & set(dev.image_paths)
    assert os.path.isfile(train.image_paths[0])
