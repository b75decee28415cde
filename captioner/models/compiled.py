"""`compiled_method`: the one cache of the compiled inference functions of the task models.

A model's inference entry points (the backbone over a pixel batch, a forward pass, the language
model's likelihood window) run as ``tf.function``s built on first use and kept per instance.
Every model declares them the same way instead of a hand-rolled ``if self._fn is None:`` block:

    class VideoClassifier(...):
        _fn = compiled_method(lambda self, frames, mask: self.call({"frames": frames, "mask": mask}))

        def predict_frames(self, frames, mask):
            return self._fn(tf.convert_to_tensor(frames), tf.convert_to_tensor(mask, tf.bool))

The first access on an instance wraps the bound function in ``tf.function(reduce_retracing=True)``
(a dimension that varies becomes None after the second shape, so batch sizes do not retrace)
and stores it in the instance's ``__dict__`` directly, outside Keras's attribute tracking: it is
never saved, never part of a config, never counted as a layer. Two instances never share one.
The decoding searches are not here: the one Generator keeps its own cache, keyed by settings.
"""

from __future__ import annotations

from collections.abc import Callable


class compiled_method:  # noqa: N801 (used as a decorator, like property)
    """A method compiled once per instance on first use; see the module docstring.

    ``input_signature``: as tf.function's, or a function of the instance that returns it (the
    language model's carried state is as wide as its units)."""

    def __init__(self, fn: Callable | None = None, *, input_signature=None):
        self.fn = fn
        self.input_signature = input_signature
        self.attr = None

    def __call__(self, fn: Callable) -> compiled_method:
        """`@compiled_method(input_signature=...)`: the options first, then the method."""
        if self.fn is not None:
            raise TypeError("compiled_method: call the compiled function through an instance")
        self.fn = fn
        return self

    def __set_name__(self, owner, name):
        self.attr = f"_compiled_{name}"

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        compiled = instance.__dict__.get(self.attr)
        if compiled is None:
            import tensorflow as tf

            signature = self.input_signature(instance) if callable(self.input_signature) else self.input_signature
            compiled = tf.function(self.fn.__get__(instance, owner), input_signature=signature,
                                   reduce_retracing=True)
            object.__setattr__(instance, self.attr, compiled)  # not tracked by Keras, never saved
        return compiled
