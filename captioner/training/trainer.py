"""One Trainer for every task: the life of a run that all recipes share.

    seed -> run directory -> recipe.prepare (data; vocabularies built, or reused on --resume)
    -> config.json -> model (compiled: Adam, clipnorm 5) -> resume from the last committed
    checkpoint -> fit (epoch e's batches are a pure function of (seed, e); per epoch: real
    decoding on dev, best weights, atomic checkpoint, history, curve plot, lr decay on
    plateau, early stopping; time budget; TensorBoard) -> best weights -> held-out metrics
    -> a weight-identical float32 inference copy -> atomic .keras + its ModelCard.

A recipe (`captioner/training/recipes/<task>.py`) subclasses `Recipe` and supplies only what
differs. No TensorFlow at import time (the CLI imports recipes to build `-h`).
"""

import contextlib
import dataclasses
import json
import logging
import os
import shlex
import sys
import time

import numpy as np

log = logging.getLogger(__name__)


class Recipe:
    """What a task supplies to the Trainer. `self.cfg` is its config dataclass."""

    task = None          # the ModelCard task
    metric = None        # the key of `evaluate_dev()` that selects the model (higher is better)
    selection = ""       # how the model is selected, in words (metrics and card)
    verbose = 1          # Keras fit's progress: 1 a bar, 2 one line per epoch
    loss_label = "cross-entropy per token"  # the training curve's left axis
    curve_keys = ("loss", "val_loss")       # the history keys it plots
    notes = ""

    def __init__(self, cfg):
        self.cfg = cfg

    def curve_start(self):
        """The dev metric before the first epoch, drawn at epoch 0 of the curve (None: not known)."""
        return None

    @classmethod
    def make(cls, cfg):
        return cls(cfg)

    def check(self):
        """Refuse a bad config before anything is written."""

    def prepare(self, trainer):
        """Load the data, build or reuse the vocabularies (`trainer.cached`); returns what
        config.json should say beside the config (counts, data description)."""
        raise NotImplementedError

    def strategy(self):
        """The tf.distribute strategy of the config's `distribute` option (a recipe whose config
        has one: `--distribute mirrored|multi-worker`), created once; None when the recipe does
        not distribute. The Trainer asks first thing, before any TensorFlow op (a multi-worker
        strategy must be created then)."""
        if not hasattr(self.cfg, "distribute"):
            return None
        if getattr(self, "_strategy", None) is None:
            from captioner.training.distribute import strategy_for

            self._strategy = strategy_for(self.cfg.distribute)
        return self._strategy

    @contextlib.contextmanager
    def model_scope(self):
        """Context in which the model is built and compiled: the strategy's scope, and the
        mixed_bfloat16 policy for the layers built in it when the config's `mixed_precision` is on
        (the saved inference copy computes in float32)."""
        import keras

        strategy = self.strategy()
        previous = keras.mixed_precision.global_policy().name
        if getattr(self.cfg, "mixed_precision", False):
            keras.mixed_precision.set_global_policy("mixed_bfloat16")  # for the layers built now only
        try:
            with strategy.scope() if strategy is not None else contextlib.nullcontext():
                yield
        finally:
            keras.mixed_precision.set_global_policy(previous)

    def build_model(self, seed):
        raise NotImplementedError

    def compile_args(self):
        """loss (and metrics) for `model.compile`: by default a generator's masked per-token
        cross-entropy; classifiers return `classifier_compile_args()`."""
        from captioner.models.caption_decoder_model import masked_sparse_ce

        return {"loss": masked_sparse_ce}

    def optimizer(self):
        import keras

        return keras.optimizers.Adam(self.cfg.learning_rate, clipnorm=5.0)

    def on_model_ready(self, model, state):
        """After the checkpoint (if any) is restored, before training (`state` None: fresh)."""

    def steps_per_pass(self):
        """Batches in one pass over the training data: the same for every epoch (Keras fit
        takes the first epoch's count for all that follow)."""
        raise NotImplementedError

    def batches(self, epoch, seed):
        """One pass over the training data for `epoch`: (inputs, targets) numpy batches, in an
        order that depends on (seed, epoch) only."""
        raise NotImplementedError

    def evaluate_dev(self, model):
        """Per-epoch dev figures: {self.metric: float, ...} from real decoding."""
        raise NotImplementedError

    def train(self, trainer):
        """-> (trained model with its selected weights, info for the metrics)."""
        with self.model_scope():
            model = self.build_model(self.cfg.seed)
        return trainer.fit(model)

    def evaluate(self, model, trainer):
        """Held-out metrics of the selected weights; `metrics["split"]` names the split."""
        raise NotImplementedError

    def export(self, model):
        """The model file to save, around the float32 inference copy `model`."""
        return model

    def card_data(self, trainer):
        return trainer.info.get("data", {})

    def card_extra(self):
        return {}

    # -- pretrained word vectors (the text recipes' --embeddings NAME|FILE and --embedding-dim) --
    def load_word_vectors(self):
        """`self.vectors`: the config's --embeddings (None when absent or "none"); --embedding-dim
        becomes theirs."""
        c, self.vectors = self.cfg, None
        if c.embeddings and c.embeddings.lower() != "none":
            from captioner.text.word_vectors import load_word_vectors

            self.vectors = load_word_vectors(c.embeddings)
            if c.embedding_dim != self.vectors.dim:
                log.info("--embeddings %s: embedding dimension %d (not %d)", c.embeddings, self.vectors.dim,
                         c.embedding_dim)
                c.embedding_dim = self.vectors.dim
        return self.vectors

    def start_embeddings(self, layer, seed):
        """Set the Embedding `layer` to `self.vectors`' rows of `self.vocab` (the others drawn from
        `seed`); returns how many vocabulary words had a vector."""
        table, found = self.vectors.embedding_table(self.vocab, seed=seed)
        layer.set_weights([table])
        log.info("embeddings %s: %d of %d vocabulary words have a pretrained vector", self.cfg.embeddings, found,
                 len(self.vocab) - 4)
        return found


