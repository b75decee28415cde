"""The character model's helpers, and the demo script end to end (few iterations)."""

import importlib.util
import os
import re

import numpy as np

from captioner.reference import (
    adagrad_update,
    clip_gradients,
    encode_word,
    initialize_lstm_parameters,
    initialize_rnn_parameters,
    rnn_loss_gradients,
    sample,
    sgd_update,
)

CHARS = ["\n", "a", "b", "n"]
CHAR_TO_IX = {ch: i for i, ch in enumerate(CHARS)}
SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "numpy_char_rnn.py")


def test_encode_word_shifts_inputs_against_labels():
    x, labels = encode_word("ann", CHAR_TO_IX)
    assert x.shape == (4, 1, 4) and labels.shape == (1, 4)
    np.testing.assert_array_equal(x[:, 0, 0], 0.0)  # step 0 sees nothing
    assert [int(np.argmax(x[:, 0, t])) for t in (1, 2, 3)] == [1, 3, 3]  # a n n
    np.testing.assert_array_equal(labels, [[1, 3, 3, 0]])  # a n n <end>


def test_clip_and_updates():
    clipped = clip_gradients({"dW": np.array([-9.0, 0.5, 7.0])}, 5.0)
    np.testing.assert_array_equal(clipped["dW"], [-5.0, 0.5, 5.0])

    p = {"W": np.array([1.0, 1.0])}
    sgd_update(p, {"dW": np.array([2.0, -1.0])}, 0.1)
    np.testing.assert_allclose(p["W"], [0.8, 1.1])

    p, memory = {"W": np.array([1.0, 1.0])}, {}
    adagrad_update(p, {"dW": np.array([2.0, -1.0])}, memory, 0.1)  # first step: lr * sign(g)
    np.testing.assert_allclose(p["W"], [0.9, 1.1], atol=1e-6)
    np.testing.assert_allclose(memory["W"], [4.0, 1.0])


def test_sample_is_seeded_and_stops_at_the_end_mark():
    for p in (initialize_rnn_parameters(4, 8, 4, seed=0), initialize_lstm_parameters(4, 8, 4, seed=0)):
        first = sample(p, 0, np.random.default_rng(7), max_length=50)
        assert first == sample(p, 0, np.random.default_rng(7), max_length=50)
        assert first[-1] == 0 or len(first) == 50
        assert all(0 <= i < 4 for i in first)


def test_a_few_sgd_steps_memorise_one_word():
    p = initialize_rnn_parameters(4, 8, 4, seed=0)
    x, labels = encode_word("nab", CHAR_TO_IX)  # every next character is determined: loss -> 0
    a0 = np.zeros((8, 1))
    first, _, _ = rnn_loss_gradients(x, labels, a0, p)
    for _ in range(200):
        loss, grads, _ = rnn_loss_gradients(x, labels, a0, p)
        sgd_update(p, clip_gradients({"d" + k: grads["d" + k] for k in p}, 5.0), 0.5)
    assert loss < 0.05 * first


def test_demo_script_trains_and_samples(capsys):
    spec = importlib.util.spec_from_file_location("numpy_char_rnn", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(["--iterations", "600", "--print-every", "200", "--samples", "3", "--hidden", "20"])
    out = capsys.readouterr().out
    losses = [float(v) for v in re.findall(r"loss +([\d.]+) per name", out)]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert out.rstrip().count("\n  ") == 3  # three sampled names
