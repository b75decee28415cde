"""An LSTM, forward and backward, one equation per line.

Shapes as in `captioner.reference.rnn`: one example per column, x (n_x, m, T_x), hidden
states a (n_a, m, T_x), memory cells c (n_a, m, T_x), distributions y (n_y, m, T_x).

Every gate reads the same vector, the previous state stacked on the input:

    concat<t> = [a<t-1>; x<t>]                        (n_a + n_x, m)

Parameters (a dict). Each gate matrix has n_a + n_x columns: the first n_a act on a<t-1>,
the last n_x on x<t>.

    Wf, bf   forget gate      (n_a, n_a + n_x), (n_a, 1)
    Wi, bi   update (input)   (n_a, n_a + n_x), (n_a, 1)
    Wc, bc   candidate cell   (n_a, n_a + n_x), (n_a, 1)
    Wo, bo   output gate      (n_a, n_a + n_x), (n_a, 1)
    Wy, by   output layer     (n_y, n_a),       (n_y, 1)

One step:

    f<t>      = sigmoid(Wf concat<t> + bf)            how much of the old cell to keep
    i<t>      = sigmoid(Wi concat<t> + bi)            how much of the candidate to write
    cc<t>     = tanh(Wc concat<t> + bc)               the candidate values
    c<t>      = f<t> * c<t-1> + i<t> * cc<t>          (* is elementwise)
    o<t>      = sigmoid(Wo concat<t> + bo)            how much of the cell to show
    a<t>      = o<t> * tanh(c<t>)
    y_hat<t>  = softmax(Wy a<t> + by)

Keras writes the same cell with the gates side by side in one matrix, in the order
i, f, c, o; `captioner.reference.keras_weights` converts between the two layouts.
"""

import numpy as np

from captioner.reference.activations import sigmoid, softmax


def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    """One LSTM step.

    xt (n_x, m), a_prev (n_a, m), c_prev (n_a, m). Returns a_next (n_a, m), c_next (n_a, m),
    yt_pred (n_y, m) and the cache (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt,
    parameters): the gate values are kept so that backward need not recompute them."""
    Wf, bf = parameters["Wf"], parameters["bf"]
    Wi, bi = parameters["Wi"], parameters["bi"]
    Wc, bc = parameters["Wc"], parameters["bc"]
    Wo, bo = parameters["Wo"], parameters["bo"]
    Wy, by = parameters["Wy"], parameters["by"]

    concat = np.concatenate([a_prev, xt], axis=0)  # (n_a + n_x, m)

    ft = sigmoid(Wf @ concat + bf)  # (n_a, m) forget gate
    it = sigmoid(Wi @ concat + bi)  # (n_a, m) update gate
    cct = np.tanh(Wc @ concat + bc)  # (n_a, m) candidate
    c_next = ft * c_prev + it * cct  # (n_a, m)
    ot = sigmoid(Wo @ concat + bo)  # (n_a, m) output gate
    a_next = ot * np.tanh(c_next)  # (n_a, m)

    yt_pred = softmax(Wy @ a_next + by)  # (n_y, m)

    cache = (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)
    return a_next, c_next, yt_pred, cache


