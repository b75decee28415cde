"""Training glue shared by every task: atomic per-epoch checkpoints with resume, model
selection and early stopping on a real decoding metric, a history file and a curve plot."""

import json
import logging
import os
import time

import keras

from captioner.io import atomic_path, write_json

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.weights.h5"
STATE = "checkpoint_state.json"
BEST = "best.weights.h5"
HISTORY = "history.json"


class TrainingRun:
    """A run directory: checkpoint (weights + optimizer), state, best weights, history."""

    def __init__(self, directory):
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)

    def path(self, name):
        return os.path.join(self.directory, name)

    def has_checkpoint(self):
        return os.path.exists(self.path(CHECKPOINT)) and os.path.exists(self.path(STATE))

    def load_state(self):
        with open(self.path(STATE), encoding="utf-8") as f:
            return json.load(f)

    def restore(self, model):
        """Load weights and optimizer state of the last checkpoint; returns the state dict."""
        state = self.load_state()
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(self.path(CHECKPOINT))
        log.info("resumed from %s after epoch %d", self.directory, state["epoch"])
        return state

    def resume(self, model, wanted):
        """(checkpoint state, initial epoch) restored into `model` when `wanted` (--resume) and
        there is a checkpoint, else (None, 0); says so when a wanted resume finds nothing."""
        if not wanted:
            return None, 0
        if not self.has_checkpoint():
            log.info("--resume: no checkpoint in %s yet, starting fresh", self.directory)
            return None, 0
        state = self.restore(model)
        return state, state["epoch"]


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
            with atomic_path(self.run.path(BEST)) as tmp:
                self.model.save_weights(tmp)
        else:
            self.wait += 1
            if self.lr_decay != 1.0:
                self.learning_rate = _current_lr(self.model.optimizer) * self.lr_decay
                self.model.optimizer.learning_rate = self.learning_rate
        entry["learning_rate"] = _current_lr(self.model.optimizer)
        with atomic_path(self.run.path(CHECKPOINT)) as tmp:
            self.model.save_weights(tmp)  # includes the optimizer's variables
        state = {"epoch": epoch + 1, "best": self.best, "best_epoch": self.best_epoch,
                 "wait": self.wait, "learning_rate": _current_lr(self.model.optimizer),
                 "history": self.history}
        write_json(self.run.path(STATE), state)
        write_json(self.run.path(HISTORY), self.history)
        if self.plot_fn:
            self.plot_fn(self.history, self.run.directory)
        print(f"\nepoch {epoch + 1}: {self.metric_name} {score:.2f} "
              f"(best {self.best:.2f} at epoch {self.best_epoch}); "
              + ", ".join(f"{k} {v:.2f}" for k, v in scores.items() if k != self.metric_name), flush=True)
        if self.wait >= self.patience:
            print(f"early stopping: no improvement of {self.metric_name} for {self.patience} epochs", flush=True)
            self.model.stop_training = True


def plot_history(history, directory, metric="dev_BLEU-4", filename="training_curve.png"):
    """Loss and the dev metric per epoch, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for key, style in (("loss", "-o"), ("val_loss", "--o")):
        if any(key in h for h in history):
            ax1.plot(epochs, [h.get(key) for h in history], style, label=key)
    ax1.set_xlabel("epoch"), ax1.set_ylabel("cross-entropy per token"), ax1.legend(), ax1.grid(alpha=0.3)
    ax2.plot(epochs, [h.get(metric) for h in history], "-o", color="tab:green")
    ax2.set_xlabel("epoch"), ax2.set_ylabel(metric), ax2.grid(alpha=0.3)
    ax2.set_title(f"{metric} from beam decoding")
    fig.tight_layout()
    with atomic_path(os.path.join(directory, filename), ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
