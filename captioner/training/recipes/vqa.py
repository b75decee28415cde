"""`captioner train vqa`: stacked attention (or the pooled-vector baseline) on cached features.

    captioner train vqa --dataset easy-vqa --features /work/data/easy_vqa_lite0.h5 \\
        --output-dir runs/easy_vqa_attention --model-out assets/models/easy_vqa.keras

    captioner train vqa --dataset vqa-v2 \\
        --train-questions v2_OpenEnded_mscoco_train2014_questions.json \\
        --train-annotations v2_mscoco_train2014_annotations.json --train-images train2014/ \\
        --val-questions v2_OpenEnded_mscoco_val2014_questions.json \\
        --val-annotations v2_mscoco_val2014_annotations.json --val-images val2014/ \\
        --features vqa_lite0.h5 --output-dir runs/vqa_v2

Features missing from the store are extracted first (resumable). Batches are built image by
image: all questions of a few images go together, so each image's regions are projected
once per batch however many questions it has. Model selection and early stopping use dev
accuracy; easy-VQA has no dev split, so ``--dev-fraction`` of the train *images* (with all
their questions) are held out for it, and the test split is scored once, at the end, with
the selected weights. `--resume` continues a killed run from its last checkpoint.
"""

import dataclasses
import logging
import os
import time

from captioner.training.config import TrainConfig, option
from captioner.training.trainer import Recipe, classifier_compile_args, read_json

NAME = "vqa"
HELP = "train a VQA model (stacked attention, pooled baseline or question-only) on easy-VQA / VQA v2 / make-qa rows"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    dataset: str = option("easy-vqa", choices=("easy-vqa", "vqa-v2", "qa-jsonl"),
                          help="qa-jsonl: `captioner make-qa` rows (--train-questions, --val-questions; "
                               "--train-images/--val-images the image folder, only to extract missing features)")
    data_dir: str | None = option(None, help="easy-VQA: a copy of the package's data folder (default: the "
                                                "installed package)")
    train_questions: str | None = option(None, help="VQA v2: train questions json; qa-jsonl: train rows")
    train_annotations: str | None = option(None, help="VQA v2: train annotations json")
    train_images: str | None = option(None, help="VQA v2: folder of the train COCO images")
    val_questions: str | None = option(None, help="VQA v2: val questions json; qa-jsonl: dev rows")
    val_annotations: str | None = option(None, help="VQA v2: val annotations json")
    val_images: str | None = option(None, help="VQA v2: folder of the val COCO images")
    features: str = option(help="HDF5 feature store (created/extended as needed)")
    backbone: str = option("efficientnet_lite0")
    # Defaults are the papers' models; --hidden-units, --fusion product, --question-words and
    # --reduce-dim are this project's additions (see captioner.models.vqa_classifier).
    kind: str = option("attention", choices=("attention", "baseline", "blind"),
                       help="blind: the question alone (the language-prior baseline)")
    hops: int = option(2, help="stacked attention hops")
    num_answers: int = option(1000, help="VQA v2: the K most frequent answers are the classes")
    min_count: int = option(1, help="question vocabulary: minimum word count")
    max_question_length: int = option(30, help="words kept per question")
    embedding_dim: int = option(128)
    units: int = option(256, help="LSTM size = image projection size")
    attention_units: int = option(256)
    dropout: float = option(0.3)
    hidden_units: int = option(0, help="ReLU layer between the fused vector and the answer softmax (0: linear, "
                                       "as the papers)")
    fusion: str = option("sum", choices=("sum", "product"),
                         help="head input: the papers' vector (sum) or with the question x image product added")
    question_words: bool = option(False, help="question vector from the LSTM state and the average word embedding")
    reduce_dim: int = option(0, help="frozen PCA of the backbone channels to this many dims before the model "
                                     "(0: off); cuts training cost several times")
    pca_samples: int = option(20000, help="feature vectors the PCA is fitted on")
    epochs: int = 30
    batch_size: int = option(128, help="questions per batch (whole images at a time)")
    dev_fraction: float = option(0.1, help="easy-VQA: train images held out as dev")
    limit: int | None = option(None, help="use only the first N train images (smoke runs)")


