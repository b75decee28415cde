"""Generated VQA data for the VQA tests: a tiny easy-VQA copy (drawn squares, its layout) and
square "photos" with make-qa style JSONL rows about them (no real data)."""

import json

import numpy as np
from PIL import Image

COLORS = {"red": (220, 30, 30), "blue": (30, 30, 220), "green": (30, 200, 30)}
ANSWERS = ["red", "blue", "green", "yes", "no"]


def easy_vqa_copy(root, rng):
    """An easy-VQA layout under `root` (answers.txt, {train,test}/images/*.png and questions.json):
    one coloured square per image, a colour question and two yes/no ones about it; returns `root`."""
    root.mkdir()
    (root / "answers.txt").write_text("\n".join(ANSWERS) + "\n")
    for split, n in (("train", 20), ("test", 6)):
        (root / split / "images").mkdir(parents=True)
        rows = []
        for i in range(n):
            color = list(COLORS)[i % 3]
            img = np.full((64, 64, 3), 255, np.uint8)
            y, x = rng.integers(0, 40, 2)
            img[y:y + 24, x:x + 24] = COLORS[color]
            Image.fromarray(img).save(root / split / "images" / f"{i}.png")
            other = list(COLORS)[(i + 1) % 3]
            rows += [["what color is the shape?", color, i], [f"is there a {color} shape?", "yes", i],
                     [f"is there a {other} shape?", "no", i]]
        (root / split / "questions.json").write_text(json.dumps(rows))
    return root


def photos_and_rows(root, n_train=18, n_dev=6, seed=0):
    """Square 'photos' of one coloured block and make-qa style rows about them."""
    rng = np.random.default_rng(seed)
    (root / "Images").mkdir(parents=True)
    files = {}
    for split, n in (("train", n_train), ("dev", n_dev)):
        rows = []
        for i in range(n):
            color = list(COLORS)[i % 3]
            name = f"{split}_{i}.jpg"
            img = np.full((48, 48, 3), 240, np.uint8)
            y, x = rng.integers(0, 24, 2)
            img[y:y + 24, x:x + 24] = COLORS[color]
            Image.fromarray(img).save(root / "Images" / name)
            other = list(COLORS)[(i + 1) % 3]
            rows += [{"image": name, "question": "what color is the block?", "answer": color, "type": "color"},
                     {"image": name, "question": f"is there a {color} block?", "answer": "yes", "type": "yesno"},
                     {"image": name, "question": f"is there a {other} block?", "answer": "no", "type": "yesno"}]
        files[split] = root / f"{split}_qa.jsonl"
        files[split].write_text("".join(json.dumps(r) + "\n" for r in rows))
    return files
