"""`captioner train video-caption`: LSTM encoder over frame features, attention decoder.

    captioner train video-caption \\
        --data /work/data/video/synthetic/captions.csv /work/data/video/synthetic \\
               /work/data/video/synthetic_lite0_f8.h5 \\
        --data /work/data/video/photo_pan/captions.csv /work/data/video/photo_pan/videos \\
               /work/data/video/photo_pan_lite0_f8.h5 \\
        --output-dir runs/video_caption --model-out assets/models/flickr8k_video_caption.keras

Each `--data CSV VIDEOS_DIR FEATURES` is an MSVD-style dataset (see captioner.data.msvd)
with split files (`--train-split` etc., clip ids one a line, looked up beside the csv) and
its per-clip feature store; several datasets train one model with one vocabulary. Missing
features are extracted first (resumable). One example per (clip, caption); model selection
and early stopping use the mean over datasets of dev BLEU-4 from real beam decoding. The
test splits are scored once, at the end. `--compare-image-model` also captions the photos
behind photo-pan test clips with an image captioner, for the comparison in the metrics.

Self-critical training (`--scst --init-model VIDEO_CAPTIONER.keras`, the image captioner's options
of `captioner.training.self_critical.SCSTOptions`) continues a trained video captioner: one example
per training clip, CIDEr-D reward against the clip's references, selection on dev CIDEr
(`video_caption_scst.VideoCaptionSCST`; its backbone, feature, frames and vocabulary are the init
model's). This module is the command (its options, `Config`); the recipes are
`video_caption_xe.VideoCaption` (cross-entropy) and `video_caption_scst.VideoCaptionSCST`, and
`RECIPE.make` picks one by --scst:

    captioner train video-caption --scst --init-model assets/models/flickr8k_video_caption.keras \\
        --data photo_pan/captions.csv photo_pan/videos photo_pan_lite2_f8.h5 --output-dir runs/video_scst
"""

import dataclasses

from captioner.training.config import TrainConfig, option
from captioner.training.self_critical import ChooseRecipe, SCSTOptions

NAME = "video-caption"
HELP = "train a video captioner (LSTM over frame features + attention decoder, s0 = h_T)"


@dataclasses.dataclass(kw_only=True)
class Config(SCSTOptions, TrainConfig):
    data: list = option(nargs=3, action="append", metavar=("CSV", "VIDEOS_DIR", "FEATURES"),  # noqa: RUF009
                        help="an MSVD-style dataset: captions csv, folder of clips, per-clip feature store "
                             "(repeatable)")
    train_split: str = option("train.txt", help="split file beside each csv")
    dev_split: str = option("dev.txt")
    test_split: str = option("test.txt", help="'' for none")
    backbone: str = option("efficientnet_lite0")
    feature: str = option("pooled", choices=("pooled", "grid"))
    num_frames: int = option(8)
    fps: float | None = option(None)
    min_count: int = option(5)
    max_caption_length: int = option(20)
    embedding_dim: int = option(128)
    units: int = option(256, help="encoder LSTM = decoder LSTM size (s0 = h_T)")
    projection_dim: int = option(256)
    attention_units: int = option(128)
    grid_channels: int = option(32)
    dropout: float = option(0.3)
    beam_size: int = option(3)
    alpha: float = option(0.0)
    max_length: int = option(20)
    limit: int | None = option(None, help="use only the first N train clips of each dataset")
    dev_limit: int | None = option(None)
    no_extract: bool = option(False, help="never run the backbone: use only clips whose features are already stored")
    compare_image_model: str | None = option(None, help="image captioner .keras to compare on photo-pan test photos")
    compare_images_dir: str | None = option(None, help="folder of the photos named in sources.csv (Flickr8k Images/)")


RECIPE = ChooseRecipe("captioner.training.recipes.video_caption_xe:VideoCaption",
                      "captioner.training.recipes.video_caption_scst:VideoCaptionSCST")  # by --scst
