"""Per-type accuracy and WUPS, and the most-common-answer baseline, on a hand-made set."""

import pytest

from captioner.metrics.qa_scores import most_common_per_type, predict_most_common, scores_by_type

TRAIN = [("color", "white"), ("color", "black"), ("color", "white"), ("number", "two"), ("number", "three"),
         ("number", "two"), ("yesno", "no"), ("yesno", "yes"), ("object", "ball"), ("object", "ball")]


def test_most_common_answer_per_type():
    table = most_common_per_type([t for t, _ in TRAIN], [a for _, a in TRAIN])
    assert table == {"color": "white", "number": "two", "yesno": "no", "object": "ball", "*": "ball"}
    # ties are broken alphabetically ("no" < "yes"); a type unseen in training gets the overall answer
    assert predict_most_common(table, ["color", "location"]) == ["white", "ball"]


def test_scores_by_type_hand_worked():
    dev_types = ["color", "color", "number", "yesno", "location"]
    truths = ["white", "red", "two", "yes", "beach"]
    table = most_common_per_type([t for t, _ in TRAIN], [a for _, a in TRAIN])
    predicted = predict_most_common(table, dev_types)  # white, white, two, no, ball
    sims = {frozenset(("white", "red")): 0.5, frozenset(("no", "yes")): 0.2}

    def sim(a, b):
        return sims.get(frozenset((a, b)), 0.0)

    out = scores_by_type(predicted, truths, dev_types, sim)
    assert out["overall"]["accuracy"] == pytest.approx(40.0)  # white/white and two/two
    assert out["overall"]["wups_0.9"] == pytest.approx(100 * (1 + 0.05 + 1 + 0.02 + 0) / 5)
    assert out["overall"]["wups_0.0"] == pytest.approx(100 * (1 + 0.5 + 1 + 0.2 + 0) / 5)
    assert out["by_type"]["color"] == {"questions": 2, "accuracy": 50.0, "wups_0.9": pytest.approx(52.5),
                                       "wups_0.0": pytest.approx(75.0)}
    assert out["by_type"]["location"]["accuracy"] == 0.0 and out["by_type"]["number"]["accuracy"] == 100.0
    assert "wups_0.9" not in scores_by_type(predicted, truths, dev_types)["overall"]  # no similarity given
