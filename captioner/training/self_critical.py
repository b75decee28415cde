"""Self-critical training (`--scst`) as one recipe mixin for every captioner the Trainer trains:
`train caption --scst` (`recipes/caption_scst.CaptionSCST`) and `train video-caption --scst`
(`recipes/video_caption_scst.VideoCaptionSCST`) say only where their data and init model differ.

    class CaptionSCST(SelfCritical, Caption): ...

The training step itself is `captioner.training.scst.SelfCriticalCaptioner`. What this mixin does
for both:

* the decoder, its vocabulary and its backbone come from --init-model (a trained captioner);
* one example per training ROW (an image, a clip), not per caption, each batch with its sampling
  seed, a function of (seed, epoch, batch);
* the reward is CIDEr-D (+ --scst-bleu-weight x sentence BLEU-4) against the row's references,
  document frequencies from every training reference;
* selection on dev CIDEr, the init model's dev figures measured once before any step (the start of
  the curve, and "before_scst" in the metrics and the card).

What the task recipe gives: `summary_keys`, `load_init_model()` (-> the init captioner file's model, checked),
`init_decoder()` (its trainable decoder), `scst_rows()` (training rows), `scst_inputs(rows)` (the
decoder's source inputs of those rows, by the decoder's `source_inputs` names),
`scst_references()` (tokenized references per training row) and `df_references` (every training
reference, tokenized, for the document frequencies; per corpus where `scst_groups()` says each row's
corpus), and `self.examples` (its `CaptionExamples`, for --scst-xe-weight). A decoder trained on
several corpora samples each row from its corpus's style token (`scst_inputs` gives "start").
No TensorFlow at import time.
"""

import dataclasses
import logging
import os
import time

from captioner.training.config import option

log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class SCSTOptions:
    """The --scst options of a captioning recipe's config (`class Config(SCSTOptions, TrainConfig)`)."""

    scst: bool = option(False, help="self-critical sequence training (REINFORCE, CIDEr-D reward) from "
                        "--init-model instead of cross-entropy training; selects on dev CIDEr")
    init_model: str | None = option(None, help="--scst: the cross-entropy trained captioner (.keras) to "
                                    "continue: its decoder weights, vocabulary and backbone")
    scst_samples: int = option(5, help="--scst: captions sampled per training example and step")
    scst_baseline: str = option("mean", choices=("greedy", "mean"),
                                help="--scst: reward baseline: the mean of the example's other samples' (Luo 2020; "
                                     "better on Flickr8k dev) or the greedy caption's (Rennie et al. 2017)")
    scst_temperature: float = option(0.5, help="--scst: sampling temperature T (> 0) of the policy trained, "
                                     "softmax(logits / T); T < 1 draws captions nearer the greedy one (at T = 1, "
                                     "SCST lowered Flickr8k dev CIDEr; at 0.5 it raised it)")
    scst_xe_weight: float = option(0.0, help="--scst: weight of a cross-entropy term on one reference caption "
                                   "per example added to the REINFORCE loss (0: pure SCST)")
    scst_bleu_weight: float = option(0.0, help="--scst: reward = CIDEr-D + this weight x the caption's sentence "
                                     "BLEU-4 (coco-caption's per-image BLEU; 0: CIDEr-D alone, as Rennie et al.)")
    scst_learning_rate: float = option(5e-5, help="--scst: Adam's learning rate (--learning-rate is cross-entropy's)")


