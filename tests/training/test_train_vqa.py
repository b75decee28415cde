"""`captioner train vqa`: a resumed run replays the batches of a straight one (whole images per
batch, so the number of batches varies by epoch: one pass per epoch)."""

import numpy as np
from training_support import assert_resume_replays_batches, load_test_module

import captioner.backbones
import captioner.features.extract
from captioner.cli import main

vqa_support = load_test_module("models/test_vqa_training.py")


def test_resume_replays_the_same_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(captioner.features.extract, "get_backbone", vqa_support._tiny_backbone)
    monkeypatch.setattr(captioner.backbones, "get_backbone", vqa_support._tiny_backbone)
    data = vqa_support._easy_vqa_copy(tmp_path / "easy", np.random.default_rng(0))
    features = str(tmp_path / "f.h5")
    assert_resume_replays_batches(
        lambda out, *more: main(["train", "vqa", "--dataset", "easy-vqa", "--data-dir", str(data), "--features",
                                 features, "--output-dir", str(out), "--embedding-dim", "4", "--units", "8",
                                 "--attention-units", "4", "--hidden-units", "8", "--batch-size", "12",
                                 "--dev-fraction", "0.2", "--patience", "5", "--reduce-dim", "4",
                                 "--pca-samples", "200", *more]),
        tmp_path, monkeypatch)
