"""Training glue shared by every task: atomic per-epoch checkpoints with resume, model
selection and early stopping on a real decoding metric, a history file and a curve plot."""

import json
import logging
import os
import re
import time

import keras

from captioner.io import atomic_path, write_json

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.weights.h5"
STATE = "checkpoint_state.json"
BEST = "best.weights.h5"
HISTORY = "history.json"


class TrainingRun:
    """A run directory: checkpoint (weights + optimizer), state, best weights, history.

    The state json is the commit point of an epoch: the weights files are named by epoch
    (`checkpoint-0003.weights.h5`, `best-0002.weights.h5`) and written first, then the state
    that names them replaces the previous one in one rename, then the files no state names
    any more are removed. A kill at any moment leaves a state whose weights are its own."""

    def __init__(self, directory):
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def path(self, name):
        return os.path.join(self.directory, name)

    def has_checkpoint(self):
        return os.path.exists(self.path(STATE))

    def load_state(self):
        with open(self.path(STATE), encoding="utf-8") as f:
            return json.load(f)

    def weights_path(self, state, key):
        """The weights file `state` names (runs of before this scheme: the fixed names)."""
        name = state.get(key) or {"checkpoint": CHECKPOINT, "best_weights": BEST}[key]
        path = self.path(name)
        if not os.path.exists(path):
            from captioner.errors import InputError

            raise InputError(f"{self.path(STATE)} names {name}, which is missing: the run directory was "
                             "changed by hand; refusing to resume from it (start afresh in a new --output-dir)")
        return path

    def restore(self, model):
        """Load weights and optimizer state of the last checkpoint; returns the state dict."""
        state = self.load_state()
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(self.weights_path(state, "checkpoint"))
        log.info("resumed from %s after epoch %d", self.directory, state["epoch"])
        return state

    def resume(self, model, wanted):
        """The checkpoint state restored into `model` when `wanted` (--resume) and there is a
        checkpoint, else None; says so when a wanted resume finds nothing."""
        if not wanted:
            return None
        if not self.has_checkpoint():
            log.info("--resume: no completed epoch in %s yet, starting fresh", self.directory)
            return None
        return self.restore(model)

    def commit(self, model, state, improved):
        """Write epoch `state["epoch"]`'s checkpoint (and best weights when `improved`), then
        its state in one atomic rename, then drop the files no state names."""
        epoch = state["epoch"]
        state["checkpoint"] = f"checkpoint-{epoch:04d}.weights.h5"
        with atomic_path(self.path(state["checkpoint"])) as tmp:
            model.save_weights(tmp)  # includes the optimizer's variables
        if improved:
            state["best_weights"] = f"best-{epoch:04d}.weights.h5"
            with atomic_path(self.path(state["best_weights"])) as tmp:
                model.save_weights(tmp)
        elif not state.get("best_weights"):
            state["best_weights"] = BEST  # a run of before this scheme: its best weights keep their name
        write_json(self.path(STATE), state)  # the commit point
        keep = {state["checkpoint"], state.get("best_weights")}
        for name in os.listdir(self.directory):
            stale = name in (CHECKPOINT, BEST) or re.fullmatch(r"(checkpoint|best)-\d+\.weights\.h5", name)
            if stale and name not in keep:
                os.remove(self.path(name))

    def load_best(self, model):
        """Load the selected (best) weights of the last committed state into `model`."""
        model.load_weights(self.weights_path(self.load_state(), "best_weights"))


def _current_lr(optimizer):
    # works for plain and distributed (MirroredVariable) learning rates
    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