def classifier_compile_args():
    """Cross-entropy over class logits, and accuracy in the progress bar."""
    import keras

    return {"loss": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "metrics": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]}


class ClassifierRecipe(Recipe):
    """A recipe whose model classifies: class-logit cross-entropy (`classifier_compile_args`), and
    training data in `self.train_batches` (an `ArrayBatches` built by `prepare`)."""

    def compile_args(self):
        return classifier_compile_args()

    def steps_per_pass(self):
        return len(self.train_batches)

    def batches(self, epoch, seed):
        return self.train_batches.batches(epoch, seed)


class ArrayBatches:
    """Batches of in-memory arrays (dict of inputs, targets) in a fresh order each epoch;
    with `sample_weights` (one per example), (inputs, targets, weights) triples, which
    `model.fit` applies to the loss (see `class_weights`). The one training-data protocol of the
    recipes: ``len`` and ``batches(epoch, seed)``, as `BucketedBatches` has it."""

    def __init__(self, inputs, targets, batch_size, sample_weights=None):
        self.inputs, self.targets, self.batch_size = inputs, targets, batch_size
        self.sample_weights = None if sample_weights is None else np.asarray(sample_weights, np.float32)

    def __len__(self):
        return (len(self.targets) + self.batch_size - 1) // self.batch_size

    def batches(self, epoch, seed):
        order = np.random.default_rng(seed + epoch).permutation(len(self.targets))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            batch = ({k: v[idx] for k, v in self.inputs.items()}, self.targets[idx])
            yield batch if self.sample_weights is None else (*batch, self.sample_weights[idx])


CLASS_WEIGHTING = ("none", "balanced", "sqrt")


def class_weights(labels, num_classes, how="balanced"):
    """Per-class loss weights (K,) from integer train labels: "balanced" n / (K_seen * n_k),
    the inverse class frequency scaled so that the weighted examples still sum to n (scikit-learn's
    `compute_class_weight("balanced")`); "sqrt" its square root, renormalized the same way (a
    milder correction); "none" ones. A class with no train example gets weight 0."""
    if how not in CLASS_WEIGHTING:
        raise ValueError(f"class weighting {how!r}: choose from {', '.join(CLASS_WEIGHTING)}")
    labels = np.asarray(labels)
    counts = np.bincount(labels, minlength=num_classes).astype(np.float64)
    if how == "none":
        return np.ones(num_classes)
    seen = counts > 0
    weights = np.zeros(num_classes)
    weights[seen] = len(labels) / (seen.sum() * counts[seen])
    if how == "sqrt":
        weights = np.sqrt(weights)
        weights *= len(labels) / float((weights * counts).sum())
    return weights


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def command_line(name, argv=None):
    """The `captioner train NAME ...` command of this process, or None when run otherwise."""
    argv = sys.argv if argv is None else argv
    if name in argv:
        return "captioner train " + " ".join(shlex.quote(a) for a in argv[argv.index(name):])
    return None


def inference_copy(model):
    """An uncompiled float32 copy with the same weights: the saved file carries no optimizer
    state and decodes in float32 whatever the training policy."""
    if hasattr(model, "inference_copy"):
        return model.inference_copy()
    from captioner.models.pixel_model import inference_copy as float32_copy

    return float32_copy(model)


