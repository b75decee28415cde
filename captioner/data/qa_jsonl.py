"""Reader for question/answer pairs in JSON lines, the output of `captioner make-qa`.

One object a line, ``{"image": NAME, "question": TEXT, "answer": WORD, "type": TYPE}``
(other keys are ignored; ``type`` is optional). The image id (the key of the image in a
feature store) is ``NAME`` as written; its file is ``images_dir/NAME`` when a folder is
given (needed only when features must still be extracted).

Every bad line is an :class:`InputError` naming the file and the line.
"""

from __future__ import annotations

import json
import os

from captioner.data.vqa_dataset import VQADataset, VQAQuestion
from captioner.errors import InputError

__all__ = ["read_qa_jsonl"]


def read_qa_jsonl(path, images_dir=None, name="qa-jsonl", split=None) -> VQADataset:
    """A :class:`VQADataset` of the rows of ``path`` (answer type = the row's ``type``)."""
    questions = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        try:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise InputError(f"{path}:{n}: expected an object with 'image', 'question' and 'answer'")
                for key in ("image", "question", "answer"):
                    if not isinstance(row.get(key), str) or not row[key].strip():
                        raise InputError(f"{path}:{n}: '{key}' must be a non-empty string, got {row.get(key)!r:.60}")
                image = row["image"].strip()
                qtype = row.get("type")
                questions.append(VQAQuestion(
                    question_id=f"{os.path.basename(path)}:{n}", image_id=image,
                    image_path=os.path.join(images_dir, image) if images_dir else image,
                    question=row["question"].strip(), answers=[row["answer"].strip()], answer=row["answer"].strip(),
                    question_type=qtype if isinstance(qtype, str) else None,
                    answer_type=qtype if isinstance(qtype, str) else None))
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not questions:
        raise InputError(f"{path}: no question rows")
    return VQADataset(name, split or os.path.basename(path), questions)
