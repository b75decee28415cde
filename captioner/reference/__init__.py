"""The RNN and the LSTM from scratch, in NumPy, as the second seminar derives them.

Read in this order:

    activations.py      sigmoid, softmax (one example per column)
    rnn.py              rnn_cell_forward/backward, rnn_forward/backward
    lstm.py             lstm_cell_forward/backward, lstm_forward/backward
    loss.py             softmax cross-entropy over time; the whole model's gradients
    gradient_check.py   central differences, relative error
    keras_weights.py    the same LSTM in Keras's weight layout
    char_rnn.py         a character model: encoding, clipping, SGD/Adagrad, sampling

Nothing here imports anything but NumPy; `scripts/numpy_char_rnn.py` trains the character
model, `tests/reference/` checks every gradient and the parity with Keras.
"""

from captioner.reference.activations import sigmoid, softmax
from captioner.reference.char_rnn import (
    adagrad_update,
    clip_gradients,
    encode_word,
    initialize_lstm_parameters,
    initialize_rnn_parameters,
    sample,
    sgd_update,
)
from captioner.reference.gradient_check import (
    gradient_check,
    numerical_gradient,
    relative_error,
)
from captioner.reference.keras_weights import lstm_from_keras, lstm_to_keras
from captioner.reference.loss import (
    cross_entropy_over_time,
    lstm_loss_gradients,
    rnn_loss_gradients,
    softmax_output_backward,
)
from captioner.reference.lstm import (
    lstm_backward,
    lstm_cell_backward,
    lstm_cell_forward,
    lstm_forward,
)
from captioner.reference.rnn import (
    rnn_backward,
    rnn_cell_backward,
    rnn_cell_forward,
    rnn_forward,
)

__all__ = [
                                          "adagrad_update",
                                          "clip_gradients",
                                          "cross_entropy_over_time",
                                          "encode_word",
                                          "gradient_check",
                                          "initialize_lstm_parameters",
                                          "initialize_rnn_parameters",
                                          "lstm_backward",
                                          "lstm_cell_backward",
                                          "lstm_cell_forward",
                                          "lstm_forward",
                                          "lstm_from_keras",
                                          "lstm_loss_gradients",
                                          "lstm_to_keras",
                                          "numerical_gradient",
                                          "relative_error",
                                          "rnn_backward",
                                          "rnn_cell_backward",
                                          "rnn_cell_forward",
                                          "rnn_forward",
                                          "rnn_loss_gradients",
                                          "sample",
                                          "sgd_update",
                                          "sigmoid",
                                          "softmax",
                                          "softmax_output_backward",
]
