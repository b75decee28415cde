"""CaptionDataset invariants and helpers."""

import pytest

from captioner.data import CaptionDataset
from captioner.errors import InputError


def test_pairs_len_subset():
    ds = CaptionDataset(["/x/a.jpg", "/x/b.jpg"], {"/x/a.jpg": ["one", "two"], "/x/b.jpg": ["three"]}, "toy", "train")
    assert len(ds) == 2 and ds.num_captions == 3
    assert ds.pairs() == [("/x/a.jpg", "one"), ("/x/a.jpg", "two"), ("/x/b.jpg", "three")]
    small = ds.subset(1)
    assert small.image_paths == ["/x/a.jpg"] and list(small.captions) == ["/x/a.jpg"]


def test_every_image_needs_captions():
    with pytest.raises(InputError, match="no captions"):
        CaptionDataset(["/x/a.jpg"], {"/x/a.jpg": []}, "toy", "train")
    with pytest.raises(InputError, match="duplicate"):
        CaptionDataset(["/x/a.jpg", "/x/a.jpg"], {"/x/a.jpg": ["c"]}, "toy", "train")
