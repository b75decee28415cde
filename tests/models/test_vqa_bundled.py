"""The bundled easy-VQA model on real held-out easy-VQA test questions (slow: loads the backbone)."""

import json
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "assets" / "models" / "easy_vqa.keras"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model():
    if not MODEL.exists():
        pytest.skip(f"{MODEL} is absent (made by `captioner train vqa --dataset easy-vqa ...`)")
    pytest.importorskip("easy_vqa", reason="the easy-vqa package (test questions) is not installed")
    import keras

    import captioner.models.vqa_model  # noqa: F401  (registers the classes)

    return keras.models.load_model(MODEL)


def test_bundled_model_answers_test_questions(model):
    from captioner.data.easy_vqa import load_easy_vqa

    questions = load_easy_vqa("test").questions[:80]  # the first images of the held-out split
    results = model.answer_batch([q.image_path for q in questions], [q.question for q in questions])
    right = sum(r.answer == q.answer for r, q in zip(results, questions))
    assert right >= 76, [(q.question, q.answer, r.answer) for r, q in zip(results, questions) if r.answer != q.answer]
    for r in results[:5]:
        assert r.attention.shape == (model.hops, 7, 7)
        assert abs(float(r.attention[0].sum()) - 1.0) < 1e-4
    meta = json.loads(MODEL.with_suffix(".json").read_text())
    commands = meta["command"] if isinstance(meta["command"], list) else [meta["command"]]  # + the lean re-save
    assert meta["metrics"]["test"]["questions"] == 9673 and commands[0].startswith("captioner train vqa")
