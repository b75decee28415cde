"""captioner.training.distribute: worker roles, the non-chief's temporary run directory, and the
multi-worker strategy's `reduce` as Keras 3's fit calls it (one worker, no TF_CONFIG)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from captioner.training.distribute import WorkerRole, remove_worker_directory, worker_directory

REPO = Path(__file__).resolve().parents[2]


def test_roles():
    assert WorkerRole().chief and not WorkerRole().distributed
    worker = WorkerRole("worker", 1, 2, False)
    assert worker.distributed and worker.name == "worker 1"


def test_chief_writes_output_dir_others_a_temporary_copy(tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoint_state.json").write_text(json.dumps({"epoch": 1}))
    (out / "vocabulary.json").write_text("[]")
    (out / "model.keras").write_text("not copied")
    (out / ".tmp-x.123-abc").write_text("a write in progress: not copied")
    (out / "tensorboard").mkdir()
    assert worker_directory(out, WorkerRole(), resume=True) == str(out)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    worker = WorkerRole("worker", 1, 2, False)
    fresh = worker_directory(out, worker, resume=False)
    assert os.listdir(fresh) == [] and fresh.startswith(str(tmp_path / "tmp"))
    copy = worker_directory(out, worker, resume=True)
    assert sorted(os.listdir(copy)) == ["checkpoint_state.json", "vocabulary.json"]
    for d in (fresh, copy):
        remove_worker_directory(d, worker)
        assert not os.path.exists(d)
    remove_worker_directory(str(out), WorkerRole())  # the chief's is never removed
    assert out.exists()


def test_multi_worker_strategy_reduces_what_keras_fit_reduces():
    script = textwrap.dedent("""
        import os, numpy as np
        os.environ.pop("TF_CONFIG", None)
        from captioner.training.distribute import agree, barrier, gather, strategy_for, worker_role
        strategy = strategy_for("multi-worker")  # no TF_CONFIG: this process alone
        import tensorflow as tf
        role = worker_role(strategy)
        assert role.chief and not role.distributed, role
        batch = strategy.run(lambda: ({"annotations": tf.ones((4, 3, 2)), "tokens": tf.ones((4, 5), tf.int32)},
                                      tf.zeros((4, 5))))
        x, y = strategy.reduce("MEAN", batch, axis=None)  # a nest, as fit's symbolic build reduces it
        assert x["annotations"].shape == (4, 3, 2) and y.shape == (4, 5)
        loss = strategy.run(lambda: tf.constant(2.5))
        assert float(strategy.reduce("MEAN", loss, axis=0)) == 2.5  # a scalar along axis 0, as fit's logs
        rows = strategy.run(lambda: tf.ones((3, 2)))
        assert strategy.reduce("SUM", rows, axis=0).shape == (2,)  # a real axis still reduces
        assert gather(strategy, [7, 1]).tolist() == [[7.0, 1.0]]
        barrier(strategy, role, "nothing")
        assert agree(strategy, role, 3, "x") == 3
        print("OK")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)})
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]
