"""The NumPy LSTM and the project's Keras LSTMs compute the same function, given the same weights.

What is compared, all in float32 on the Keras side and float64 on the NumPy side (the NumPy
side gets the very float32 values), to 1e-5:

1. `keras.layers.LSTMCell`, 5 steps from a non-zero (h, c): the hidden state h and the cell
   state c after every step against `lstm_cell_forward`'s a_next and c_next.
2. `keras.layers.LSTM(return_sequences=True, return_state=True)` over a whole sequence: every
   h<t> and the final c against `lstm_forward`.
3. `captioner.layers.AttentionDecoder(cell="lstm", context="none", deep_output=False,
   init_state="given")`, whose step does not use LSTMCell but its own matmuls (gates
   i, f, g, o from embedding @ kernel_e + h @ recurrent_kernel + bias). With no context the
   step is a plain LSTM over the embedded tokens, and with no deep output the logits are
   `vocab_dense(h)`. Through `step()` (the beam-search path): h, c and the log-probabilities
   against lstm_cell_forward's a_next, c_next and log(y_hat), every step; through `call()`
   (teacher forcing, tf.scan): softmax(logits) against lstm_forward's y_hat at every step.
   There the mapping runs the other way: the decoder's own initial weights are read back
   into the seminar's layout with `lstm_from_keras`.
"""

import keras
import numpy as np

from captioner.layers.attention_decoder import AttentionDecoder
from captioner.reference import (
    lstm_cell_forward,
    lstm_forward,
    lstm_from_keras,
    lstm_to_keras,
    softmax,
)

N_X, N_A, N_Y, M, T_X = 4, 6, 7, 3, 5
ATOL = 1e-5


def _numpy_parameters(rng):
    """Random seminar parameters, rounded to float32 values (then both sides use the same)."""
    p = {}
    for g in "fico":
        p[f"W{g}"] = rng.standard_normal((N_A, N_A + N_X)) * 0.5
        p[f"b{g}"] = rng.standard_normal((N_A, 1)) * 0.5
    p["Wy"], p["by"] = rng.standard_normal((N_Y, N_A)), rng.standard_normal((N_Y, 1))
    return {k: v.astype(np.float32).astype(np.float64) for k, v in p.items()}


def test_layout_round_trip():
    p = _numpy_parameters(np.random.default_rng(0))
    w = lstm_to_keras(p)
    assert w["kernel"].shape == (N_X, 4 * N_A) and w["recurrent_kernel"].shape == (N_A, 4 * N_A)
    assert w["bias"].shape == (4 * N_A,) and w["output_kernel"].shape == (N_A, N_Y)
    back = lstm_from_keras(**w)
    assert back.keys() == p.keys()
    for k in p:
        np.testing.assert_array_equal(back[k], p[k])
    # the forget gate is Keras's second block: its bias is bias[n_a:2 n_a]
    np.testing.assert_array_equal(w["bias"][N_A:2 * N_A], p["bf"][:, 0])


def test_parity_with_keras_lstm_cell():
    rng = np.random.default_rng(1)
    p = _numpy_parameters(rng)
    w = lstm_to_keras(p)
    cell = keras.layers.LSTMCell(N_A)  # activation tanh, recurrent_activation sigmoid
    cell.build((None, N_X))
    cell.set_weights([w["kernel"].astype("float32"), w["recurrent_kernel"].astype("float32"),
                      w["bias"].astype("float32")])

    x = rng.standard_normal((N_X, M, T_X)).astype(np.float32).astype(np.float64)
    a = rng.standard_normal((N_A, M)).astype(np.float32).astype(np.float64)
    c = rng.standard_normal((N_A, M)).astype(np.float32).astype(np.float64)
    h_k, c_k = a.T.astype("float32"), c.T.astype("float32")  # Keras: one example per row
    for t in range(T_X):
        a, c, _, _ = lstm_cell_forward(x[:, :, t], a, c, p)
        _, (h_k, c_k) = cell(x[:, :, t].T.astype("float32"), [h_k, c_k])
        np.testing.assert_allclose(np.asarray(h_k).T, a, atol=ATOL)
        np.testing.assert_allclose(np.asarray(c_k).T, c, atol=ATOL)


