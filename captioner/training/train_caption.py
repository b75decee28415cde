"""`captioner train caption`: Show-Attend-Tell (or fc7 Show-and-Tell) on cached features.

    captioner train caption --data-dir ../shared/datasets/flickr8k --format flickr8k \
        --features work/flickr8k_lite0.h5 --output-dir runs/flickr8k_attention

Features missing from the store are extracted first (resumable). One example per
(image, caption); model selection and early stopping use dev BLEU-4 from real beam
decoding. `--resume` continues a killed run from its last checkpoint.
"""

import argparse
import json
import logging
import os
import shlex
import sys
import time

log = logging.getLogger(__name__)


def register(subparsers):
    p = subparsers.add_parser(
        "caption", help="train an image captioner (soft attention or fc7) on Flickr8k / COCO",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data-dir", required=True, help="dataset folder (Flickr8k layout) or images root (COCO)")
    p.add_argument("--format", choices=("flickr8k", "coco"), default="flickr8k")
    p.add_argument("--karpathy-json", help="COCO: Karpathy split json (dataset_coco.json)")
    p.add_argument("--train-split", default="train")
    p.add_argument("--dev-split", default=None, help="default: dev (flickr8k) / val (coco)")
    p.add_argument("--features", required=True, help="HDF5 feature store (created/extended as needed)")
    p.add_argument("--backbone", default="efficientnet_lite0")
    p.add_argument("--output-dir", required=True, help="run directory: checkpoints, logs, model")
    p.add_argument("--model-out", help="final .keras file (default OUTPUT_DIR/model.keras)")
    p.add_argument("--kind", choices=("attention", "fc-init", "fc-concat"), default="attention")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=4e-4)
    p.add_argument("--min-count", type=int, default=5, help="vocabulary: minimum word count")
    p.add_argument("--max-caption-length", type=int, default=22, help="words kept per training caption")
    p.add_argument("--embedding-dim", type=int, default=256)
    p.add_argument("--units", type=int, default=512)
    p.add_argument("--attention-units", type=int, default=256)
    p.add_argument("--projection-dim", type=int, default=512)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--attention-lambda", type=float, default=1.0, help="doubly stochastic regularization")
    p.add_argument("--beam-size", type=int, default=3, help="beam width of dev decoding and the saved model")
    p.add_argument("--alpha", type=float, default=0.0, help="length penalty of the saved model")
    p.add_argument("--max-length", type=int, default=20, help="max generated tokens")
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--lr-decay", type=float, default=0.5,
                   help="multiply the learning rate by this after each epoch without dev improvement")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="use only the first N train images (smoke runs)")
    p.add_argument("--dev-limit", type=int, default=None, help="use only the first N dev images")
    p.add_argument("--distribute", choices=("none", "mirrored", "multi-worker"), default="none")
    p.add_argument("--mixed-precision", action="store_true",
                   help="train in mixed_bfloat16 (float32 weights, bfloat16 math): ~1.25x less CPU time per "
                        "step on CPUs with AVX512_BF16 (scripts/bench_training.py); the saved model decodes "
                        "in float32")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT_DIR's last checkpoint")
    p.add_argument("--final-eval-beams", default="1,3", help="beam widths of the final coco-caption evaluation")
    p.set_defaults(func=run)


def _load_split(args, split):
    from captioner.data import load_coco_karpathy, load_flickr8k

    if args.format == "flickr8k":
        return load_flickr8k(args.data_dir, split=split)
    if not args.karpathy_json:
        raise SystemExit("--format coco needs --karpathy-json")
    return load_coco_karpathy(args.karpathy_json, args.data_dir, split=split)


def strategy_for(name):
    import tensorflow as tf

    if name == "mirrored":
        # All GPUs, or else every logical CPU device (e.g. CPUs split for testing).
        gpus = tf.config.list_logical_devices("GPU")
        devices = [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]
        return tf.distribute.MirroredStrategy(devices=devices)
    if name == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()