class VQA(Recipe):
    task = "vqa"
    metric = "dev_accuracy"

    def prepare(self, trainer):
        from captioner.features.extract import extract_features
        from captioner.features.store import FeatureStore
        from captioner.io import write_json
        from captioner.models.vqa_classifier import KINDS
        from captioner.text import Vocabulary, tokenize
        from captioner.training.vqa_data import (
            FeatureSource,
            QuestionExamples,
            load_splits,
        )

        c = self.cfg
        train, dev, test, answer_list = load_splits(c)
        named = {k: s for k, s in (("train", train), ("dev", dev), ("test", test)) if s is not None}
        paths = {k: p for s in named.values() for k, p in s.image_paths.items()}
        missing = list(paths)  # extract what is missing (resumable)
        if os.path.exists(c.features):
            with FeatureStore(c.features) as store:
                missing = [k for k in paths if k not in store]
        report = extract_features([paths[k] for k in missing], c.features, backbone=c.backbone,
                                  ids=missing) if missing else None
        if report and report.failed:
            bad = {p for p, _ in report.failed}
            log.warning("%d images could not be read; their questions are left out", len(bad))
            for s in named.values():
                s.questions = [q for q in s.questions if q.image_path not in bad]
        # answer classes and question vocabulary, from the train split
        self.answers = trainer.cached("answers.json", lambda: list(answer_list or train.top_answers(c.num_answers)),
                                      load=read_json, save=lambda v, p: write_json(p, v))
        self.vocab = trainer.cached("vocabulary.json", lambda: Vocabulary.build(
            [tokenize(q.question) for q in train.questions], min_count=c.min_count))
        index = {a: i for i, a in enumerate(self.answers)}
        self.train_questions = [q.question for q in train.questions]
        self.examples = {k: QuestionExamples.build(s, self.vocab, index, c.max_question_length) for k, s in named.items()}
        self.sources = {k: FeatureSource(c.features, ex.image_ids, KINDS[c.kind]) for k, ex in self.examples.items()}
        tr, dv = self.examples["train"], self.examples["dev"]
        self.trainable = tr.trainable()
        log.info("vocabulary %d words, %d answers; %d train questions (%d with a known answer) on %d images, "
                 "%d dev questions on %d images", len(self.vocab), len(self.answers), len(tr),
                 int((tr.labels >= 0).sum()), len(tr.image_ids), len(dv), len(dv.image_ids))
        self.backbone = self.sources["train"].store.backbone
        self.selection = f"dev accuracy ({dev.split})"
        self.test_split = f"{test.name} {test.split}" if test is not None else None
        self.data = {"dataset": c.dataset, "train_questions": len(tr), "train_images": len(tr.image_ids),
                     "dev_questions": len(dv), "dev_images": len(dv.image_ids)}
        return {"backbone": self.backbone, "vocab_size": len(self.vocab), "num_answers": len(self.answers),
                **self.data}

    def card_data(self, trainer):
        return self.data

    def build_model(self, seed):
        from captioner.models.vqa_classifier import VQAClassifier, VQANetwork

        c = self.cfg
        network = VQANetwork(c.kind, c.hops, c.embedding_dim, c.units, c.attention_units, c.dropout, c.hidden_units,
                             c.reduce_dim, c.fusion, c.question_words)
        return VQAClassifier(len(self.vocab), len(self.answers), self.sources["train"].dim, network)

    def compile_args(self):
        return classifier_compile_args()

    def on_model_ready(self, model, state):
        from captioner.training.vqa_data import fit_pca

        c = self.cfg
        if not c.reduce_dim:
            return
        if state is None:  # a resumed run has the fitted reduction in its checkpoint
            mean, components, explained = fit_pca(self.sources["train"], c.reduce_dim, c.pca_samples, c.seed)
            model.set_reduction(mean, components)
            log.info("PCA %d -> %d dims keeps %.1f%% of the feature variance", self.sources["train"].dim,
                     c.reduce_dim, 100 * explained)
        for source in self.sources.values():
            source.apply(model.reduce_features)

    def steps_per_pass(self):
        return self.trainable.num_batches(self.cfg.batch_size)

    def batches(self, epoch, seed):
        return self.trainable.batches(self.sources["train"], self.cfg.batch_size, epoch, seed)

    def evaluate_dev(self, model):
        from captioner.training.vqa_data import evaluate

        return {"dev_accuracy": evaluate(model, self.examples["dev"], self.sources["dev"], self.answers)[0]["accuracy"]}

    def evaluate(self, model, trainer):
        from captioner.training.vqa_data import evaluate

        c = self.cfg
        metrics = {"split": self.test_split or "dev", "kind": c.kind, "hops": c.hops if c.kind == "attention" else 0}
        if self.test_split:
            metrics["test_split"] = self.test_split
        for split in [s for s in self.examples if s != "train"]:
            t = time.perf_counter()
            scores, _ = evaluate(model, self.examples[split], self.sources[split], self.answers)
            metrics[split] = {**scores, "seconds": round(time.perf_counter() - t, 1)}
            log.info("%s: accuracy %.2f%% on %d questions", split, scores["accuracy"], scores["questions"])
        metrics["dont_know"] = self.choose_dont_know(model)
        for source in self.sources.values():
            source.close()
        return metrics

    def choose_dont_know(self, model):
        """The "don't know" rule the exported model carries (VQAModel.dont_know_reason): the
        top-probability threshold chosen on dev (captioner.metrics.confidence) and the first
        words of the training questions (>= 10 of them start with it)."""
        import collections

        import numpy as np

        from captioner.metrics.confidence import answered_table, choose_min_probability
        from captioner.text import tokenize
        from captioner.training.vqa_data import predict

        ex = self.examples["dev"]
        probs, _ = predict(model, ex, self.sources["dev"])
        known = ex.labels >= 0
        correct = (probs.argmax(-1) == ex.labels) & known
        self.min_probability = choose_min_probability(probs.max(-1), correct)
        starts = collections.Counter(w[0] for w in (tokenize(q) for q in self.train_questions) if w)
        self.question_starts = sorted(w for w, n in starts.items() if n >= 10)
        row = answered_table(probs.max(-1), correct, [self.min_probability])[0]
        log.info("don't know below p = %.2f: %.1f%% of dev questions answered, %.1f%% of those right",
                 self.min_probability, 100 * row["answered"], 100 * (row["accuracy_answered"] or 0))
        return {"rule": "answer only when the top probability >= min_probability, the upper edge of the highest "
                        "0.1-wide dev bin of top probability (>= 20 questions) whose answers were right < 50% of "
                        "the time, and the question's first word starts >= 10 training questions",
                "min_probability": self.min_probability, "question_starts": self.question_starts,
                "dev_answered": row["answered"], "dev_accuracy_answered": row["accuracy_answered"],
                "dev_accuracy_all": float(np.mean(correct))}

    def export(self, model):
        from captioner.backbones import get_backbone
        from captioner.models.vqa_model import VQAModel

        c = self.cfg
        return VQAModel(get_backbone(self.backbone).feature_model, model, self.vocab, self.answers,
                        max_question_length=c.max_question_length,
                        training_config={"dataset": c.dataset, "kind": c.kind, "seed": c.seed},
                        min_probability=getattr(self, "min_probability", 0.0),
                        question_starts=getattr(self, "question_starts", None))


RECIPE = VQA
