"""`captioner train translate`: attention (Bahdanau) or fixed-context (Sutskever / RNNencdec)
sentence-to-sentence models, on Anki/Tatoeba pairs, Multi30k or any parallel line files.

    captioner train translate --format anki --data ../shared/datasets/anki-fra-eng/fra.txt \
        --reverse --output-dir runs/anki_fr_en --model-out assets/models/anki_fr_en.keras

    captioner train translate --format multi30k --data ../shared/datasets/multi30k \
        --source en --target de --output-dir runs/multi30k_en_de

Held-out data:
* anki: deterministic splits by the English sentence (md5 buckets: dev 3%, test 5%), so no
  English sentence is in two splits; a held-out pair whose other-language side also occurs in
  train is dropped. Model selection on dev, the reported BLEU on test; a source with several
  translations in its split is scored against all of them.
* multi30k: the last --dev-size train lines select the model, the reported BLEU is on `val`.
* parallel: --data SRC,TGT train files and --eval SRC,TGT (and optionally --dev SRC,TGT).

BLEU is sacrebleu's corpus BLEU on detokenized, lower-cased text (the models write lower case),
signature in the metrics file. Training stops early on dev BLEU (beam decoding), and
--time-budget stops it after that many minutes, keeping the best epoch.
"""

import argparse
import collections
import json
import logging
import os
import shlex
import sys
import time

log = logging.getLogger(__name__)


