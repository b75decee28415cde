"""`captioner train caption`: Show-Attend-Tell (or fc7 Show-and-Tell) on cached features.

    captioner train caption --data-dir ../shared/datasets/flickr8k --format flickr8k \\
        --features work/flickr8k_lite0.h5 --output-dir runs/flickr8k_attention

Features missing from the store are extracted first (resumable). One example per
(image, caption); model selection and early stopping use dev BLEU-4 from real beam
decoding. `--resume` continues a killed run from its last checkpoint.

Self-critical training (`--scst`, captioner/training/scst.py) continues a cross-entropy model:

    captioner train caption --scst --init-model assets/models/flickr8k_attention.keras \
        --data-dir ../shared/datasets/flickr8k --features work/flickr8k_lite2.h5 --output-dir runs/scst

One example per training IMAGE: K sampled captions (--scst-samples), rewarded by CIDEr-D against
the image's references (document frequencies from every training reference), minus a baseline
(--scst-baseline: the mean of the other samples' rewards, or the greedy caption's), drawn at
--scst-temperature (default 0.5); optionally plus --scst-xe-weight x the cross-entropy of one
reference per image. The decoder's architecture, weights and vocabulary come from --init-model
(--kind, --units, ... are not used); Adam at --scst-learning-rate; model selection on dev CIDEr.
"""

import contextlib
import dataclasses
import logging
import os
import time

from captioner.training.config import TrainConfig, option
from captioner.training.distribute import STRATEGIES, strategy_for
from captioner.training.trainer import Recipe

NAME = "caption"
HELP = "train an image captioner (soft attention or fc7) on Flickr8k / COCO"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    data_dir: str = option(help="dataset folder (Flickr8k layout) or images root (COCO)")
    format: str = option("flickr8k", choices=("flickr8k", "coco"))
    karpathy_json: str | None = option(None, help="COCO: Karpathy split json (dataset_coco.json)")
    train_split: str = option("train")
    dev_split: str | None = option(None, help="default: dev (flickr8k) / val (coco)")
    features: str = option(help="HDF5 feature store (created/extended as needed)")
    backbone: str = option("efficientnet_lite0")
    kind: str = option("attention", choices=("attention", "fc-init", "fc-concat"))
    learning_rate: float = 4e-4
    min_count: int = option(5, help="vocabulary: minimum word count")
    max_caption_length: int = option(22, help="words kept per training caption")
    embedding_dim: int = option(256)
    units: int = option(512)
    attention_units: int = option(256)
    projection_dim: int = option(512)
    dropout: float = option(0.5)
    attention_lambda: float = option(1.0, help="doubly stochastic regularization")
    beam_size: int = option(3, help="beam width of dev decoding and the saved model")
    alpha: float = option(0.0, help="length penalty of the saved model")
    max_length: int = option(20, help="max generated tokens")
    lr_decay: float = 0.5
    limit: int | None = option(None, help="use only the first N train images (smoke runs)")
    dev_limit: int | None = option(None, help="use only the first N dev images")
    distribute: str = option("none", choices=STRATEGIES,
                             help="mirrored: every GPU (else logical CPU) of this machine; multi-worker: the "
                                  "workers TF_CONFIG names, each running this same command (README, Multi-worker "
                                  "training)")
    mixed_precision: bool = option(False, help="train in mixed_bfloat16 (float32 weights, bfloat16 math): ~1.25x "
                                   "less CPU time per step on CPUs with AVX512_BF16 (scripts/bench_training.py); "
                                   "the saved model decodes in float32")
    final_eval_beams: str = option("1,3", help="beam widths of the final coco-caption evaluation")
    scst: bool = option(False, help="self-critical sequence training (REINFORCE, CIDEr-D reward) from "
                        "--init-model instead of cross-entropy training; selects on dev CIDEr")
    init_model: str | None = option(None, help="--scst: the cross-entropy trained image captioner (.keras) to "
                                    "continue: its decoder weights, vocabulary and backbone")
    scst_samples: int = option(5, help="--scst: captions sampled per training image and step")
    scst_baseline: str = option("mean", choices=("greedy", "mean"),
                                help="--scst: reward baseline: the mean of the image's other samples' (Luo 2020; "
                                     "better on Flickr8k dev) or the greedy caption's (Rennie et al. 2017)")
    scst_temperature: float = option(0.5, help="--scst: sampling temperature T (> 0) of the policy trained, "
                                     "softmax(logits / T); T < 1 draws captions nearer the greedy one (at T = 1, "
                                     "SCST lowered Flickr8k dev CIDEr; at 0.5 it raised it)")
    scst_xe_weight: float = option(0.0, help="--scst: weight of a cross-entropy term on one reference caption "
                                   "per image added to the REINFORCE loss (0: pure SCST)")
    scst_bleu_weight: float = option(0.0, help="--scst: reward = CIDEr-D + this weight x the caption's sentence "
                                     "BLEU-4 (coco-caption's per-image BLEU; 0: CIDEr-D alone, as Rennie et al.)")
    scst_learning_rate: float = option(5e-5, help="--scst: Adam's learning rate (--learning-rate is cross-entropy's)")


