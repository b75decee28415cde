"""End-to-end caption training on a tiny generated dataset: files, resume, one-file model,
fresh-process loading, and MirroredStrategy over two logical CPU devices."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from support.training import TINY_CAPTION, train_caption
from support import fresh_python


@pytest.fixture(scope="session")
def shapes_flickr8k(tmp_path_factory):
    """A Flickr8k-layout dataset of drawn shapes whose captions are true by construction."""
    from support.training import write_shapes_flickr8k

    return write_shapes_flickr8k(tmp_path_factory.mktemp("shapes8k"))


@pytest.fixture(scope="module")
def trained(shapes_flickr8k, tmp_path_factory):
    out = tmp_path_factory.mktemp("train")
    # a run "killed" after one epoch, then resumed to three
    assert train_caption(shapes_flickr8k, out, "--epochs", "1", "--patience", "5") == 0
    state = json.loads((out / "run" / "checkpoint_state.json").read_text())
    assert state["epoch"] == 1
    assert train_caption(shapes_flickr8k, out, "--epochs", "3", "--patience", "5", "--resume") == 0
    return out


def test_run_directory_holds_everything(trained):
    run = trained / "run"
    history = json.loads((run / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2, 3]  # resumed, not restarted
    assert all("dev_BLEU-4" in h and "loss" in h for h in history)
    state = json.loads((run / "checkpoint_state.json").read_text())
    for name in ("model.keras", "model.json", "metrics.json", "config.json", "vocabulary.json",
                 "training_curve.png", state["best_weights"], state["checkpoint"], "dev_samples.json"):
        assert (run / name).exists(), name
    assert state["checkpoint"] == "checkpoint-0003.weights.h5"
    assert not (run / "checkpoint-0001.weights.h5").exists()  # superseded checkpoints are removed
    card = json.loads((run / "model.json").read_text())
    assert card["task"] == "caption" and card["seed"] == 1 and "beam_1" in card["metrics"]
    assert card["metrics"]["split"] == "flickr8k dev" and card["config"]["kind"] == "attention"
    assert card["metrics"]["beam_1"]["tool"] in ("coco-caption", "python")
    assert not [f for f in os.listdir(run) if f.startswith(".tmp-")]  # atomic writes left nothing


def test_saved_model_loads_in_a_fresh_process_with_same_captions(trained, shapes_flickr8k):
    import keras

    import captioner  # noqa: F401  (registers the classes)

    model_path = trained / "run" / "model.keras"
    images = sorted(str(p) for p in (shapes_flickr8k / "Images").iterdir())[:3]
    model = keras.models.load_model(model_path)
    here = [c.text for c in model.caption(images)]
    script = textwrap.dedent(f"""
        import json, keras, captioner
        m = keras.models.load_model({str(model_path)!r})  # safe_mode stays on
        print(json.dumps([c.text for c in m.caption({images!r})]))
    """)
    assert json.loads(fresh_python.last_line(script)) == here


def test_caption_api_returns_attention_per_word(trained, shapes_flickr8k):
    import keras

    model = keras.models.load_model(trained / "run" / "model.keras")
    image = sorted((shapes_flickr8k / "Images").iterdir())[0]
    cap = model.caption([str(image)], beam_size=2)[0]
    assert cap.attention.shape == (len(cap.tokens) + 1, 7, 7)
    np.testing.assert_allclose(cap.attention.sum(axis=(1, 2)), 1.0, atol=1e-4)
    assert len(cap.hypotheses) == 2 and cap.hypotheses[0][1] >= cap.hypotheses[1][1]


@pytest.mark.parametrize("kind", ["fc-init", "fc-concat"])
def test_fc_kinds_train(shapes_flickr8k, tmp_path, kind):
    assert train_caption(shapes_flickr8k, tmp_path, "--epochs", "1", "--kind", kind) == 0
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert "beam_1" in metrics


def test_mixed_precision_trains_and_saves_a_float32_model(shapes_flickr8k, tmp_path):
    import keras

    assert train_caption(shapes_flickr8k, tmp_path, "--epochs", "1", "--mixed-precision") == 0
    assert keras.mixed_precision.global_policy().name == "float32"  # restored after building
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert history and all(np.isfinite(epoch["loss"]) for epoch in history)
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    assert model.decoder.compute_dtype == "float32"
    assert all(w.dtype == "float32" for w in model.decoder.weights)


def test_mirrored_strategy_over_two_logical_cpus(shapes_flickr8k, tmp_path):
    script = textwrap.dedent(f"""
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from captioner.cli import main
        import sys
        code = main(["train", "caption", "--data-dir", {str(shapes_flickr8k)!r},
                     "--features", {str(tmp_path / "f.h5")!r}, "--output-dir", {str(tmp_path / "run")!r},
                     "--epochs", "1", "--distribute", "mirrored", *{TINY_CAPTION!r}])
        print("REPLICAS", tf.distribute.MirroredStrategy(
            devices=[d.name for d in tf.config.list_logical_devices("CPU")]).num_replicas_in_sync)
        sys.exit(code)
    """)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "REPLICAS 2" in out.stdout
    assert (tmp_path / "run" / "model.keras").exists()


def test_caption_batches_replay_on_resume(shapes_flickr8k, trained, tmp_path):
    """The recipe's contract (the Trainer's resume end to end: `trained` above, killed after epoch 1
    and resumed, and test_train_translate.py's mid-pass resume), on the features `trained` extracted."""
    from support.training import assert_recipe_batches_replay

    assert_recipe_batches_replay(["caption", "--data-dir", shapes_flickr8k, "--features", trained / "features.h5",
                                  "--output-dir", tmp_path / "run", *TINY_CAPTION])


def test_the_final_evaluation_at_several_beams_starts_one_meteor_process(shapes_flickr8k, tmp_path, monkeypatch,
                                                                          meteor_starts):
    """The Trainer opens a meteor_session around the recipe's final evaluation: beams 1 and 2
    are scored by one METEOR process, closed before the run returns."""
    from captioner.metrics import caption_metrics, java_available

    if not java_available():
        pytest.skip("java not on PATH: the final evaluation uses the python tool, no METEOR process")
    monkeypatch.setattr(caption_metrics, "_session", None)  # outside the suite's shared process
    assert train_caption(shapes_flickr8k, tmp_path, "--epochs", "1", "--final-eval-beams", "1,2") == 0
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["beam_1"]["tool"] == metrics["beam_2"]["tool"] == "coco-caption"
    assert 0 <= metrics["beam_1"]["METEOR"] <= 100 and 0 <= metrics["beam_2"]["METEOR"] <= 100
    assert len(meteor_starts) == 1 and meteor_starts[0]._proc.poll() is not None  # one process, exited
    assert caption_metrics._session is None
