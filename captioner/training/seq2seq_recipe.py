"""The sentence-to-sentence recipe base: sentence pairs -> `Seq2Seq`, selected on dev BLEU.

`captioner train translate` is this recipe on translation pairs (its Config adds the options of
subwords, case, <unk> copying and the attention penalty); `entail --task generate` (premise ->
entailed hypothesis) and `summarize` (article -> headline) give other pairs and settings, and
`transliterate` characters. A subclass says where its pairs come from (`load_pairs`) or, with its
own `prepare`, sets the vocabularies (`src_vocab`, `tgt_vocab`), tokenizers (`src_tok`, `tgt_tok`),
encoder depth (`layers`), training batches (`pairs`) and `desc`, and inherits the model, the
batches and the rest.
"""

import dataclasses
import logging

from captioner.training.config import TrainConfig, option
from captioner.training.trainer import Recipe

log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Seq2SeqConfig(TrainConfig):
    """The model options shared with `captioner train entail --task generate`."""

    kind: str = option("attention", choices=("attention", "fixed", "sutskever"),
                       help="attention: Bahdanau BiGRU + attention; fixed: RNNencdec (context every step); "
                            "sutskever: deep LSTM, context only as s0")
    encoder_cell: str | None = option(None, choices=("gru", "lstm"), help="default: gru (attention), lstm")
    decoder_cell: str | None = option(None, choices=("gru", "lstm"))
    encoder_layers: int | None = option(None, help="default: 1 (attention), 2 (others)")
    reverse_source: bool = option(False, help="read the source right to left (Sutskever)")
    embedding_dim: int = option(256)
    units: int = option(256)
    attention_units: int = option(256)
    dropout: float = option(0.2)
    no_maxout: bool = option(False, help="tanh deep output instead of maxout")
    pointer: bool = option(False, help=(
        "attention kind: a pointer-generator decoder (See et al. 2017) that mixes its vocabulary distribution "
        "with the attention over the source words, so it can write any source word (names, numbers)"))
    steps_per_epoch: int | None = option(None, help="evaluate/checkpoint every N steps")
    min_count: int = option(2, help="vocabularies: minimum word count")
    max_vocab: int = option(20000, help="vocabularies: most ids (specials included)")
    max_source_length: int = option(40, help="source words kept")
    max_target_length: int = option(40, help="target words kept in training; decoding stops at this many + 10")
    beam_size: int = option(5, help="beam of the final evaluation and the saved model")
    alpha: float = option(1.0, help="length normalization exponent of the saved model")
    dev_beam_size: int = option(1, help="beam of the per-epoch dev evaluation")
    dev_limit: int | None = option(1000, help="dev sentences decoded per epoch")
    eval_limit: int | None = option(None, help="score only the first N held-out sources (smoke runs)")
    limit: int | None = option(None, help="use only the first N training pairs (smoke runs)")
    # what only `captioner train translate` offers (its Config declares them as options; see there)
    split_elisions: str = option("no", cli=False)
    copy_unk_rate: float = option(0.0, cli=False)
    attention_lambda: float = option(0.0, cli=False)
    subword: str = option("none", cli=False)
    subword_vocab: int = option(8000, cli=False)
    cased: bool = option(False, cli=False)