def run(args):
    import keras
    import numpy as np
    import tensorflow as tf

    from captioner.features.extract import extract_features
    from captioner.features.store import FeatureStore
    from captioner.models.caption_decoder_model import KINDS, CaptionDecoderModel, masked_sparse_ce
    from captioner.text import Vocabulary, tokenize
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.training.caption_data import CaptionExamples, decode_captions
    from captioner.io import write_json

    command = "captioner train caption " + " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index("caption") + 1:]) \
        if "caption" in sys.argv else None
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    dev_split = args.dev_split or ("dev" if args.format == "flickr8k" else "val")
    train = _load_split(args, args.train_split)
    dev = _load_split(args, dev_split)
    if args.limit:
        train.image_paths = train.image_paths[: args.limit]
    if args.dev_limit:
        dev.image_paths = dev.image_paths[: args.dev_limit]
    key = os.path.basename
    # 1. features (extract what is missing; resumable)
    needed = train.image_paths + dev.image_paths
    report = extract_features(needed, args.features, backbone=args.backbone, ids=[key(p) for p in needed])
    if report.failed:
        bad = {p for p, _ in report.failed}
        log.warning("%d images could not be read and are left out", len(bad))
        train.image_paths = [p for p in train.image_paths if p not in bad]
        dev.image_paths = [p for p in dev.image_paths if p not in bad]
    feature = KINDS[args.kind][0]
    with FeatureStore(args.features) as store:
        train_feats = store.load([key(p) for p in train.image_paths], grid=feature == "grid", pooled=feature == "pooled")[feature]
        dev_feats = store.load([key(p) for p in dev.image_paths], grid=feature == "grid", pooled=feature == "pooled")[feature]
        backbone_name = store.backbone
    # 2. vocabulary from the train captions
    vocab_path = run_dir.path("vocabulary.json")
    if args.resume and os.path.exists(vocab_path):
        vocab = Vocabulary.load(vocab_path)
    else:
        vocab = Vocabulary.build([tokenize(c) for p in train.image_paths for c in train.captions[p]],
                                 min_count=args.min_count)
        vocab.save(vocab_path)
    log.info("vocabulary: %d words (min count %d)", len(vocab), args.min_count)
    examples = CaptionExamples.build(train, vocab, args.max_caption_length)
    steps = examples.steps_per_epoch(args.batch_size)

    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(backbone=backbone_name, vocab_size=len(vocab), train_images=len(train.image_paths),
                  train_captions=len(examples), dev_images=len(dev.image_paths), command=command)
    write_json(run_dir.path("config.json"), config)

    strategy = strategy_for(args.distribute)
    previous_policy = keras.mixed_precision.global_policy().name
    if getattr(args, "mixed_precision", False):
        keras.mixed_precision.set_global_policy("mixed_bfloat16")  # for the layers built now only
    try:
        with strategy.scope():
            model = CaptionDecoderModel(
                len(vocab), annotation_dim=train_feats.shape[-1], kind=args.kind,
                projection_dim=args.projection_dim, embedding_dim=args.embedding_dim, units=args.units,
                attention_units=args.attention_units, dropout=args.dropout, attention_lambda=args.attention_lambda,
            )
            model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0), loss=masked_sparse_ce)
    finally:
        keras.mixed_precision.set_global_policy(previous_policy)
    state, initial_epoch = run_dir.resume(model, args.resume)

    # a resumed run continues the shuffling sequence where the checkpoint left it
    dataset = examples.dataset(train_feats, args.batch_size, seed=args.seed + initial_epoch)
    references = {p: dev.captions[p] for p in dev.image_paths}

    def evaluate(beam_size=args.beam_size, tool="python", alpha=args.alpha, meteor=True):
        from captioner.metrics import evaluate_captions

        hyps = decode_captions(model, dev_feats, dev.image_paths, vocab, beam_size=beam_size,
                               alpha=alpha, max_length=args.max_length)
        scores = evaluate_captions(references, hyps, tool=tool, meteor=meteor)
        return scores, hyps

    def epoch_eval():
        scores, _ = evaluate(meteor=False)
        return {"dev_BLEU-4": scores["BLEU-4"], "dev_CIDEr": scores["CIDEr"]}

    callbacks = [
        EpochCheckpoint(run_dir, epoch_eval, "dev_BLEU-4", patience=args.patience, state=state,
                        plot_fn=lambda h, d: plot_history(h, d, "dev_BLEU-4"), lr_decay=args.lr_decay),
        keras.callbacks.TensorBoard(run_dir.path("tensorboard"), update_freq=50),
    ]
    if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
        model.fit(dataset, epochs=args.epochs, initial_epoch=initial_epoch, steps_per_epoch=steps,
                  callbacks=callbacks, verbose=1)
    # 3. the best weights -> one-file inference model + metrics
    model.load_weights(run_dir.path("best.weights.h5"))
    history = json.load(open(run_dir.path("history.json")))
    metrics = {"split": f"{args.format} {dev_split}", "images": len(dev.image_paths),
               "best_epoch": callbacks[0].best_epoch, "selection": "dev BLEU-4 (python BLEU, beam %d)" % args.beam_size}
    for beam in [int(b) for b in args.final_eval_beams.split(",") if b]:
        t = time.perf_counter()
        scores, hyps = evaluate(beam_size=beam, tool="auto")
        metrics[f"beam_{beam}"] = {**scores, "decode_seconds": round(time.perf_counter() - t, 1)}
        log.info("dev beam %d: %s", beam, scores)
    _, hyps = evaluate(meteor=False)
    samples = [{"image": os.path.basename(p), "caption": hyps[p], "references": references[p][:2]}
               for p in dev.image_paths[:20]]
    write_json(run_dir.path("dev_samples.json"), samples)
    write_json(run_dir.path("metrics.json"), metrics)
    model_out = args.model_out or run_dir.path("model.keras")
    save_image_captioner(model, vocab, backbone_name, model_out, args, metrics, config)
    print(json.dumps(metrics, indent=2))
    print(f"saved {model_out}")
    return 0


