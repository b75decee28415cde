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
    path = tmp_path / "vqa.keras"
    model.save(path)
    assert main(["evaluate", "vqa", "--model", str(path), "--questions", str(tmp_path / "dev.jsonl"),
                 "--images", str(photos), "--output", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    probs = model.answer_probabilities([str(photos / r["image"]) for r in rows], [r["question"] for r in rows])
    right = [ANSWERS[k] == r["answer"] for k, r in zip(probs.argmax(-1), rows)]
    assert report["accuracy"] == round(100 * np.mean(right), 2)
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
