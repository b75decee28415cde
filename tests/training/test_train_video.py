"""`captioner train video-caption` and `video-classify` on generated clips with a tiny backbone:
a resumed run replays the batches of a straight one, and the saved models load."""

import keras
import pytest
from training_support import assert_resume_replays_batches, load_test_module

import captioner.backbones
from captioner.cli import main

vqa_support = load_test_module("models/test_vqa_training.py")


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    from captioner.data.synthetic_video import make_synthetic_dataset

    root = tmp_path_factory.mktemp("syn")
    make_synthetic_dataset(root, groups=11, clips_per_group=1, seed=0, size=32, frame_range=(6, 9), progress=False)
    return root


@pytest.fixture
def tiny_backbone(monkeypatch):
    monkeypatch.setattr(captioner.backbones, "get_backbone", vqa_support._tiny_backbone)


def test_video_caption_resume_replays_the_same_batches(clips, tmp_path, monkeypatch, tiny_backbone):
    features = str(tmp_path / "f.h5")
    assert_resume_replays_batches(
        lambda out, *more: main(["train", "video-caption", "--data", str(clips / "captions.csv"), str(clips), features,
                                 "--backbone", "tiny", "--num-frames", "4", "--output-dir", str(out),
                                 "--min-count", "1", "--units", "8", "--embedding-dim", "8", "--projection-dim", "8",
                                 "--attention-units", "8", "--batch-size", "16", "--beam-size", "1",
                                 "--max-length", "6", "--patience", "5", *more]),
        tmp_path, monkeypatch)
    model = keras.models.load_model(tmp_path / "resumed" / "model.keras")
    assert type(model).__name__ == "VideoCaptioner"


def test_video_classify_resume_replays_the_same_batches(clips, tmp_path, monkeypatch, tiny_backbone):
    features = str(tmp_path / "f.h5")
    assert_resume_replays_batches(
        lambda out, *more: main(["train", "video-classify", "--data-dir", str(clips), "--features", features,
                                 "--backbone", "tiny", "--num-frames", "4", "--output-dir", str(out),
                                 "--units", "8", "--projection-dim", "8", "--batch-size", "4", "--patience", "5",
                                 *more]),
        tmp_path, monkeypatch)
    model = keras.models.load_model(tmp_path / "resumed" / "model.keras")
    assert type(model).__name__ == "VideoClassifier"