def inference_copy(decoder_model):
    """An uncompiled float32 copy with the same weights: the saved file carries no optimizer state."""
    from captioner.models.caption_decoder_model import CaptionDecoderModel

    # float32 whatever the training policy (--mixed-precision): the weights are float32 anyway
    copy = CaptionDecoderModel.from_config({**decoder_model.get_config(), "dtype": "float32"})
    copy.set_weights(decoder_model.get_weights())
    return copy


def save_image_captioner(decoder_model, vocab, backbone_name, path, args, metrics, config):
    """Wrap the trained decoder with its backbone and save one .keras file atomically."""
    from captioner.backbones import get_backbone
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.io import atomic_path, write_json

    backbone = get_backbone(backbone_name)
    decoder_model = inference_copy(decoder_model)
    captioner_model = ImageCaptioner(backbone.model, decoder_model, vocab, beam_size=args.beam_size,
                                     alpha=args.alpha, max_length=args.max_length,
                                     training_config={"kind": args.kind, "seed": args.seed})
    with atomic_path(path, ".keras") as tmp:
        captioner_model.save(tmp)
    base = os.path.splitext(path)[0]
    write_json(base + ".json", {"model": os.path.basename(path), "task": "image captioning",
                                "command": config.get("command"), "seed": args.seed,
                                "data": {"format": args.format, "data_dir": args.data_dir,
                                         "train_split": args.train_split,
                                         "train_images": config["train_images"],
                                         "train_captions": config["train_captions"]},
                                "config": {k: v for k, v in config.items() if k != "command"},
                                "dev_metrics": metrics})
