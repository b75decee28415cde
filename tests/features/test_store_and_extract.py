
import numpy as np
import pytest
from PIL import Image

from captioner.cli import main
from captioner.errors import InputError
from captioner.features.extract import extract_features
from captioner.features.store import FeatureStore


def _store(path):
    return FeatureStore(path, "a", backbone="toy", grid_shape=(2, 2), channels=3, pooled_dim=5)


def test_store_append_read_and_reopen(tmp_path):
    path = tmp_path / "f.h5"
    with _store(path) as s:
        s.append(["a", "b"], np.arange(24).reshape(2, 2, 2, 3), np.ones((2, 5)))
        s.append(["c"], np.full((1, 4, 3), 7.0), np.zeros((1, 5)))
    with FeatureStore(path) as s:
        assert len(s) == 3 and s.ids == ["a", "b", "c"] and "b" in s and "z" not in s
        grid, pooled = s.get("b")
        np.testing.assert_array_equal(grid, np.arange(12, 24).reshape(4, 3))
        out = s.load(["c", "a"])
        np.testing.assert_array_equal(out["grid"][0], np.full((4, 3), 7.0))
        np.testing.assert_array_equal(out["grid"][1], np.arange(12).reshape(4, 3))
        with pytest.raises(InputError, match="no features"):
            s.get("z")
        with pytest.raises(InputError, match="captioner extract"):
            s.rows(["a", "zz"])


def test_rows_beyond_count_are_ignored(tmp_path):
    """A run killed after resizing but before committing `count` leaves whole rows only."""
    path = tmp_path / "f.h5"
    with _store(path) as s:
        s.append(["a"], np.zeros((1, 4, 3)), np.zeros((1, 5)))
        s.file["ids"].resize(2, axis=0)  # a half-written second batch
        s.file["ids"][1] = "half"
    with FeatureStore(path) as s:
        assert s.ids == ["a"]


def test_store_refuses_other_backbone_and_garbage(tmp_path):
    path = tmp_path / "f.h5"
    _store(path).close()
    with pytest.raises(InputError, match="holds toy features"):
        FeatureStore(path, "a", backbone="other", grid_shape=(1, 1), channels=1, pooled_dim=1)
    junk = tmp_path / "junk.h5"
    junk.write_text("no")
    with pytest.raises(InputError, match="junk.h5"):
        FeatureStore(junk)
    with pytest.raises(InputError, match="not found"):
        FeatureStore(tmp_path / "missing.h5")


@pytest.fixture(scope="module")
def tiny_backbone():
    """EfficientNet-Lite0 architecture with random weights: real code path, fast to build."""
    from captioner.backbones import get_backbone

    return get_backbone("efficientnet_lite0", weights=None)


def _images(folder, n):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    for i in range(n):
        p = folder / f"img{i}.png"
        Image.fromarray(rng.integers(0, 255, (30 + i, 40, 3), dtype=np.uint8)).save(p)
        paths.append(str(p))
    return paths


def test_extract_is_resumable_and_skips_broken_files(tmp_path, tiny_backbone):
    paths = _images(tmp_path / "imgs", 5)
    broken = tmp_path / "imgs" / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    out = tmp_path / "feat.h5"
    report = extract_features(paths[:3] + [str(broken)], out, backbone=tiny_backbone, batch_size=2, progress=False)
    assert report.stored == 3 and len(report.failed) == 1 and "broken.jpg" in report.failed[0][1]
    report = extract_features(paths, out, backbone=tiny_backbone, batch_size=2, progress=False)
    assert report.skipped == 3 and report.stored == 2
    with FeatureStore(out) as s:
        assert sorted(s.ids) == [f"img{i}.png" for i in range(5)]
        grid, pooled = s.get("img4.png")
        assert grid.shape == (49, 1280) and pooled.shape == (1280,)
        # the same image gives the same features whichever batch it was in
        direct_grid, direct_pooled = tiny_backbone.features(
            np.stack([np.asarray(Image.open(paths[4]).convert("RGB").resize((224, 224), Image.BILINEAR))]))
        np.testing.assert_allclose(pooled, direct_pooled[0], rtol=1e-3, atol=1e-3)


def test_extract_cli_progress_and_exit_code(tmp_path, capsys, monkeypatch):
    paths = _images(tmp_path / "imgs" / "sub", 2)
    (tmp_path / "imgs" / "bad.png").write_bytes(b"\x89PNG broken")
    out = tmp_path / "f.h5"
    code = main(["extract", str(tmp_path / "imgs"), "--output", str(out), "--backbone-weights", "none",
                 "--batch-size", "2"])
    captured = capsys.readouterr()
    assert code == 1  # one file failed
    assert "stored 2 images" in captured.out and "bad.png" in captured.err
    with FeatureStore(out) as s:
        assert sorted(s.ids) == ["sub/img0.png", "sub/img1.png"]  # ids relative to the folder
    assert len(paths) == 2
