"""`captioner train vqa` end to end on a tiny generated easy-VQA copy with a tiny backbone."""

import json

import keras
import numpy as np
import pytest

import captioner.backbones
import captioner.features.extract
from captioner.cli import main
from captioner.training.callbacks import HISTORY
from support.backbones import tiny_get_backbone
from support.vqa import ANSWERS, easy_vqa_copy


@pytest.mark.parametrize("kind", ["attention", "baseline"])
def test_train_resume_and_saved_model(tmp_path, monkeypatch, capsys, kind):
    monkeypatch.setattr(captioner.backbones, "get_backbone", tiny_get_backbone)
    data = easy_vqa_copy(tmp_path / "easy", np.random.default_rng(0))
    run, model_out = tmp_path / "run", tmp_path / "vqa.keras"
    reduce = ["--reduce-dim", "4", "--pca-samples", "200"] if kind == "attention" else []
    common = ["train", "vqa", "--dataset", "easy-vqa", "--data-dir", str(data), "--features",
              str(tmp_path / "f.h5"), "--output-dir", str(run), "--model-out", str(model_out), "--kind", kind,
              "--embedding-dim", "4", "--units", "8", "--attention-units", "4", "--hidden-units", "8",
              "--batch-size", "12", "--dev-fraction", "0.2", "--patience", "5"] + reduce
    assert main(common + ["--epochs", "2"]) == 0
    assert len(json.loads((run / HISTORY).read_text())) == 2
    # other data or model options on --resume: refused, naming what changed, the run untouched
    config = (run / "config.json").read_text()
    assert main(common + ["--epochs", "3", "--resume", "--dropout", "0.1", "--seed", "4"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "dropout: 0.3 -> 0.1" in err and "seed: 1 -> 4" in err, err[-400:]
    assert (run / "config.json").read_text() == config
    assert main(common + ["--epochs", "3", "--resume"]) == 0  # continues at epoch 3, not from scratch
    history = json.loads((run / HISTORY).read_text())
    assert [h["epoch"] for h in history] == [1, 2, 3]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["dev"]["questions"] == 12 and metrics["test"]["questions"] == 18  # 4 dev images x 3
    assert set(metrics["test"]["by_answer_type"]) == {"color", "yes/no"}
    bundle = json.loads(model_out.with_suffix(".json").read_text())
    assert bundle["metrics"]["test"]["accuracy"] == metrics["test"]["accuracy"]
    assert bundle["data"]["train_images"] == 16 and bundle["seed"] == 1
    model = keras.models.load_model(model_out)
    result = model.answer(str(data / "test" / "images" / "0.png"), "what color is the shape?")
    assert result.answer in ANSWERS
    assert (result.attention is None) == (kind == "baseline")
    assert json.loads((run / "answers.json").read_text()) == ANSWERS
