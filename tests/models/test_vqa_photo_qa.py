"""`captioner train vqa --dataset qa-jsonl` (make-qa rows + a feature store) end to end on
generated photos with a tiny backbone: the attention and the question-only (blind) models
train, save, reload in a fresh process with the same outputs, and carry the "don't know" rule."""

import json

import keras
import pytest

import captioner.backbones
import captioner.features.extract
from captioner.cli import main

from support.backbones import tiny_get_backbone
from support.vqa import photos_and_rows
from support import fresh_python


@pytest.mark.parametrize("kind", ["attention", "blind"])
def test_train_save_reload_same_outputs(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(captioner.backbones, "get_backbone", tiny_get_backbone)
    files = photos_and_rows(tmp_path)
    run, model_out = tmp_path / "run", tmp_path / "vqa.keras"
    extra = ["--reduce-dim", "4", "--pca-samples", "200", "--fusion", "product"] if kind == "attention" else []
    assert main(["train", "vqa", "--dataset", "qa-jsonl", "--train-questions", str(files["train"]),
                 "--val-questions", str(files["dev"]), "--train-images", str(tmp_path / "Images"),
                 "--features", str(tmp_path / "f.h5"), "--output-dir", str(run), "--model-out", str(model_out),
                 "--kind", kind, "--embedding-dim", "4", "--units", "8", "--attention-units", "4",
                 "--hidden-units", "8", "--batch-size", "12", "--epochs", "2", "--question-words", *extra]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["split"] == "dev" and metrics["dev"]["questions"] == 18
    assert set(metrics["dev"]["by_answer_type"]) == {"color", "yesno"}
    rule = metrics["dont_know"]
    assert 0.0 <= rule["min_probability"] <= 1.0 and rule["question_starts"] == ["is", "what"]
    card = json.loads(model_out.with_suffix(".json").read_text())
    assert card["metrics"]["dont_know"] == rule and card["data"]["train_images"] == 18

    model = keras.models.load_model(model_out)
    assert model.min_probability == rule["min_probability"] and model.question_starts == ["is", "what"]
    image = str(tmp_path / "Images" / "dev_0.jpg")
    questions = ["what color is the block?", "is there a red block?", "why is the block red?"]
    results = model.answer_batch([image] * 3, questions)
    assert (results[0].attention is None) == (kind == "blind")
    if kind == "attention":
        assert results[0].attention.shape == (2, 4, 4)
    # a kind of question never trained on: "don't know", whatever the confidence
    assert not results[2].known and "'why'" in results[2].reason and "don't know" in results[2].display
    assert results[2].to_json()["known"] is False and "reason" in results[2].to_json()
    if kind == "blind":  # the question alone: the same answer for every photo
        other = model.answer(str(tmp_path / "Images" / "dev_1.jpg"), questions[0])
        assert other.top_k == results[0].top_k

    code = ("import sys, json, captioner, keras; m = keras.models.load_model(sys.argv[1]); "
            "r = m.answer_batch([sys.argv[2]] * 3, json.loads(sys.argv[3])); "
            "print(json.dumps([[x.answer, x.probability, x.known] for x in r]))")
    fresh = json.loads(fresh_python.last_line(code, model_out, image, json.dumps(questions), timeout=300))
    for (answer, prob, known), r in zip(fresh, results):
        assert answer == r.answer and known == r.known and prob == pytest.approx(r.probability, abs=1e-5)


def test_qa_jsonl_needs_both_files(tmp_path):
    with pytest.raises(SystemExit, match="--val-questions"):
        main(["train", "vqa", "--dataset", "qa-jsonl", "--train-questions", "x.jsonl", "--features",
              str(tmp_path / "f.h5"), "--output-dir", str(tmp_path / "run")])
