"""`captioner train vqa`: its batches replay on resume (the recipe's contract; whole images per
batch; trained end to end in tests/models/test_vqa_training.py)."""

import numpy as np
from training_support import assert_recipe_batches_replay, load_test_module

import captioner.backbones
import captioner.features.extract

vqa_support = load_test_module("models/test_vqa_training.py")


def test_batches_replay_on_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(captioner.features.extract, "get_backbone", vqa_support._tiny_backbone)
    monkeypatch.setattr(captioner.backbones, "get_backbone", vqa_support._tiny_backbone)
    data = vqa_support._easy_vqa_copy(tmp_path / "easy", np.random.default_rng(0))
    assert_recipe_batches_replay(["vqa", "--dataset", "easy-vqa", "--data-dir", data, "--features", tmp_path / "f.h5",
                                  "--output-dir", tmp_path / "run", "--embedding-dim", "4", "--units", "8",
                                  "--attention-units", "4", "--hidden-units", "8", "--batch-size", "12",
                                  "--dev-fraction", "0.2", "--patience", "5", "--reduce-dim", "4",
                                  "--pca-samples", "200"])
