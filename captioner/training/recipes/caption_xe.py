"""Cross-entropy training of the image captioner (`captioner train caption` without --scst; the
command, its options and the choice of recipe are in `caption.py`, self-critical training in
`caption_scst.py`)."""

import logging
import os
import time

from captioner.training.trainer import Recipe

log = logging.getLogger("captioner.training.recipes.caption")


TRANSFER_VECTORS = "glove-6b-50d"  # the held-out words' weights are mapped from these (a plain decoder)


class Caption(Recipe):
    """Cross-entropy training of a `CaptionDecoderModel` on cached features (teacher forcing)."""

    task = "caption"
    metric = "dev_BLEU-4"

    def _split(self, split):
        from captioner.data import load_coco_karpathy, load_flickr8k
        from captioner.errors import InputError

        if self.corpora:
            from captioner.data.caption_corpora import load_corpora

            return load_corpora(self.corpora, "train" if split == self.cfg.train_split else "dev",
                                self.cfg.karpathy_json)
        if not self.cfg.data_dir:
            raise InputError("give --data-dir (with --format) or one or more --corpus")
        if self.cfg.format == "flickr8k":
            return load_flickr8k(self.cfg.data_dir, split=split)
        if not self.cfg.karpathy_json:
            raise InputError("--format coco needs --karpathy-json")
        return load_coco_karpathy(self.cfg.karpathy_json, self.cfg.data_dir, split=split)

    @property
    def corpora(self):
        """The --corpus specs (`captioner.data.caption_corpora.Corpus`), [] for --data-dir."""
        from captioner.data.caption_corpora import check_styles, parse_corpus

        if not hasattr(self, "_corpora"):
            self._corpora = check_styles([parse_corpus(spec) for spec in self.cfg.corpus or ()])
        return self._corpora

    def prepare(self, trainer):
        from captioner.features.store import FeatureStore
        from captioner.models.caption_decoder_model import KINDS
        from captioner.text import tokenize
        from captioner.training.caption_data import CaptionExamples, extract_missing

        cfg = self.cfg
        if getattr(cfg, "no_style_tokens", False) and (not self.corpora or cfg.default_style):
            from captioner.errors import InputError

            raise InputError("--no-style-tokens starts every caption of the --corpus corpora with <start>: it needs "
                             "--corpus, and a model without style tokens has no --default-style")
        self.dev_split = cfg.dev_split or ("dev" if cfg.format == "flickr8k" else "val")
        self.selection = f"dev BLEU-4 (python BLEU, beam {cfg.beam_size})"
        train, dev = self._split(cfg.train_split), self._split(self.dev_split)
        held_out = self.held_out_words()
        if held_out:
            kept = [p for p in train.image_paths if not any(held_out & set(tokenize(c)) for c in train.captions[p])]
            log.info("held-out words %s: %d of %d training images left out", sorted(held_out),
                     len(train.image_paths) - len(kept), len(train.image_paths))
            train.image_paths = kept
        self.before_data(trainer, train)
        train.image_paths = train.image_paths[: cfg.limit] if cfg.limit else train.image_paths
        if cfg.dev_limit:  # several corpora: the first --dev-limit photos of each
            from captioner.data.caption_corpora import first_per_corpus

            dev.image_paths = first_per_corpus(dev, cfg.dev_limit) if self.corpora else dev.image_paths[: cfg.dev_limit]
        needed = train.image_paths + dev.image_paths
        bad = extract_missing(trainer, cfg.features, self.backbone_name(), needed)  # resumable
        if bad:
            log.warning("%d images could not be read and are left out", len(bad))
            train.image_paths = [p for p in train.image_paths if p not in bad]
            dev.image_paths = [p for p in dev.image_paths if p not in bad]
        feature = KINDS[self.decoder_kind()][0]
        with FeatureStore(cfg.features) as store:
            def load(paths):
                ids = [os.path.basename(p) for p in paths]
                return store.load(ids, grid=feature == "grid", pooled=feature == "pooled")[feature]
            self.train_feats, self.dev_feats, self.backbone = load(train.image_paths), load(dev.image_paths), store.backbone
        self.vocab = trainer.cached("vocabulary.json", lambda: self.build_vocabulary(train))
        log.info("vocabulary: %d words (min count %d)", len(self.vocab), cfg.min_count)
        self.examples = CaptionExamples.build(train, self.vocab, cfg.max_caption_length, self.start_ids(train))
        self.train_set = train
        self.dev, self.references = dev, {p: dev.captions[p] for p in dev.image_paths}
        self.data = {"format": cfg.format, "data_dir": cfg.data_dir, "train_split": cfg.train_split,
                     "train_images": len(train.image_paths), "train_captions": len(self.examples)}
        if self.corpora:
            from captioner.data.caption_corpora import epoch_shares

            sizes = [int((self.examples.corpus == i).sum()) for i in range(len(self.corpora))]
            self.shares = epoch_shares(self.corpora, sizes)
            self.metric = "dev_CIDEr"  # the mean over the corpora, each decoded in its own style
            self.selection = f"dev CIDEr-D, mean over {', '.join(self.styles)} (python CIDEr-D, beam {cfg.beam_size})"
            self.data = {"corpora": [
                {"style": c.style, "format": c.format, "data_dir": c.data_dir, "train_split": c.train,
                 "dev_split": c.dev, "train_images": sum(train.metadata["corpus"][p] == i for p in train.image_paths),
                 "train_captions": sizes[i], "epoch_share": round(self.shares[i], 4)}
                for i, c in enumerate(self.corpora)],
                "train_images": len(train.image_paths), "train_captions": len(self.examples)}
            log.info("corpora: %s", self.data["corpora"])
        info = {"backbone": self.backbone, "vocab_size": len(self.vocab), "train_images": len(train.image_paths),
                "train_captions": len(self.examples), "dev_images": len(dev.image_paths), "data": self.data}
        return info

    # -- what the self-critical recipe changes (caption_scst.CaptionSCST) --------------------
    def before_data(self, trainer, train):
        """Called with the whole training split, before --limit and feature extraction."""

    def decoder_kind(self):
        return self.cfg.kind

    def backbone_name(self):
        """The backbone whose features the decoder reads."""
        return self.cfg.backbone

    def held_out_words(self):
        """The --hold-out-words, a set (empty: none)."""
        return {w.strip().lower() for w in (getattr(self.cfg, "hold_out_words", None) or "").split(",") if w.strip()}

    @property
    def styles(self):
        return [c.style for c in self.corpora]

    @property
    def styled(self):
        """Several corpora, each caption started by its corpus's style token (not --no-style-tokens)."""
        return bool(self.corpora) and not getattr(self.cfg, "no_style_tokens", False)

    def style_ids(self):
        """{style: its token id} of a styled run (several corpora with style tokens), else None."""
        from captioner.data.caption_corpora import style_token

        return {s: self.vocab.token_to_id(style_token(s)) for s in self.styles} if self.styled else None

    def start_ids(self, dataset):
        """{path: (corpus index, its style token id)} of a several-corpora split (<start>'s id for every
        corpus with --no-style-tokens), else None (<start>)."""
        from captioner.text.vocabulary import START_ID

        if not self.corpora:
            return None
        ids = list(self.style_ids().values()) if self.styled else [START_ID] * len(self.styles)
        return {p: (c, ids[c]) for p, c in dataset.metadata["corpus"].items()}

    def build_vocabulary(self, train):
        """The training captions' words seen at least --min-count times, then the held-out words
        (ids the decoder can be made to say, though it never saw them)."""
        from captioner.text import Vocabulary, tokenize

        vocab = Vocabulary.build([tokenize(c) for p in train.image_paths for c in train.captions[p]],
                                 min_count=self.cfg.min_count)
        extra = sorted(self.held_out_words() - set(vocab.tokens))
        if self.styled:  # the style tokens, last: "<web>" is no word the tokenizer makes
            from captioner.data.caption_corpora import style_token

            vocab = Vocabulary(vocab.tokens + tuple(style_token(s) for s in self.styles), vocab.metadata)
        return Vocabulary(vocab.tokens + tuple(extra), {**vocab.metadata, "held_out": extra}) if extra else vocab

    def build_model(self, seed):
        from captioner.models.caption_decoder_model import CaptionDecoderModel, CaptionNetwork

        c = self.cfg
        network = CaptionNetwork(c.kind, c.projection_dim, c.embedding_dim, c.units, c.attention_units, c.dropout,
                                 c.attention_lambda)
        return CaptionDecoderModel(len(self.vocab), self.train_feats.shape[-1], network, styles=self.style_ids())

    def steps_per_pass(self):
        return self.examples.steps_per_epoch(self.cfg.batch_size)

    def batches(self, epoch, seed):
        for rows, toks in self.examples.batches(epoch, seed, self.cfg.batch_size, getattr(self, "shares", None)):
            yield {"annotations": self.train_feats[rows], "tokens": toks[:, :-1]}, toks[:, 1:]

    def decode(self, model, beam_size=None, tool="python", meteor=True, corpus=None):
        """(scores, {path: caption}) on dev; several corpora: on `corpus`'s dev photos (an index), in its style."""
        from captioner.metrics import evaluate_captions
        from captioner.training.caption_data import decode_captions

        model = getattr(model, "captioner", model)  # a training step that wraps the decoder (SCST)
        paths, feats, style = self.dev.image_paths, self.dev_feats, None
        if corpus is not None:
            import numpy as np

            rows = np.array([i for i, p in enumerate(paths) if self.dev.metadata["corpus"][p] == corpus])
            paths, feats = [paths[i] for i in rows], self.dev_feats[rows]
            style = self.styles[corpus] if self.styled else None
        hyps = decode_captions(model, feats, paths, self.vocab, beam_size=beam_size or self.cfg.beam_size,
                               alpha=self.cfg.alpha, max_length=self.cfg.max_length, style=style)
        return evaluate_captions({p: self.references[p] for p in paths}, hyps, tool=tool, meteor=meteor), hyps

    def evaluate_dev(self, model):
        from captioner.metrics.distinct import caption_statistics

        if not self.corpora:
            scores, hyps = self.decode(model, meteor=False)
            return {"dev_BLEU-4": scores["BLEU-4"], "dev_CIDEr": scores["CIDEr"], **caption_statistics(hyps.values())}
        out = {}
        for i, style in enumerate(self.styles):
            scores, hyps = self.decode(model, meteor=False, corpus=i)
            out.update({f"dev_{style}_BLEU-4": scores["BLEU-4"], f"dev_{style}_CIDEr": scores["CIDEr"],
                        **{k.replace("dev_", f"dev_{style}_", 1): v for k, v in caption_statistics(hyps.values()).items()}})
        out["dev_CIDEr"] = sum(out[f"dev_{s}_CIDEr"] for s in self.styles) / len(self.styles)
        return out

    def evaluate(self, model, trainer):
        from captioner.io import write_json

        split = " + ".join(f"{c.style} {c.dev}" for c in self.corpora) or f"{self.cfg.format} {self.dev_split}"
        metrics = {"split": split, "images": len(self.dev.image_paths), **self.metrics_before()}
        for beam in [int(b) for b in self.cfg.final_eval_beams.split(",") if b]:
            for corpus in range(len(self.corpora)) if self.corpora else [None]:
                t = time.perf_counter()
                scores, _ = self.decode(model, beam_size=beam, tool="auto", corpus=corpus)
                key = f"beam_{beam}" if corpus is None else f"{self.styles[corpus]}_beam_{beam}"
                metrics[key] = {**scores, "decode_seconds": round(time.perf_counter() - t, 1)}
                log.info("dev %s: %s", key, scores)
        hyps = {}
        for corpus in range(len(self.corpora)) if self.corpora else [None]:
            hyps.update(self.decode(model, meteor=False, corpus=corpus)[1])
        write_json(trainer.run_dir.path("dev_samples.json"), [
            {"image": os.path.basename(p), "caption": hyps[p], "references": self.references[p][:2]}
            for p in self.dev.image_paths[:20]])
        return metrics

    def metrics_before(self):
        """Dev figures measured before this training (none for cross-entropy from scratch)."""
        return {}

    def export(self, model):
        from captioner.backbones import get_backbone
        from captioner.models.image_captioner import ImageCaptioner

        c = self.cfg
        unseen = [self.vocab.token_to_id(w) for w in self.vocab.metadata.get("held_out", [])]
        if unseen:  # DCC's transfer: the held-out words read and score like the seen words near them
            from captioner.text.word_vectors import load_word_vectors, vocabulary_vectors

            model.transfer_word_weights(unseen, vocabulary_vectors(self.vocab, load_word_vectors(TRANSFER_VECTORS)))
        style = (c.default_style or self.styles[0]) if self.styled else None
        return ImageCaptioner(get_backbone(self.backbone).feature_model, model, self.vocab, beam_size=c.beam_size,
                              alpha=c.alpha, max_length=c.max_length, training_config={"kind": model.kind, "seed": c.seed},
                              style=style)
