"""`captioner evaluate vqa|entail|classify` (issues 69/70): a classifier's dev figures through its batch path."""

import json

import numpy as np
from PIL import Image

from captioner.cli import main

from support.tiny_classifiers import VQA_ANSWERS as ANSWERS
from support.tiny_classifiers import random_image, tiny_entailment, tiny_vqa_model


def test_evaluate_vqa_reports_accuracy_per_type_ece_and_dont_know(tmp_path, capsys):
    model = tiny_vqa_model()
    photos = tmp_path / "photos"
    photos.mkdir()
    rows = []
    for i in range(6):
        Image.fromarray(random_image(i)).save(photos / f"p{i}.png")
        rows += [{"image": f"p{i}.png", "question": "what color is the shape?", "answer": ANSWERS[i % 2], "type": "color"},
                 {"image": f"p{i}.png", "question": "is there a circle?", "answer": ANSWERS[2 + i % 2], "type": "yesno"}]
    (tmp_path / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    train = [{**r, "answer": ANSWERS[0] if r["type"] == "color" else ANSWERS[2]} for r in rows[:4]] + [rows[5]]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train))
    path = tmp_path / "vqa.keras"
    model.save(path)
    assert main(["evaluate", "vqa", "--model", str(path), "--questions", str(tmp_path / "dev.jsonl"),
                 "--images", str(photos), "--output", str(tmp_path / "r.json"),
                 "--train-questions", str(tmp_path / "train.jsonl")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    probs = model.answer_probabilities([str(photos / r["image"]) for r in rows], [r["question"] for r in rows])
    right = [ANSWERS[k] == r["answer"] for k, r in zip(probs.argmax(-1), rows)]
    assert report["accuracy"] == round(100 * np.mean(right), 2)
    # the type prior: each type's most common training answer (colour: ANSWERS[0], yes/no: ANSWERS[2]), right on half
    assert report["prior"]["answers"] == {"color": ANSWERS[0], "yesno": ANSWERS[2]}
    assert report["prior"]["by_type"] == {"color": 50.0, "yesno": 50.0} and report["prior"]["train_questions"] == 5
    # the answers `captioner ask` gives: no ImageNet head here, so the classifier's, none from a tag
    assert report["as_asked"]["accuracy"] == report["accuracy"] and report["as_asked"]["from_tag"] == 0
    assert report["as_asked"]["asked_again"] == 0  # "is there a circle?" names no animal the head knows
    assert set(report["by_type"]) == {"color", "yesno"} and report["dev"]["questions"] == 12
    assert 0 <= report["ece"] <= 1 and report["temperature"] == 1.0 and "dont_know" in report
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["accuracy"] == report["accuracy"]


def test_evaluate_entail_reads_the_sick_dev_part_and_refuses_another_kind_of_model(tmp_path, capsys):
    header = "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tSemEval_set\n"
    lines = [f"{i}\ta man is playing\ta man is {'not ' if i % 2 else ''}playing\t"
             f"{'CONTRADICTION' if i % 2 else 'ENTAILMENT'}\t4.0\tTRAIN\n" for i in range(1, 301)]
    (tmp_path / "sick.txt").write_text(header + "".join(lines))
    path = tmp_path / "e.keras"
    tiny_entailment().save(path)
    assert main(["evaluate", "entail", "--model", str(path), "--data", str(tmp_path / "sick.txt")]) == 0
    brief = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0 <= brief["accuracy"] <= 100 and brief["temperature"] == 1.0
    assert main(["evaluate", "entail", "--model", str(path)]) == 2
    assert "--data" in capsys.readouterr().err


def test_an_activity_classifier_is_calibrated_and_evaluated_on_its_dev_clips(tmp_path, capsys):
    """video-classify: the dev clips of a clip_id,label CSV (dev.txt beside it), through the model's own
    clip path; calibrate saves T in the file, evaluate reads it back; a missing dev list is one line."""
    import keras

    from captioner.data.synthetic_video import render_clip, write_video
    from captioner.models.video_classifier import VideoClassifier
    from captioner.models.video_classifier_model import VideoClassifierModel
    from support.backbones import tiny_backbone

    rng = np.random.default_rng(0)
    videos = tmp_path / "videos"
    videos.mkdir()
    names = ["Grow", "MoveLeft", "Shrink"]
    labels = []
    for i in range(24):
        motion = ("grow", "left", "shrink")[i % 3]
        write_video(str(videos / f"c{i}.avi"), render_clip(motion, "red", "circle", rng, num_frames=6, size=32), 10)
        labels.append(f"c{i},{names[i % 3]}")
    (tmp_path / "activities.csv").write_text("clip_id,label\n" + "\n".join(labels) + "\n")
    (tmp_path / "dev.txt").write_text("".join(f"c{i}\n" for i in range(24)))
    keras.utils.set_random_seed(0)
    model = VideoClassifier(tiny_backbone(channels=6, preprocess="rescale", two_layers=False, kernel=3),
                            VideoClassifierModel(3, 6, units=8, projection_dim=8), names, num_frames=4)
    path = tmp_path / "act.keras"
    model.save(path)
    dev = ["--labels", str(tmp_path / "activities.csv"), "--data", str(videos)]
    assert main(["evaluate", "video-classify", "--model", str(path), *dev, "--output", str(tmp_path / "before.json")]) == 0
    before = json.loads((tmp_path / "before.json").read_text())
    assert before["dev"]["clips"] == 24 and before["temperature"] == 1.0
    capsys.readouterr()
    assert main(["model", "calibrate", "--model", str(path), *dev]) == 0
    assert "temperature" in capsys.readouterr().out
    assert main(["evaluate", "video-classify", "--model", str(path), *dev, "--output", str(tmp_path / "after.json")]) == 0
    after = json.loads((tmp_path / "after.json").read_text())
    assert after["temperature"] != 1.0 and after["accuracy"] == before["accuracy"]  # the argmax does not move
    assert after["nll"] <= before["nll"] + 1e-6
    (tmp_path / "dev.txt").unlink()
    assert main(["evaluate", "video-classify", "--model", str(path), *dev]) == 2
    assert "no dev.txt beside it" in capsys.readouterr().err