class EpochCheckpoint(keras.callbacks.Callback):
    """At each epoch end: evaluate with `evaluate_fn` (a real decoding metric, higher is
    better), keep the best weights, write an atomic checkpoint (weights + optimizer) and the
    history, redraw the curve plot, and stop after `patience` epochs without improvement."""

    def __init__(self, run, evaluate_fn, metric_name="dev_BLEU-4", patience=3, state=None, plot_fn=None,
                 lr_decay=1.0):
        super().__init__()
        self.lr_decay = lr_decay  # multiply the learning rate by this after an epoch without improvement
        self.learning_rate = (state or {}).get("learning_rate")
        self.run = run
        self.evaluate_fn = evaluate_fn
        self.metric_name = metric_name
        self.patience = patience
        state = state or {}
        self.history = state.get("history", [])
        self.best = state.get("best", float("-inf"))
        self.best_epoch = state.get("best_epoch", -1)
        self.wait = state.get("wait", 0)
        self.best_weights = state.get("best_weights")
        self.plot_fn = plot_fn
        self._start = None

    def on_train_begin(self, logs=None):
        if self.learning_rate is None and self.wait and self.lr_decay != 1.0:
            # a run checkpointed before decay was recorded: catch up on the plateaus so far
            self.learning_rate = _current_lr(self.model.optimizer) * self.lr_decay ** self.wait
        if self.learning_rate is not None:
            self.model.optimizer.learning_rate = self.learning_rate

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train_seconds = time.perf_counter() - (self._start or time.perf_counter())
        scores = self.evaluate_fn()
        score = scores[self.metric_name]
        entry = {"epoch": epoch + 1, "train_seconds": round(train_seconds, 1),
                 **{k: float(v) for k, v in logs.items()}, **scores}
        self.history.append(entry)
        improved = score > self.best
        if improved:
            self.best, self.best_epoch, self.wait = score, epoch + 1, 0
        else:
            self.wait += 1
            if self.lr_decay != 1.0:
                self.learning_rate = _current_lr(self.model.optimizer) * self.lr_decay
                self.model.optimizer.learning_rate = self.learning_rate
        entry["learning_rate"] = _current_lr(self.model.optimizer)
        state = {"epoch": epoch + 1, "best": self.best, "best_epoch": self.best_epoch,
                 "wait": self.wait, "learning_rate": _current_lr(self.model.optimizer),
                 "history": self.history, "best_weights": self.best_weights}
        self.run.commit(self.model, state, improved)
        self.best_weights = state["best_weights"]
        write_json(self.run.path(HISTORY), self.history)
        if self.plot_fn:
            self.plot_fn(self.history, self.run.directory)
        print(f"\nepoch {epoch + 1}: {self.metric_name} {score:.2f} "
              f"(best {self.best:.2f} at epoch {self.best_epoch}); "
              + ", ".join(f"{k} {v:.2f}" for k, v in scores.items() if k != self.metric_name), flush=True)
        if self.wait >= self.patience:
            print(f"early stopping: no improvement of {self.metric_name} for {self.patience} epochs", flush=True)
            self.model.stop_training = True


class TimeBudget(keras.callbacks.Callback):
    """Stop training once `minutes` have passed (the epoch ends early; the checkpoint callback
    still evaluates and saves it).

    With a multi-worker `strategy` every worker must stop at the same step, so the budget is
    checked at the end of each epoch instead, and the workers stop when any one's budget is
    spent (a collective that every worker calls once per epoch)."""

    def __init__(self, minutes, strategy=None):
        super().__init__()
        self.minutes = minutes
        self.deadline = time.time() + minutes * 60.0
        self.hit = False
        self.strategy = strategy

    def _stop(self):
        self.hit = True
        print(f"\ntime budget of {self.minutes:g} min reached: stopping after this evaluation", flush=True)
        self.model.stop_training = True

    def on_train_batch_end(self, batch, logs=None):
        if self.strategy is None and time.time() > self.deadline and not self.hit:
            self._stop()

    def on_epoch_end(self, epoch, logs=None):
        if self.strategy is not None:
            from captioner.training.distribute import gather

            if gather(self.strategy, [time.time() > self.deadline]).any() and not self.hit:
                self._stop()


def plot_history(history, directory, metric="dev_BLEU-4", filename="training_curve.png",
                 loss_label="cross-entropy per token", left_keys=("loss", "val_loss"), start=None):
    """The training figures `left_keys` (the loss, or what the recipe plots instead) and the dev
    metric per epoch, side by side; `start`: the dev metric before the first epoch (a run that
    continues a trained model), drawn at epoch 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for key, style in zip(left_keys, ("-o", "--o", ":o", "-.o")):
        if any(key in h for h in history):
            ax1.plot(epochs, [h.get(key) for h in history], style, label=key)
    ax1.set_xlabel("epoch"), ax1.set_ylabel(loss_label), ax1.legend(), ax1.grid(alpha=0.3)
    values = [h.get(metric) for h in history]
    if start is not None:
        epochs, values = [0] + epochs, [start] + values
        ax2.annotate(f"start {start:.2f}", (0, start), textcoords="offset points", xytext=(8, 4))
    ax2.plot(epochs, values, "-o", color="tab:green")
    ax2.set_xlabel("epoch"), ax2.set_ylabel(metric), ax2.grid(alpha=0.3)
    ax2.set_title(f"{metric} from beam decoding")
    fig.tight_layout()
    with atomic_path(os.path.join(directory, filename), ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
