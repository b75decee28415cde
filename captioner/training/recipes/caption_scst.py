"""`captioner train caption --scst`: self-critical sequence training (Rennie et al. 2017) of a
trained captioner, as a recipe that says only what differs from cross-entropy training
(`caption_xe.Caption`, whose data, features, decoding and export it keeps):

* the decoder, its vocabulary and its backbone come from --init-model;
* one example per training IMAGE, not per caption (`batches`), each with its sampling seed;
* the model is `SelfCriticalCaptioner` (captioner/training/scst.py): K sampled captions rewarded by
  CIDEr-D (+ --scst-bleu-weight x BLEU-4) minus a baseline, Adam at --scst-learning-rate, the loss
  its own training step's (no compile loss);
* selection on dev CIDEr, the init model's dev figures measured once before any step (the start
  of the curve, and "before_scst" in the metrics and the card).
"""

import logging
import os
import time

from captioner.training.recipes.caption_xe import Caption

log = logging.getLogger(__name__)


class CaptionSCST(Caption):
    metric = "dev_CIDEr"
    curve_keys = ("sample_reward", "greedy_reward")

    def __init__(self, cfg):
        super().__init__(cfg)
        self.reward_name = "CIDEr-D" + (f" + {cfg.scst_bleu_weight:g} x BLEU-4" if cfg.scst_bleu_weight else "")
        self.loss_label = f"mean {self.reward_name} reward\non training images"
        self.before = None

    def check(self):
        from captioner.errors import InputError

        c = self.cfg
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

    # -- data ---------------------------------------------------------------------------------
    def before_data(self, trainer, train):
        from captioner.text import tokenize

        self.selection = f"dev CIDEr (python CIDEr-D, beam {self.cfg.beam_size})"
        self.init = self._init_model()
        # the reward's document frequencies: every reference of the training split (before --limit)
        self.df_references = {p: [tokenize(c) for c in train.captions[p]] for p in train.image_paths}
        self.run_path = trainer.run_dir.path

    def decoder_kind(self):
        return self.init.decoder.kind

    def backbone_name(self):
        return self.init.backbone.name  # its decoder reads those features, whatever --backbone says

    def build_vocabulary(self, train):
        return self.init.vocabulary

    def prepare(self, trainer):
        info = super().prepare(trainer)
        self._check_init_model()
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
                             "(`captioner model ensemble`)")
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

    # -- the model and its training step ------------------------------------------------------
    def build_model(self, seed):
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

    # -- one example per training image -------------------------------------------------------
    def steps_per_pass(self):
        return -(-len(self.train_feats) // self.cfg.batch_size)

    def batches(self, epoch, seed):
        """Training images (features, their rows) in an order of (seed, epoch), and each batch's
        sampling seed, a function of (seed, epoch, batch)."""
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
