"""compiled_method, the task models' one cache of compiled inference functions: built on first
use, once per instance (never shared, never saved with the model), traced again only for a new
input signature; an input_signature may depend on the instance."""

import keras
import numpy as np
import tensorflow as tf

from captioner.models.compiled import compiled_method


class Scale(keras.Model):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.dense = keras.layers.Dense(3)

    def call(self, x):
        return self.dense(x) * self.factor

    forward = compiled_method(lambda self, x: self(x))

    def _signature(self):
        return [tf.TensorSpec((None, 4), tf.float32)]

    @compiled_method(input_signature=_signature)
    def fixed(self, x):
        return self(x) + 1.0


def test_built_once_per_instance_and_reused_across_batch_sizes():
    a, b = Scale(2.0), Scale(3.0)
    x = np.ones((2, 4), np.float32)
    a(x), b(x)  # built: a first trace that creates variables traces again
    first = a.forward
    assert a.forward is first and b.forward is not first
    for n in (1, 2, 5, 7):  # reduce_retracing: the batch dim becomes None after the second shape
        np.testing.assert_allclose(a.forward(tf.ones((n, 4))).numpy(), a(tf.ones((n, 4))).numpy(), rtol=1e-6)
    assert first.experimental_get_tracing_count() <= 2
    np.testing.assert_allclose(b.forward(x).numpy(), b(x).numpy(), rtol=1e-6)
    assert isinstance(Scale.forward, compiled_method)  # the class attribute is the declaration


def test_an_input_signature_from_the_instance_traces_once():
    m = Scale()
    m(np.ones((1, 4), np.float32))
    for n in (1, 3, 6):
        np.testing.assert_allclose(m.fixed(tf.ones((n, 4))).numpy(), m(tf.ones((n, 4))).numpy() + 1.0, rtol=1e-6)
    assert m.fixed.experimental_get_tracing_count() == 1


def test_the_compiled_function_is_not_tracked_or_saved(tmp_path):
    m = Scale()
    m.forward(tf.ones((2, 4)))
    assert "_compiled_forward" in m.__dict__
    assert len(m.weights) == 2 and [type(layer).__name__ for layer in m._flatten_layers(include_self=False)] == ["Dense"]
    copy = Scale.from_config(m.get_config())
    assert "_compiled_forward" not in copy.__dict__
