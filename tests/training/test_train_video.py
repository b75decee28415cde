"""`captioner train video-caption` and `video-classify` on generated clips with a tiny backbone:
their batches replay on resume (the recipes' contract; trained end to end below and in
test_train_video_caption.py)."""

import keras
import pytest

import captioner.backbones
from captioner.cli import main
from support.backbones import tiny_get_backbone
from support.training import assert_recipe_batches_replay


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    from captioner.data.synthetic_video import make_synthetic_dataset

    root = tmp_path_factory.mktemp("syn")
    make_synthetic_dataset(root, groups=11, clips_per_group=1, seed=0, size=32, frame_range=(6, 9), progress=False)
    return root


@pytest.fixture
def patched_backbone(monkeypatch):
    """captioner.backbones.get_backbone builds the tiny backbone (--backbone tiny)."""
    monkeypatch.setattr(captioner.backbones, "get_backbone", tiny_get_backbone)


def test_video_caption_batches_replay_on_resume(clips, tmp_path, patched_backbone):
    assert_recipe_batches_replay(["video-caption", "--data", clips / "captions.csv", clips, tmp_path / "f.h5",
                                  "--backbone", "tiny", "--num-frames", "4", "--output-dir", tmp_path / "run",
                                  "--min-count", "1", "--units", "8", "--embedding-dim", "8", "--projection-dim", "8",
                                  "--attention-units", "8", "--batch-size", "16", "--beam-size", "1",
                                  "--max-length", "6", "--patience", "5"])


def test_video_classify_batches_replay_on_resume(clips, tmp_path, patched_backbone):
    assert_recipe_batches_replay(["video-classify", "--data-dir", clips, "--features", tmp_path / "f.h5",
                                  "--backbone", "tiny", "--num-frames", "4", "--output-dir", tmp_path / "run",
                                  "--units", "8", "--projection-dim", "8", "--batch-size", "4", "--patience", "5"])


def test_video_classify_on_clips_labelled_by_a_csv(clips, tmp_path, patched_backbone):
    """`--labels`: a clip_id,label CSV with split lists beside it (the photo-pan activity layout),
    with the loss weighted per class and the epoch selected on balanced accuracy."""
    import json
    import shutil

    from captioner.data.msvd import read_msvd_captions

    labels_dir = tmp_path / "labels"
    labels_dir.mkdir()
    for split in ("train", "dev", "test"):
        shutil.copyfile(clips / f"{split}.txt", labels_dir / f"{split}.txt")
    captions = read_msvd_captions(clips / "captions.csv")
    with open(labels_dir / "activities.csv", "w") as f:  # two classes from the caption words, the rest "other"
        f.write("clip_id,label\n")
        for clip, caps in captions.items():
            words = set(caps[0].split())
            label = "growing" if "bigger" in words or "grows" in words else "moving" if "moves" in words else "other"
            f.write(f"{clip},{label}\n")
    out = tmp_path / "run"
    assert main(["train", "video-classify", "--labels", str(labels_dir / "activities.csv"), "--data-dir", str(clips),
                 "--features", str(tmp_path / "f.h5"), "--backbone", "tiny", "--num-frames", "4", "--output-dir",
                 str(out), "--units", "8", "--projection-dim", "8", "--batch-size", "4", "--epochs", "2",
                 "--class-weight", "balanced", "--select", "balanced-accuracy",
                 "--model-out", str(tmp_path / "m.keras")]) == 0
    model = keras.models.load_model(tmp_path / "m.keras")
    assert type(model).__name__ == "VideoClassifier" and list(model.class_names)[-1] == "other"
    card = json.loads((tmp_path / "m.json").read_text())
    assert card["data"]["layout"] == "clip labels csv"
    assert set(card["metrics"]["dev"]["per_class_precision"]) == set(model.class_names)
    weights = card["data"]["class_weights"]
    assert set(weights) == set(model.class_names) and weights["other"] < max(weights.values())
    assert card["metrics"]["selection"] == "dev balanced accuracy (mean per-class recall)"
    assert 0 <= card["metrics"]["dev"]["balanced_accuracy"] <= 100 and "majority_class_accuracy" in card["metrics"]["dev"]
    assert list(out.rglob("confusion_dev.png")) and list(out.rglob("confusion_test.png"))


def test_video_caption_scst_continues_a_trained_video_captioner(clips, tmp_path, monkeypatch):
    """`train video-caption --scst`: the shared self-critical recipe on clips (one example per clip,
    CIDEr-D reward, dev CIDEr selection), the init model's frames and vocabulary whatever the options
    say; the saved model loads safely and captions a clip."""
    import json

    import numpy as np

    from support.backbones import tiny_wrapped_backbone

    # the tiny backbone under the name its saved model gives it, as a real backbone's store and model agree
    monkeypatch.setattr(captioner.backbones, "get_backbone", lambda name=None, weights=None: tiny_wrapped_backbone(
        name="tiny_backbone", channels=6, two_layers=False, seed=0))
    data = ["--data", str(clips / "captions.csv"), str(clips), str(tmp_path / "f.h5"), "--backbone",
            "tiny_backbone", "--batch-size", "4", "--beam-size", "1", "--max-length", "6", "--epochs", "1"]
    assert main(["train", "video-caption", *data, "--num-frames", "4", "--output-dir", str(tmp_path / "xe"),
                 "--min-count", "1", "--units", "8", "--embedding-dim", "8", "--projection-dim", "8",
                 "--attention-units", "8", "--model-out", str(tmp_path / "xe.keras")]) == 0
    assert main(["train", "video-caption", "--scst", "--init-model", str(tmp_path / "xe.keras"), *data,
                 "--num-frames", "6", "--min-count", "3", "--output-dir", str(tmp_path / "scst"), "--scst-samples",
                 "2", "--scst-learning-rate", "0.01", "--scst-xe-weight", "0.5", "--test-split", "",
                 "--model-out", str(tmp_path / "scst.keras")]) == 0
    init = keras.models.load_model(tmp_path / "xe.keras")
    model = keras.models.load_model(tmp_path / "scst.keras")  # safe mode
    assert type(model).__name__ == "VideoCaptioner" and model.num_frames == 4  # the init model's, not --num-frames 6
    assert list(model.vocabulary.tokens) == list(init.vocabulary.tokens)  # not rebuilt at --min-count 3
    moved = [not np.allclose(a, b) for a, b in zip(model.model.get_weights(), init.model.get_weights())]
    assert any(moved)
    history = json.loads((tmp_path / "scst" / "history.json").read_text())
    assert {"dev_CIDEr", "sample_reward", "xe_loss", "dev_distinct_captions"} <= set(history[0])
    assert "greedy_reward" not in history[0]
    card = json.loads((tmp_path / "scst.json").read_text())
    assert card["metrics"]["selection"].startswith("dev CIDEr") and card["metrics"]["split"] == "dev"
    assert "dev_CIDEr" in card["metrics"]["before_scst"] and card["extra"]["scst"]["samples"] == 2
    assert card["config"]["init_model_decoder"]["feature"] == "pooled"
    clip = sorted(p for p in clips.rglob("*") if p.suffix in (".avi", ".mp4", ".webm"))[0]
    assert model.caption([str(clip)])[0].tokens
