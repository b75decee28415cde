"""End to end on the bundled SICK classifier: its card's TRIAL accuracy is what the file gives
(slow; skipped when the model or the SICK copy in ../shared is absent)."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "assets" / "models" / "sick_entailment.keras"
SICK = ROOT.parent / "shared" / "datasets" / "sick" / "SICK_train_trial.txt"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not MODEL.exists(), reason=f"bundled model {MODEL} not present"),
              pytest.mark.skipif(not SICK.exists(), reason=f"SICK copy {SICK} not present")]


def test_bundled_sick_model_reaches_its_cards_trial_accuracy():
    from captioner.data.sick import load_sick
    from captioner.models.entailment import load_entailment

    card = json.loads(MODEL.with_suffix(".json").read_text(encoding="utf-8"))
    trial = load_sick(SICK, ["TRIAL"])
    model = load_entailment(MODEL)
    out = model.entail([p.premise for p in trial], [p.hypothesis for p in trial])
    accuracy = 100 * sum(o.label == p.label for o, p in zip(out, trial)) / len(trial)
    assert len(trial) == 495
    assert accuracy == pytest.approx(card["metrics"]["TRIAL_accuracy"], abs=0.25)  # one pair is 0.2
    assert accuracy > card["metrics"]["TRIAL_majority_class_accuracy"] + 20
