"""Reader for easy-VQA (Victor Zhou, MIT licence), the small VQA set in the PyPI package ``easy-vqa``.

4,000 train and 1,000 test 64x64 PNG images of one coloured shape each; 38,575 / 9,673
generated questions (``what color is the shape?``, ``is there a red circle?``, ...) and a
closed set of 13 answers. The test split is the held-out split.

The package's API (``easy_vqa.get_train_questions()`` ...) reads this layout, which is what
:func:`load_easy_vqa` reads too, so a copy of it elsewhere (``data_dir``) works the same::

    data_dir/
      answers.txt                 one answer per line
      train/questions.json        [[question, answer, image_id], ...]
      train/images/<image_id>.png
      test/questions.json
      test/images/<image_id>.png

Image ids in the returned dataset (and in feature stores) are ``"<split>/<image_id>.png"``,
so train and test images never collide.
"""

from __future__ import annotations

import os

from captioner.data.json_file import read_json
from captioner.data.vqa_dataset import VQADataset, VQAQuestion
from captioner.errors import InputError

__all__ = ["load_easy_vqa", "easy_vqa_data_dir", "read_easy_vqa_answers", "answer_type", "SPLITS"]

SPLITS = ("train", "test")
SHAPES = ("circle", "rectangle", "triangle")


def answer_type(answer: str) -> str:
    """easy-VQA's three kinds of answer: "yes/no", "shape" or "color"."""
    if answer in ("yes", "no"):
        return "yes/no"
    return "shape" if answer in SHAPES else "color"


def easy_vqa_data_dir() -> str:
    """The data folder inside the installed ``easy-vqa`` package."""
    try:
        import easy_vqa
    except ImportError:
        raise InputError("easy-VQA needs the PyPI package 'easy-vqa' (pip install easy-vqa)") from None
    return os.path.join(os.path.dirname(easy_vqa.__file__), "data")


def read_easy_vqa_answers(data_dir=None) -> list[str]:
    """The closed answer list (``answers.txt``), in file order."""
    path = os.path.join(data_dir or easy_vqa_data_dir(), "answers.txt")
    try:
        with open(path, encoding="utf-8") as f:
            answers = [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    if len(set(answers)) != len(answers):
        raise InputError(f"{path}: repeated answers")
    return answers


def load_easy_vqa(split="train", data_dir=None, check_images=True) -> VQADataset:
    """Questions of an easy-VQA split as a :class:`VQADataset` (one human answer each).

    Malformed rows raise InputError naming the file and the row; with ``check_images`` a
    question whose image file is missing does too.
    """
    if split not in SPLITS:
        raise InputError(f"easy-VQA split must be one of {SPLITS}, got {split!r}")
    data_dir = data_dir or easy_vqa_data_dir()
    answer_list = read_easy_vqa_answers(data_dir)
    known = set(answer_list)
    path = os.path.join(data_dir, split, "questions.json")
    rows = read_json(path)
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of [question, answer, image_id] rows, "
                         f"got {type(rows).__name__}")
    image_dir = os.path.join(data_dir, split, "images")
    questions, seen_images = [], {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        if not (isinstance(row, list) and len(row) == 3):
            raise InputError(f"{where}: expected [question, answer, image_id], got {str(row)[:80]}")
        text, answer, image = row
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: the question must be a non-empty string, got {text!r}")
        if not isinstance(answer, str) or answer not in known:
            raise InputError(f"{where}: answer {answer!r} is not in answers.txt")
        if isinstance(image, bool) or not isinstance(image, int):
            raise InputError(f"{where}: image id must be an integer, got {image!r}")
        if image not in seen_images:
            image_path = os.path.join(image_dir, f"{image}.png")
            if check_images and not os.path.isfile(image_path):
                raise InputError(f"{where}: image {image_path} not found")
            seen_images[image] = image_path
        questions.append(VQAQuestion(
            question_id=f"{split}/{i}", image_id=f"{split}/{image}.png", image_path=seen_images[image],
            question=text.strip(), answers=[answer], answer=answer, answer_type=answer_type(answer),
        ))
    return VQADataset(name="easy-vqa", split=split, questions=questions, answer_list=answer_list)


def easy_vqa_splits(seed, dev_fraction=0.1, data_dir=None, limit=None):
    """(train, dev) VQADatasets of easy-VQA's train split: `dev_fraction` of its images (the first
    `limit` images only, if given), drawn by `seed`, with all their questions held out as dev (what
    `captioner train vqa --dataset easy-vqa --seed S` trains and selects on)."""
    import numpy as np

    full = load_easy_vqa("train", data_dir=data_dir)
    images = full.image_ids[:limit] if limit else full.image_ids
    rng = np.random.default_rng(seed)
    n_dev = max(1, int(round(len(images) * dev_fraction)))
    dev_images = set(rng.permutation(images)[:n_dev].tolist())
    keep = set(images)
    train = VQADataset("easy-vqa", "train", [q for q in full.questions
                                              if q.image_id in keep and q.image_id not in dev_images], full.answer_list)
    dev = VQADataset("easy-vqa", "dev (held-out train images)",
                     [q for q in full.questions if q.image_id in dev_images], full.answer_list)
    return train, dev
