"""Photo-pan clips: camera paths stay inside the photo and move as named; a tiny Flickr8k
layout becomes MSVD-style clips that keep the photos' captions."""

import numpy as np
import pytest
from PIL import Image

from captioner.data.msvd import load_msvd
from captioner.data.photo_pan_video import PAN_MOTIONS, camera_path, make_photo_pan_dataset, read_sources, render_pan
from captioner.features.video import sample_frames


@pytest.mark.parametrize("motion", PAN_MOTIONS)
def test_camera_path_stays_inside_and_moves_as_named(motion):
    boxes = camera_path(motion, np.random.default_rng(1), 16)
    assert boxes.shape == (16, 4)
    assert boxes.min() >= -1e-9 and boxes.max() <= 1 + 1e-9
    x0, y0, x1, y1 = boxes.T
    side = x1 - x0
    np.testing.assert_allclose(side, y1 - y0)  # square windows
    cx = (x0 + x1) / 2
    cy = (y0 + y1) / 2
    if motion == "pan_left":
        assert cx[-1] < cx[0] - 0.2
    elif motion == "pan_right":
        assert cx[-1] > cx[0] + 0.2
    elif motion == "pan_up":
        assert cy[-1] < cy[0] - 0.2
    elif motion == "pan_down":
        assert cy[-1] > cy[0] + 0.2
    elif motion == "zoom_in":
        assert side[0] == pytest.approx(1.0) and side[-1] < 0.71
    else:
        assert side[-1] == pytest.approx(1.0) and side[0] < 0.71


def test_render_pan_shows_the_moving_window():
    ramp = np.tile(np.linspace(0, 255, 200)[None, :, None], (200, 1, 3)).astype(np.uint8)  # bright on the right
    frames = render_pan(ramp, camera_path("pan_right", np.random.default_rng(0), 5), size=40)
    assert frames.shape == (5, 40, 40, 3)
    means = frames.reshape(5, -1).mean(1)
    assert np.all(np.diff(means) > 0)  # the view slides towards the bright side


def make_flickr8k(root, n_train=4, n_dev=4):
    (root / "Images").mkdir(parents=True)
    rng = np.random.default_rng(0)
    tokens, train, dev = [], [], []
    for i in range(n_train + n_dev):
        name = f"{1000 + i}_abc.jpg"
        Image.fromarray(rng.integers(0, 256, size=(64, 64, 3)).astype(np.uint8)).save(root / "Images" / name)
        (train if i < n_train else dev).append(name)
        tokens += [f"{name}#{k}\tphoto {i} caption {k}" for k in range(5)]
    (root / "Flickr8k.token.txt").write_text("\n".join(tokens) + "\n")
    (root / "Flickr_8k.trainImages.txt").write_text("\n".join(train) + "\n")
    (root / "Flickr_8k.devImages.txt").write_text("\n".join(dev) + "\n")


def test_photo_pan_dataset_keeps_captions_and_splits(tmp_path):
    make_flickr8k(tmp_path / "f8k")
    root = tmp_path / "pan"
    clips = make_photo_pan_dataset(root, tmp_path / "f8k", train_clips=3, dev_clips=2, test_clips=2, seed=0,
                                   size=32, num_frames=6, progress=False)
    assert [c["split"] for c in clips].count("train") == 3
    sources = read_sources(root / "sources.csv")
    dev_photos = {sources[c["clip_id"]] for c in clips if c["split"] != "train"}
    train_photos = {sources[c["clip_id"]] for c in clips if c["split"] == "train"}
    assert not dev_photos & train_photos  # held-out clips come from other photos (Flickr8k dev)
    for split, n in (("train", 3), ("dev", 2), ("test", 2)):
        data = load_msvd(root / "captions.csv", root / "videos", root / f"{split}.txt", split=split)
        assert len(data) == n
        for path in data.video_paths:
            photo_index = int(sources[data.ids[path]].split("_")[0]) - 1000
            assert data.captions[path] == [f"photo {photo_index} caption {k}" for k in range(5)]
            s = sample_frames(path, num_frames=4)
            assert s.frame_count == 6 and s.frames.shape[1:] == (32, 32, 3)


def test_source_photos_finds_each_clips_photo(tmp_path):
    from captioner.data.photo_pan_video import source_photos
    from captioner.errors import InputError

    sources = tmp_path / "sources.csv"
    sources.write_text("clip_id,image,motion,split\na_pan_left,a.jpg,pan_left,test\nb_zoom_in,b.jpg,zoom_in,test\n")
    assert source_photos(sources, "photos", ["b_zoom_in", "a_pan_left"]) == ["photos/b.jpg", "photos/a.jpg"]
    with pytest.raises(InputError, match="no photo listed for 1 clip"):
        source_photos(sources, "photos", ["a_pan_left", "c_pan_up"])
    with pytest.raises(InputError, match="photos' folder"):
        source_photos(sources, None, ["a_pan_left"])