def test_parity_with_keras_lstm_layer():
    rng = np.random.default_rng(2)
    p = _numpy_parameters(rng)
    w = lstm_to_keras(p)
    layer = keras.layers.LSTM(N_A, return_sequences=True, return_state=True)
    layer.build((None, T_X, N_X))
    layer.set_weights([w["kernel"].astype("float32"), w["recurrent_kernel"].astype("float32"),
                       w["bias"].astype("float32")])

    x = rng.standard_normal((N_X, M, T_X)).astype(np.float32).astype(np.float64)
    a0 = rng.standard_normal((N_A, M)).astype(np.float32).astype(np.float64)
    c0 = rng.standard_normal((N_A, M)).astype(np.float32).astype(np.float64)
    a, _, c, _ = lstm_forward(x, a0, p, c0)
    hs, _, c_last = layer(np.transpose(x, (1, 2, 0)).astype("float32"),  # (m, T_x, n_x)
                          initial_state=[a0.T.astype("float32"), c0.T.astype("float32")])
    np.testing.assert_allclose(np.transpose(np.asarray(hs), (2, 0, 1)), a, atol=ATOL)  # (n_a, m, T_x)
    np.testing.assert_allclose(np.asarray(c_last).T, c[:, :, -1], atol=ATOL)


def _decoder_and_numpy_parameters():
    keras.utils.set_random_seed(3)
    dec = AttentionDecoder.of(vocab_size=N_Y, embedding_dim=N_X, units=N_A, cell="lstm",
                           context="none", init_state="given", deep_output=False)
    dec.build((None, None, 2))
    p = lstm_from_keras(np.asarray(dec.kernel_e, np.float64), np.asarray(dec.recurrent_kernel, np.float64),
                        np.asarray(dec.bias, np.float64), np.asarray(dec.vocab_dense.kernel, np.float64),
                        np.asarray(dec.vocab_dense.bias, np.float64))
    embeddings = np.asarray(dec.embedding.embeddings, np.float64)  # (vocab, n_x)
    return dec, p, embeddings


def _inputs(rng):
    tokens = rng.integers(0, N_Y, size=(M, T_X)).astype("int32")
    h0 = rng.standard_normal((M, N_A)).astype("float32")
    c0 = rng.standard_normal((M, N_A)).astype("float32")
    annotations = np.zeros((M, 1, 2), "float32")  # unused with context="none"
    return tokens, h0, c0, annotations


def test_parity_with_attention_decoder_step():
    dec, p, embeddings = _decoder_and_numpy_parameters()
    tokens, h0, c0, annotations = _inputs(np.random.default_rng(4))
    # the forget-gate bias of 1 that the decoder initialises lands in the seminar's bf
    np.testing.assert_array_equal(p["bf"], 1.0)

    memory, state = dec.prepare(annotations, initial_state={"h": h0, "c": c0})
    a, c = h0.T.astype(np.float64), c0.T.astype(np.float64)  # (n_a, m)
    for t in range(T_X):
        xt = embeddings[tokens[:, t]].T  # (n_x, m) the embedded token, one column per example
        a, c, yt, _ = lstm_cell_forward(xt, a, c, p)
        log_probs, state, _ = dec.step(tokens[:, t], state, memory)
        np.testing.assert_allclose(np.asarray(state["h"]).T, a, atol=ATOL)
        np.testing.assert_allclose(np.asarray(state["c"]).T, c, atol=ATOL)
        np.testing.assert_allclose(np.asarray(log_probs).T, np.log(yt), atol=ATOL)


def test_parity_with_attention_decoder_teacher_forcing():
    dec, p, embeddings = _decoder_and_numpy_parameters()
    tokens, h0, c0, annotations = _inputs(np.random.default_rng(5))
    logits, _ = dec(tokens, annotations, initial_state={"h": h0, "c": c0})  # (m, T_x, n_y)

    x = np.transpose(embeddings[tokens], (2, 0, 1))  # (n_x, m, T_x)
    _, y, _, _ = lstm_forward(x, h0.T.astype(np.float64), p, c0.T.astype(np.float64))
    probs = softmax(np.transpose(np.asarray(logits, np.float64), (2, 0, 1)))  # (n_y, m, T_x)
    np.testing.assert_allclose(probs, y, atol=ATOL)
