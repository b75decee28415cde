import json

import pytest

from captioner.data.vqa_v2 import load_vqa_v2
from captioner.errors import InputError


def _answers(*words):
    return [{"answer": w, "answer_confidence": "yes", "answer_id": i + 1} for i, w in enumerate(words)]


QUESTIONS = {"data_subtype": "val2014", "questions": [
    {"image_id": 42, "question": "What animal is this?", "question_id": 42000},
    {"image_id": 42, "question": "How many dogs?", "question_id": 42001},
    {"image_id": 7, "question": "Is it raining?", "question_id": 7000},
]}
ANNOTATIONS = {"annotations": [
    {"question_id": 42000, "image_id": 42, "question_type": "what", "answer_type": "other",
     "multiple_choice_answer": "dog", "answers": _answers(*["dog"] * 8, "puppy", "cat")},
    {"question_id": 42001, "image_id": 42, "question_type": "how many", "answer_type": "number",
     "multiple_choice_answer": "2", "answers": _answers(*["2"] * 6, *["two"] * 3, "3")},
    {"question_id": 7000, "image_id": 7, "question_type": "is it", "answer_type": "yes/no",
     "multiple_choice_answer": "no", "answers": _answers(*["no"] * 10)},
]}


def _write(tmp_path, questions=QUESTIONS, annotations=ANNOTATIONS):
    q, a = tmp_path / "q.json", tmp_path / "a.json"
    q.write_text(json.dumps(questions) if not isinstance(questions, str) else questions)
    a.write_text(json.dumps(annotations) if not isinstance(annotations, str) else annotations)
    return q, a


def test_reads_questions_and_ten_answers(tmp_path):
    q, a = _write(tmp_path)
    images = tmp_path / "val2014"
    images.mkdir()
    (images / "COCO_val2014_000000000042.jpg").write_bytes(b"")
    (images / "000000000007.jpg").write_bytes(b"")  # COCO 2017 naming is found too
    ds = load_vqa_v2(q, a, images)
    assert len(ds) == 3 and ds.split == "val2014"
    first = ds.questions[0]
    assert first.question_id == 42000 and first.answer == "dog" and len(first.answers) == 10
    assert first.image_id == "COCO_val2014_000000000042.jpg"
    assert first.image_path == str(images / "COCO_val2014_000000000042.jpg")
    assert ds.questions[2].image_id == "000000000007.jpg"
    assert (ds.questions[1].answer_type, ds.questions[1].question_type) == ("number", "how many")
    assert ds.image_ids == ["COCO_val2014_000000000042.jpg", "000000000007.jpg"]
    assert ds.top_answers(2) == ["2", "dog"]


def test_without_annotations(tmp_path):
    q, _ = _write(tmp_path)
    ds = load_vqa_v2(q)
    assert all(x.answers == [] and x.answer is None for x in ds.questions)


@pytest.mark.parametrize("questions, annotations, message", [
    ("{oops", ANNOTATIONS, r"q.json:1: not valid JSON"),
    ([1, 2], ANNOTATIONS, "expected a JSON object with a 'questions' list"),
    ({"info": {}}, ANNOTATIONS, "no 'questions' list"),
    ({"questions": [{"image_id": 1, "question": "x?"}]}, ANNOTATIONS, r"questions\[0\]: 'question_id' must be an integer"),
    ({"questions": [{"image_id": 1, "question_id": 1, "question": " "}]}, ANNOTATIONS, "non-empty string"),
    ({"questions": QUESTIONS["questions"] + [QUESTIONS["questions"][0]]}, ANNOTATIONS, "repeats an earlier question"),
    (QUESTIONS, {"annotations": ANNOTATIONS["annotations"][:2]}, r"1 question\(s\) .* have no annotation"),
    (QUESTIONS, {"annotations": ANNOTATIONS["annotations"] + [{**ANNOTATIONS["annotations"][0], "question_id": 5}]},
     "question_id 5 is not in"),
    (QUESTIONS, {"annotations": [ANNOTATIONS["annotations"][0]] * 2}, "annotated twice"),
    (QUESTIONS, {"annotations": [{**ANNOTATIONS["annotations"][0], "answers": []}] + ANNOTATIONS["annotations"][1:]},
     "'answers' must be a non-empty list"),
    (QUESTIONS, {"annotations": [{**ANNOTATIONS["annotations"][0], "answers": [{"text": "dog"}]}]
                 + ANNOTATIONS["annotations"][1:]}, r"answers\[0\] has no 'answer' string"),
    (QUESTIONS, {"annotations": [{**ANNOTATIONS["annotations"][0], "image_id": 9}] + ANNOTATIONS["annotations"][1:]},
     "image_id 9 differs"),
])
def test_malformed_json_is_named(tmp_path, questions, annotations, message):
    q, a = _write(tmp_path, questions, annotations)
    with pytest.raises(InputError, match=message):
        load_vqa_v2(q, a)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_vqa_v2(tmp_path / "nope.json")
