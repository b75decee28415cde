"""Temperature scaling (issue 69): the models' probabilities go through softmax(logits / T), T saved in
the model; `captioner model calibrate` fits T on dev rows and re-chooses a VQA model's "don't know"."""

import json

import keras
import numpy as np
import pytest
from PIL import Image

from captioner.cli import main
from captioner.metrics.confidence import temper
from captioner.models.vqa_model import VQAModel

from support.tiny_classifiers import VQA_ANSWERS as ANSWERS
from support.tiny_classifiers import random_image, tiny_entailment, tiny_vqa_model


def test_a_temperature_scales_the_logits_keeps_the_argmax_and_is_saved(tmp_path):
    model = tiny_entailment()
    pairs = (["a man is playing", "a woman is singing"], ["a man is not playing", "there is no guitar"])
    before = np.array([list(r.probabilities.values()) for r in model.entail(*pairs)])
    model.set_temperature(0.25)  # sharper: the compiled function is rebuilt with the new T
    after = np.array([list(r.probabilities.values()) for r in model.entail(*pairs)])
    np.testing.assert_allclose(after, temper(before, 0.25), atol=1e-5)
    assert (after.argmax(-1) == before.argmax(-1)).all()
    model.save(tmp_path / "e.keras")
    loaded = keras.models.load_model(tmp_path / "e.keras")
    assert loaded.temperature == 0.25
    np.testing.assert_allclose([list(r.probabilities.values()) for r in loaded.entail(*pairs)], after, atol=1e-5)
    with pytest.raises(ValueError):
        model.set_temperature(float("nan"))


def test_calibrate_fits_a_vqa_models_temperature_on_dev_rows_and_saves_it(tmp_path, capsys):
    model = tiny_vqa_model()
    # an over-confident model: the answer layer's weights scaled up, so the softmax is near one-hot
    dense = [w for w in model.classifier.weights if w.path.endswith("kernel")][-1]
    dense.assign(dense.numpy() * 40)
    photos = tmp_path / "photos"
    photos.mkdir()
    rows = []
    rng = np.random.default_rng(0)
    for i in range(40):
        Image.fromarray(random_image(i)).save(photos / f"p{i}.png")
        for q in ("what color is the shape?", "is there a circle?"):
            rows.append({"image": f"p{i}.png", "question": q, "answer": str(rng.choice(ANSWERS))})
    rows.append({"image": "p0.png", "question": "what color is the shape?", "answer": "green"})  # not an answer
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "vqa.keras"
    model.save(path)
    probs_before = keras.models.load_model(path).answer_probabilities(
        [str(photos / r["image"]) for r in rows], [r["question"] for r in rows])
    assert main(["model", "calibrate", "--model", str(path), "--questions", str(tmp_path / "dev.jsonl"),
                 "--images", str(photos), "--report", str(tmp_path / "report.json")]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["dev"]["questions"] == 81 and report["dev"]["gold_outside_answers"] == 1
    assert report["temperature"]["after"] > 2  # random answers: the fit must soften it
    assert report["after"]["nll"] < report["before"]["nll"] and report["after"]["ece"] < report["before"]["ece"]
    assert report["after"]["accuracy"] == report["before"]["accuracy"]
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, VQAModel) and loaded.temperature == pytest.approx(report["temperature"]["after"], rel=1e-3)
    assert loaded.min_probability == report["dont_know"]["min_probability"]["after"]
    got = loaded.answer_probabilities([str(photos / r["image"]) for r in rows], [r["question"] for r in rows])
    np.testing.assert_allclose(got, temper(probs_before, loaded.temperature), atol=1e-4)
    assert "temperature" in capsys.readouterr().out


def test_calibrate_names_what_is_missing(tmp_path, capsys):
    path = tmp_path / "vqa.keras"
    tiny_vqa_model().save(path)
    assert main(["model", "calibrate", "--model", str(path), "--questions", str(tmp_path / "none.jsonl")]) == 2
    assert "--images" in capsys.readouterr().err
    (tmp_path / "dev.jsonl").write_text(json.dumps({"image": "nowhere.png", "question": "is it?", "answer": "yes"}))
    (tmp_path / "photos").mkdir()
    assert main(["model", "calibrate", "--model", str(path), "--questions", str(tmp_path / "dev.jsonl"),
                 "--images", str(tmp_path / "photos")]) == 2
    assert "nowhere.png" in capsys.readouterr().err


def test_easy_vqa_dev_is_the_split_training_held_out(tmp_path):
    """`--easy-vqa-seed S` reads the dev questions `captioner train vqa --dataset easy-vqa --seed S`
    selected on, through the model's batch path."""
    import argparse

    from captioner.inference.calibration import easy_vqa_dev
    from captioner.training.vqa_data import load_splits
    from support.vqa import easy_vqa_copy

    root = easy_vqa_copy(tmp_path / "easy", np.random.default_rng(0))
    args = argparse.Namespace(dataset="easy-vqa", data_dir=str(root), limit=None, seed=3, dev_fraction=0.25)
    _, recipe_dev, _, _ = load_splits(args)
    model = tiny_vqa_model()
    dev = easy_vqa_dev(model, 3, 0.25, data_dir=str(root))
    assert dev.description["questions"] == len(recipe_dev.questions) == 15  # 5 of 20 images, 3 questions each
    want = model.answer_probabilities([q.image_path for q in recipe_dev.questions],
                                      [q.question for q in recipe_dev.questions])
    np.testing.assert_allclose(dev.probabilities, want, atol=1e-5)
    assert dev.labels.tolist() == [ANSWERS.index(q.answer) if q.answer in ANSWERS else -1 for q in recipe_dev.questions]
