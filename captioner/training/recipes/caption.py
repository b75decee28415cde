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
This module is the command (its options, `Config`; the --scst ones are
`captioner.training.self_critical.SCSTOptions`, shared with `train video-caption`); the recipes are
`caption_xe.Caption` (cross-entropy) and `caption_scst.CaptionSCST` (self-critical, saying only what
differs), and `RECIPE.make` picks one by --scst.
"""

import dataclasses

from captioner.training.config import TrainConfig, option
from captioner.training.distribute import STRATEGIES
from captioner.training.self_critical import ChooseRecipe, SCSTOptions

NAME = "caption"
HELP = "train an image captioner (soft attention or fc7) on Flickr8k / COCO / img2dataset web photos, one corpus or several"


@dataclasses.dataclass(kw_only=True)
class Config(SCSTOptions, TrainConfig):
    data_dir: str | None = option(None, help="dataset folder (Flickr8k layout) or images root (COCO); or --corpus")
    format: str = option("flickr8k", choices=("flickr8k", "coco"))
    corpus: list = option([], action="append", metavar="FORMAT:DIR[:train=..][:dev=..][:style=..][:share=..]",  # noqa: RUF009
                          help="a caption corpus (repeat for several: one decoder, a style token per corpus; "
                               "formats flickr8k, coco, img2dataset; see captioner.data.caption_corpora); "
                               "instead of --data-dir/--format")
    default_style: str | None = option(None, help="with --corpus: the style the saved model writes unless told "
                                                  "(default: the first corpus's)")
    no_style_tokens: bool = option(False, help=(
        "with --corpus: every caption starts with <start> whatever its corpus (the corpora still mix at their "
        "shares and are scored apart): the comparison that shows what the style tokens buy"))
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
    hold_out_words: str | None = option(None, metavar="W1,W2,...", help=(
        "held-out objects (the DCC protocol, Hendricks et al. 2016): every training image one of whose captions "
        "names one of these words is left out; the words stay in the vocabulary, never seen in training, and the saved "
        "model gives them weights mapped from their GloVe vectors (DCC's transfer)"))
    distribute: str = option("none", choices=STRATEGIES,
                             help="mirrored: every GPU (else logical CPU) of this machine; multi-worker: the "
                                  "workers TF_CONFIG names, each running this same command (docs/scale_out.md)")
    mixed_precision: bool = option(False, help="train in mixed_bfloat16 (float32 weights, bfloat16 math): ~1.25x "
                                   "less CPU time per step on CPUs with AVX512_BF16 (scripts/bench_training.py); "
                                   "the saved model decodes in float32")
    final_eval_beams: str = option("1,3", help="beam widths of the final coco-caption evaluation")


RECIPE = ChooseRecipe("captioner.training.recipes.caption_xe:Caption",
                      "captioner.training.recipes.caption_scst:CaptionSCST")  # by --scst
