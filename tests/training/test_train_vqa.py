"""`captioner train vqa`: its batches replay on resume (the recipe's contract; whole images per
batch; trained end to end in tests/models/test_vqa_training.py)."""

import numpy as np

import captioner.backbones
import captioner.features.extract
from support.backbones import tiny_get_backbone
from support.training import assert_recipe_batches_replay
from support.vqa import easy_vqa_copy


def test_batches_replay_on_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(captioner.backbones, "get_backbone", tiny_get_backbone)
    data = easy_vqa_copy(tmp_path / "easy", np.random.default_rng(0))
    assert_recipe_batches_replay(["vqa", "--dataset", "easy-vqa", "--data-dir", data, "--features", tmp_path / "f.h5",
                                  "--output-dir", tmp_path / "run", "--embedding-dim", "4", "--units", "8",
                                  "--attention-units", "4", "--hidden-units", "8", "--batch-size", "12",
                                  "--dev-fraction", "0.2", "--patience", "5", "--reduce-dim", "4",
                                  "--pca-samples", "200"])
