import json

import numpy as np
import pytest
from PIL import Image

from captioner.data.easy_vqa import answer_type, load_easy_vqa, read_easy_vqa_answers
from captioner.errors import InputError

ANSWERS = ["circle", "red", "yes", "no", "blue", "rectangle"]


def _make(tmp_path, rows=None, split="train", images=(0, 1)):
    (tmp_path / "answers.txt").write_text("\n".join(ANSWERS) + "\n")
    (tmp_path / split / "images").mkdir(parents=True, exist_ok=True)
    for i in images:
        Image.fromarray(np.full((64, 64, 3), 40 * i, np.uint8)).save(tmp_path / split / "images" / f"{i}.png")
    rows = rows if rows is not None else [["what shape is it?", "circle", 0], ["is it red?", "yes", 1],
                                          ["what color is the circle?", "red", 0]]
    (tmp_path / split / "questions.json").write_text(json.dumps(rows))
    return tmp_path


def test_reads_the_package_layout(tmp_path):
    ds = load_easy_vqa("train", data_dir=_make(tmp_path))
    assert len(ds) == 3 and ds.answer_list == ANSWERS
    q = ds.questions[0]
    assert (q.question, q.answers, q.answer, q.image_id, q.answer_type) == \
        ("what shape is it?", ["circle"], "circle", "train/0.png", "shape")
    assert q.image_path == str(tmp_path / "train" / "images" / "0.png")
    assert ds.image_ids == ["train/0.png", "train/1.png"]
    assert ds.top_answers() == ["circle", "red", "yes"]
    assert [answer_type(a) for a in ("yes", "no", "teal", "triangle")] == ["yes/no", "yes/no", "color", "shape"]


@pytest.mark.parametrize("rows, message", [
    ({"not": "a list"}, "expected a JSON list"),
    ([["q?", "circle"]], r"row 0: expected \[question, answer, image_id\]"),
    ([["", "circle", 0]], "row 0: the question must be a non-empty string"),
    ([["q?", "purple", 0]], "row 0: answer 'purple' is not in answers.txt"),
    ([["q?", "circle", "0"]], "row 0: image id must be an integer"),
    ([["q?", "circle", 0], ["q?", "circle", 7]], r"row 1: image .*7.png not found"),
])
def test_malformed_rows_are_named(tmp_path, rows, message):
    with pytest.raises(InputError, match=message):
        load_easy_vqa("train", data_dir=_make(tmp_path, rows))


def test_bad_json_and_split(tmp_path):
    d = _make(tmp_path)
    (d / "train" / "questions.json").write_text('[["q?", "circle", 0],\n oops]')
    with pytest.raises(InputError, match=r"questions.json:2: not valid JSON"):
        load_easy_vqa("train", data_dir=d)
    with pytest.raises(InputError, match="split must be one of"):
        load_easy_vqa("val", data_dir=d)
    with pytest.raises(InputError, match="file not found"):
        read_easy_vqa_answers(tmp_path / "nowhere")


def test_installed_package_matches_its_api():
    easy_vqa = pytest.importorskip("easy_vqa", reason="the easy-vqa package is not installed")
    texts, answers, image_ids = easy_vqa.get_test_questions()
    ds = load_easy_vqa("test", check_images=False)
    assert len(ds) == len(texts) == 9673
    assert ds.answer_list == easy_vqa.get_answers() and len(ds.answer_list) == 13
    paths = easy_vqa.get_test_image_paths()
    for k in (0, 1234, len(texts) - 1):
        q = ds.questions[k]
        assert (q.question, q.answer) == (texts[k], answers[k])
        assert q.image_id == f"test/{image_ids[k]}.png" and q.image_path == paths[image_ids[k]]
