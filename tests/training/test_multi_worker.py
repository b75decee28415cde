"""`captioner train caption --distribute multi-worker`: two worker processes on localhost
(TF_CONFIG, MultiWorkerMirroredStrategy) train a tiny captioner on generated shapes, one
epoch and then `--resume` to two; only the chief writes the run directory (the other worker's
temporary folder is gone at the end); the model loads and captions; and it is the model one
process trains with the same flags and seed, up to the floating-point differences of splitting
each batch between two workers."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from captioner.cli import main

REPO = Path(__file__).resolve().parents[2]
TINY = ["--units", "32", "--embedding-dim", "16", "--projection-dim", "32", "--attention-units", "16",
        "--batch-size", "16", "--min-count", "1", "--final-eval-beams", "1", "--beam-size", "2",
        "--max-length", "8", "--learning-rate", "0.01", "--dropout", "0", "--patience", "5"]


def free_ports(n):
    """n TCP ports free on localhost now (bound together, so distinct, then released)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("localhost", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def run_workers(args, logs, n=2, timeout=600):
    """`captioner train caption ARGS --distribute multi-worker` as `n` local worker processes,
    each with its TF_CONFIG and its own TMPDIR (logs/tmp-I); -> [(exit status, output)]."""
    cluster = {"worker": [f"localhost:{port}" for port in free_ports(n)]}
    procs = []
    for i in range(n):
        (logs / f"tmp-{i}").mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}),
               "TF_CPP_MIN_LOG_LEVEL": "2", "TMPDIR": str(logs / f"tmp-{i}"), "PYTHONPATH": str(REPO),
               "CUDA_VISIBLE_DEVICES": ""}
        log = open(logs / f"worker-{i}.log", "w")
        procs.append((subprocess.Popen([sys.executable, "-m", "captioner", "train", "caption", *map(str, args),
                                        "--distribute", "multi-worker"], stdout=log, stderr=subprocess.STDOUT,
                                       env=env, cwd=REPO), log))
    results = []
    try:
        for i, (proc, log) in enumerate(procs):
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = "timeout"
            log.close()
            results.append((code, (logs / f"worker-{i}.log").read_text()))
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for i, (code, output) in enumerate(results):
        assert code == 0, f"worker {i} exited with {code}:\n{output[-4000:]}"
    return results


@pytest.mark.slow
def test_two_workers_train_resume_and_save_a_model_like_one_process(tmp_path):
    from support.training import write_shapes_flickr8k

    import keras

    data = write_shapes_flickr8k(tmp_path / "data")
    common = ["--data-dir", data, "--features", tmp_path / "features.h5", *TINY]
    run = tmp_path / "multi" / "run"

    # two workers, one epoch; then both again with --resume to two epochs
    first = run_workers([*common, "--output-dir", run, "--epochs", "1"], tmp_path / "logs1")
    assert json.loads((run / "checkpoint_state.json").read_text())["epoch"] == 1
    assert "worker 1 of 2: trained; the chief wrote the model" in first[1][1]
    second = run_workers([*common, "--output-dir", run, "--epochs", "2", "--resume"], tmp_path / "logs2")
    assert "resumed from" in second[0][1] and "after epoch 1" in second[1][1]  # both restored epoch 1
    state = json.loads((run / "checkpoint_state.json").read_text())
    history = json.loads((run / "history.json").read_text())
    assert state["epoch"] == 2 and [h["epoch"] for h in history] == [1, 2]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["workers"] == 2 and "beam_1" in metrics
    # only the chief wrote: the run directory holds what a one-process run writes, and each
    # worker's temporary folder is gone
    assert sorted(p.name for p in run.iterdir()) == sorted(
        ["config.json", "vocabulary.json", "checkpoint_state.json", state["checkpoint"], state["best_weights"],
         "history.json", "training_curve.png", "tensorboard", "metrics.json", "dev_samples.json", "model.keras",
         "model.json"])
    for logs in ("logs1", "logs2"):
        assert not list((tmp_path / logs / "tmp-1").iterdir())
        assert not [p for p in (tmp_path / logs / "tmp-0").iterdir() if p.name.startswith("captioner-")]

    # one process, the same flags and seed, two epochs straight
    single = tmp_path / "single" / "run"
    assert main(["train", "caption", *map(str, common), "--output-dir", str(single), "--epochs", "2"]) == 0
    assert (run / "vocabulary.json").read_text() == (single / "vocabulary.json").read_text()
    single_history = json.loads((single / "history.json").read_text())
    losses = np.array([[h["loss"] for h in history], [h["loss"] for h in single_history]])
    # the same batches, each split in two: the per-epoch training loss agrees closely; the
    # weights less so, as each worker normalizes its half batch by its own token count and Adam
    # turns tiny gradients into steps of about the learning rate whatever their rounding
    np.testing.assert_allclose(losses[0], losses[1], rtol=0.02)
    assert json.loads((single / "checkpoint_state.json").read_text())["best_epoch"] == state["best_epoch"]
    multi_model = keras.models.load_model(run / "model.keras")
    single_model = keras.models.load_model(single / "model.keras")
    multi_w, single_w = multi_model.decoder.get_weights(), single_model.decoder.get_weights()
    assert [w.shape for w in multi_w] == [w.shape for w in single_w]
    difference = np.sqrt(sum(((a - b) ** 2).sum() for a, b in zip(multi_w, single_w))
                         / sum((b ** 2).sum() for b in single_w))
    assert difference < 0.1, difference  # ||multi - single|| / ||single|| over all decoder weights
    print(f"MULTI-WORKER VS ONE PROCESS: per-epoch losses {losses.tolist()}, "
          f"relative weight difference {difference:.4f}")

    # the saved model (loaded above in safe mode; a fresh process loads a captioner the same way in
    # test_train_caption.py) captions
    images = sorted(str(p) for p in (data / "Images").iterdir())[18:21]  # dev images
    here = [c.text for c in multi_model.caption(images)]
    assert all(here)
    print("MULTI-WORKER CAPTIONS", here, "ONE PROCESS", [c.text for c in single_model.caption(images)])
