"""`safe_bidirectional(layer, name=...)`: `keras.layers.Bidirectional` made safe to build while Keras loads a file.

`keras.models.load_model` deserializes inside an object-sharing scope that maps ``id(obj)`` to
the configs and objects it has seen. `Bidirectional.__init__` serializes its layer and
deserializes copies of it (forward and backward), so inside that scope its copies are recorded
by the ids of short-lived layers; CPython reuses the ids of collected objects, and a later
Bidirectional (the next member of an ensemble, the next encoder of a model) can be handed a
stale recorded layer instead of its own: a backward layer as its forward one ("Forward layer and
backward layer should have different `go_backwards` value") or, worse, another encoder's layer.
Our layers rebuild their Bidirectional from their own arguments, never from a shared config, so
building it with the scope set aside loses nothing.
"""

import contextlib

import keras

_SHARING_KEYS = ("shared_objects/id_to_obj_map", "shared_objects/id_to_config_map")


@contextlib.contextmanager
def _outside_object_sharing():
    from keras.src.backend.common import global_state

    saved = [global_state.get_global_attribute(k) for k in _SHARING_KEYS]
    for key in _SHARING_KEYS:
        global_state.set_global_attribute(key, None)
    try:
        yield
    finally:
        for key, value in zip(_SHARING_KEYS, saved):
            global_state.set_global_attribute(key, value)


def safe_bidirectional(layer, **kwargs):
    """`keras.layers.Bidirectional(layer, **kwargs)`, built outside Keras's object-sharing scope."""
    with _outside_object_sharing():
        return keras.layers.Bidirectional(layer, **kwargs)
