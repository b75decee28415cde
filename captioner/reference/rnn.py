"""A vanilla RNN, forward and backward, one equation per line.

Notation (the seminar's):

    n_x   size of one input vector x<t>          (a one-hot character, a word embedding)
    n_a   size of the hidden state a<t>
    n_y   size of the output distribution y<t>   (the vocabulary)
    m     batch size: every array holds one example per column
    T_x   number of time steps

    x     (n_x, m, T_x)   the inputs, x[:, :, t] is x<t>
    a     (n_a, m, T_x)   the hidden states
    y     (n_y, m, T_x)   the predicted distributions

Parameters (a dict, the names the derivation uses):

    Wax (n_a, n_x)   input  -> hidden
    Waa (n_a, n_a)   hidden -> hidden (the recurrence)
    ba  (n_a, 1)
    Wya (n_y, n_a)   hidden -> output
    by  (n_y, 1)

One step:

    a<t>     = tanh(Wax x<t> + Waa a<t-1> + ba)
    y_hat<t> = softmax(Wya a<t> + by)

The backward functions here stop at the hidden states: they take dJ/da<t> from whatever
sits on top of the RNN and return the gradients of everything below. The softmax output
layer and its loss live in `captioner.reference.loss`, which hands dJ/da<t> to
`rnn_backward` (see `rnn_loss_gradients` there).
"""

import numpy as np

from captioner.reference.activations import softmax


def rnn_cell_forward(xt, a_prev, parameters):
    """One RNN step.

    xt (n_x, m), a_prev (n_a, m). Returns a_next (n_a, m), yt_pred (n_y, m) and the cache
    (a_next, a_prev, xt, parameters): exactly what `rnn_cell_backward` needs."""
    Wax, Waa, ba = parameters["Wax"], parameters["Waa"], parameters["ba"]
    Wya, by = parameters["Wya"], parameters["by"]

    a_next = np.tanh(Wax @ xt + Waa @ a_prev + ba)  # (n_a, m)
    yt_pred = softmax(Wya @ a_next + by)  # (n_y, m)

    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache


def rnn_cell_backward(da_next, cache):
    """Backward through one step: from dJ/da<t> to the gradients of its inputs and weights.

    Write z = Wax x<t> + Waa a<t-1> + ba, so a<t> = tanh(z). Then

        dz        = da<t> * (1 - a<t>^2)        tanh'(z) = 1 - tanh(z)^2, reusing a<t>
        dx<t>     = Wax^T dz
        da<t-1>   = Waa^T dz
        dWax      = dz x<t>^T                    summed over the m columns by the matmul
        dWaa      = dz a<t-1>^T
        dba       = sum over columns of dz

    da_next (n_a, m). Returns a dict dxt, da_prev, dWax, dWaa, dba."""
    a_next, a_prev, xt, parameters = cache
    Wax, Waa = parameters["Wax"], parameters["Waa"]

    dz = da_next * (1.0 - a_next ** 2)  # (n_a, m)

    dxt = Wax.T @ dz  # (n_x, m)
    da_prev = Waa.T @ dz  # (n_a, m)
    dWax = dz @ xt.T  # (n_a, n_x)
    dWaa = dz @ a_prev.T  # (n_a, n_a)
    dba = np.sum(dz, axis=1, keepdims=True)  # (n_a, 1)

    return {"dxt": dxt, "da_prev": da_prev, "dWax": dWax, "dWaa": dWaa, "dba": dba}


def rnn_forward(x, a0, parameters):
    """The RNN over T_x steps.

    x (n_x, m, T_x), a0 (n_a, m). Returns a (n_a, m, T_x), y_pred (n_y, m, T_x) and the
    caches (list of the T_x step caches, x)."""
    _, m, T_x = x.shape  # (n_x, m, T_x)
    n_y, n_a = parameters["Wya"].shape

    a = np.zeros((n_a, m, T_x), dtype=x.dtype)
    y_pred = np.zeros((n_y, m, T_x), dtype=x.dtype)
    caches = []

    a_next = a0
    for t in range(T_x):
        # the same weights at every step; only the state a<t-1> carries information forward
        a_next, yt_pred, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)

    return a, y_pred, (caches, x)


def rnn_backward(da, caches):
    """Backpropagation through time.

    da (n_a, m, T_x): dJ/da<t> coming from above at every step (from the output layer; zero
    where a step has no loss). The state a<t> also feeds step t+1, so the gradient that
    reaches step t is the sum of the two paths:

        da<t> total = da[:, :, t]  +  da_prev returned by step t+1

    Walking t = T_x-1 ... 0 and adding up the weight gradients of every step (the weights
    are shared) gives

        dx (n_x, m, T_x), da0 (n_a, m), dWax, dWaa, dba       as a dict."""
    step_caches, x = caches
    _, m, T_x = x.shape  # (n_x, m, T_x)
    n_a = da.shape[0]

    dx = np.zeros_like(x)
    dWax = np.zeros_like(step_caches[0][3]["Wax"])
    dWaa = np.zeros_like(step_caches[0][3]["Waa"])
    dba = np.zeros_like(step_caches[0][3]["ba"])
    da_prevt = np.zeros((n_a, m), dtype=da.dtype)  # nothing comes back from after the last step

    for t in reversed(range(T_x)):
        grads = rnn_cell_backward(da[:, :, t] + da_prevt, step_caches[t])
        dx[:, :, t] = grads["dxt"]
        da_prevt = grads["da_prev"]
        dWax += grads["dWax"]
        dWaa += grads["dWaa"]
        dba += grads["dba"]

    da0 = da_prevt  # what reaches the initial state
    return {"dx": dx, "da0": da0, "dWax": dWax, "dWaa": dWaa, "dba": dba}
