"""Cross-entropy training of the video captioner (`captioner train video-caption` without --scst;
the command, its options and the choice of recipe are in `video_caption.py`, self-critical training
in `video_caption_scst.py`)."""

import logging
import os
import time

from captioner.training.trainer import Recipe

log = logging.getLogger("captioner.training.recipes.video_caption")


def _compare_with_image_model(cfg, entry, beam_size):
    """The image captioner on the photos behind a photo-pan dataset's test clips, or None."""
    from captioner.inference.photo_pan import compare_with_image_captioner

    sources = os.path.join(os.path.dirname(os.path.abspath(entry["csv"])), "sources.csv")
    if not os.path.exists(sources) or "test" not in entry:
        return None
    paths, _, _, refs, ids = entry["test"]
    return compare_with_image_captioner(cfg.compare_image_model, sources, cfg.compare_images_dir, refs,
                                        {p: ids[p] for p in paths}, beam_size=beam_size)


class VideoCaption(Recipe):
    task = "video-caption"
    metric = "dev_BLEU-4"

    def prepare(self, trainer):

        import numpy as np

        from captioner.data.msvd import load_msvd
        from captioner.features.video_store import load_features
        from captioner.data.caption_dataset import CaptionDataset
        from captioner.training.caption_data import CaptionExamples

        c = self.cfg
        self.before_data(trainer)
        self.splits = {"train": c.train_split, "dev": c.dev_split, **({"test": c.test_split} if c.test_split else {})}
        self.selection = f"mean dev BLEU-4 over datasets (python BLEU, beam {c.beam_size})"
        self.sets = []  # per dataset: {split: (paths, feats, mask, captions, clip ids)}
        for csv_path, videos_dir, store in c.data:
            name = os.path.basename(os.path.dirname(os.path.abspath(csv_path)))
            entry = {"name": name, "csv": csv_path}
            for split, file in self.splits.items():
                split_file = os.path.join(os.path.dirname(os.path.abspath(csv_path)), file)
                ds = load_msvd(csv_path, videos_dir, split_file, split=split, name=name)
                if split == "train":  # every training reference, before --limit (SCST's document frequencies)
                    entry["train_references"] = [ds.captions[p] for p in ds.video_paths]
                limit = c.limit if split == "train" else c.dev_limit
                ds = ds.subset(limit) if limit else ds
                kept, feats, mask = load_features(ds.video_paths, store, feature=c.feature, backbone=c.backbone,
                                                  num_frames=c.num_frames, fps=c.fps, extract=not c.no_extract,
                                                  dtype=np.float16 if c.feature == "grid" else np.float32)
                entry[split] = (kept, feats, mask, {p: ds.captions[p] for p in kept}, {p: ds.ids[p] for p in kept})
                log.info("%s %s: %d clips", name, split, len(kept))
            self.sets.append(entry)
        self.vocab = trainer.cached("vocabulary.json", self.build_vocabulary)
        log.info("vocabulary: %d words (min count %d)", len(self.vocab), c.min_count)
        # one feature array over the datasets' train clips; one example per (clip, caption)
        self.feats = np.concatenate([e["train"][1] for e in self.sets])
        self.mask = np.concatenate([e["train"][2] for e in self.sets])
        train = CaptionDataset([p for e in self.sets for p in e["train"][0]],
                               {p: t for e in self.sets for p, t in e["train"][3].items()}, "video", "train")
        self.examples = CaptionExamples.build(train, self.vocab, c.max_caption_length)
        self.train_set = train
        self.datasets = {e["name"]: {s: len(e[s][0]) for s in self.splits} for e in self.sets}
        return {"vocab_size": len(self.vocab), "datasets": self.datasets, "train_captions": len(self.examples)}

    # -- what the self-critical recipe changes (video_caption_scst.VideoCaptionSCST) ----------------
    def before_data(self, trainer):
        """Called first by `prepare`, before any data is read."""

    def build_vocabulary(self):
        """The training captions' words seen at least --min-count times."""
        from captioner.text import Vocabulary, tokenize

        return Vocabulary.build([tokenize(t) for e in self.sets for caps in e["train"][3].values() for t in caps],
                                min_count=self.cfg.min_count)

    def metrics_before(self):
        """Dev figures measured before this training (none for cross-entropy from scratch)."""
        return {}

    def card_data(self, trainer):
        return {"datasets": self.datasets, "train_captions": len(self.examples)}

    def build_model(self, seed):
        from captioner.models.video_caption_model import VideoCaptionModel

        c = self.cfg
        return VideoCaptionModel(len(self.vocab), self.feats.shape[-1], feature=c.feature,
                                 grid_regions=self.feats.shape[2] if c.feature == "grid" else None,
                                 grid_channels=c.grid_channels, projection_dim=c.projection_dim, units=c.units,
                                 embedding_dim=c.embedding_dim, attention_units=c.attention_units, dropout=c.dropout)

    def steps_per_pass(self):
        return self.examples.steps_per_epoch(self.cfg.batch_size)

    def batches(self, epoch, seed):
        for rows, toks in self.examples.batches(epoch, seed, self.cfg.batch_size):
            yield {"features": self.feats[rows], "mask": self.mask[rows], "tokens": toks[:, :-1]}, toks[:, 1:]

    def decode(self, model, split, tool="python", meteor=False):
        """{dataset name: (scores, {clip path: caption})} of one split."""
        from captioner.metrics import evaluate_captions
        from captioner.training.caption_data import decode_clips

        model = getattr(model, "captioner", model)  # a training step that wraps the decoder (SCST)
        out = {}
        for e in [e for e in self.sets if split in e]:
            paths, feats, mask, refs, _ = e[split]
            hyps = dict(zip(paths, decode_clips(model, feats, mask, self.vocab, self.cfg.beam_size, self.cfg.alpha,
                                                self.cfg.max_length)))
            out[e["name"]] = (evaluate_captions(refs, hyps, tool=tool, meteor=meteor), hyps)
        return out

    def evaluate_dev(self, model):
        import numpy as np

        from captioner.metrics.distinct import caption_statistics

        results = self.decode(model, "dev")
        scores = {f"dev_BLEU-4_{n}": s["BLEU-4"] for n, (s, _) in results.items()}
        scores["dev_BLEU-4"] = float(np.mean(list(scores.values())))
        scores.update({f"dev_CIDEr_{n}": s["CIDEr"] for n, (s, _) in results.items()})
        scores["dev_CIDEr"] = float(np.mean([s["CIDEr"] for s, _ in results.values()]))  # SCST selects on it
        return {**scores, **caption_statistics([h for _, hyps in results.values() for h in hyps.values()])}

    def evaluate(self, model, trainer):
        from captioner.io import write_json

        c = self.cfg
        held_out = [s for s in ("dev", "test") if s in self.splits]
        metrics, samples = {"split": held_out[-1], "beam_size": c.beam_size, **self.metrics_before()}, {}
        for split in held_out:
            t = time.perf_counter()
            for name, (scores, hyps) in self.decode(model, split, tool="auto", meteor=True).items():
                metrics.setdefault(name, {})[split] = {**scores, "clips": len(hyps)}
                e = next(x for x in self.sets if x["name"] == name)
                samples.setdefault(name, {})[split] = [{"clip": e[split][4][p], "caption": h,
                                                        "references": e[split][3][p][:3]}
                                                       for p, h in list(hyps.items())[:15]]
                log.info("%s %s: %s", name, split, scores)
            metrics.setdefault("decode_seconds", {})[split] = round(time.perf_counter() - t, 1)
        write_json(trainer.run_dir.path("samples.json"), samples)
        for e in self.sets if c.compare_image_model else ():
            comparison = _compare_with_image_model(c, e, c.beam_size)
            if comparison is not None:
                metrics.setdefault(e["name"], {})["test_image_captioner"] = comparison
        return metrics

    def export(self, model):
        from captioner.backbones import get_backbone
        from captioner.models.video_captioner import VideoCaptioner

        c = self.cfg
        return VideoCaptioner(get_backbone(c.backbone).feature_model, model, self.vocab, num_frames=c.num_frames,
                              sample_fps=c.fps or 0.0, beam_size=c.beam_size, alpha=c.alpha, max_length=c.max_length,
                              training_config={"feature": c.feature, "seed": c.seed})
