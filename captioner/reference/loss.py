"""The softmax output layer and its cross-entropy loss over time, forward and backward.

The character model predicts, at every step t, a distribution y_hat<t> = softmax(z<t>) with
z<t> = Wy a<t> + by over the n_y characters; the truth is an index labels[i, t] per example.
The loss is the negative log-likelihood summed over time and averaged over the batch:

    J = -(1/m) sum_i sum_t mask[i, t] * log y_hat<t>[labels[i, t], i]

(`mask` marks the real steps of padded sequences; None means all.) With m = 1 this is the
plain sum over the characters of one name.

The softmax and the log cancel into a gradient that needs no division:

    dJ/dz<t> = (y_hat<t> - onehot(labels<t>)) * mask / m                     (n_y, m)

and, since z<t> = Wy a<t> + by,

    dWy = sum_t dz<t> a<t>^T,   dby = sum_t sum_i dz<t>,   dJ/da<t> = Wy^T dz<t>.

dJ/da is what `rnn_backward` / `lstm_backward` take; `rnn_loss_gradients` and
`lstm_loss_gradients` chain the whole model: forward, loss, output layer, through time.
"""

import numpy as np

from captioner.reference.lstm import lstm_backward, lstm_forward
from captioner.reference.rnn import rnn_backward, rnn_forward


def _mask(labels, mask, dtype):
    return np.ones(labels.shape, dtype) if mask is None else np.asarray(mask, dtype)


def cross_entropy_over_time(y_pred, labels, mask=None):
    """J above. y_pred (n_y, m, T_x) probabilities, labels (m, T_x) int, mask (m, T_x) or None."""
    _, m, T_x = y_pred.shape  # (n_y, m, T_x)
    mask = _mask(labels, mask, y_pred.dtype)
    examples, steps = np.meshgrid(np.arange(m), np.arange(T_x), indexing="ij")  # (m, T_x) each
    p_true = y_pred[labels, examples, steps]  # (m, T_x): probability given to the right answer
    return float(-np.sum(mask * np.log(p_true)) / m)


def softmax_output_backward(y_pred, labels, a, Wy, mask=None):
    """From the loss back to the hidden states, through the output layer.

    y_pred (n_y, m, T_x), labels (m, T_x), a (n_a, m, T_x), Wy (n_y, n_a). Returns
    dWy (n_y, n_a), dby (n_y, 1) and da (n_a, m, T_x), the dJ/da<t> for backprop in time."""
    _, m, T_x = y_pred.shape  # (n_y, m, T_x)
    mask = _mask(labels, mask, y_pred.dtype)

    dz = y_pred.copy()  # (n_y, m, T_x)
    examples, steps = np.meshgrid(np.arange(m), np.arange(T_x), indexing="ij")
    dz[labels, examples, steps] -= 1.0  # y_hat - onehot(label)
    dz *= mask[None, :, :] / m

    dWy = np.einsum("ymt,amt->ya", dz, a)  # sum_t dz<t> a<t>^T   (n_y, n_a)
    dby = np.sum(dz, axis=(1, 2))[:, None]  # (n_y, 1)
    da = np.einsum("ya,ymt->amt", Wy, dz)  # Wy^T dz<t> at every t   (n_a, m, T_x)
    return dWy, dby, da


def rnn_loss_gradients(x, labels, a0, parameters, mask=None):
    """Loss and every gradient of the RNN character model in one pass.

    Returns (loss, gradients, a) with gradients dWax, dWaa, dba, dWya, dby, dx, da0 and a
    (n_a, m, T_x) the hidden states (a[:, :, -1] carries over to a next chunk of text)."""
    a, y_pred, caches = rnn_forward(x, a0, parameters)
    loss = cross_entropy_over_time(y_pred, labels, mask)
    dWya, dby, da = softmax_output_backward(y_pred, labels, a, parameters["Wya"], mask)
    gradients = rnn_backward(da, caches)
    gradients.update(dWya=dWya, dby=dby)
    return loss, gradients, a


def lstm_loss_gradients(x, labels, a0, parameters, c0=None, mask=None):
    """As `rnn_loss_gradients`, for the LSTM: gradients dWf, dbf, dWi, dbi, dWc, dbc, dWo,
    dbo, dWy, dby, dx, da0, dc0. Returns (loss, gradients, a)."""
    a, y_pred, _, caches = lstm_forward(x, a0, parameters, c0)
    loss = cross_entropy_over_time(y_pred, labels, mask)
    dWy, dby, da = softmax_output_backward(y_pred, labels, a, parameters["Wy"], mask)
    gradients = lstm_backward(da, caches)
    gradients.update(dWy=dWy, dby=dby)
    return loss, gradients, a
