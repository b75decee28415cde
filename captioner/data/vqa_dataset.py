"""In-memory form of a visual question answering split, shared by the VQA readers."""

from __future__ import annotations

import collections
import dataclasses


@dataclasses.dataclass
class VQAQuestion:
    question_id: object      # int (VQA v2) or str
    image_id: str            # key of the image in a feature store
    image_path: str          # the image file
    question: str
    answers: list            # human answers: 10 in VQA v2, 1 in easy-VQA, [] when unknown (test-dev)
    answer: str | None = None  # the answer to train on (VQA v2: multiple_choice_answer)
    question_type: str | None = None
    answer_type: str | None = None


@dataclasses.dataclass
class VQADataset:
    """Questions of one split. ``answer_list`` is the dataset's closed answer set, if it has one."""

    name: str
    split: str
    questions: list = dataclasses.field(default_factory=list)  # [VQAQuestion]
    answer_list: list | None = None

    def __len__(self):
        return len(self.questions)

    @property
    def image_ids(self):
        """Distinct image ids in first-seen order."""
        return list(dict.fromkeys(q.image_id for q in self.questions))

    @property
    def image_paths(self):
        """{image_id: path} of every image the questions use."""
        return {q.image_id: q.image_path for q in self.questions}

    def answer_counts(self):
        """Counter of the training answers (``answer`` of each question that has one)."""
        return collections.Counter(q.answer for q in self.questions if q.answer is not None)

    def top_answers(self, k=None):
        """The k most frequent training answers (ties broken alphabetically); all if k is None."""
        counts = self.answer_counts()
        ranked = sorted(counts, key=lambda a: (-counts[a], a))
        return ranked if k is None else ranked[:k]
