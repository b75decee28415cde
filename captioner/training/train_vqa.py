"""`captioner train vqa`: stacked attention (or the pooled-vector baseline) on cached features.

    captioner train vqa --dataset easy-vqa --features /work/data/easy_vqa_lite0.h5 \
        --output-dir runs/easy_vqa_attention --model-out assets/models/easy_vqa.keras

    captioner train vqa --dataset vqa-v2 \
        --train-questions v2_OpenEnded_mscoco_train2014_questions.json \
        --train-annotations v2_mscoco_train2014_annotations.json --train-images train2014/ \
        --val-questions v2_OpenEnded_mscoco_val2014_questions.json \
        --val-annotations v2_mscoco_val2014_annotations.json --val-images val2014/ \
        --features vqa_lite0.h5 --output-dir runs/vqa_v2

Features missing from the store are extracted first (resumable). Batches are built image by
image: all questions of a few images go together, so each image's regions are projected
once per batch however many questions it has. Model selection and early stopping use dev
accuracy; easy-VQA has no dev split, so ``--dev-fraction`` of the train *images* (with all
their questions) are held out for it, and the test split is scored once, at the end, with
the selected weights. `--resume` continues a killed run from its last checkpoint.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import logging
import os
import shlex
import sys
import time

import numpy as np

log = logging.getLogger(__name__)


def register(subparsers):
    p = subparsers.add_parser(
        "vqa", help="train a VQA model (stacked attention or pooled baseline) on easy-VQA / VQA v2",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--dataset", choices=("easy-vqa", "vqa-v2"), default="easy-vqa")
    p.add_argument("--data-dir", help="easy-VQA: a copy of the package's data folder (default: the installed package)")
    for split in ("train", "val"):
        p.add_argument(f"--{split}-questions", help=f"VQA v2: {split} questions json")
        p.add_argument(f"--{split}-annotations", help=f"VQA v2: {split} annotations json")
        p.add_argument(f"--{split}-images", help=f"VQA v2: folder of the {split} COCO images")
    p.add_argument("--features", required=True, help="HDF5 feature store (created/extended as needed)")
    p.add_argument("--backbone", default="efficientnet_lite0")
    p.add_argument("--output-dir", required=True, help="run directory: checkpoints, history, metrics")
    p.add_argument("--model-out", help="final .keras file (default OUTPUT_DIR/model.keras)")
    # Defaults are the papers' models; --hidden-units, --fusion product, --question-words and
    # --reduce-dim are this project's additions (see captioner.models.vqa_classifier).
    p.add_argument("--kind", choices=("attention", "baseline"), default="attention")
    p.add_argument("--hops", type=int, default=2, help="stacked attention hops")
    p.add_argument("--num-answers", type=int, default=1000, help="VQA v2: the K most frequent answers are the classes")
    p.add_argument("--min-count", type=int, default=1, help="question vocabulary: minimum word count")
    p.add_argument("--max-question-length", type=int, default=30, help="words kept per question")
    p.add_argument("--embedding-dim", type=int, default=128)
    p.add_argument("--units", type=int, default=256, help="LSTM size = image projection size")
    p.add_argument("--attention-units", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--hidden-units", type=int, default=0,
                   help="ReLU layer between the fused vector and the answer softmax (0: linear, as the papers)")
    p.add_argument("--fusion", choices=("sum", "product"), default="sum",
                   help="head input: the papers' vector (sum) or with the question x image product added")
    p.add_argument("--question-words", action="store_true",
                   help="question vector from the LSTM state and the average word embedding")
    p.add_argument("--reduce-dim", type=int, default=0,
                   help="frozen PCA of the backbone channels to this many dims before the model (0: off); "
                        "cuts training cost several times")
    p.add_argument("--pca-samples", type=int, default=20000, help="feature vectors the PCA is fitted on")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=128, help="questions per batch (whole images at a time)")
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--dev-fraction", type=float, default=0.1, help="easy-VQA: train images held out as dev")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="use only the first N train images (smoke runs)")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT_DIR's last checkpoint")
    p.set_defaults(func=run)


# -- data -----------------------------------------------------------------------------
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

    def dataset(self, features, batch_size, seed=0, first_epoch=0):
        """tf.data of (inputs, labels) over questions with a known answer class, reshuffled by
        image every epoch (epoch e uses seed + e, so a resumed run goes on with the order it
        would have had). ``features(rows)`` returns the feature array of image rows."""
        import tensorflow as tf

        trainable = self.subset(np.flatnonzero(self.labels >= 0))
        state = {"epoch": first_epoch}

        def batches():
            rng = np.random.default_rng(seed + state["epoch"])
            state["epoch"] += 1
            for idx in trainable.image_batches(batch_size, rng):
                yield trainable.batch_inputs(idx, features), trainable.labels[idx]

        sample = features(np.array([0]))
        spec = ({"image": tf.TensorSpec((None,) + sample.shape[1:], tf.as_dtype(sample.dtype)),
                 "image_index": tf.TensorSpec((None,), tf.int32),
                 "question": tf.TensorSpec((None, None), tf.int32)},
                tf.TensorSpec((None,), tf.int32))
        return tf.data.Dataset.from_generator(batches, output_signature=spec).prefetch(2)


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

    fn = getattr(classifier, "_vqa_predict_fn", None)
    if fn is None:
        fn = tf.function(lambda x: classifier.forward(x, training=False), reduce_retracing=True)
        classifier._vqa_predict_fn = fn
    probs, alphas = [None] * len(examples), [None] * len(examples)
    for idx in examples.image_batches(batch_size):
        logits, att = fn(examples.batch_inputs(idx, features))
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


# -- splits ---------------------------------------------------------------------------
def load_splits(args):
    """(train, dev, test or None, answer list or None) VQADatasets for the chosen dataset."""
    from captioner.data.vqa_dataset import VQADataset

    if args.dataset == "easy-vqa":
        from captioner.data.easy_vqa import load_easy_vqa

        full = load_easy_vqa("train", data_dir=args.data_dir)
        test = load_easy_vqa("test", data_dir=args.data_dir)
        images = full.image_ids
        if args.limit:
            images = images[: args.limit]
        rng = np.random.default_rng(args.seed)
        n_dev = max(1, int(round(len(images) * args.dev_fraction)))
        dev_images = set(rng.permutation(images)[:n_dev].tolist())
        keep = set(images)
        train = VQADataset("easy-vqa", "train", [q for q in full.questions
                                                  if q.image_id in keep and q.image_id not in dev_images],
                           full.answer_list)
        dev = VQADataset("easy-vqa", "dev (held-out train images)",
                         [q for q in full.questions if q.image_id in dev_images], full.answer_list)
        return train, dev, test, full.answer_list
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


# -- the recipe -----------------------------------------------------------------------
def run(args):
    import keras

    from captioner.features.extract import extract_features
    from captioner.models.vqa_classifier import KINDS, VQAClassifier
    from captioner.text import Vocabulary, tokenize
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.io import write_json

    command = "captioner train vqa " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index("vqa") + 1:]) \
        if "vqa" in sys.argv else None
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    train, dev, test, answer_list = load_splits(args)
    named = {k: s for k, s in (("train", train), ("dev", dev), ("test", test)) if s is not None}
    splits = list(named.values())

    # 1. features of every image (extract what is missing; resumable)
    paths = {}
    for s in splits:
        paths.update(s.image_paths)
    ids = list(paths)
    missing = ids
    if os.path.exists(args.features):
        from captioner.features.store import FeatureStore

        with FeatureStore(args.features) as store:
            missing = [k for k in ids if k not in store]
    report = None
    if missing:
        report = extract_features([paths[k] for k in missing], args.features, backbone=args.backbone, ids=missing)
    if report and report.failed:
        bad = {p for p, _ in report.failed}
        log.warning("%d images could not be read; their questions are left out", len(bad))
        for s in splits:
            s.questions = [q for q in s.questions if q.image_path not in bad]

    # 2. answer classes and question vocabulary, from the train split
    state_path = run_dir.path("vocabulary.json")
    answers_path = run_dir.path("answers.json")
    if args.resume and os.path.exists(state_path) and os.path.exists(answers_path):
        vocab = Vocabulary.load(state_path)
        answers = json.load(open(answers_path, encoding="utf-8"))
    else:
        answers = list(answer_list) if answer_list else train.top_answers(args.num_answers)
        vocab = Vocabulary.build([tokenize(q.question) for q in train.questions], min_count=args.min_count)
        vocab.save(state_path)
        write_json(answers_path, answers)
    answer_index = {a: i for i, a in enumerate(answers)}
    examples = {k: QuestionExamples.build(s, vocab, answer_index, args.max_question_length) for k, s in named.items()}
    train_ex, dev_ex = examples["train"], examples["dev"]
    log.info("vocabulary %d words, %d answers; %d train questions (%d with a known answer) on %d images, "
             "%d dev questions on %d images", len(vocab), len(answers), len(train_ex),
             int((train_ex.labels >= 0).sum()), len(train_ex.image_ids), len(dev_ex), len(dev_ex.image_ids))

    feature = KINDS[args.kind]
    sources = {name: FeatureSource(args.features, ex.image_ids, feature) for name, ex in examples.items()}
    train_feats, dev_feats = sources["train"], sources["dev"]
    backbone_name = train_feats.store.backbone

    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(backbone=backbone_name, vocab_size=len(vocab), num_answers=len(answers),
                  train_questions=len(train_ex), train_images=len(train_ex.image_ids),
                  dev_questions=len(dev_ex), dev_images=len(dev_ex.image_ids), command=command)
    write_json(run_dir.path("config.json"), config)

    model = VQAClassifier(len(vocab), len(answers), image_dim=train_feats.dim, kind=args.kind, hops=args.hops,
                          embedding_dim=args.embedding_dim, units=args.units,
                          attention_units=args.attention_units, dropout=args.dropout,
                          hidden_units=args.hidden_units, reduce_dim=args.reduce_dim,
                          fusion=args.fusion, question_words=args.question_words)
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    state, initial_epoch = run_dir.resume(model, args.resume)
    if args.reduce_dim:
        if state is None:  # a resumed run has the fitted reduction in its checkpoint
            mean, components, explained = fit_pca(train_feats, args.reduce_dim, args.pca_samples, args.seed)
            model.set_reduction(mean, components)
            log.info("PCA %d -> %d dims keeps %.1f%% of the feature variance", train_feats.dim,
                     args.reduce_dim, 100 * explained)
        for source in sources.values():
            source.apply(model.reduce_features)

    def epoch_eval():
        scores, _ = evaluate(model, dev_ex, dev_feats, answers)
        return {"dev_accuracy": scores["accuracy"]}

    checkpoint = EpochCheckpoint(run_dir, epoch_eval, "dev_accuracy", patience=args.patience, state=state,
                                 plot_fn=lambda h, d: plot_history(h, d, "dev_accuracy"))
    if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
        t = time.perf_counter()
        model.fit(train_ex.dataset(train_feats, args.batch_size, seed=args.seed, first_epoch=initial_epoch),
                  epochs=args.epochs,
                  initial_epoch=initial_epoch, callbacks=[checkpoint], verbose=1)
        log.info("training took %.0f s", time.perf_counter() - t)

    # 3. the selected weights: held-out figures, then the one-file inference model
    model.load_weights(run_dir.path("best.weights.h5"))
    metrics = {"best_epoch": checkpoint.best_epoch, "selection": f"dev accuracy ({dev.split})", "kind": args.kind,
               "hops": args.hops if args.kind == "attention" else 0}
    if test is not None:
        metrics["test_split"] = f"{test.name} {test.split}"
    for split, ex in examples.items():
        if split == "train":
            continue
        t = time.perf_counter()
        scores, predicted = evaluate(model, ex, sources[split], answers)
        scores["seconds"] = round(time.perf_counter() - t, 1)
        metrics[split] = scores
        log.info("%s: accuracy %.2f%% on %d questions", split, scores["accuracy"], scores["questions"])
    write_json(run_dir.path("metrics.json"), metrics)
    for source in sources.values():
        source.close()
    model_out = args.model_out or run_dir.path("model.keras")
    save_vqa_model(model, vocab, answers, backbone_name, model_out, args, metrics, config)
    print(json.dumps(metrics, indent=2))
    print(f"saved {model_out}")
    return 0


def save_vqa_model(classifier, vocab, answers, backbone_name, path, args, metrics, config):
    """Wrap the trained classifier with its backbone and save one .keras file atomically."""
    from captioner.backbones import get_backbone
    from captioner.models.vqa_model import VQAModel
    from captioner.io import atomic_path, write_json

    backbone = get_backbone(backbone_name)
    model = VQAModel(backbone.model, classifier, vocab, answers, max_question_length=args.max_question_length,
                     training_config={"dataset": args.dataset, "kind": args.kind, "seed": args.seed})
    with atomic_path(path, ".keras") as tmp:
        model.save(tmp)
    write_json(os.path.splitext(path)[0] + ".json", {
        "model": os.path.basename(path), "task": "visual question answering",
        "command": config.get("command"), "seed": args.seed,
        "data": {"dataset": args.dataset, "train_questions": config["train_questions"],
                 "train_images": config["train_images"], "dev_questions": config["dev_questions"],
                 "dev_images": config["dev_images"]},
        "config": {k: v for k, v in config.items() if k != "command"},
        "metrics": metrics,
    })
