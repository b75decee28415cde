"""Reader for question/answer pairs in JSON lines, the output of `captioner make-qa`.

One object a line, ``{"image": NAME, "question": TEXT, "answer": WORD, "type": TYPE}``
(other keys are ignored; ``type`` is optional). The image id (the key of the image in a
feature store) is ``NAME`` as written; its file is ``images_dir/NAME`` when a folder is
given (needed only when features must still be extracted).

Every bad line is an :class:`InputError` naming the file and the line.
"""

from __future__ import annotations

import os

from captioner.data.vqa_dataset import VQADataset, VQAQuestion
from captioner.data.json_file import json_objects
from captioner.errors import InputError

__all__ = ["read_qa_jsonl"]


def read_qa_jsonl(path, images_dir=None, name="qa-jsonl", split=None) -> VQADataset:
    """A :class:`VQADataset` of the rows of ``path`` (answer type = the row's ``type``)."""
    questions = []
    for where, row in json_objects(path, "an object with 'image', 'question' and 'answer'"):
        for key in ("image", "question", "answer"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise InputError(f"{where}: '{key}' must be a non-empty string, got {row.get(key)!r:.60}")
        image = row["image"].strip()
        qtype = row.get("type")
        questions.append(VQAQuestion(
            question_id=f"{os.path.basename(path)}:{where.rsplit(':', 1)[1]}", image_id=image,
            image_path=os.path.join(images_dir, image) if images_dir else image,
            question=row["question"].strip(), answers=[row["answer"].strip()], answer=row["answer"].strip(),
            question_type=qtype if isinstance(qtype, str) else None,
            answer_type=qtype if isinstance(qtype, str) else None))
    if not questions:
        raise InputError(f"{path}: no question rows")
    return VQADataset(name, split or os.path.basename(path), questions)