class SelfCritical:
    """The self-critical half of a captioning recipe; see the module docstring."""

    metric = "dev_CIDEr"
    curve_keys = ("sample_reward", "greedy_reward")
    summary_keys = ()  # the init decoder's config keys config.json records

    def __init__(self, cfg):
        super().__init__(cfg)
        self.reward_name = "CIDEr-D" + (f" + {cfg.scst_bleu_weight:g} x BLEU-4" if cfg.scst_bleu_weight else "")
        self.loss_label = f"mean {self.reward_name} reward\non training examples"
        self.before = None
        self.init = None

    def check(self):
        from captioner.errors import InputError

        c = self.cfg
        if not c.init_model:
            raise InputError("--scst continues a trained model: give it with --init-model PATH.keras")
        if getattr(c, "distribute", "none") != "none" or getattr(c, "mixed_precision", False):
            raise InputError("--scst trains on one device in float32 (no --distribute, no --mixed-precision)")
        if c.scst_samples < 1 or (c.scst_baseline == "mean" and c.scst_samples < 2):
            raise InputError("--scst-samples must be >= 1 (>= 2 with --scst-baseline mean)")
        if not 0 < c.scst_temperature < float("inf"):
            raise InputError(f"--scst-temperature must be a finite number > 0, got {c.scst_temperature}")
        if not 0 <= c.scst_xe_weight < float("inf"):
            raise InputError(f"--scst-xe-weight must be a finite number >= 0, got {c.scst_xe_weight}")
        if not 0 <= c.scst_bleu_weight < float("inf"):
            raise InputError(f"--scst-bleu-weight must be a finite number >= 0, got {c.scst_bleu_weight}")

    def init_model(self):
        """The --init-model captioner, loaded once."""
        if self.init is None:
            self.init = self.load_init_model()
        return self.init

    def prepare(self, trainer):
        """The task recipe's data, then what every self-critical run adds: selection on dev CIDEr,
        the run directory (for the start figures) and the init decoder's shape in config.json."""
        info = super().prepare(trainer)
        self.selection = f"dev CIDEr (python CIDEr-D, beam {self.cfg.beam_size})"
        self.run_path = trainer.run_dir.path
        config = self.init_decoder().get_config()
        info["init_model_decoder"] = {k: config[k] for k in self.summary_keys if k in config}
        return info

    # -- the model and its training step ------------------------------------------------------
    def build_model(self, seed):
        """The init model's decoder (architecture, weights) inside the SCST training step."""
        from captioner.metrics import CiderD
        from captioner.training.scst import CaptionRewards, SelfCriticalCaptioner

        c, init = self.cfg, self.init_decoder()
        decoder = type(init).from_config(init.get_config())
        decoder.set_weights(init.get_weights())
        t = time.perf_counter()
        groups = self.scst_groups()
        if groups is None:  # one df over every training reference
            scorer, sets = CiderD(self.df_references), len(self.df_references)
        else:  # CIDEr-D per corpus: each corpus's df from its own references
            scorer, sets = [CiderD(refs) for refs in self.df_references], sum(map(len, self.df_references))
        rewards = CaptionRewards(scorer, self.scst_references(), self.vocab.tokens,
                                 bleu_weight=c.scst_bleu_weight, groups=groups)
        log.info("%s reward: df of %d training references' sets, %d rows' references prepared in %.1f s",
                 self.reward_name, sets, self.scst_rows(), time.perf_counter() - t)
        return SelfCriticalCaptioner(decoder, rewards, samples=c.scst_samples, baseline=c.scst_baseline,
                                     max_length=c.max_length, temperature=c.scst_temperature,
                                     xe_weight=c.scst_xe_weight)

    def optimizer(self):
        import keras

        return keras.optimizers.Adam(self.cfg.scst_learning_rate, clipnorm=5.0)

    def compile_args(self):
        return {}  # the loss is its training step's

    def on_model_ready(self, model, state):
        """The dev figures of the init model (before any SCST step), once per run."""
        from captioner.io import write_json
        from captioner.training.trainer import read_json

        path = self.run_path("scst_start.json")
        self.before = read_json(path) if state and os.path.exists(path) else None
        if self.before is None:
            self.before = self.evaluate_dev(model)
            write_json(path, self.before)
        log.info("before SCST: %s", self.before)
        print("before SCST: " + ", ".join(f"{k} {v:.2f}" for k, v in self.before.items()), flush=True)

    def curve_start(self):
        return self.before[self.metric] if self.before else None

    # -- one example per training row ---------------------------------------------------------
    def steps_per_pass(self):
        return -(-self.scst_rows() // self.cfg.batch_size)

    def batches(self, epoch, seed):
        """Training rows (their decoder inputs, their row numbers) in an order of (seed, epoch), and
        each batch's sampling seed, a function of (seed, epoch, batch)."""
        import numpy as np

        n = self.scst_rows()
        order = np.random.default_rng(seed + epoch).permutation(n)
        if self.cfg.scst_xe_weight:
            captions_of = [[] for _ in range(n)]  # the example rows of each training row
            for j, r in enumerate(self.examples.rows):
                captions_of[r].append(j)
            if not all(captions_of):
                from captioner.errors import InputError

                row = next(i for i, c in enumerate(captions_of) if not c)
                raise InputError(f"--scst-xe-weight: training example {self.row_name(row)} has no caption with a "
                                 "word in it")
        for k, start in enumerate(range(0, n, self.cfg.batch_size)):
            rows = order[start:start + self.cfg.batch_size]
            rng = np.random.default_rng([seed, epoch, k])
            draw = int(rng.integers(2**31))
            inputs = {**self.scst_inputs(rows), "seed": np.full(len(rows), draw, np.int32)}
            if self.cfg.scst_xe_weight:  # one of each row's references, drawn by (seed, epoch, batch)
                inputs["tokens"] = self.examples.tokens[[captions_of[r][rng.integers(len(captions_of[r]))]
                                                         for r in rows]]
            yield inputs, rows.astype(np.int32)

    def row_name(self, row):
        return str(row)

    def scst_groups(self):
        """None: one CIDEr-D (df from every training reference, `df_references` a list of reference
        sets); or the corpus index of each training row, and `df_references` one list per corpus
        (rewards by CIDEr-D per corpus)."""
        return None

    # -- what the card says -------------------------------------------------------------------
    def metrics_before(self):
        return {"before_scst": self.before}

    def card_extra(self):
        c = self.cfg
        return {"scst": {"init_model": c.init_model, "samples": c.scst_samples, "baseline": c.scst_baseline,
                         "learning_rate": c.scst_learning_rate, "temperature": c.scst_temperature,
                         "xe_weight": c.scst_xe_weight, "bleu_weight": c.scst_bleu_weight,
                         "dev_before": self.before,
                         "how": "self-critical sequence training (captioner/training/scst.py): CIDEr-D reward "
                                "(df from every training reference), REINFORCE without dropout or the attention "
                                "penalty"}}


def tokenized_references(caption_lists):
    """[[tokens of each caption] for each list of captions] (the references of rows, in order)."""
    from captioner.text import tokenize

    return [[tokenize(c) for c in captions] for captions in caption_lists]


class ChooseRecipe:
    """A captioning command's `RECIPE`: `make(cfg)` builds the cross-entropy recipe, or the self-critical
    one with --scst, each named "module:Class" and imported only when chosen."""

    def __init__(self, cross_entropy, self_critical):
        self.cross_entropy, self.self_critical = cross_entropy, self_critical

    def make(self, cfg):
        import importlib

        module, name = (self.self_critical if cfg.scst else self.cross_entropy).split(":")
        return getattr(importlib.import_module(module), name)(cfg)
