"""What a character-level language model needs around the cells: parameter initialisation,
encoding a word as one-hot columns, gradient clipping, SGD/Adagrad updates and sampling.

A word w_1 ... w_n becomes T_x = n + 1 steps. The input at step 0 is the zero vector
("nothing yet"), at step t the one-hot of w_t; the label at step t is the next character
w_{t+1}, and the label of the last step is the end mark "\\n":

    x:      0    w_1  w_2  ...  w_n
    labels: w_1  w_2  w_3  ...  "\\n"
"""

import numpy as np

from captioner.reference.lstm import lstm_cell_forward
from captioner.reference.rnn import rnn_cell_forward

END = "\n"


def initialize_rnn_parameters(n_x, n_a, n_y, seed=0, scale=0.01):
    """Small random weights, zero biases: Wax, Waa, ba, Wya, by."""
    rng = np.random.default_rng(seed)
    return {
        "Wax": rng.standard_normal((n_a, n_x)) * scale,
        "Waa": rng.standard_normal((n_a, n_a)) * scale,
        "ba": np.zeros((n_a, 1)),
        "Wya": rng.standard_normal((n_y, n_a)) * scale,
        "by": np.zeros((n_y, 1)),
    }


def initialize_lstm_parameters(n_x, n_a, n_y, seed=0):
    """Gate weights ~ N(0, 1/(n_a + n_x)), zero biases except the forget gate's, 1 (so the
    cell starts by remembering, Jozefowicz et al. 2015; the project's decoder does the same)."""
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(n_a + n_x)
    parameters = {}
    for g in ("f", "i", "c", "o"):
        parameters[f"W{g}"] = rng.standard_normal((n_a, n_a + n_x)) * scale
        parameters[f"b{g}"] = np.full((n_a, 1), 1.0 if g == "f" else 0.0)
    parameters["Wy"] = rng.standard_normal((n_y, n_a)) / np.sqrt(n_a)
    parameters["by"] = np.zeros((n_y, 1))
    return parameters


def encode_word(word, char_to_ix):
    """One word -> x (n_x, 1, T_x) one-hot columns and labels (1, T_x), T_x = len(word) + 1."""
    n_x = len(char_to_ix)
    indices = [char_to_ix[ch] for ch in word]
    x = np.zeros((n_x, 1, len(indices) + 1))
    for t, ix in enumerate(indices, start=1):
        x[ix, 0, t] = 1.0  # x<0> stays the zero vector
    labels = np.array([indices + [char_to_ix[END]]])  # (1, T_x)
    return x, labels


def clip_gradients(gradients, max_value):
    """Clip every entry to [-max_value, max_value]: a cheap guard against the exploding
    gradients that long products of Waa^T (one per step back in time) can produce."""
    return {name: np.clip(g, -max_value, max_value) for name, g in gradients.items()}


def sgd_update(parameters, gradients, learning_rate):
    """theta <- theta - lr * dtheta for every parameter (its gradient is named "d" + name)."""
    for name in parameters:
        parameters[name] -= learning_rate * gradients["d" + name]
    return parameters


def adagrad_update(parameters, gradients, memory, learning_rate):
    """Adagrad: G <- G + dtheta^2, theta <- theta - lr * dtheta / sqrt(G + 1e-8).

    `memory` holds G per parameter (start with {}); each weight gets its own step size,
    smaller for weights that have had large gradients."""
    for name in parameters:
        g = gradients["d" + name]
        memory[name] = memory.get(name, np.zeros_like(g)) + g * g
        parameters[name] -= learning_rate * g / np.sqrt(memory[name] + 1e-8)
    return parameters


def sample(parameters, end_index, rng, max_length=30):
    """Generate one word, one character at a time: feed the sampled character back in.

    Works for both cells (an RNN's parameters have Wax, an LSTM's Wf). Starts from the zero
    input and zero state, draws index ~ y_hat<t> at every step and stops after `end_index`
    or `max_length` characters. Returns the list of indices (ending with end_index unless
    cut off)."""
    is_rnn = "Wax" in parameters
    n_x = parameters["Wax"].shape[1] if is_rnn else parameters["Wf"].shape[1] - parameters["Wf"].shape[0]
    n_a = parameters["Waa"].shape[0] if is_rnn else parameters["Wf"].shape[0]

    x = np.zeros((n_x, 1))  # (n_x, 1) the zero input of step 0
    a = np.zeros((n_a, 1))
    c = np.zeros((n_a, 1))
    indices = []
    while len(indices) < max_length:
        if is_rnn:
            a, y, _ = rnn_cell_forward(x, a, parameters)
        else:
            a, c, y, _ = lstm_cell_forward(x, a, c, parameters)
        ix = int(rng.choice(len(y), p=y[:, 0]))
        indices.append(ix)
        if ix == end_index:
            break
        x = np.zeros((n_x, 1))
        x[ix] = 1.0  # the sampled character is the next input
    return indices


__all__ = [
    "END",
    "adagrad_update",
    "clip_gradients",
    "encode_word",
    "initialize_lstm_parameters",
    "initialize_rnn_parameters",
    "sample",
    "sgd_update",
]