def lstm_cell_backward(da_next, dc_next, cache):
    """Backward through one step.

    da_next (n_a, m) is dJ/da<t>; dc_next (n_a, m) is the gradient that reaches c<t> from
    step t+1 (c<t> feeds c<t+1> directly). Let zf, zi, zc, zo be the pre-activations of the
    four gates (the arguments of their sigmoid / tanh). Then, with * elementwise:

        dc      = dc_next + da_next * o<t> * (1 - tanh(c<t>)^2)      both paths into c<t>
        dzo     = da_next * tanh(c<t>) * o<t> * (1 - o<t>)
        dzc     = dc * i<t> * (1 - cc<t>^2)
        dzi     = dc * cc<t> * i<t> * (1 - i<t>)
        dzf     = dc * c<t-1> * f<t> * (1 - f<t>)

        dW_g    = dz_g concat<t>^T,   db_g = sum over columns of dz_g      for g in f, i, c, o
        dconcat = Wf^T dzf + Wi^T dzi + Wc^T dzc + Wo^T dzo
        da<t-1> = dconcat[:n_a],      dx<t> = dconcat[n_a:]
        dc<t-1> = dc * f<t>

    Returns a dict dxt, da_prev, dc_prev, dWf, dbf, dWi, dbi, dWc, dbc, dWo, dbo."""
    a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters = cache
    n_a = a_next.shape[0]

    tanh_c = np.tanh(c_next)  # (n_a, m)
    dc = dc_next + da_next * ot * (1.0 - tanh_c ** 2)  # (n_a, m) total gradient into c<t>

    dzo = da_next * tanh_c * ot * (1.0 - ot)  # (n_a, m)
    dzc = dc * it * (1.0 - cct ** 2)
    dzi = dc * cct * it * (1.0 - it)
    dzf = dc * c_prev * ft * (1.0 - ft)

    concat = np.concatenate([a_prev, xt], axis=0)  # (n_a + n_x, m)
    dWf, dbf = dzf @ concat.T, np.sum(dzf, axis=1, keepdims=True)  # (n_a, n_a + n_x), (n_a, 1)
    dWi, dbi = dzi @ concat.T, np.sum(dzi, axis=1, keepdims=True)
    dWc, dbc = dzc @ concat.T, np.sum(dzc, axis=1, keepdims=True)
    dWo, dbo = dzo @ concat.T, np.sum(dzo, axis=1, keepdims=True)

    dconcat = (parameters["Wf"].T @ dzf + parameters["Wi"].T @ dzi
               + parameters["Wc"].T @ dzc + parameters["Wo"].T @ dzo)  # (n_a + n_x, m)
    da_prev = dconcat[:n_a]  # (n_a, m)
    dxt = dconcat[n_a:]  # (n_x, m)
    dc_prev = dc * ft  # (n_a, m)

    return {"dxt": dxt, "da_prev": da_prev, "dc_prev": dc_prev,
            "dWf": dWf, "dbf": dbf, "dWi": dWi, "dbi": dbi,
            "dWc": dWc, "dbc": dbc, "dWo": dWo, "dbo": dbo}


def lstm_forward(x, a0, parameters, c0=None):
    """The LSTM over T_x steps.

    x (n_x, m, T_x), a0 (n_a, m), c0 (n_a, m) or None for zeros. Returns a (n_a, m, T_x),
    y (n_y, m, T_x), c (n_a, m, T_x) and the caches (list of the T_x step caches, x, c0)."""
    _, m, T_x = x.shape  # (n_x, m, T_x)
    n_y, n_a = parameters["Wy"].shape
    if c0 is None:
        c0 = np.zeros((n_a, m), dtype=x.dtype)

    a = np.zeros((n_a, m, T_x), dtype=x.dtype)
    c = np.zeros((n_a, m, T_x), dtype=x.dtype)
    y = np.zeros((n_y, m, T_x), dtype=x.dtype)
    caches = []

    a_next, c_next = a0, c0
    for t in range(T_x):
        a_next, c_next, yt, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)
        a[:, :, t] = a_next
        c[:, :, t] = c_next
        y[:, :, t] = yt
        caches.append(cache)

    return a, y, c, (caches, x, c0)


def lstm_backward(da, caches):
    """Backpropagation through time for the LSTM.

    da (n_a, m, T_x): dJ/da<t> from above at every step. Two gradients travel back in time:
    into a<t> (da from above plus da_prev of step t+1) and into c<t> (dc_prev of step t+1;
    the last cell has no loss of its own, so it starts at zero). The weight gradients of all
    steps add up.

    Returns a dict dx (n_x, m, T_x), da0 (n_a, m), dc0 (n_a, m), dWf, dbf, dWi, dbi, dWc,
    dbc, dWo, dbo."""
    step_caches, x, _ = caches  # (steps, x, c0)
    m = x.shape[1]
    T_x = x.shape[2]
    n_a = da.shape[0]
    parameters = step_caches[0][9]

    dx = np.zeros_like(x)
    grads = {f"d{name}": np.zeros_like(parameters[name])
             for name in ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")}
    da_prevt = np.zeros((n_a, m), dtype=da.dtype)
    dc_prevt = np.zeros((n_a, m), dtype=da.dtype)

    for t in reversed(range(T_x)):
        step = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, step_caches[t])
        dx[:, :, t] = step["dxt"]
        da_prevt, dc_prevt = step["da_prev"], step["dc_prev"]
        for name in grads:
            grads[name] += step[name]

    return {"dx": dx, "da0": da_prevt, "dc0": dc_prevt, **grads}
