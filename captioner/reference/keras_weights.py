"""Between the seminar's LSTM parameters and the Keras layout of the same cell.

The seminar keeps four gate matrices acting on the stacked column [a<t-1>; x<t>]:

    Wf, Wi, Wc, Wo  (n_a, n_a + n_x),   bf, bi, bc, bo  (n_a, 1)

Keras (`keras.layers.LSTMCell`, and the LSTM step of `captioner.layers.AttentionDecoder`)
works on rows, one example per row, with the four gates side by side in the order
i, f, c, o (c is the candidate, Keras calls it g or c):

    z      = x<t> kernel + a<t-1> recurrent_kernel + bias             (m, 4 n_a)
    kernel (n_x, 4 n_a),   recurrent_kernel (n_a, 4 n_a),   bias (4 n_a,)

so the block of a gate g in `kernel` is the x-part of W_g, transposed, and in
`recurrent_kernel` its a-part, transposed. The output layer is a Dense with kernel
Wy^T (n_a, n_y) and bias by (n_y,).
"""

import numpy as np

KERAS_GATE_ORDER = ("i", "f", "c", "o")


def lstm_to_keras(parameters):
    """Seminar parameters -> {"kernel", "recurrent_kernel", "bias"} for Keras, and, when
    the parameters have Wy/by, {"output_kernel", "output_bias"} for the Dense on top."""
    n_a = parameters["Wf"].shape[0]
    W = [parameters[f"W{g}"] for g in KERAS_GATE_ORDER]  # each (n_a, n_a + n_x)
    b = [parameters[f"b{g}"] for g in KERAS_GATE_ORDER]  # each (n_a, 1)
    weights = {
        "kernel": np.concatenate([Wg[:, n_a:].T for Wg in W], axis=1),  # (n_x, 4 n_a)
        "recurrent_kernel": np.concatenate([Wg[:, :n_a].T for Wg in W], axis=1),  # (n_a, 4 n_a)
        "bias": np.concatenate([bg[:, 0] for bg in b]),  # (4 n_a,)
    }
    if "Wy" in parameters:
        weights["output_kernel"] = parameters["Wy"].T  # (n_a, n_y)
        weights["output_bias"] = parameters["by"][:, 0]  # (n_y,)
    return weights


def lstm_from_keras(kernel, recurrent_kernel, bias, output_kernel=None, output_bias=None):
    """The inverse of `lstm_to_keras`: Keras arrays -> Wf, bf, Wi, bi, Wc, bc, Wo, bo (and
    Wy, by when the output Dense is given)."""
    n_a = recurrent_kernel.shape[0]
    parameters = {}
    for k, g in enumerate(KERAS_GATE_ORDER):
        block = slice(k * n_a, (k + 1) * n_a)
        parameters[f"W{g}"] = np.concatenate(
            [recurrent_kernel[:, block].T, kernel[:, block].T], axis=1)  # (n_a, n_a + n_x)
        parameters[f"b{g}"] = bias[block][:, None]  # (n_a, 1)
    if output_kernel is not None:
        parameters["Wy"] = output_kernel.T  # (n_y, n_a)
        parameters["by"] = output_bias[:, None]  # (n_y, 1)
    return parameters
