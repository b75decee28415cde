"""scripts/experiments/eval_flickr8k_vqa.py on generated photos, a tiny (untrained) model and hand-made rows:
the prior baseline, per-type scores, the model's don't-know coverage, JSON, figure and card."""

import json
import os

import numpy as np
import pytest
from script_support import load_script
from support.backbones import tiny_get_backbone
from support.vqa import photos_and_rows

ev = load_script("eval_flickr8k_vqa")


def test_eval_script_end_to_end(tmp_path):
    from captioner.features.extract import extract_features
    from captioner.model_card import ModelCard
    from captioner.models.vqa_classifier import VQAClassifier
    from captioner.models.vqa_model import VQAModel
    from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary

    files = photos_and_rows(tmp_path, n_train=6, n_dev=3)
    images = sorted((tmp_path / "Images").iterdir())
    backbone = tiny_get_backbone()
    extract_features([str(p) for p in images], str(tmp_path / "f.h5"), backbone=backbone,
                     ids=[p.name for p in images], progress=False)
    vocab = Vocabulary(list(SPECIAL_TOKENS) + "what color is the block there a red blue green".split())
    answers = ["red", "blue", "green", "yes", "no"]
    clf = VQAClassifier.of(len(vocab), len(answers), image_dim=6, kind="attention", hops=2, embedding_dim=4, units=8,
                        attention_units=4, dropout=0.0)
    model_path = tmp_path / "m.keras"
    VQAModel(backbone.model, clf, vocab, answers, min_probability=0.5, question_starts=["is", "what"]).save(model_path)
    card = tmp_path / "m.json"
    ModelCard(model="m.keras", task="vqa", command="captioner train vqa ...", seed=1, data={}, config={},
              metrics={"split": "dev"}).save(card)

    out_json, fig = tmp_path / "eval.json", tmp_path / "eval.png"
    assert ev.main(["--model", f"attention={model_path}", "--model", f"blind={model_path}",
                    "--train-qa", str(files["train"]), "--dev-qa", str(files["dev"]),
                    "--features", str(tmp_path / "f.h5"), "--output", str(out_json), "--figure", str(fig),
                    "--card", str(card), "--no-wups"]) == 0
    out = json.loads(out_json.read_text())
    prior = out["models"]["most_common_per_type"]
    # train colours red, blue, green twice each -> "blue" (alphabetical tie-break); yes/no: 6 each -> "no"
    assert prior["answers"] == {"color": "blue", "yesno": "no"}
    assert prior["by_type"]["color"]["accuracy"] == pytest.approx(100 / 3)  # dev colours: red, blue, green
    assert prior["by_type"]["yesno"]["accuracy"] == pytest.approx(50.0)
    assert out["dev_questions"] == 9 and out["dev_per_type"] == {"color": 3, "yesno": 6}
    m = out["models"]["attention"]
    assert m["overall"]["questions"] == 9 and m["kind"] == "attention"
    # untrained: top probability ~1/5 < 0.5 -> nothing answered
    assert m["dont_know"]["answered"] == 0.0 and m["dont_know"]["accuracy_answered"] is None
    assert len(m["dont_know"]["reliability_bins"]) == 10 and len(m["dont_know"]["coverage_curve"]) == 20
    assert out["attention_minus_blind"]["overall"] == 0.0  # the same model twice
    assert fig.stat().st_size > 10_000
    extra = ModelCard.load(card).extra["evaluation"]
    assert extra["models"]["most_common_per_type"]["accuracy_by_type"]["yesno"] == 50.0
    assert extra["command"].startswith("python scripts/experiments/eval_flickr8k_vqa.py --model attention=")
    assert os.path.basename(extra["figure"]) == "eval.png" and np.isfinite(extra["attention_minus_blind"]["overall"])
