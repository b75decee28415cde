"""`captioner train video-caption`: LSTM encoder over frame features, attention decoder.

    captioner train video-caption \
        --data /work/data/video/synthetic/captions.csv /work/data/video/synthetic \
               /work/data/video/synthetic_lite0_f8.h5 \
        --data /work/data/video/photo_pan/captions.csv /work/data/video/photo_pan/videos \
               /work/data/video/photo_pan_lite0_f8.h5 \
        --output-dir runs/video_caption --model-out assets/models/video_caption.keras

Each `--data CSV VIDEOS_DIR FEATURES` is an MSVD-style dataset (see captioner.data.msvd)
with split files (`--train-split` etc., clip ids one a line, looked up beside the csv) and
its per-clip feature store; several datasets train one model with one vocabulary. Missing
features are extracted first (resumable). One example per (clip, caption); model selection
and early stopping use the mean over datasets of dev BLEU-4 from real beam decoding. The
test splits are scored once, at the end. `--compare-image-model` also captions the photos
behind photo-pan test clips with an image captioner, for the comparison in the metrics.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import time
import types

import numpy as np

log = logging.getLogger(__name__)


def register(subparsers):
    p = subparsers.add_parser(
        "video-caption", help="train a video captioner (LSTM over frame features + attention decoder, s0 = h_T)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", nargs=3, action="append", required=True, metavar=("CSV", "VIDEOS_DIR", "FEATURES"),
                   help="an MSVD-style dataset: captions csv, folder of clips, per-clip feature store (repeatable)")
    p.add_argument("--train-split", default="train.txt", help="split file beside each csv")
    p.add_argument("--dev-split", default="dev.txt")
    p.add_argument("--test-split", default="test.txt", help="'' for none")
    p.add_argument("--backbone", default="efficientnet_lite0")
    p.add_argument("--feature", choices=("pooled", "grid"), default="pooled")
    p.add_argument("--num-frames", type=int, default=8)
    p.add_argument("--fps", type=float, default=None)
    p.add_argument("--output-dir", required=True)
    p.add_argument("--model-out", help="final .keras file (default OUTPUT_DIR/model.keras)")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--min-count", type=int, default=5)
    p.add_argument("--max-caption-length", type=int, default=20)
    p.add_argument("--embedding-dim", type=int, default=128)
    p.add_argument("--units", type=int, default=256, help="encoder LSTM = decoder LSTM size (s0 = h_T)")
    p.add_argument("--projection-dim", type=int, default=256)
    p.add_argument("--attention-units", type=int, default=128)
    p.add_argument("--grid-channels", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--beam-size", type=int, default=3)
    p.add_argument("--alpha", type=float, default=0.0)
    p.add_argument("--max-length", type=int, default=20)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="use only the first N train clips of each dataset")
    p.add_argument("--dev-limit", type=int, default=None)
    p.add_argument("--no-extract", action="store_true",
                   help="never run the backbone: use only clips whose features are already stored")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--compare-image-model", help="image captioner .keras to compare on photo-pan test photos")
    p.add_argument("--compare-images-dir", help="folder of the photos named in sources.csv (Flickr8k Images/)")
    p.set_defaults(func=run)


def _split_path(csv_path, name):
    return os.path.join(os.path.dirname(os.path.abspath(csv_path)), name)


def decode_clips(model, features, mask, vocab, beam_size=3, alpha=0.0, max_length=20, batch_size=128):
    """Beam-decode feature batches; returns [caption text] in order."""
    from captioner.decoding import hypothesis_texts

    out = []
    for start in range(0, len(features), batch_size):
        result = model.generate(features[start:start + batch_size], mask[start:start + batch_size],
                                beam_size=beam_size, alpha=alpha, max_length=max_length)
        out.extend(hypothesis_texts(result, vocab))
    return out


def run(args):
    import keras
    import tensorflow as tf

    from captioner.data.msvd import load_msvd
    from captioner.features.video_store import load_features
    from captioner.metrics import evaluate_captions
    from captioner.models.caption_decoder_model import masked_sparse_ce
    from captioner.models.video_caption_model import VideoCaptionModel
    from captioner.text import Vocabulary, tokenize
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.training.caption_data import CaptionExamples
    from captioner.io import write_json

    command = ("captioner train video-caption " + " ".join(shlex.quote(a) for a in
               sys.argv[sys.argv.index("video-caption") + 1:])) if "video-caption" in sys.argv else None
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    split_names = {"train": args.train_split, "dev": args.dev_split}
    if args.test_split:
        split_names["test"] = args.test_split
    # 1. every dataset's splits, features (extracted if missing) and captions
    sets = []  # per dataset: {split: (paths, feats, mask, captions)}
    for csv_path, videos_dir, store in args.data:
        name = os.path.basename(os.path.dirname(os.path.abspath(csv_path)))
        entry = {"name": name, "csv": csv_path, "videos_dir": videos_dir, "features": store}
        for split, file in split_names.items():
            ds = load_msvd(csv_path, videos_dir, _split_path(csv_path, file), split=split, name=name)
            if split == "train" and args.limit:
                ds = ds.subset(args.limit)
            if split != "train" and args.dev_limit:
                ds = ds.subset(args.dev_limit)
            kept, feats, mask = load_features(ds.video_paths, store, feature=args.feature, backbone=args.backbone,
                                              num_frames=args.num_frames, fps=args.fps,
                                              dtype=np.float16 if args.feature == "grid" else np.float32,
                                              extract=not args.no_extract)
            entry[split] = (kept, feats, mask, {p: ds.captions[p] for p in kept}, {p: ds.ids[p] for p in kept})
            log.info("%s %s: %d clips", name, split, len(kept))
        sets.append(entry)
    # 2. vocabulary over all train captions
    vocab_path = run_dir.path("vocabulary.json")
    if args.resume and os.path.exists(vocab_path):
        vocab = Vocabulary.load(vocab_path)
    else:
        vocab = Vocabulary.build([tokenize(c) for e in sets for caps in e["train"][3].values() for c in caps],
                                 min_count=args.min_count)
        vocab.save(vocab_path)
    log.info("vocabulary: %d words (min count %d)", len(vocab), args.min_count)
    # 3. one feature array over the datasets' train clips; one example per (clip, caption)
    train_paths = [p for e in sets for p in e["train"][0]]
    train_feats = np.concatenate([e["train"][1] for e in sets])
    train_mask = np.concatenate([e["train"][2] for e in sets])
    captions = {p: c for e in sets for p, c in e["train"][3].items()}
    examples = CaptionExamples.build(types.SimpleNamespace(image_paths=train_paths, captions=captions),
                                     vocab, args.max_caption_length)
    steps = examples.steps_per_epoch(args.batch_size)

    def batches(state={"epoch": 0}):
        rng = np.random.default_rng(args.seed + state["epoch"])
        state["epoch"] += 1
        order = rng.permutation(len(examples))
        for start in range(0, len(order), args.batch_size):
            idx = order[start:start + args.batch_size]
            width = int(examples.lengths[idx].max())
            toks = examples.tokens[idx, :width]
            rows = examples.rows[idx]
            yield ({"features": train_feats[rows], "mask": train_mask[rows], "tokens": toks[:, :-1]}, toks[:, 1:])

    spec = ({"features": tf.TensorSpec((None,) + train_feats.shape[1:], tf.as_dtype(train_feats.dtype)),
             "mask": tf.TensorSpec((None, train_mask.shape[1]), tf.bool),
             "tokens": tf.TensorSpec((None, None), tf.int32)}, tf.TensorSpec((None, None), tf.int32))
    # repeat(): the generator runs anew (a new shuffle) each epoch; steps_per_epoch cuts the epochs.
    # Without it Keras finds the iterator exhausted at the start of every second epoch.
    dataset = tf.data.Dataset.from_generator(batches, output_signature=spec).repeat().prefetch(2)

    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(vocab_size=len(vocab), command=command,
                  datasets={e["name"]: {s: len(e[s][0]) for s in split_names} for e in sets},
                  train_captions=len(examples))
    write_json(run_dir.path("config.json"), config)

    grid_regions = train_feats.shape[2] if args.feature == "grid" else None
    model = VideoCaptionModel(len(vocab), train_feats.shape[-1], feature=args.feature, grid_regions=grid_regions,
                              grid_channels=args.grid_channels, projection_dim=args.projection_dim,
                              units=args.units, embedding_dim=args.embedding_dim,
                              attention_units=args.attention_units, dropout=args.dropout)
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0), loss=masked_sparse_ce)
    state, initial_epoch = None, 0
    if args.resume and run_dir.has_checkpoint():
        state = run_dir.restore(model)
        initial_epoch = state["epoch"]

    def evaluate(split, beam_size=args.beam_size, tool="python", meteor=False):
        out = {}
        for e in sets:
            if split not in e:
                continue
            paths, feats, mask, refs, _ = e[split]
            hyps = decode_clips(model, feats, mask, vocab, beam_size, args.alpha, args.max_length)
            scores = evaluate_captions(refs, dict(zip(paths, hyps)), tool=tool, meteor=meteor)
            out[e["name"]] = (scores, dict(zip(paths, hyps)))
        return out

    def epoch_eval():
        results = evaluate("dev")
        scores = {f"dev_BLEU-4_{n}": s["BLEU-4"] for n, (s, _) in results.items()}
        scores["dev_BLEU-4"] = float(np.mean(list(scores.values())))
        scores.update({f"dev_CIDEr_{n}": s["CIDEr"] for n, (s, _) in results.items()})
        return scores

    callbacks = [EpochCheckpoint(run_dir, epoch_eval, "dev_BLEU-4", patience=args.patience, state=state,
                                 plot_fn=lambda h, d: plot_history(h, d, "dev_BLEU-4"))]
    if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
        model.fit(dataset, epochs=args.epochs, initial_epoch=initial_epoch, steps_per_epoch=steps,
                  callbacks=callbacks, verbose=1)
    # 4. best weights -> final metrics on dev and test, samples, one-file inference model
    model.load_weights(run_dir.path("best.weights.h5"))
    metrics = {"selection": f"mean dev BLEU-4 over datasets (python BLEU, beam {args.beam_size})",
               "best_epoch": callbacks[0].best_epoch, "beam_size": args.beam_size}
    samples = {}
    for split in [s for s in ("dev", "test") if s in split_names]:
        t = time.perf_counter()
        for name, (scores, hyps) in evaluate(split, tool="auto", meteor=True).items():
            metrics.setdefault(name, {})[split] = {**scores, "clips": len(hyps)}
            e = next(x for x in sets if x["name"] == name)
            samples.setdefault(name, {})[split] = [
                {"clip": e[split][4][p], "caption": h, "references": e[split][3][p][:3]}
                for p, h in list(hyps.items())[:15]]
            log.info("%s %s: %s", name, split, scores)
        metrics.setdefault("decode_seconds", {})[split] = round(time.perf_counter() - t, 1)
    write_json(run_dir.path("samples.json"), samples)
    if args.compare_image_model:
        from captioner.data.photo_pan_video import compare_with_image_captioner

        for e in sets:
            sources = os.path.join(os.path.dirname(os.path.abspath(e["csv"])), "sources.csv")
            if os.path.exists(sources) and "test" in e:
                metrics.setdefault(e["name"], {})["test_image_captioner"] = compare_with_image_captioner(
                    args.compare_image_model, sources, args.compare_images_dir, e["test"][3],
                    {p: e["test"][4][p] for p in e["test"][0]}, beam_size=args.beam_size)
    write_json(run_dir.path("metrics.json"), metrics)
    model_out = args.model_out or run_dir.path("model.keras")
    save_video_captioner(model, vocab, model_out, args, metrics, config)
    print(json.dumps({n: {s: {k: v for k, v in m.items() if k in ("BLEU-4", "CIDEr", "METEOR")}
                          for s, m in d.items()} for n, d in metrics.items() if isinstance(d, dict)
                      and n in {e["name"] for e in sets}}, indent=2))
    print(f"saved {model_out}")
    return 0


def save_video_captioner(model, vocab, path, args, metrics, config):
    """Wrap the trained model with its backbone; save one .keras file + metrics json, atomically."""
    from captioner.backbones import get_backbone
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.io import atomic_path, write_json

    backbone = get_backbone(args.backbone)
    # an uncompiled copy with the same weights: the saved file carries no optimizer state
    model_copy = type(model).from_config(model.get_config())
    model_copy.set_weights(model.get_weights())
    captioner_model = VideoCaptioner(backbone.model, model_copy, vocab, num_frames=args.num_frames,
                                     sample_fps=args.fps or 0.0, beam_size=args.beam_size, alpha=args.alpha,
                                     max_length=args.max_length,
                                     training_config={"feature": args.feature, "seed": args.seed})
    with atomic_path(path, ".keras") as tmp:
        captioner_model.save(tmp)
    write_json(os.path.splitext(path)[0] + ".json", {
        "model": os.path.basename(path), "task": "video captioning", "command": config.get("command"),
        "seed": args.seed, "data": config["datasets"], "train_captions": config["train_captions"],
        "config": {k: v for k, v in config.items() if k != "command"}, "metrics": metrics,
    })