def _signature(batch):
    """tf.TensorSpecs of a batch: the batch dimension free, and both dimensions of 2-D integer
    arrays (token sequences, each batch cut to its longest)."""
    import tensorflow as tf

    def spec(a):
        a = np.asarray(a)
        free = a.ndim == 2 and np.issubdtype(a.dtype, np.integer)
        return tf.TensorSpec((None, None) if free else (None,) + a.shape[1:], tf.as_dtype(a.dtype))

    return tf.nest.map_structure(spec, batch)


# what a --resume may change: how long and when to stop, where the model goes, how many processes train
RESUMABLE_CHANGES = frozenset({"epochs", "time_budget", "patience", "resume", "model_out", "final_eval_beams", "command",
                               "distribute"})


def check_resumed_config(path, config):
    """Refuse a --resume whose data or model options differ from the run's (`path`, its config.json):
    the run's vocabularies and answers are reused and its checkpoint restored, so training would go on
    silently on other data or a model the options no longer describe."""
    from captioner.errors import InputError
    from captioner.io import as_written

    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        before = json.load(f)
    now = as_written(config)
    changed = sorted(k for k in before.keys() & now.keys() if k not in RESUMABLE_CHANGES and before[k] != now[k])
    if changed:
        shown = "; ".join(f"{k}: {json.dumps(before[k])[:60]} -> {json.dumps(now[k])[:60]}" for k in changed[:4])
        raise InputError(f"--resume: {os.path.dirname(path) or '.'} was trained with other options or data ({shown}"
                         f"{' ...' if len(changed) > 4 else ''}); give the run's own options (only "
                         f"{', '.join(sorted(RESUMABLE_CHANGES - {'command', 'resume'}))} may change) or a new --output-dir")


