"""`captioner train transliterate`: character-level romanized -> native script (Dakshina).

    captioner train transliterate --data ../shared/datasets/dakshina-hi --output-dir runs/translit_hi \\
        --model-out assets/models/dakshina_hi_translit.keras

The translator's model (`Seq2Seq`, bidirectional GRU encoder + Bahdanau attention decoder)
over characters: both vocabularies are the characters of the training lexicon. Each distinct
(romanized, native) pair is one example; --weighting gives it a loss weight from how many
annotators wrote that romanization (count, sqrt of it, or 1 for all), normalized to mean 1.

Model selection: greedy top-1 accuracy on the whole dev lexicon, each distinct romanization
once, right when the output is any native word dev pairs with it. The reported metrics (dev:
the test split is held back) are top-1, top-5 and CER of the beam search of the saved model.
"""

import dataclasses
import logging
import os

from captioner.training.config import option
from captioner.training.seq2seq_recipe import Seq2SeqConfig, Seq2SeqRecipe

NAME = "transliterate"
HELP = "train a character-level transliteration model (romanized -> native script, Dakshina)"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(Seq2SeqConfig):
    data: str = option("../shared/datasets/dakshina-hi", help="folder of <lang>.translit.sampled.{train,dev}.tsv")
    language: str = option("hi", help="Dakshina language code")
    weighting: str = option("count", choices=("count", "sqrt", "none"),
                            help="loss weight of a pair: its attestation count, the square root of it, or 1")
    epochs: int = 30
    batch_size: int = 128
    patience: int = 4
    embedding_dim: int = 64
    min_count: int = 1
    max_source_length: int = 30
    max_target_length: int = 30
    dev_limit: int | None = None
    beam_size: int = 10


class Transliterate(Seq2SeqRecipe):
    """Characters of a romanized word -> characters of the native one: the seq2seq base's model and
    batches, its own data (Dakshina lexicons, each pair weighted by its attestations) and scores."""

    task = "transliterate"
    metric = "dev_top1"
    replace_unk = False  # a Latin letter is never a Devanagari one

    def prepare(self, trainer):
        import numpy as np

        from captioner.data.dakshina import load_dakshina, romanized_lexicon
        from captioner.models.seq2seq import text_tokens
        from captioner.text import Vocabulary
        from captioner.training.translation_data import BucketedBatches

        c = self.cfg
        files = {s: os.path.join(c.data, f"{c.language}.translit.sampled.{s}.tsv") for s in ("train", "dev")}
        train = load_dakshina(files["train"])[: c.limit] if c.limit else load_dakshina(files["train"])
        self.dev = romanized_lexicon(load_dakshina(files["dev"]))
        counts = {}
        for p in train:  # a pair listed twice counts once, with the attestations summed
            counts[(p.romanized, p.native)] = counts.get((p.romanized, p.native), 0) + p.attestations
        pairs = [(r, n) for r, n in counts if len(r) <= c.max_source_length and len(n) <= c.max_target_length]
        self.src_tok, self.tgt_tok, self.layers = {"chars": True, "lower": True}, {"chars": True, "lower": False}, \
            c.encoder_layers or 1
        src = [text_tokens(r, self.src_tok) for r, _ in pairs]
        tgt = [text_tokens(n, self.tgt_tok) for _, n in pairs]
        self.src_vocab, self.tgt_vocab = (trainer.cached(f"{side}_vocabulary.json", lambda t=t: Vocabulary.build(
            t, min_count=c.min_count)) for side, t in (("source", src), ("target", tgt)))
        w = np.array([counts[p] for p in pairs], np.float32)
        w = {"count": w, "sqrt": np.sqrt(w), "none": np.ones_like(w)}[c.weighting]
        self.pairs = BucketedBatches([self.src_vocab.encode(t, add_start=False, add_end=False) for t in src],
                                     [self.tgt_vocab.encode(t) for t in tgt], c.batch_size, seed=c.seed,
                                     weights=w / w.mean())
        self.desc = {"train": files["train"], "dev": files["dev"], "train_pairs": len(pairs),
                     "dev_romanizations": len(self.dev), "weighting": c.weighting}
        self.selection = f"dev top-1 (greedy, {len(self.dev)} dev romanizations)"
        log.info("%d training pairs; characters: source %d, target %d", len(pairs), len(self.src_vocab),
                 len(self.tgt_vocab))
        return {"task": self.task, "source_vocab": len(self.src_vocab), "target_vocab": len(self.tgt_vocab),
                "data": self.desc}

    def check(self):
        from captioner.errors import InputError

        super().check()
        if self.cfg.pointer:  # Latin letters are never Devanagari ones: a pointer would only ever write <unk>
            raise InputError("--pointer: a transliterator writes another script than it reads; nothing to copy")

    def evaluate_dev(self, model):
        from captioner.inference.transliteration import evaluate_transliteration

        scores, _ = evaluate_transliteration(model, self.dev, self.cfg.dev_beam_size, self.cfg.alpha,
                                             limit=self.cfg.dev_limit)
        return {"dev_top1": scores["top-1"], "dev_CER": scores["CER"]}

    def evaluate(self, model, trainer):
        from captioner.inference.transliteration import evaluate_transliteration
        from captioner.io import write_json

        c = self.cfg
        metrics = {"split": "dev"}
        for beam in sorted({1, c.beam_size}):
            metrics[f"dev_beam{beam}"], predictions = evaluate_transliteration(model, self.dev, beam, c.alpha,
                                                                               limit=c.eval_limit)
            log.info("dev, beam %d: %s", beam, metrics[f"dev_beam{beam}"])
        self.samples = [{"romanized": r, "predictions": p[:5], "references": refs} for r, p, refs in predictions[:30]]
        write_json(trainer.run_dir.path("dev_predictions.json"),
                   [{"romanized": r, "predictions": p, "references": refs} for r, p, refs in predictions])
        return metrics

    def card_extra(self):
        return {"samples": self.samples[:10],
                "load": "import captioner, keras; m = keras.models.load_model(PATH); m.translate(['namaste'])"}


RECIPE = Transliterate
