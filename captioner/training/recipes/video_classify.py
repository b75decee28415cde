"""`captioner train video-classify`: an LRCN-style activity classifier on cached frame features.

    captioner train video-classify --data-dir /work/data/video/synthetic \\
        --features /work/data/video/synthetic_lite0_f8.h5 --output-dir runs/video_classify \\
        --model-out assets/models/shapes_video_classify.keras

The data is a UCF101-layout folder (class folders, optional classInd.txt and train/test
lists), or, with `--labels CSV`, a folder of clips (`--data-dir`) labelled by a
clip_id,label CSV with train.txt / dev.txt / test.txt clip lists beside it (the photo-pan
clips labelled with activities mined from their captions: captioner.data.caption_activities).
`--dev-groups` moves groups out of train for model selection (UCF101 has no dev split;
groups share actors and scenes, so the cut is by group). Frame features missing from
the store are extracted first (resumable). Selection and early stopping use dev accuracy;
the test split is scored once, at the end, with the selected weights. `--resume` continues a
killed run from its last checkpoint.
"""

import dataclasses
import logging
import os

from captioner.training.config import TrainConfig, option
from captioner.training.trainer import CLASS_WEIGHTING, ArrayBatches, ClassifierRecipe, class_weights

NAME = "video-classify"
HELP = "train an activity classifier (LSTM over frame features, LRCN) on UCF101-layout clips"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    data_dir: str = option(help="UCF101-layout folder: <Class>/v_<Class>_gXX_cYY.avi")
    labels: str | None = option(None, help="clip_id,label CSV (split lists beside it) instead of the UCF101 layout; "
                                           "--data-dir is then the folder of clips")
    split_id: int = option(1, help="trainlist0K / testlist0K to use when present")
    dev_groups: str = option("8-10", help="groups moved from train to dev, e.g. '8-10'")
    features: str = option(help="per-clip HDF5 feature store (created/extended as needed)")
    backbone: str = option("efficientnet_lite0")
    feature: str = option("pooled", choices=("pooled", "grid"),
                          help="per-frame pooled vectors, or grids reduced per region (keeps where things are)")
    num_frames: int = option(8, help="frames sampled per clip (N)")
    fps: float | None = option(None, help="sample at this rate instead of uniformly")
    epochs: int = 40
    batch_size: int = 32
    units: int = option(256)
    projection_dim: int = option(256)
    grid_channels: int = option(32)
    dropout: float = option(0.3)
    patience: int = 8
    class_weight: str = option("none", choices=CLASS_WEIGHTING,
                               help="weight the loss per class: balanced (inverse frequency) or sqrt (its square "
                                    "root), for data where one class (e.g. 'other') dominates")
    select: str = option("accuracy", choices=("accuracy", "balanced-accuracy"),
                         help="dev figure that selects the epoch: accuracy, or balanced accuracy (mean per-class recall)")
    limit: int | None = option(None, help="use only the first N train clips (smoke runs)")


def parse_groups(text):
    """"8-10,12" -> [8, 9, 10, 12]."""
    groups = []
    for part in (p.strip() for p in (text or "").split(",")):
        if "-" in part:
            a, b = part.split("-", 1)
            groups.extend(range(int(a), int(b) + 1))
        elif part:
            groups.append(int(part))
    return groups