def add_model_arguments(p, defaults=None):
    """Arguments shared with `captioner train entail --task generate`."""
    d = {"kind": "attention", "embedding_dim": 256, "units": 256, "attention_units": 256, "dropout": 0.2,
         "epochs": 20, "batch_size": 64, "learning_rate": 1e-3, "min_count": 2, "max_vocab": 20000,
         "max_source_length": 40, "max_target_length": 40, "beam_size": 5, "alpha": 1.0,
         **(defaults or {})}
    p.add_argument("--kind", choices=("attention", "fixed", "sutskever"), default=d["kind"],
                   help="attention: Bahdanau BiGRU + attention; fixed: RNNencdec (context every step); "
                        "sutskever: deep LSTM, context only as s0")
    p.add_argument("--encoder-cell", choices=("gru", "lstm"), default=None, help="default: gru (attention), lstm")
    p.add_argument("--decoder-cell", choices=("gru", "lstm"), default=None)
    p.add_argument("--encoder-layers", type=int, default=None, help="default: 1 (attention), 2 (others)")
    p.add_argument("--reverse-source", action="store_true", help="read the source right to left (Sutskever)")
    p.add_argument("--embedding-dim", type=int, default=d["embedding_dim"])
    p.add_argument("--units", type=int, default=d["units"])
    p.add_argument("--attention-units", type=int, default=d["attention_units"])
    p.add_argument("--dropout", type=float, default=d["dropout"])
    p.add_argument("--no-maxout", action="store_true", help="tanh deep output instead of maxout")
    p.add_argument("--epochs", type=int, default=d["epochs"])
    p.add_argument("--steps-per-epoch", type=int, default=None, help="evaluate/checkpoint every N steps")
    p.add_argument("--batch-size", type=int, default=d["batch_size"])
    p.add_argument("--learning-rate", type=float, default=d["learning_rate"])
    p.add_argument("--min-count", type=int, default=d["min_count"], help="vocabularies: minimum word count")
    p.add_argument("--max-vocab", type=int, default=d["max_vocab"], help="vocabularies: most ids (specials included)")
    p.add_argument("--max-source-length", type=int, default=d["max_source_length"], help="source words kept")
    p.add_argument("--max-target-length", type=int, default=d["max_target_length"],
                   help="target words kept in training; decoding stops at this many + 10")
    p.add_argument("--beam-size", type=int, default=d["beam_size"], help="beam of the final evaluation and the saved model")
    p.add_argument("--alpha", type=float, default=d["alpha"], help="length normalization exponent of the saved model")
    p.add_argument("--dev-beam-size", type=int, default=1, help="beam of the per-epoch dev evaluation")
    p.add_argument("--dev-limit", type=int, default=1000, help="dev sentences decoded per epoch")
    p.add_argument("--eval-limit", type=int, default=None, help="score only the first N held-out sources (smoke runs)")
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--lr-decay", type=float, default=1.0,
                   help="multiply the learning rate by this after each epoch without dev improvement "
                        "(1: constant; 0.5 halves it on every plateau)")
    p.add_argument("--time-budget", type=float, default=None, help="minutes; stop training then (best epoch kept)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="use only the first N training pairs (smoke runs)")
    p.add_argument("--output-dir", required=True, help="run directory: checkpoints, logs, vocabularies")
    p.add_argument("--model-out", help="final .keras file (default OUTPUT_DIR/model.keras)")
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT_DIR's last checkpoint")


def register(subparsers):
    p = subparsers.add_parser(
        "translate", help="train an attention (Bahdanau) or fixed-context (Sutskever) translator",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--format", choices=("anki", "multi30k", "parallel"), required=True)
    p.add_argument("--data", required=True,
                   help="anki: the TSV file; multi30k: the folder; parallel: SRC,TGT train files")
    p.add_argument("--reverse", action="store_true", help="anki: translate column 2 -> column 1 (e.g. French -> English)")
    p.add_argument("--source", default="en", help="multi30k source language")
    p.add_argument("--target", default="de", help="multi30k target language")
    p.add_argument("--eval", help="parallel: SRC,TGT files of the reported held-out set")
    p.add_argument("--dev", help="parallel: SRC,TGT files for model selection (default: the --eval files)")
    p.add_argument("--dev-size", type=int, default=1000, help="multi30k: train lines held out for model selection")
    p.add_argument("--dev-fraction", type=float, default=0.03, help="anki: English sentences held out as dev")
    p.add_argument("--test-fraction", type=float, default=0.05, help="anki: English sentences held out as test")
    p.add_argument("--split-elisions", choices=("auto", "yes", "no"), default="auto",
                   help="split French elisions (l'afrique -> l' afrique) on the source side; auto: for French")
    p.add_argument("--copy-unk-rate", type=float, default=0.0, metavar="P",
                   help="teach the model to pass through words it has never seen (names): in each batch, "
                        "replace a word written the same on both sides (tom, paris, 1984) by <unk> on both "
                        "sides with probability P, so an unknown source word yields <unk>, which decoding "
                        "then replaces with the source word it attends to (0: off)")
    p.add_argument("--attention-lambda", type=float, default=0.0, metavar="L",
                   help="attention kind: add the doubly stochastic attention penalty (the captioner's, Xu et al. "
                        "2015) over the source words, weight L, so that every source word is attended to (0: off)")
    add_model_arguments(p)
    p.set_defaults(func=run)


# ---------------------------------------------------------------------------------- data
def load_translation_data(args):
    """-> (train pairs, dev pairs, eval pairs, eval split name, data description, source lang)."""
    from captioner.data.multi30k import load_multi30k, read_parallel
    from captioner.data.tsv_pairs import load_anki_pairs, split_by_key
    from captioner.errors import InputError

    if args.format == "anki":
        pairs = load_anki_pairs(args.data, reverse=args.reverse)
        english = (lambda p: p.target) if args.reverse else (lambda p: p.source)
        other = (lambda p: p.source) if args.reverse else (lambda p: p.target)
        splits = split_by_key(pairs, key=english, fractions={"dev": args.dev_fraction, "test": args.test_fraction},
                              exclusive=other)
        desc = {"file": args.data, "pairs": len(pairs), "split": "md5 buckets of the English sentence",
                "dev_fraction": args.dev_fraction, "test_fraction": args.test_fraction,
                "held_out_dropped_for_source_overlap": len(splits["dropped"])}
        return splits["train"], splits["dev"], splits["test"], "test", desc, ("fr" if args.reverse else "en")
    if args.format == "multi30k":
        train = load_multi30k(args.data, "train", args.source, args.target)
        evals = load_multi30k(args.data, "val", args.source, args.target)
        if args.dev_size >= len(train):
            raise InputError(f"--dev-size {args.dev_size} leaves no training data ({len(train)} pairs)")
        dev, train = train[-args.dev_size:], train[:-args.dev_size]
        desc = {"folder": args.data, "train": "train minus its last %d lines" % args.dev_size,
                "dev": "last %d train lines" % args.dev_size, "eval": "val"}
        return train, dev, evals, "val", desc, args.source
    files = args.data.split(",")
    if len(files) != 2 or not args.eval or len(args.eval.split(",")) != 2:
        raise InputError("--format parallel needs --data SRC,TGT and --eval SRC,TGT")
    train = read_parallel(*files)
    evals = read_parallel(*args.eval.split(","))
    dev = read_parallel(*args.dev.split(",")) if args.dev else evals
    return train, dev, evals, "eval", {"train": files, "eval": args.eval, "dev": args.dev or args.eval}, ""


def grouped_references(pairs):
    """[(source, [reference, ...])] in first-seen order: all translations of a source in a split."""
    refs = collections.OrderedDict()
    for p in pairs:
        refs.setdefault(p.source, []).append(p.target)
    return list(refs.items())


def copyable_positions(src_tokens, tgt_tokens, min_share=0.8):
    """Where a pair has the same word on both sides, as a translation of itself: for each pair,
    [(source position, target position)] of the words that occur exactly once on each side and
    are "copy words" of the corpus: alphanumeric, and in at least `min_share` of the pairs whose
    source has them the target has them too, and vice versa (so French "a" / English "a", which
    are different words, are not; "tom", "paris" and "1984" are)."""
    both, in_src, in_tgt = collections.Counter(), collections.Counter(), collections.Counter()
    for s, t in zip(src_tokens, tgt_tokens):
        ss, ts = set(s), set(t)
        in_src.update(ss)
        in_tgt.update(ts)
        both.update(ss & ts)
    copy = {w for w, n in both.items()
            if w.isalnum() and n >= min_share * in_src[w] and n >= min_share * in_tgt[w]}
    out = []
    for s, t in zip(src_tokens, tgt_tokens):
        sc, tc = collections.Counter(s), collections.Counter(t)
        out.append([(s.index(w), t.index(w)) for w in sc if w in copy and sc[w] == 1 and tc[w] == 1])
    return out


class BucketedBatches:
    """Encoded (source, target) id sequences in batches of similar source length, each padded to
    its own longest sequence; batch order shuffled anew every epoch.

    With `copy_positions` (from `copyable_positions`; target positions count words, the target
    sequences start with <start>) and `copy_unk_rate` > 0, each such word pair is replaced by
    <unk> on both sides with that probability, drawn anew every epoch."""

    def __init__(self, sources, targets, batch_size, seed=0, copy_positions=None, copy_unk_rate=0.0):
        import numpy as np

        self.sources, self.targets = sources, targets
        self.batch_size = batch_size
        self.seed = seed
        self.copy_positions = copy_positions
        self.copy_unk_rate = float(copy_unk_rate)
        self.epoch = 0
        self.src_len = np.array([len(s) for s in sources])
        self.tgt_len = np.array([len(t) for t in targets])

    def __len__(self):
        return -(-len(self.sources) // self.batch_size)

    def batches(self):
        import numpy as np

        from captioner.text.vocabulary import UNK_ID

        rng = np.random.default_rng(self.seed + self.epoch)
        self.epoch += 1
        # sort by source length with random tie-breaks, cut into batches, shuffle the batches
        order = np.lexsort((rng.random(len(self.sources)), self.src_len))
        chunks = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for j in rng.permutation(len(chunks)):
            idx = chunks[j]
            src = np.zeros((len(idx), self.src_len[idx].max()), np.int32)  # (B, S)
            tgt = np.zeros((len(idx), self.tgt_len[idx].max()), np.int32)  # (B, T+1)
            for r, i in enumerate(idx):
                src[r, :self.src_len[i]] = self.sources[i]
                tgt[r, :self.tgt_len[i]] = self.targets[i]
                if self.copy_unk_rate and self.copy_positions and self.copy_positions[i]:
                    for sp, tp in self.copy_positions[i]:
                        if rng.random() < self.copy_unk_rate:
                            src[r, sp] = UNK_ID
                            tgt[r, tp + 1] = UNK_ID
            yield {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]

    def dataset(self):
        import tensorflow as tf

        spec = ({"source": tf.TensorSpec((None, None), tf.int32), "tokens": tf.TensorSpec((None, None), tf.int32)},
                tf.TensorSpec((None, None), tf.int32))
        return tf.data.Dataset.from_generator(self.batches, output_signature=spec).repeat().prefetch(2)


def corpus_bleu(hypotheses, references):
    """sacrebleu corpus BLEU, lower-cased, 13a tokenization; references: [[ref, ...], ...] per
    hypothesis (any number each). Returns (score, signature string)."""
    import sacrebleu

    n = max((len(r) for r in references), default=1)
    streams = [[r[k] if k < len(r) else None for r in references] for k in range(n)]
    bleu = sacrebleu.metrics.BLEU(lowercase=True)
    result = bleu.corpus_score(hypotheses, streams)
    return float(result.score), str(bleu.get_signature())


def evaluate_bleu(model, eval_refs, beam_size, alpha, limit=None, batch_size=64, coverage_penalty=None):
    """Translate the sources of [(source, [refs])] and score them. Returns dict + hypotheses."""
    items = eval_refs[:limit] if limit else eval_refs
    t = time.perf_counter()
    outs = model.translate([s for s, _ in items], beam_size=beam_size, alpha=alpha, batch_size=batch_size,
                           coverage_penalty=coverage_penalty)
    seconds = time.perf_counter() - t
    hyps = [o.text for o in outs]
    score, signature = corpus_bleu(hyps, [r for _, r in items])
    out = {"BLEU": round(score, 2), "sentences": len(items), "beam_size": beam_size, "alpha": alpha,
           "decode_seconds": round(seconds, 1), "sacrebleu": signature}
    if coverage_penalty is not None:
        out["coverage_penalty"] = coverage_penalty
    return out, hyps


class TimeBudget:
    """Keras callback: stop training once `minutes` have passed (the epoch ends early; the
    checkpoint callback still evaluates and saves it)."""

    def __new__(cls, minutes):
        import keras

        class _TimeBudget(keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.deadline = time.time() + minutes * 60.0
                self.hit = False

            def on_train_batch_end(self, batch, logs=None):
                if time.time() > self.deadline and not self.hit:
                    self.hit = True
                    print(f"\ntime budget of {minutes:g} min reached: stopping after this evaluation", flush=True)
                    self.model.stop_training = True

        return _TimeBudget()


def fit_seq2seq(args, train, dev, evals, eval_name, data_desc, source_lang, task, command):
    """Build vocabularies, train with dev-BLEU selection, evaluate on `evals`, save the model.
    Shared by `train translate` and `train entail --task generate`."""
    import keras

    from captioner.errors import InputError, check_non_negative
    from captioner.models.caption_decoder_model import masked_sparse_ce
    from captioner.models.seq2seq import Seq2Seq, text_tokens
    from captioner.text import Vocabulary
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.io import atomic_path, write_json

    copy_rate = getattr(args, "copy_unk_rate", 0.0)
    attention_lambda = getattr(args, "attention_lambda", 0.0)
    if not 0.0 <= copy_rate < 1.0:  # checked before the run directory or a vocabulary is written
        raise InputError(f"--copy-unk-rate {copy_rate}: must be in [0, 1)")
    check_non_negative("--attention-lambda", attention_lambda)
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    if args.limit:
        train = train[: args.limit]
    split = getattr(args, "split_elisions", "no")
    src_tok = {"split_elisions": split == "yes" or (split == "auto" and source_lang == "fr")}
    tgt_tok = {}
    src_tokens = [text_tokens(p.source, src_tok)[: args.max_source_length] for p in train]
    tgt_tokens = [text_tokens(p.target, tgt_tok)[: args.max_target_length] for p in train]
    keep = [i for i in range(len(train)) if src_tokens[i] and tgt_tokens[i]]
    src_tokens = [src_tokens[i] for i in keep]
    tgt_tokens = [tgt_tokens[i] for i in keep]
    vocab_paths = run_dir.path("source_vocabulary.json"), run_dir.path("target_vocabulary.json")
    if args.resume and all(os.path.exists(v) for v in vocab_paths):
        src_vocab, tgt_vocab = Vocabulary.load(vocab_paths[0]), Vocabulary.load(vocab_paths[1])
    else:
        src_vocab = Vocabulary.build(src_tokens, min_count=args.min_count, max_size=args.max_vocab)
        tgt_vocab = Vocabulary.build(tgt_tokens, min_count=args.min_count, max_size=args.max_vocab)
        src_vocab.save(vocab_paths[0])
        tgt_vocab.save(vocab_paths[1])
    log.info("%d training pairs; vocabularies: source %d, target %d", len(keep), len(src_vocab), len(tgt_vocab))
    copy_positions = copyable_positions(src_tokens, tgt_tokens) if copy_rate else None
    if copy_positions:
        log.info("--copy-unk-rate %g: %d of %d pairs have a word written the same on both sides", copy_rate,
                 sum(bool(c) for c in copy_positions), len(copy_positions))
    batches = BucketedBatches([src_vocab.encode(t, add_start=False, add_end=False) for t in src_tokens],
                              [tgt_vocab.encode(t) for t in tgt_tokens], args.batch_size, seed=args.seed,
                              copy_positions=copy_positions, copy_unk_rate=copy_rate)
    steps = args.steps_per_epoch or len(batches)
    dev_refs, eval_refs = grouped_references(dev), grouped_references(evals)

    layers = args.encoder_layers or (1 if args.kind == "attention" else 2)
    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(task=task, source_vocab=len(src_vocab), target_vocab=len(tgt_vocab), train_pairs=len(keep),
                  dev_sources=len(dev_refs), eval_sources=len(eval_refs), encoder_layers=layers,
                  source_tokenizer=src_tok, command=command, data=data_desc)
    write_json(run_dir.path("config.json"), config)

    model = Seq2Seq(
        src_vocab, tgt_vocab, kind=args.kind, embedding_dim=args.embedding_dim, units=args.units,
        attention_units=args.attention_units, encoder_cell=args.encoder_cell, decoder_cell=args.decoder_cell,
        encoder_layers=layers, reverse_source=args.reverse_source, dropout=args.dropout,
        maxout=not args.no_maxout, source_tokenizer=src_tok, target_tokenizer=tgt_tok,
        max_source_length=args.max_source_length, beam_size=args.beam_size, alpha=args.alpha,
        max_length=args.max_target_length + 10, attention_lambda=attention_lambda,
        training_config={"task": task, "seed": args.seed, "data": data_desc},
    )
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0), loss=masked_sparse_ce)
    log.info("model: %s, %d parameters", args.kind, model.count_params())
    state, initial_epoch = None, 0
    if args.resume and run_dir.has_checkpoint():
        state = run_dir.restore(model)
        initial_epoch = state["epoch"]
        batches.epoch = initial_epoch

    def epoch_eval():
        scores, _ = evaluate_bleu(model, dev_refs, args.dev_beam_size, args.alpha, limit=args.dev_limit)
        return {"dev_BLEU": scores["BLEU"]}

    callbacks = [EpochCheckpoint(run_dir, epoch_eval, "dev_BLEU", patience=args.patience, state=state,
                                 plot_fn=lambda h, d: plot_history(h, d, "dev_BLEU"),
                                 lr_decay=getattr(args, "lr_decay", 1.0))]
    if args.time_budget:
        callbacks.append(TimeBudget(args.time_budget))
    t0 = time.perf_counter()
    if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
        model.fit(batches.dataset(), epochs=args.epochs, initial_epoch=initial_epoch, steps_per_epoch=steps,
                  callbacks=callbacks, verbose=1)
    train_minutes = (time.perf_counter() - t0) / 60
    model.load_weights(run_dir.path("best.weights.h5"))
    history = json.load(open(run_dir.path("history.json"), encoding="utf-8"))

    metrics = {"eval_split": eval_name, "best_epoch": callbacks[0].best_epoch, "epochs_run": len(history),
               "steps_per_epoch": steps, "train_minutes_this_process": round(train_minutes, 1),
               "selection": f"dev BLEU (sacrebleu, beam {args.dev_beam_size}, first {args.dev_limit} dev sources)"}
    scores, hyps = evaluate_bleu(model, eval_refs, args.beam_size, args.alpha, limit=args.eval_limit)
    metrics[f"{eval_name}_beam{args.beam_size}"] = scores
    greedy, _ = evaluate_bleu(model, eval_refs, 1, args.alpha, limit=args.eval_limit)
    metrics[f"{eval_name}_greedy"] = greedy
    log.info("%s BLEU beam %d: %.2f, greedy %.2f", eval_name, args.beam_size, scores["BLEU"], greedy["BLEU"])
    samples = [{"source": s, "hypothesis": h, "references": r} for (s, r), h in zip(eval_refs[:30], hyps[:30])]
    write_json(run_dir.path("eval_samples.json"), samples)
    with atomic_path(run_dir.path("eval_hypotheses.txt")) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(h + "\n" for h in hyps))
    write_json(run_dir.path("metrics.json"), metrics)

    model_out = args.model_out or run_dir.path("model.keras")
    with atomic_path(model_out, ".keras") as tmp:
        model.inference_copy().save(tmp)  # no optimizer state in the bundled file
    write_json(os.path.splitext(model_out)[0] + ".json", {
        "model": os.path.basename(model_out), "task": task, "command": command, "seed": args.seed,
        "data": data_desc, "train_pairs": len(keep), "machine": "2-core CPU shared with other training",
        "config": {k: v for k, v in config.items() if k not in ("command", "data")},
        "metrics": metrics, "samples": samples[:10],
        "load": "import captioner, keras; m = keras.models.load_model(PATH); m.translate([...])",
    })
    print(json.dumps(metrics, indent=2, ensure_ascii=False))
    print(f"saved {model_out}")
    return model, metrics


def command_line(task_word):
    argv = sys.argv
    if task_word in argv:
        return "captioner train " + " ".join(shlex.quote(a) for a in argv[argv.index(task_word):])
    return None


def run(args):
    train, dev, evals, eval_name, desc, source_lang = load_translation_data(args)
    fit_seq2seq(args, train, dev, evals, eval_name, desc, source_lang, "translation", command_line("translate"))
    return 0
