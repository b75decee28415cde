"""`captioner train video-classify`: an LRCN-style activity classifier on cached frame features.

    captioner train video-classify --data-dir /work/data/video/synthetic \
        --features /work/data/video/synthetic_lite0_f8.h5 --output-dir runs/video_classify \
        --model-out assets/models/video_classify.keras

The data is a UCF101-layout folder (class folders, optional classInd.txt and train/test
lists). `--dev-groups` moves groups out of train for model selection (UCF101 has no dev
split; groups share actors and scenes, so the cut is by group). Frame features missing from
the store are extracted first (resumable). Selection and early stopping use dev accuracy;
the test split is scored once, at the end, with the selected weights. `--resume` continues a
killed run from its last checkpoint.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys

import numpy as np

log = logging.getLogger(__name__)


def parse_groups(text):
    """"8-10,12" -> [8, 9, 10, 12]."""
    groups = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            groups.extend(range(int(a), int(b) + 1))
        else:
            groups.append(int(part))
    return groups


def register(subparsers):
    p = subparsers.add_parser(
        "video-classify", help="train an activity classifier (LSTM over frame features, LRCN) on UCF101-layout clips",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data-dir", required=True, help="UCF101-layout folder: <Class>/v_<Class>_gXX_cYY.avi")
    p.add_argument("--split-id", type=int, default=1, help="trainlist0K / testlist0K to use when present")
    p.add_argument("--dev-groups", default="8-10", help="groups moved from train to dev, e.g. '8-10'")
    p.add_argument("--features", required=True, help="per-clip HDF5 feature store (created/extended as needed)")
    p.add_argument("--backbone", default="efficientnet_lite0")
    p.add_argument("--feature", choices=("pooled", "grid"), default="pooled",
                   help="per-frame pooled vectors, or grids reduced per region (keeps where things are)")
    p.add_argument("--num-frames", type=int, default=8, help="frames sampled per clip (N)")
    p.add_argument("--fps", type=float, default=None, help="sample at this rate instead of uniformly")
    p.add_argument("--output-dir", required=True, help="run directory: checkpoints, history, metrics")
    p.add_argument("--model-out", help="final .keras file (default OUTPUT_DIR/model.keras)")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--units", type=int, default=256)
    p.add_argument("--projection-dim", type=int, default=256)
    p.add_argument("--grid-channels", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--patience", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="use only the first N train clips (smoke runs)")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT_DIR's last checkpoint")
    p.set_defaults(func=run)


def _command(task):
    if task in sys.argv:
        return f"captioner train {task} " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index(task) + 1:])
    return None


def accuracy_report(labels, predictions, class_names):
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    k = len(class_names)
    confusion = np.zeros((k, k), dtype=np.int64)
    for y, p in zip(labels, predictions):
        confusion[y, p] += 1
    per_class = {class_names[i]: round(100.0 * confusion[i, i] / max(confusion[i].sum(), 1), 2) for i in range(k)}
    return {"accuracy": round(100.0 * float((labels == predictions).mean()), 2), "clips": int(len(labels)),
            "per_class_accuracy": per_class, "confusion": confusion.tolist(), "classes": list(class_names)}


def run(args):
    import keras
    import tensorflow as tf

    from captioner.data.ucf101 import load_ucf101
    from captioner.features.video_store import load_features
    from captioner.models.video_classifier_model import VideoClassifierModel
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.io import write_json

    command = _command("video-classify")
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    dev_groups = parse_groups(args.dev_groups)
    splits = {s: load_ucf101(args.data_dir, s, split_id=args.split_id, dev_groups=dev_groups)
              for s in ("train", "dev", "test")}
    class_names = splits["train"].class_names
    if args.limit:
        splits["train"].video_paths = splits["train"].video_paths[: args.limit]
        splits["train"].labels = splits["train"].labels[: args.limit]
    if not splits["dev"].video_paths:
        raise SystemExit(f"no dev clips: no train clip is in --dev-groups {args.dev_groups}")
    data = {}
    for name, split in splits.items():
        label_of = dict(zip(split.video_paths, split.labels))
        kept, feats, mask = load_features(split.video_paths, args.features, feature=args.feature,
                                          backbone=args.backbone, num_frames=args.num_frames, fps=args.fps,
                                          dtype=np.float16 if args.feature == "grid" else np.float32)
        data[name] = (feats, mask, np.array([label_of[p] for p in kept], np.int32), kept)
        log.info("%s: %d clips, %s", name, len(kept), splits[name].counts() if name != "train" else "")
    train_x, train_m, train_y, _ = data["train"]
    feature_dim = train_x.shape[-1]
    grid_regions = train_x.shape[2] if args.feature == "grid" else None

    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(class_names=class_names, train_clips=len(train_y), dev_clips=len(data["dev"][2]),
                  test_clips=len(data["test"][2]), command=command)
    write_json(run_dir.path("config.json"), config)

    model = VideoClassifierModel(len(class_names), feature_dim, feature=args.feature, grid_regions=grid_regions,
                                 grid_channels=args.grid_channels, projection_dim=args.projection_dim,
                                 units=args.units, dropout=args.dropout)
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    dataset = (tf.data.Dataset.from_tensor_slices(({"features": train_x, "mask": train_m}, train_y))
               .shuffle(len(train_y), seed=args.seed, reshuffle_each_iteration=True)
               .batch(args.batch_size).prefetch(2))
    state, initial_epoch = None, 0
    if args.resume and run_dir.has_checkpoint():
        state = run_dir.restore(model)
        initial_epoch = state["epoch"]

    def predict(split):
        feats, mask, _, _ = data[split]
        logits = model.predict({"features": feats, "mask": mask}, batch_size=128, verbose=0)
        return logits.argmax(-1)

    def epoch_eval():
        return {"dev_accuracy": 100.0 * float((predict("dev") == data["dev"][2]).mean())}

    callbacks = [EpochCheckpoint(run_dir, epoch_eval, "dev_accuracy", patience=args.patience, state=state,
                                 plot_fn=lambda h, d: plot_history(h, d, "dev_accuracy"))]
    if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
        model.fit(dataset, epochs=args.epochs, initial_epoch=initial_epoch, callbacks=callbacks, verbose=1)
    model.load_weights(run_dir.path("best.weights.h5"))
    metrics = {"selection": "dev accuracy", "best_epoch": callbacks[0].best_epoch}
    for split in ("dev", "test"):
        metrics[split] = accuracy_report(data[split][2], predict(split), class_names)
        log.info("%s accuracy: %.2f%%", split, metrics[split]["accuracy"])
    write_json(run_dir.path("metrics.json"), metrics)
    model_out = args.model_out or run_dir.path("model.keras")
    save_video_classifier(model, class_names, model_out, args, metrics, config)
    print(json.dumps({s: metrics[s]["accuracy"] for s in ("dev", "test")}, indent=2))
    print(f"saved {model_out}")
    return 0


def save_video_classifier(model, class_names, path, args, metrics, config):
    """Wrap the trained classifier with its backbone; save one .keras file + metrics json, atomically."""
    from captioner.backbones import get_backbone
    from captioner.models.video_classifier import VideoClassifier
    from captioner.io import atomic_path, write_json

    backbone = get_backbone(args.backbone)
    classifier = VideoClassifier(backbone.model, model, class_names, num_frames=args.num_frames,
                                 sample_fps=args.fps or 0.0,
                                 training_config={"feature": args.feature, "seed": args.seed})
    with atomic_path(path, ".keras") as tmp:
        classifier.save(tmp)
    write_json(os.path.splitext(path)[0] + ".json", {
        "model": os.path.basename(path), "task": "video activity classification",
        "command": config.get("command"), "seed": args.seed,
        "data": {"data_dir": args.data_dir, "layout": "ucf101", "split_id": args.split_id,
                 "dev_groups": args.dev_groups, "train_clips": config["train_clips"],
                 "dev_clips": config["dev_clips"], "test_clips": config["test_clips"]},
        "config": {k: v for k, v in config.items() if k != "command"},
        "metrics": metrics,
    })