class Seq2SeqRecipe(Recipe):
    """Sentence pairs -> Seq2Seq, selected on dev BLEU; the pairs come from `load_pairs`."""

    metric = "dev_BLEU"
    replace_unk = True  # the model's decoding: an <unk> becomes the source word it attends to

    def load_pairs(self):
        """-> (train pairs, dev pairs, held-out pairs, held-out split name, description, source language)."""
        raise NotImplementedError

    def check(self):
        from captioner.errors import InputError, check_non_negative

        copy_rate = self.cfg.copy_unk_rate
        if not 0.0 <= copy_rate < 1.0:  # checked before the run directory or a vocabulary is written
            raise InputError(f"--copy-unk-rate {copy_rate}: must be in [0, 1)")
        check_non_negative("--attention-lambda", self.cfg.attention_lambda)
        if self.cfg.pointer and self.cfg.kind != "attention":
            raise InputError(f"--pointer copies through the attention: it needs --kind attention, not {self.cfg.kind}")
        if self.cfg.subword != "none":
            if self.cfg.subword_vocab < 16:
                raise InputError(f"--subword-vocab {self.cfg.subword_vocab}: must be at least 16")

    def prepare(self, trainer):
        from captioner.models.seq2seq import text_tokens
        from captioner.text import Vocabulary
        from captioner.training.translation_data import (
            BucketedBatches,
            copyable_positions,
            copyable_spans,
            grouped_references,
        )

        c = self.cfg
        train, dev, evals, self.eval_name, self.desc, source_lang = self.load_pairs()
        train = train[: c.limit] if c.limit else train
        split = c.split_elisions
        lower = not c.cased
        subword = c.subword
        if subword != "none":
            self.src_tok, self.tgt_tok = (
                {"spm": self._sentencepiece(trainer, side, [getattr(p, side) for p in train], subword, lower),
                 "lower": lower} for side in ("source", "target"))
        else:
            self.src_tok = {"split_elisions": split == "yes" or (split == "auto" and source_lang == "fr"),
                            **({} if lower else {"lower": False})}
            self.tgt_tok = {} if lower else {"lower": False}
        src = [text_tokens(p.source, self.src_tok)[: c.max_source_length] for p in train]
        tgt = [text_tokens(p.target, self.tgt_tok)[: c.max_target_length] for p in train]
        keep = [i for i in range(len(train)) if src[i] and tgt[i]]
        src, tgt = [src[i] for i in keep], [tgt[i] for i in keep]
        if subword != "none":  # every piece gets an id: only characters never seen in training are <unk>
            from captioner.text.subword import piece_vocabulary
            from captioner.text.vocabulary import SPECIAL_TOKENS

            self.src_vocab, self.tgt_vocab = (
                Vocabulary(SPECIAL_TOKENS + tuple(piece_vocabulary(tok["spm"])))
                for tok in (self.src_tok, self.tgt_tok))
        else:
            self.src_vocab, self.tgt_vocab = (trainer.cached(f"{side}_vocabulary.json", lambda t=tokens: Vocabulary.build(
                t, min_count=c.min_count, max_size=c.max_vocab)) for side, tokens in (("source", src), ("target", tgt)))
        log.info("%d training pairs; vocabularies: source %d, target %d", len(keep), len(self.src_vocab),
                 len(self.tgt_vocab))
        copy_rate = c.copy_unk_rate
        copies = spans = None
        if copy_rate and subword != "none":  # a word of several pieces hidden behind one <unk>
            spans = copyable_spans(src, tgt)
        elif copy_rate:
            copies = copyable_positions(src, tgt)
        self.pairs = BucketedBatches([self.src_vocab.encode(t, add_start=False, add_end=False) for t in src],
                                     [self.tgt_vocab.encode(t) for t in tgt], c.batch_size, seed=c.seed,
                                     copy_positions=copies, copy_unk_rate=copy_rate, copy_spans=spans)
        self.dev_refs, self.eval_refs = grouped_references(dev), grouped_references(evals)
        self.layers = c.encoder_layers or (1 if c.kind == "attention" else 2)
        self.selection = f"dev BLEU (sacrebleu, beam {c.dev_beam_size}, first {c.dev_limit} dev sources)"
        return {"task": self.task, "source_vocab": len(self.src_vocab), "target_vocab": len(self.tgt_vocab),
                "train_pairs": len(keep), "dev_sources": len(self.dev_refs), "eval_sources": len(self.eval_refs),
                "encoder_layers": self.layers, "data": self.desc,
                "source_tokenizer": _shown(self.src_tok), "target_tokenizer": _shown(self.tgt_tok)}

    def _sentencepiece(self, trainer, side, sentences, subword, lower):
        """The base64 SentencePiece model of one side, trained on these (training) sentences;
        kept in the run directory as JSON so that --resume reuses it."""
        import json
        import pathlib

        from captioner.io import write_json
        from captioner.text.subword import SUBWORD_KINDS, to_base64, train_sentencepiece

        c = self.cfg

        def build():
            proto = train_sentencepiece(sentences, vocab_size=c.subword_vocab, model_type=SUBWORD_KINDS[subword],
                                        lower=lower, seed=c.seed)
            return {"spm": to_base64(proto), "type": subword, "vocab_size": c.subword_vocab, "lower": lower}

        def load(path):
            return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))

        return trainer.cached(f"{side}_sentencepiece.json", build, load=load,
                              save=lambda value, path: write_json(path, value))["spm"]

    def model_options(self) -> dict:
        """`Seq2Seq` arguments of a subclass's own (summarize: the extractive pointer)."""
        return {"pointer": self.cfg.pointer}

    def build_model(self, seed):
        from captioner.models.seq2seq import Seq2Seq

        c = self.cfg
        return Seq2Seq.of(
            self.src_vocab, self.tgt_vocab, kind=c.kind, embedding_dim=c.embedding_dim, units=c.units,
            attention_units=c.attention_units, encoder_cell=c.encoder_cell, decoder_cell=c.decoder_cell,
            encoder_layers=self.layers, reverse_source=c.reverse_source, dropout=c.dropout, maxout=not c.no_maxout,
            source_tokenizer=self.src_tok, target_tokenizer=self.tgt_tok, max_source_length=c.max_source_length,
            beam_size=c.beam_size, alpha=c.alpha, max_length=c.max_target_length + 10,
            attention_lambda=c.attention_lambda, replace_unk=self.replace_unk, **self.model_options(),
            training_config={"task": self.task, "seed": c.seed, "data": self.desc})

    def steps_per_pass(self):
        return len(self.pairs)

    def batches(self, epoch, seed):
        return self.pairs.batches(epoch, seed)

    def evaluate_dev(self, model):
        from captioner.training.translation_data import evaluate_bleu

        scores, _ = evaluate_bleu(model, self.dev_refs, self.cfg.dev_beam_size, self.cfg.alpha, limit=self.cfg.dev_limit,
                                  cased=self.cfg.cased)
        return {"dev_BLEU": scores["BLEU"]}

    def evaluate(self, model, trainer):
        from captioner.io import atomic_path, write_json
        from captioner.training.translation_data import evaluate_bleu

        c, name = self.cfg, self.eval_name
        metrics = {"split": name, "eval_split": name, "steps_per_epoch": c.steps_per_epoch or len(self.pairs)}
        cased = c.cased
        metrics[f"{name}_beam{c.beam_size}"], hyps = evaluate_bleu(model, self.eval_refs, c.beam_size, c.alpha,
                                                                 limit=c.eval_limit, cased=cased)
        metrics[f"{name}_greedy"], _ = evaluate_bleu(model, self.eval_refs, 1, c.alpha, limit=c.eval_limit, cased=cased)
        log.info("%s BLEU beam %d: %.2f, greedy %.2f", name, c.beam_size, metrics[f"{name}_beam{c.beam_size}"]["BLEU"],
                 metrics[f"{name}_greedy"]["BLEU"])
        self.samples = [{"source": s, "hypothesis": h, "references": r}
                        for (s, r), h in zip(self.eval_refs[:30], hyps[:30])]
        write_json(trainer.run_dir.path("eval_samples.json"), self.samples)
        with atomic_path(trainer.run_dir.path("eval_hypotheses.txt")) as tmp, open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(h + "\n" for h in hyps))
        return metrics

    def card_extra(self):
        return {"samples": self.samples[:10],
                "load": "import captioner, keras; m = keras.models.load_model(PATH); m.translate([...])"}


def _shown(settings):
    """Tokenizer settings for the run's summary: a SentencePiece model by its size, not its bytes."""
    return {k: (f"<SentencePiece model, {len(v)} base64 characters>" if k == "spm" else v) for k, v in settings.items()}