class VideoClassify(ClassifierRecipe):
    task = "video-classify"
    metric = "dev_accuracy"
    selection = "dev accuracy"

    def __init__(self, cfg):
        super().__init__(cfg)
        if cfg.select == "balanced-accuracy":
            self.metric, self.selection = "dev_balanced_accuracy", "dev balanced accuracy (mean per-class recall)"

    def prepare(self, trainer):
        import numpy as np

        from captioner.data.ucf101 import load_ucf101
        from captioner.errors import InputError
        from captioner.features.video_store import load_features

        c = self.cfg
        if c.labels:
            from captioner.data.caption_activities import load_clip_labels

            here = os.path.dirname(os.path.abspath(c.labels))
            splits = {"train": load_clip_labels(c.labels, c.data_dir, os.path.join(here, "train.txt"), split="train")}
            names = splits["train"].class_names
            splits.update({s: load_clip_labels(c.labels, c.data_dir, os.path.join(here, f"{s}.txt"), names, split=s)
                           for s in ("dev", "test")})
        else:
            splits = {s: load_ucf101(c.data_dir, s, split_id=c.split_id, dev_groups=parse_groups(c.dev_groups))
                      for s in ("train", "dev", "test")}
        self.class_names = splits["train"].class_names
        if c.limit:
            splits["train"].video_paths = splits["train"].video_paths[: c.limit]
            splits["train"].labels = splits["train"].labels[: c.limit]
        if not splits["dev"].video_paths:
            raise InputError(f"no dev clips: no train clip is in --dev-groups {c.dev_groups}")
        self.data = {}  # split: ({"features", "mask"}, labels)
        for name, split in splits.items():
            label_of = dict(zip(split.video_paths, split.labels))
            kept, feats, mask = load_features(split.video_paths, c.features, feature=c.feature, backbone=c.backbone,
                                              num_frames=c.num_frames, fps=c.fps,
                                              dtype=np.float16 if c.feature == "grid" else np.float32)
            self.data[name] = ({"features": feats, "mask": mask}, np.array([label_of[p] for p in kept], np.int32))
            log.info("%s: %d clips, %s", name, len(kept), split.counts() if name != "train" else "")
        train_labels = self.data["train"][1]
        self.class_weights = class_weights(train_labels, len(self.class_names), c.class_weight)
        self.train_batches = ArrayBatches(*self.data["train"], c.batch_size,
                                          None if c.class_weight == "none" else self.class_weights[train_labels])
        counts = {f"{s}_clips": len(self.data[s][1]) for s in ("train", "dev", "test")}
        layout = ({"layout": "clip labels csv", "labels": c.labels} if c.labels else
                  {"layout": "ucf101", "split_id": c.split_id, "dev_groups": c.dev_groups})
        self.card = {"data_dir": c.data_dir, **layout, **counts,
                     "class_counts": {s: splits[s].counts() for s in ("train", "dev", "test")}}
        if c.class_weight != "none":
            self.card["class_weights"] = {n: round(float(w), 4) for n, w in zip(self.class_names, self.class_weights)}
        return {"class_names": self.class_names, **counts}

    def card_data(self, trainer):
        return self.card

    def build_model(self, seed):
        from captioner.models.video_classifier_model import VideoClassifierModel

        c, feats = self.cfg, self.data["train"][0]["features"]
        return VideoClassifierModel(len(self.class_names), feats.shape[-1], feature=c.feature,
                                    grid_regions=feats.shape[2] if c.feature == "grid" else None,
                                    grid_channels=c.grid_channels, projection_dim=c.projection_dim, units=c.units,
                                    dropout=c.dropout)

    def predict(self, model, split):
        return model.predict(self.data[split][0], batch_size=128, verbose=0).argmax(-1)

    def evaluate_dev(self, model):
        from captioner.metrics.classification import balanced_accuracy

        predictions, labels = self.predict(model, "dev"), self.data["dev"][1]
        return {"dev_accuracy": 100.0 * float((predictions == labels).mean()),
                "dev_balanced_accuracy": balanced_accuracy(labels, predictions, len(self.class_names))}

    def evaluate(self, model, trainer):
        from captioner.visualize.confusion import confusion_png

        from captioner.metrics.classification import classification_report, majority_label

        metrics = {"split": "test"}
        majority = majority_label(self.data["train"][1], len(self.class_names))
        for split in ("dev", "test"):
            if not len(self.data[split][1]):
                continue
            metrics[split] = classification_report(self.data[split][1], self.predict(model, split), self.class_names,
                                                   majority=majority, unit="clips")
            confusion_png(trainer.run_dir.path(f"confusion_{split}.png"),
                          metrics[split]["confusion (rows gold, columns predicted)"],
                          self.class_names, title=f"{split} clips")
            log.info("%s accuracy: %.2f%%", split, metrics[split]["accuracy"])
        return metrics

    def export(self, model):
        from captioner.backbones import get_backbone
        from captioner.models.video_classifier import VideoClassifier

        c = self.cfg
        return VideoClassifier(get_backbone(c.backbone).feature_model, model, self.class_names, num_frames=c.num_frames,
                               sample_fps=c.fps or 0.0, training_config={"feature": c.feature, "seed": c.seed})


RECIPE = VideoClassify
