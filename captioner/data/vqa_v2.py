"""Reader for VQA v2 (Goyal et al. 2017) in its public json layout.

Questions file (``v2_OpenEnded_mscoco_<subtype>_questions.json``)::

    {"data_subtype": "val2014", "questions": [{"image_id": 42, "question": "What ...?",
                                               "question_id": 42000}, ...], ...}

Annotations file (``v2_mscoco_<subtype>_annotations.json``; absent for the test splits)::

    {"annotations": [{"question_id": 42000, "image_id": 42, "question_type": "what",
                      "answer_type": "other", "multiple_choice_answer": "dog",
                      "answers": [{"answer": "dog", "answer_confidence": "yes",
                                   "answer_id": 1}, ... ten of them]}, ...], ...}

Images are the COCO images of the subtype: ``COCO_<subtype>_<image_id:012d>.jpg`` (the
2014/2015 names) or ``<image_id:012d>.jpg`` (COCO 2017 names); whichever exists in
``images_dir`` is used. Image ids in the dataset (and in feature stores) are the file names.
"""

from __future__ import annotations

import logging
import os

from captioner.data.json_file import read_json
from captioner.data.vqa_dataset import VQADataset, VQAQuestion
from captioner.errors import InputError

__all__ = ["load_vqa_v2", "read_vqa_json"]

log = logging.getLogger(__name__)


def read_vqa_json(path, key):
    """Load a VQA json file and return (the whole object, its list under ``key``)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object with a {key!r} list, got {type(data).__name__}")
    if key not in data:
        raise InputError(f"{path}: no {key!r} list (is this the right file? keys: {sorted(data)[:6]})")
    items = data[key]
    if not isinstance(items, list):
        raise InputError(f"{path}: {key!r} must be a list, got {type(items).__name__}")
    return data, items


def _int_field(entry, field, where):
    value = entry.get(field) if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: {field!r} must be an integer, got {value!r}")
    return value


def _image_name(subtype, image_id, images_dir):
    names = ([f"COCO_{subtype}_{image_id:012d}.jpg"] if subtype else []) + [f"{image_id:012d}.jpg"]
    if images_dir:
        for name in names:
            if os.path.exists(os.path.join(images_dir, name)):
                return name
    return names[0]


def load_vqa_v2(questions_json, annotations_json=None, images_dir=None, split=None) -> VQADataset:
    """Read a VQA v2 split. Without ``annotations_json`` (test splits) answers are empty.

    Raises InputError naming the file and the entry for malformed json, missing fields,
    repeated question ids, and annotations that do not match the questions.
    """
    qdata, qitems = read_vqa_json(questions_json, "questions")
    subtype = qdata.get("data_subtype") or split
    questions, coco_ids, names = {}, {}, {}
    for i, entry in enumerate(qitems):
        where = f"{questions_json}: questions[{i}]"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: expected an object, got {str(entry)[:60]}")
        qid = _int_field(entry, "question_id", where)
        image_id = _int_field(entry, "image_id", where)
        text = entry.get("question")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: 'question' must be a non-empty string, got {text!r}")
        if qid in questions:
            raise InputError(f"{where}: question_id {qid} repeats an earlier question")
        if image_id not in names:  # one file-system look-up per image, not per question
            names[image_id] = _image_name(subtype, image_id, images_dir)
        name = names[image_id]
        coco_ids[qid] = image_id
        questions[qid] = VQAQuestion(
            question_id=qid, image_id=name,
            image_path=os.path.join(images_dir, name) if images_dir else name,
            question=text.strip(), answers=[],
        )
    if annotations_json is not None:
        _, aitems = read_vqa_json(annotations_json, "annotations")
        annotated = set()
        for i, entry in enumerate(aitems):
            where = f"{annotations_json}: annotations[{i}]"
            if not isinstance(entry, dict):
                raise InputError(f"{where}: expected an object, got {str(entry)[:60]}")
            qid = _int_field(entry, "question_id", where)
            if qid not in questions:
                raise InputError(f"{where}: question_id {qid} is not in {questions_json}")
            if qid in annotated:
                raise InputError(f"{where}: question_id {qid} is annotated twice")
            annotated.add(qid)
            q = questions[qid]
            image_id = entry.get("image_id")
            if image_id is not None and image_id != coco_ids[qid]:
                raise InputError(f"{where}: image_id {image_id!r} differs from the question's ({coco_ids[qid]})")
            answers = entry.get("answers")
            if not isinstance(answers, list) or not answers:
                raise InputError(f"{where}: 'answers' must be a non-empty list of {{'answer': ...}} objects")
            texts = []
            for j, a in enumerate(answers):
                text = a.get("answer") if isinstance(a, dict) else None
                if not isinstance(text, str):
                    raise InputError(f"{where}: answers[{j}] has no 'answer' string: {str(a)[:60]}")
                texts.append(text)
            if len(texts) != 10:
                log.debug("%s: %d human answers instead of 10", where, len(texts))
            mc = entry.get("multiple_choice_answer")
            if mc is not None and not isinstance(mc, str):
                raise InputError(f"{where}: 'multiple_choice_answer' must be a string, got {mc!r}")
            q.answers = texts
            q.answer = mc if mc is not None else max(set(texts), key=lambda t: (texts.count(t), t))
            q.question_type = entry.get("question_type")
            q.answer_type = entry.get("answer_type")
        missing = [qid for qid in questions if qid not in annotated]
        if missing:
            raise InputError(f"{annotations_json}: {len(missing)} question(s) of {questions_json} have "
                             f"no annotation, e.g. question_id {missing[:3]}")
    if images_dir and questions:
        first = next(iter(questions.values()))
        if not os.path.exists(first.image_path):
            log.warning("%s: image %s not found (expected COCO_%s_<id:012d>.jpg or <id:012d>.jpg)",
                        images_dir, first.image_id, subtype)
    return VQADataset(name="vqa-v2", split=str(subtype or ""), questions=list(questions.values()))
