"""Per-clip HDF5 store: layout, padding + mask, resume after a killed run, broken clips."""

import h5py
import numpy as np
import pytest

from captioner.data.synthetic_video import write_video
from captioner.errors import InputError
from captioner.features.video_store import VideoFeatureStore, clip_id, extract_video_features, load_features
from support.backbones import tiny_wrapped_backbone


def make_clips(tmp_path, lengths):
    rng = np.random.default_rng(0)
    paths = []
    for i, n in enumerate(lengths):
        path = str(tmp_path / f"clip{i}.avi")
        write_video(path, rng.integers(0, 256, size=(n, 24, 24, 3)).astype(np.uint8), 10)
        paths.append(path)
    return paths


def test_put_get_load_pads_and_masks(tmp_path):
    path = tmp_path / "v.h5"
    with VideoFeatureStore(path, "a", backbone="b", num_frames=4, pooled_dim=3, grid_shape=(2, 2), channels=2,
                           has_grid=True) as store:
        store.put("Class/v_a/1", np.ones((2, 3)), np.ones((2, 2, 2, 2)), info={"fps": 10.0})
        store.put("b", np.full((4, 3), 2.0), np.zeros((4, 4, 2)))
    with VideoFeatureStore(path) as store:
        assert sorted(store.ids) == ["Class/v_a/1", "b"] and "Class/v_a/1" in store
        feats, mask = store.load(["b", "Class/v_a/1"])
        assert feats.shape == (2, 4, 3) and mask.tolist() == [[True] * 4, [True, True, False, False]]
        assert not feats[1, 2:].any()
        grid, gmask = store.load(["Class/v_a/1"], feature="grid")
        assert grid.shape == (1, 4, 4, 2) and gmask.sum() == 2
        values, info = store.get("Class/v_a/1")
        assert values.shape == (2, 3) and info["fps"] == 10.0 and info["complete"]
        with pytest.raises(InputError, match="no features for clip 'zzz'"):
            store.get("zzz")
        with pytest.raises(InputError, match="1 clip"):
            store.load(["b", "zzz"])
    with pytest.raises(InputError, match="4 frames per clip, not 8"):
        VideoFeatureStore(path, "a", backbone="b", num_frames=8, pooled_dim=3)
    with pytest.raises(InputError, match="not found"):
        VideoFeatureStore(tmp_path / "none.h5")


def test_unfinished_clip_of_a_killed_run_is_dropped_and_redone(tmp_path):
    path = tmp_path / "v.h5"
    with VideoFeatureStore(path, "a", backbone="b", num_frames=2, pooled_dim=3) as store:
        store.put("done", np.ones((2, 3)))
    with h5py.File(path, "a") as f:  # what a kill between writing the data and the commit leaves
        f["pooled"].create_dataset("half", data=np.ones((1, 3), np.float32))
    with VideoFeatureStore(path) as store:
        assert store.ids == ["done"]  # readers never see it
    with VideoFeatureStore(path, "a", backbone="b", num_frames=2, pooled_dim=3) as store:
        assert "half" not in store
    with h5py.File(path, "r") as f:
        assert "half" not in f["pooled"]


def test_extraction_resumes_and_reports_broken_clips(tmp_path):
    bb = tiny_wrapped_backbone(channels=5, preprocess="rescale", two_layers=False, kernel=3)
    paths = make_clips(tmp_path, [12, 3, 7])
    out = tmp_path / "feats.h5"
    first = extract_video_features(paths[:1], out, backbone=bb, num_frames=4, progress=False)
    assert first.stored == 1 and first.frames == 4
    with VideoFeatureStore(out) as store:
        before, _ = store.get(clip_id(paths[0]))
    broken = tmp_path / "broken.avi"
    broken.write_bytes(b"RIFF not really a video")
    report = extract_video_features(paths + [str(broken)], out, backbone=bb, num_frames=4,
                                    ids=[clip_id(p) for p in paths + [str(broken)]], batch_frames=8, progress=False)
    assert report.skipped == 1 and report.stored == 2 and report.frames == 3 + 4
    assert [p for p, _ in report.failed] == [str(broken)] and "broken.avi" in report.failed[0][1]
    with VideoFeatureStore(out) as store:
        after, info = store.get(clip_id(paths[0]))
        np.testing.assert_array_equal(before, after)  # kept, not recomputed
        feats, mask = store.load([clip_id(p) for p in paths])
        assert mask.sum(1).tolist() == [4, 3, 4]  # the 3-frame clip: 3 real frames + mask
        assert info["frame_count"] == 12 and list(info["indices"]) == [0, 4, 7, 11]
    # everything present: answered from the store without building or writing anything
    again = extract_video_features(paths, out, backbone="tiny", num_frames=4, progress=False)
    assert again.skipped == 3 and again.stored == 0
    kept, feats, mask = load_features(paths + [str(broken)], out, backbone=bb, num_frames=4, progress=False)
    assert kept == paths and feats.shape == (3, 4, 5)


def test_load_without_extraction_leaves_out_clips_not_stored(tmp_path):
    bb = tiny_wrapped_backbone(channels=5, preprocess="rescale", two_layers=False, kernel=3)
    paths = make_clips(tmp_path, [5, 6])
    out = tmp_path / "feats.h5"
    extract_video_features(paths[:1], out, backbone=bb, num_frames=3, progress=False)
    kept, feats, mask = load_features(paths, out, backbone="tiny", num_frames=3, extract=False, progress=False)
    assert kept == paths[:1] and feats.shape == (1, 3, 5) and mask.all()
    with pytest.raises(InputError, match="no grid features"):
        load_features(paths, out, feature="grid", backbone="tiny", num_frames=3, extract=False)