class Caption(Recipe):
    task = "caption"
    metric = "dev_BLEU-4"

    def __init__(self, cfg):
        super().__init__(cfg)
        if cfg.scst:
            self.metric = "dev_CIDEr"
            self.reward_name = "CIDEr-D" + (f" + {cfg.scst_bleu_weight:g} x BLEU-4" if cfg.scst_bleu_weight else "")
            self.loss_label = f"mean {self.reward_name} reward\non training images"
            self.curve_keys = ("sample_reward", "greedy_reward")

    def check(self):
        from captioner.errors import InputError

        c = self.cfg
        if not c.scst:
            return
        if not c.init_model:
            raise InputError("--scst continues a trained model: give it with --init-model PATH.keras")
        if c.distribute != "none" or c.mixed_precision:
            raise InputError("--scst trains on one device in float32 (no --distribute, no --mixed-precision)")
        if c.scst_samples < 1 or (c.scst_baseline == "mean" and c.scst_samples < 2):
            raise InputError("--scst-samples must be >= 1 (>= 2 with --scst-baseline mean)")
        if not 0 < c.scst_temperature < float("inf"):
            raise InputError(f"--scst-temperature must be a finite number > 0, got {c.scst_temperature}")
        if not 0 <= c.scst_xe_weight < float("inf"):
            raise InputError(f"--scst-xe-weight must be a finite number >= 0, got {c.scst_xe_weight}")
        if not 0 <= c.scst_bleu_weight < float("inf"):
            raise InputError(f"--scst-bleu-weight must be a finite number >= 0, got {c.scst_bleu_weight}")

    def _split(self, split):
        from captioner.data import load_coco_karpathy, load_flickr8k
        from captioner.errors import InputError

        if self.cfg.format == "flickr8k":
            return load_flickr8k(self.cfg.data_dir, split=split)
        if not self.cfg.karpathy_json:
            raise InputError("--format coco needs --karpathy-json")
        return load_coco_karpathy(self.cfg.karpathy_json, self.cfg.data_dir, split=split)

    def prepare(self, trainer):
        from captioner.features.store import FeatureStore
        from captioner.models.caption_decoder_model import KINDS
        from captioner.text import Vocabulary, tokenize
        from captioner.training.caption_data import CaptionExamples

        cfg = self.cfg
        self.dev_split = cfg.dev_split or ("dev" if cfg.format == "flickr8k" else "val")
        self.selection = f"dev BLEU-4 (python BLEU, beam {cfg.beam_size})"
        train, dev = self._split(cfg.train_split), self._split(self.dev_split)
        if cfg.scst:
            self.selection = f"dev CIDEr (python CIDEr-D, beam {cfg.beam_size})"
            self.init = self._init_model()
            # the reward's document frequencies: every reference of the training split (before --limit)
            self.df_references = {p: [tokenize(c) for c in train.captions[p]] for p in train.image_paths}
            self.run_path = trainer.run_dir.path
        train.image_paths = train.image_paths[: cfg.limit] if cfg.limit else train.image_paths
        dev.image_paths = dev.image_paths[: cfg.dev_limit] if cfg.dev_limit else dev.image_paths
        needed = train.image_paths + dev.image_paths  # extract what is missing (resumable)
        bad = self._extract(trainer, needed)
        if bad:
            log.warning("%d images could not be read and are left out", len(bad))
            train.image_paths = [p for p in train.image_paths if p not in bad]
            dev.image_paths = [p for p in dev.image_paths if p not in bad]
        feature = KINDS[self.init.decoder.kind if cfg.scst else cfg.kind][0]
        with FeatureStore(cfg.features) as store:
            def load(paths):
                ids = [os.path.basename(p) for p in paths]
                return store.load(ids, grid=feature == "grid", pooled=feature == "pooled")[feature]
            self.train_feats, self.dev_feats, self.backbone = load(train.image_paths), load(dev.image_paths), store.backbone
        if cfg.scst:
            self._check_init_model()
            self.vocab = trainer.cached("vocabulary.json", lambda: self.init.vocabulary)
        else:
            self.vocab = trainer.cached("vocabulary.json", lambda: Vocabulary.build(
                [tokenize(c) for p in train.image_paths for c in train.captions[p]], min_count=cfg.min_count))
        log.info("vocabulary: %d words (min count %d)", len(self.vocab), cfg.min_count)
        self.examples = CaptionExamples.build(train, self.vocab, cfg.max_caption_length)
        self.train_set = train
        self.dev, self.references = dev, {p: dev.captions[p] for p in dev.image_paths}
        self.data = {"format": cfg.format, "data_dir": cfg.data_dir, "train_split": cfg.train_split,
                     "train_images": len(train.image_paths), "train_captions": len(self.examples)}
        info = {"backbone": self.backbone, "vocab_size": len(self.vocab), "train_images": len(train.image_paths),
                "train_captions": len(self.examples), "dev_images": len(dev.image_paths), "data": self.data}
        if cfg.scst:
            decoder = self.init.decoder.get_config()
            info["init_model_decoder"] = {k: decoder[k] for k in ("kind", "vocab_size", "annotation_dim", "projection_dim",
                                                                  "embedding_dim", "units", "attention_units")}
        return info

    def _init_model(self):
        from captioner.errors import InputError
        from captioner.models.caption_decoder_model import CaptionDecoderModel
        from captioner.models.image_captioner import ImageCaptioner
        from captioner.models.loading import load_model_file

        init = load_model_file(self.cfg.init_model, ImageCaptioner, "an image captioner (ImageCaptioner)")
        if not isinstance(init.decoder, CaptionDecoderModel):
            raise InputError(f"--init-model {self.cfg.init_model}: its decoder is a {type(init.decoder).__name__}; "
                             "self-critical training continues one captioner: train each member, then join them "
                             "(scripts/make_caption_ensemble.py)")
        return init

    def _check_init_model(self):
        from captioner.errors import InputError

        init, path = self.init, self.cfg.init_model
        if init.backbone.name != self.backbone:
            raise InputError(f"--init-model {path} reads {init.backbone.name} features, but --features "
                             f"{self.cfg.features} holds {self.backbone} features")
        if init.decoder.annotation_dim != self.train_feats.shape[-1]:
            raise InputError(f"--init-model {path} takes {init.decoder.annotation_dim}-d annotations, --features "
                             f"gives {self.train_feats.shape[-1]}-d")

    def strategy(self):
        if not hasattr(self, "_strategy"):
            self._strategy = strategy_for(self.cfg.distribute)
        return self._strategy

    def _extract(self, trainer, paths):
        """Extract the features `paths` lack into --features (resumable); the paths that could
        not be read. Multi-worker: the chief extracts while the other workers wait, then they
        read its store (which must be where they can read it)."""
        from captioner.errors import InputError
        from captioner.features.extract import extract_features
        from captioner.features.store import FeatureStore
        from captioner.training.distribute import barrier

        cfg, role = self.cfg, trainer.role
        ids = [os.path.basename(p) for p in paths]
        if role.chief:
            # --scst: the init model's backbone (its decoder reads those features), whatever --backbone says
            backbone = self.init.backbone.name if cfg.scst else cfg.backbone
            report = extract_features(paths, cfg.features, backbone=backbone, ids=ids)
        barrier(trainer.strategy, role, "the chief extracts the features")
        if role.chief:
            return {p for p, _ in report.failed}
        if not os.path.exists(cfg.features):
            raise InputError(f"--features {cfg.features}: not found by {role.name}; in multi-worker training the "
                             "chief extracts the features and the other workers read its store, so it must be on "
                             "storage every worker reads (or a copy of the complete store on each)")
        with FeatureStore(cfg.features) as store:
            return {p for p, k in zip(paths, ids) if k not in store}  # the files the chief could not read

    @contextlib.contextmanager
    def model_scope(self):
        import keras

        strategy = self.strategy()
        previous = keras.mixed_precision.global_policy().name
        if self.cfg.mixed_precision:
            keras.mixed_precision.set_global_policy("mixed_bfloat16")  # for the layers built now only
        try:
            with strategy.scope():
                yield
        finally:
            keras.mixed_precision.set_global_policy(previous)

    def build_model(self, seed):
        from captioner.models.caption_decoder_model import CaptionDecoderModel

        c = self.cfg
        if c.scst:
            return self._self_critical()
        return CaptionDecoderModel(len(self.vocab), annotation_dim=self.train_feats.shape[-1], kind=c.kind,
                                   projection_dim=c.projection_dim, embedding_dim=c.embedding_dim, units=c.units,
                                   attention_units=c.attention_units, dropout=c.dropout,
                                   attention_lambda=c.attention_lambda)

    def _self_critical(self):
        """The init model's decoder (architecture, weights) inside the SCST training step."""
        from captioner.metrics import CiderD
        from captioner.models.caption_decoder_model import CaptionDecoderModel
        from captioner.training.scst import CaptionRewards, SelfCriticalCaptioner

        c, init = self.cfg, self.init
        decoder = CaptionDecoderModel.from_config(init.decoder.get_config())
        decoder.set_weights(init.decoder.get_weights())
        t = time.perf_counter()
        references = [self.df_references[p] for p in self.train_set.image_paths]  # the rows trained on
        rewards = CaptionRewards(CiderD(self.df_references.values()), references, self.vocab.tokens,
                                 bleu_weight=c.scst_bleu_weight)
        log.info("%s reward: df of %d training images, %d images' references prepared in %.1f s",
                 self.reward_name, len(self.df_references), len(references), time.perf_counter() - t)
        return SelfCriticalCaptioner(decoder, rewards, samples=c.scst_samples, baseline=c.scst_baseline,
                                     max_length=c.max_length, temperature=c.scst_temperature,
                                     xe_weight=c.scst_xe_weight)

    def optimizer(self):
        import keras

        if self.cfg.scst:
            return keras.optimizers.Adam(self.cfg.scst_learning_rate, clipnorm=5.0)
        return super().optimizer()

    def compile_args(self):
        return {} if self.cfg.scst else super().compile_args()  # SCST: the loss is its training step's

    def on_model_ready(self, model, state):
        """SCST: the dev figures of the init model (before any SCST step), once per run."""
        from captioner.io import write_json
        from captioner.training.trainer import read_json

        if not self.cfg.scst:
            return
        path = self.run_path("scst_start.json")
        self.before = read_json(path) if state and os.path.exists(path) else None
        if self.before is None:
            self.before = self.evaluate_dev(model)
            write_json(path, self.before)
        log.info("before SCST: %s", self.before)
        print("before SCST: " + ", ".join(f"{k} {v:.2f}" for k, v in self.before.items()), flush=True)

    def curve_start(self):
        return self.before[self.metric] if self.cfg.scst and getattr(self, "before", None) else None

    def steps_per_pass(self):
        if self.cfg.scst:
            return -(-len(self.train_feats) // self.cfg.batch_size)
        return self.examples.steps_per_epoch(self.cfg.batch_size)

    def batches(self, epoch, seed):
        if self.cfg.scst:
            yield from self._image_batches(epoch, seed)
            return
        for rows, toks in self.examples.batches(epoch, seed, self.cfg.batch_size):
            yield {"annotations": self.train_feats[rows], "tokens": toks[:, :-1]}, toks[:, 1:]

    def _image_batches(self, epoch, seed):
        """SCST: training images (features, their rows) in an order of (seed, epoch), and each
        batch's sampling seed, a function of (seed, epoch, batch)."""
        import numpy as np

        order = np.random.default_rng(seed + epoch).permutation(len(self.train_feats))
        if self.cfg.scst_xe_weight:
            captions_of = [[] for _ in range(len(self.train_feats))]  # the example rows of each image
            for j, r in enumerate(self.examples.rows):
                captions_of[r].append(j)
            if not all(captions_of):
                from captioner.errors import InputError

                path = self.train_set.image_paths[next(i for i, c in enumerate(captions_of) if not c)]
                raise InputError(f"--scst-xe-weight: training image {path} has no caption with a word in it")
        for k, start in enumerate(range(0, len(order), self.cfg.batch_size)):
            rows = order[start:start + self.cfg.batch_size]
            rng = np.random.default_rng([seed, epoch, k])
            draw = int(rng.integers(2**31))
            inputs = {"annotations": self.train_feats[rows], "seed": np.full(len(rows), draw, np.int32)}
            if self.cfg.scst_xe_weight:  # one of each image's references, drawn by (seed, epoch, batch)
                inputs["tokens"] = self.examples.tokens[[captions_of[r][rng.integers(len(captions_of[r]))]
                                                         for r in rows]]
            yield inputs, rows.astype(np.int32)

    def decode(self, model, beam_size=None, tool="python", meteor=True):
        from captioner.metrics import evaluate_captions
        from captioner.training.caption_data import decode_captions

        model = getattr(model, "captioner", model)  # SCST: the decoder inside the training step
        hyps = decode_captions(model, self.dev_feats, self.dev.image_paths, self.vocab,
                               beam_size=beam_size or self.cfg.beam_size, alpha=self.cfg.alpha,
                               max_length=self.cfg.max_length)
        return evaluate_captions(self.references, hyps, tool=tool, meteor=meteor), hyps

    def evaluate_dev(self, model):
        scores, hyps = self.decode(model, meteor=False)
        return {"dev_BLEU-4": scores["BLEU-4"], "dev_CIDEr": scores["CIDEr"], **caption_statistics(hyps.values())}

    def evaluate(self, model, trainer):
        from captioner.io import write_json

        metrics = {"split": f"{self.cfg.format} {self.dev_split}", "images": len(self.dev.image_paths)}
        if self.cfg.scst:
            metrics["before_scst"] = self.before
        for beam in [int(b) for b in self.cfg.final_eval_beams.split(",") if b]:
            t = time.perf_counter()
            scores, _ = self.decode(model, beam_size=beam, tool="auto")
            metrics[f"beam_{beam}"] = {**scores, "decode_seconds": round(time.perf_counter() - t, 1)}
            log.info("dev beam %d: %s", beam, scores)
        _, hyps = self.decode(model, meteor=False)
        write_json(trainer.run_dir.path("dev_samples.json"), [
            {"image": os.path.basename(p), "caption": hyps[p], "references": self.references[p][:2]}
            for p in self.dev.image_paths[:20]])
        return metrics

    def card_extra(self):
        c = self.cfg
        if not c.scst:
            return {}
        return {"scst": {"init_model": c.init_model, "samples": c.scst_samples, "baseline": c.scst_baseline,
                         "learning_rate": c.scst_learning_rate, "temperature": c.scst_temperature,
                         "xe_weight": c.scst_xe_weight, "bleu_weight": c.scst_bleu_weight,
                         "dev_before": self.before,
                         "how": "self-critical sequence training (captioner/training/scst.py): CIDEr-D reward "
                                "(df from every training reference), REINFORCE without dropout or the attention "
                                "penalty"}}

    def export(self, model):
        from captioner.backbones import get_backbone
        from captioner.models.image_captioner import ImageCaptioner

        c = self.cfg
        return ImageCaptioner(get_backbone(self.backbone).feature_model, model, self.vocab, beam_size=c.beam_size,
                              alpha=c.alpha, max_length=c.max_length, training_config={"kind": model.kind, "seed": c.seed})


def caption_statistics(captions):
    """What the dev captions look like: mean length in words, how many distinct captions, how
    many distinct words (self-critical training is known to shorten and narrow them)."""
    from captioner.text import tokenize

    words = [tokenize(c) for c in captions]
    return {"dev_caption_length": sum(map(len, words)) / max(len(words), 1),
            "dev_distinct_captions": float(len({" ".join(w) for w in words})),
            "dev_vocabulary": float(len({t for w in words for t in w}))}


RECIPE = Caption
