"""VQA data for the vqa recipe: questions encoded per split, batched whole images at a time,
feature rows (in memory or read per batch), the PCA of the feature channels, prediction and
VQA accuracy, and the easy-VQA / VQA v2 splits."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np


@dataclasses.dataclass
class QuestionExamples:
    """Questions of one split, encoded: which image (row of the split's feature array),
    the question ids, the answer class (-1 when not among the classes) and the human answers."""

    image_ids: list          # the split's distinct images, in feature-array order
    image_rows: np.ndarray   # (N,) int
    tokens: np.ndarray       # (N, T) int32, 0-padded
    lengths: np.ndarray      # (N,)
    labels: np.ndarray       # (N,) int32, -1 = answer not in the answer list
    references: list         # [[human answers]] per question
    answer_types: list       # per question (None when the dataset has none)

    @classmethod
    def build(cls, dataset, vocab, answer_index, max_words):
        from captioner.text import tokenize

        image_ids = dataset.image_ids
        row_of = {k: i for i, k in enumerate(image_ids)}
        seqs = [vocab.encode(tokenize(q.question)[:max_words] or ["<unk>"], add_start=False, add_end=False)
                for q in dataset.questions]
        tokens = np.zeros((len(seqs), max(map(len, seqs), default=1)), np.int32)  # (N, T)
        for j, s in enumerate(seqs):
            tokens[j, : len(s)] = s
        return cls(
            image_ids=image_ids,
            image_rows=np.array([row_of[q.image_id] for q in dataset.questions], np.int64),
            tokens=tokens, lengths=np.array([len(s) for s in seqs]),
            labels=np.array([answer_index.get(q.answer, -1) for q in dataset.questions], np.int32),
            references=[q.answers for q in dataset.questions],
            answer_types=[q.answer_type for q in dataset.questions],
        )

    def __len__(self):
        return len(self.image_rows)

    def subset(self, keep):
        keep = np.asarray(keep)
        return dataclasses.replace(
            self, image_rows=self.image_rows[keep], tokens=self.tokens[keep], lengths=self.lengths[keep],
            labels=self.labels[keep], references=[self.references[i] for i in keep],
            answer_types=[self.answer_types[i] for i in keep],
        )

    def image_batches(self, batch_size, rng=None):
        """Index arrays of questions, whole images at a time, ~batch_size questions each."""
        by_image = collections.defaultdict(list)
        for j, r in enumerate(self.image_rows):
            by_image[int(r)].append(j)
        images = np.array(sorted(by_image))
        if rng is not None:
            images = rng.permutation(images)
        batch = []
        for r in images:
            batch.extend(by_image[int(r)])
            if len(batch) >= batch_size:
                yield np.array(batch)
                batch = []
        if batch:
            yield np.array(batch)

    def batch_inputs(self, idx, features):
        """The model inputs of questions ``idx``: each image once, questions pointing at it."""
        rows, index = np.unique(self.image_rows[idx], return_inverse=True)
        width = max(int(self.lengths[idx].max()), 1)
        return {"image": features(rows), "image_index": index.astype(np.int32),
                "question": self.tokens[idx, :width]}

    def trainable(self):
        """The questions with a known answer class (the ones trained on)."""
        return self.subset(np.flatnonzero(self.labels >= 0))

    def num_batches(self, batch_size):
        """Batches per training pass: the same every epoch, whatever the order of the images."""
        return min(-(-len(self) // batch_size), len(set(self.image_rows.tolist())))

    def batches(self, features, batch_size, epoch, seed):
        """One training pass (call it on `trainable()`): images shuffled by (seed, epoch) alone,
        cut into `num_batches` runs of whole images of about `batch_size` questions each;
        (inputs, labels) per batch. ``features(rows)`` returns the feature array of image rows."""
        by_image = collections.defaultdict(list)
        for j, r in enumerate(self.image_rows):
            by_image[int(r)].append(j)
        images = np.random.default_rng(seed + epoch).permutation(np.array(sorted(by_image)))
        cumulative = np.cumsum([len(by_image[int(r)]) for r in images])
        n, bounds = self.num_batches(batch_size), []
        for k in range(1, n):  # cut where the question count passes k/n of the total, >= 1 image a batch
            cut = int(np.searchsorted(cumulative, k * len(self) / n)) + 1
            bounds.append(min(max(cut, bounds[-1] + 1 if bounds else 1), len(images) - (n - k)))
        for chunk in np.split(images, bounds):
            idx = np.array([j for r in chunk for j in by_image[int(r)]])
            yield self.batch_inputs(idx, features), self.labels[idx]


class FeatureSource:
    """Feature rows of one split's images: in memory when they fit, else read per batch."""

    def __init__(self, store_path, image_ids, feature, max_bytes=8 << 30):
        from captioner.features.store import FeatureStore

        self.store = FeatureStore(store_path)
        self.image_ids = list(image_ids)
        self.feature = feature
        per_image = self.store.pooled_dim * 4 if feature == "pooled" else \
            self.store.grid_shape[0] * self.store.grid_shape[1] * self.store.channels * 2
        self.store.rows(self.image_ids)  # every image must be there (InputError naming the missing ones)
        self.array = None
        self.transform = None
        if per_image * len(self.image_ids) <= max_bytes:
            self.array = self.store.load(self.image_ids, grid=feature == "grid", pooled=feature == "pooled")[feature]

    def apply(self, transform):
        """From now on return ``transform(features)`` (applied once to the in-memory array)."""
        if self.array is not None:
            self.array = transform(self.array)
        else:
            self.transform = transform

    def __call__(self, rows):
        if self.array is not None:
            return self.array[rows]
        ids = [self.image_ids[r] for r in rows]
        out = self.store.load(ids, grid=self.feature == "grid", pooled=self.feature == "pooled")[self.feature]
        return self.transform(out) if self.transform else out

    @property
    def dim(self):
        return self(np.array([0])).shape[-1]

    def close(self):
        self.store.close()


def fit_pca(features, n_components, samples=20000, seed=0):
    """Mean (C,), the top principal directions (C, n_components) of feature vectors, and the
    fraction of the variance they keep.

    ``features`` is a FeatureSource; up to ``samples`` vectors (regions of random images for
    grid features) are drawn with ``seed``.
    """
    rng = np.random.default_rng(seed)
    n_images = len(features.image_ids)
    rows = np.sort(rng.choice(n_images, size=min(n_images, max(1, samples // 8)), replace=False))
    x = np.asarray(features(rows), np.float32)
    x = x.reshape(-1, x.shape[-1])  # (rows * R, C)
    if len(x) > samples:
        x = x[rng.choice(len(x), size=samples, replace=False)]
    if n_components > x.shape[1]:
        raise SystemExit(f"--reduce-dim {n_components} exceeds the {x.shape[1]} feature channels")
    mean = x.mean(0)
    centered = x - mean
    cov = centered.T @ centered / max(len(x) - 1, 1)  # (C, C)
    values, vectors = np.linalg.eigh(cov.astype(np.float64))  # ascending
    order = np.argsort(values)[::-1][:n_components]
    explained = float(values[order].sum() / max(values.sum(), 1e-12))
    return mean, vectors[:, order].astype(np.float32), explained


def predict(classifier, examples, features, batch_size=256):
    """Answer-class probabilities (N, A) and attention maps (N, hops, R) for every question."""
    import tensorflow as tf

    probs, alphas = [None] * len(examples), [None] * len(examples)
    for idx in examples.image_batches(batch_size):
        logits, att = classifier.forward_inference(examples.batch_inputs(idx, features))
        p = tf.nn.softmax(tf.cast(logits, tf.float32), -1).numpy()
        for k, j in enumerate(idx):
            probs[j], alphas[j] = p[k], att[k].numpy()
    return np.stack(probs), np.stack(alphas)


def evaluate(classifier, examples, features, answers):
    """VQA accuracy (percent; exact match for single-answer datasets), overall and per answer type."""
    from captioner.metrics.vqa_accuracy import vqa_score

    probs, _ = predict(classifier, examples, features)
    predicted = [answers[k] for k in probs.argmax(-1)]
    refs = {j: r for j, r in enumerate(examples.references) if r}
    scores = vqa_score({j: predicted[j] for j in refs}, refs)
    out = {"accuracy": scores["accuracy"], "questions": scores["questions"]}
    types = collections.defaultdict(list)
    for j, acc in scores["per_question"].items():
        if examples.answer_types[j]:
            types[examples.answer_types[j]].append(acc)
    if types:
        out["by_answer_type"] = {t: {"accuracy": 100.0 * float(np.mean(v)), "questions": len(v)}
                                 for t, v in sorted(types.items())}
    return out, predicted


def load_splits(args):
    """(train, dev, test or None, answer list or None) VQADatasets for the chosen dataset
    (easy-VQA, VQA v2, or `captioner make-qa` JSON lines: train rows and dev rows)."""

    if args.dataset == "easy-vqa":
        from captioner.data.easy_vqa import easy_vqa_splits, load_easy_vqa

        train, dev = easy_vqa_splits(args.seed, args.dev_fraction, args.data_dir, args.limit)
        return train, dev, load_easy_vqa("test", data_dir=args.data_dir), train.answer_list
    if args.dataset == "qa-jsonl":
        from captioner.data.qa_jsonl import read_qa_jsonl

        for name in ("train_questions", "val_questions"):
            if not getattr(args, name):
                raise SystemExit(f"--dataset qa-jsonl needs --{name.replace('_', '-')} (a `captioner make-qa` output)")
        train = read_qa_jsonl(args.train_questions, args.train_images, split="train")
        dev = read_qa_jsonl(args.val_questions, args.val_images or args.train_images, split="dev")
        if args.limit:
            keep = set(train.image_ids[: args.limit])
            train.questions = [q for q in train.questions if q.image_id in keep]
        return train, dev, None, None
    from captioner.data.vqa_v2 import load_vqa_v2

    for name in ("train_questions", "train_annotations", "val_questions", "val_annotations"):
        if not getattr(args, name):
            raise SystemExit(f"--dataset vqa-v2 needs --{name.replace('_', '-')}")
    train = load_vqa_v2(args.train_questions, args.train_annotations, args.train_images)
    dev = load_vqa_v2(args.val_questions, args.val_annotations, args.val_images)
    if args.limit:
        keep = set(train.image_ids[: args.limit])
        train.questions = [q for q in train.questions if q.image_id in keep]
    return train, dev, None, None