class Trainer:
    """Runs one recipe: see the module docstring."""

    batch_hook = None  # tests: called as hook(epoch, step, batch) for every batch handed to fit

    def __init__(self, recipe, command=None):
        from captioner.training.distribute import WorkerRole

        self.recipe, self.cfg, self.command = recipe, recipe.cfg, command
        self.run_dir, self.info = None, {}
        self.strategy, self.role = None, WorkerRole()  # set by run(): multi-worker training

    # -- the run -------------------------------------------------------------------------
    def run(self):
        import keras

        from captioner.io import write_json
        from captioner.metrics import meteor_session
        from captioner.training.callbacks import TrainingRun
        from captioner.training.distribute import barrier, remove_worker_directory, worker_directory, worker_role

        cfg, recipe = self.cfg, self.recipe
        recipe.check()
        self.strategy = recipe.strategy()  # before any TensorFlow op (multi-worker)
        self.role = worker_role(self.strategy)
        keras.utils.set_random_seed(cfg.seed)
        # multi-worker: the chief writes OUTPUT_DIR, every other worker a temporary folder
        self.run_dir = TrainingRun(worker_directory(cfg.output_dir, self.role, cfg.resume))
        try:
            self.info = recipe.prepare(self) or {}
            self.config = {**dataclasses.asdict(cfg), **self.info}
            if cfg.resume:
                check_resumed_config(self.run_dir.path("config.json"), self.config)
            write_json(self.run_dir.path("config.json"), {**self.config, "command": self.command})
            t0 = time.perf_counter()
            model, fit_info = recipe.train(self)
            if not self.role.chief:  # its weights are the chief's: the chief evaluates and saves them
                barrier(self.strategy, self.role, "the chief evaluates and saves the model")
                print(f"{self.role.name} of {self.role.workers}: trained; the chief wrote the model", flush=True)
                return 0
            metrics = {"selection": recipe.selection, **fit_info,
                       "train_minutes_this_process": round((time.perf_counter() - t0) / 60, 1)}
            if self.role.distributed:
                metrics["workers"] = self.role.workers
            with meteor_session():  # one METEOR process for every evaluation the recipe makes
                metrics.update(recipe.evaluate(model, self))
            write_json(self.run_dir.path("metrics.json"), metrics)
            path = self.save(model, metrics)
            barrier(self.strategy, self.role, "the other workers wait for the model")
        finally:
            remove_worker_directory(self.run_dir.directory, self.role)
        print(json.dumps({k: v for k, v in metrics.items() if not isinstance(v, (dict, list))}, indent=2,
                         ensure_ascii=False))
        print(f"saved {path}")
        return 0

    def cached(self, name, build, load=None, save=None):
        """A file of the run directory (a vocabulary, an answer list): reused when resuming,
        else built and saved. Default: a `Vocabulary`."""
        from captioner.text import Vocabulary

        load = load or Vocabulary.load
        save = save or (lambda value, path: value.save(path))
        path = self.run_dir.path(name)
        if self.cfg.resume and os.path.exists(path):
            return load(path)
        value = build()
        save(value, path)
        return value

    # -- training ------------------------------------------------------------------------
    def fit(self, model, run_dir=None, seed=None):
        """Compile, restore the last checkpoint (--resume), train with dev selection, load the
        best weights. -> (model, {"best_epoch", "epochs_run"})."""
        import keras

        from captioner.training.callbacks import (
            EpochCheckpoint,
            TimeBudget,
            plot_history,
        )
        from captioner.training.distribute import agree

        cfg, recipe = self.cfg, self.recipe
        run_dir = run_dir or self.run_dir
        seed = cfg.seed if seed is None else seed
        with recipe.model_scope():  # the optimizer's variables, built on resume, belong to the strategy too
            model.compile(optimizer=recipe.optimizer(), **recipe.compile_args())
            if model.optimizer is not None and not model.optimizer.built and model.trainable_variables:
                # now, not in the first trace of the train step: variables made there make TensorFlow trace it twice
                model.optimizer.build(model.trainable_variables)
            state = run_dir.resume(model, cfg.resume)
        recipe.on_model_ready(model, state)
        initial_epoch = state["epoch"] if state else 0
        agree(self.strategy, self.role, initial_epoch,
              "the epoch to resume from (--resume: every worker needs to read the chief's --output-dir)")
        checkpoint = EpochCheckpoint(run_dir, lambda: recipe.evaluate_dev(model), recipe.metric,
                                     patience=cfg.patience, state=state, lr_decay=cfg.lr_decay,
                                     plot_fn=lambda h, d: plot_history(
                                         h, d, recipe.metric, loss_label=recipe.loss_label,
                                         left_keys=recipe.curve_keys, start=recipe.curve_start()))
        callbacks = [checkpoint, keras.callbacks.TensorBoard(run_dir.path("tensorboard"), update_freq=50)]
        if cfg.time_budget:
            callbacks.append(TimeBudget(cfg.time_budget, self.strategy if self.role.distributed else None))
        if initial_epoch < cfg.epochs and not (state and state.get("wait", 0) >= cfg.patience):
            dataset, steps = self._dataset(seed, initial_epoch)
            model.fit(dataset, epochs=cfg.epochs, initial_epoch=initial_epoch, steps_per_epoch=steps,
                      callbacks=callbacks, verbose=recipe.verbose, shuffle=False)  # the order is ours
        run_dir.load_best(model)
        return model, {"best_epoch": checkpoint.best_epoch, "epochs_run": len(checkpoint.history)}

    def _dataset(self, seed, initial_epoch):
        """tf.data of the training batches from epoch `initial_epoch` on, and the steps per
        epoch S (--steps-per-epoch, else one pass). One endless stream: epoch e is steps
        [e * S, (e + 1) * S) of passes 0, 1, 2, ..., pass p shuffled by (seed, p) alone, so a
        resumed run goes on exactly where it stopped, mid-pass if need be."""
        import tensorflow as tf

        recipe, hook = self.recipe, type(self).batch_hook
        per_pass = recipe.steps_per_pass()
        steps = getattr(self.cfg, "steps_per_epoch", None) or per_pass

        def stream():
            step = initial_epoch * steps
            p, skip = divmod(step, per_pass)
            while True:
                for k, batch in enumerate(recipe.batches(p, seed)):
                    if k >= skip:
                        if hook:
                            hook(step // steps, step % steps, batch)
                        step += 1
                        yield batch
                p, skip = p + 1, 0

        first = next(iter(recipe.batches(0, seed)), None)
        if first is None or not per_pass:
            from captioner.errors import InputError

            raise InputError(f"the training data makes no batch of --batch-size {getattr(self.cfg, 'batch_size', '?')} "
                             "(too few examples; --limit N keeps the first N, characters for `train lm --level char`)")
        spec = _signature(first)
        return tf.data.Dataset.from_generator(stream, output_signature=spec).prefetch(2), steps

    # -- the saved model -----------------------------------------------------------------
    def save(self, model, metrics):
        """The inference copy, wrapped by the recipe, saved atomically with its ModelCard."""
        from captioner.model_card import ModelCard
        from captioner.models.storage import save_model, storage_record

        path = self.cfg.model_out or self.run_dir.path("model.keras")
        final = self.recipe.export(inference_copy(model))
        save_model(final, path)  # float16 weights, a package backbone by reference
        extra = {**(self.recipe.card_extra() or {}), "storage": storage_record(final, path)}
        ModelCard(model=os.path.basename(path), task=self.recipe.task, command=self.command, seed=self.cfg.seed,
                  data=self.recipe.card_data(self), config={k: v for k, v in self.config.items() if k != "data"},
                  metrics=metrics, notes=self.recipe.notes, extra=extra).save(path)
        return path


def run_recipe(module, cfg):
    """`captioner train NAME`: the recipe of `module` over `cfg`, by the Trainer."""
    return Trainer(module.RECIPE.make(cfg), command_line(module.NAME)).run()
