"""The run directory's checkpoints: an epoch is committed by one atomic rename of the state,
which names that epoch's weights files, so a kill at any moment resumes consistently."""

import json

import keras
import numpy as np
import pytest

from captioner.errors import InputError
from captioner.training import callbacks
from captioner.training.callbacks import BEST, CHECKPOINT, STATE, TrainingRun


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
    return model


def _step(model):
    model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    return [w.copy() for w in model.get_weights()]


def _same(a, b):
    return all(np.allclose(x, y) for x, y in zip(a, b))


def test_a_kill_between_the_weights_and_the_state_resumes_from_the_previous_epoch(tmp_path, monkeypatch):
    run, model = TrainingRun(tmp_path), _model()
    epoch1 = _step(model)
    run.commit(model, {"epoch": 1, "wait": 0}, improved=True)
    epoch2 = _step(model)
    assert not _same(epoch1, epoch2)

    def killed(path, data):
        raise KeyboardInterrupt  # the process dies after epoch 2's weights, before its state

    monkeypatch.setattr(callbacks, "write_json", killed)
    with pytest.raises(KeyboardInterrupt):
        run.commit(model, {"epoch": 2, "wait": 0}, improved=True)
    monkeypatch.undo()
    resumed = _model()
    state = TrainingRun(tmp_path).resume(resumed, True)
    assert state["epoch"] == 1 and _same(resumed.get_weights(), epoch1)  # epoch 1's state with its own weights
    best = _model()
    TrainingRun(tmp_path).load_best(best)
    assert _same(best.get_weights(), epoch1)
    # the next commit supersedes the orphan files of the killed one
    _step(resumed)
    TrainingRun(tmp_path).commit(resumed, {**state, "epoch": 2}, improved=False)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["best-0001.weights.h5", "checkpoint-0002.weights.h5", STATE]


def test_a_run_directory_of_before_resumes_and_keeps_its_best_weights(tmp_path):
    run, model = TrainingRun(tmp_path), _model()
    weights = _step(model)
    model.save_weights(str(tmp_path / CHECKPOINT))
    model.save_weights(str(tmp_path / BEST))
    (tmp_path / STATE).write_text(json.dumps({"epoch": 3, "best": 1.0, "best_epoch": 3, "wait": 0, "history": []}))
    resumed = _model()
    assert run.resume(resumed, True)["epoch"] == 3 and _same(resumed.get_weights(), weights)
    run.commit(resumed, {"epoch": 4, "best": 1.0, "best_epoch": 3, "wait": 1, "history": []}, improved=False)
    assert json.loads((tmp_path / STATE).read_text())["best_weights"] == BEST
    assert (tmp_path / BEST).exists() and not (tmp_path / CHECKPOINT).exists()


def test_a_state_naming_a_missing_file_is_refused_clearly(tmp_path):
    run, model = TrainingRun(tmp_path), _model()
    _step(model)
    run.commit(model, {"epoch": 1, "wait": 0}, improved=True)
    (tmp_path / "checkpoint-0001.weights.h5").unlink()
    with pytest.raises(InputError, match="checkpoint-0001.weights.h5, which is missing"):
        run.resume(_model(), True)


def test_no_resume_asked_or_nothing_committed_starts_fresh(tmp_path):
    run = TrainingRun(tmp_path)
    assert run.resume(_model(), True) is None
    (tmp_path / "checkpoint-0001.weights.h5").write_bytes(b"half")  # killed before its first state
    assert run.resume(_model(), True) is None and run.resume(_model(), False) is None


def test_training_curve_names_the_loss_it_plots(tmp_path, monkeypatch):
    """The curve's loss axis says what the recipe minimizes (SCST: a REINFORCE loss, not cross-entropy)."""
    import matplotlib.axes

    from captioner.training.callbacks import plot_history

    labels = []
    original = matplotlib.axes.Axes.set_ylabel
    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel",
                        lambda self, label, *a, **k: (labels.append(label), original(self, label, *a, **k))[1])
    history = [{"epoch": 1, "loss": -0.1, "dev_CIDEr": 46.9}, {"epoch": 2, "loss": -0.09, "dev_CIDEr": 47.5}]
    plot_history(history, str(tmp_path), "dev_CIDEr", loss_label="REINFORCE loss")
    assert (tmp_path / "training_curve.png").stat().st_size > 0
    assert labels == ["REINFORCE loss", "dev_CIDEr"]


def test_training_curve_plots_the_recipes_keys_and_the_starting_figure(tmp_path, monkeypatch):
    """A recipe may plot other history keys than the loss (SCST: the sample and greedy rewards),
    and a run that continues a trained model draws the dev figure it started from at epoch 0."""
    import matplotlib.axes

    from captioner.training.callbacks import plot_history

    lines = []
    original = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda self, x, y, *a, **k: (lines.append((list(x), list(y), k.get("label"))),
                                                     original(self, x, y, *a, **k))[1])
    history = [{"epoch": 1, "loss": -0.1, "sample_reward": 0.6, "greedy_reward": 0.7, "dev_CIDEr": 51.9},
               {"epoch": 2, "loss": -0.09, "sample_reward": 0.65, "greedy_reward": 0.72, "dev_CIDEr": 53.5}]
    plot_history(history, str(tmp_path), "dev_CIDEr", loss_label="reward",
                 left_keys=("sample_reward", "greedy_reward"), start=49.6)
    assert lines == [([1, 2], [0.6, 0.65], "sample_reward"), ([1, 2], [0.7, 0.72], "greedy_reward"),
                     ([0, 1, 2], [49.6, 51.9, 53.5], None)]
    assert (tmp_path / "training_curve.png").stat().st_size > 0
