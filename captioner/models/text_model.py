"""What every text task model shares, written once (keras-hub's `Task` in small): its config is
its constructor's keyword arguments (`from_config`), the float32 inference copy a trainer saves
(`inference_copy`), and loading a file of its kind safely with errors that name the file (`load`).

    class DocumentClassifier(TextTaskModel, keras.Model):
        model_kind = "a document classifier"
        train_hint = " (train one with `captioner train classify`)"

    DocumentClassifier.load("assets/models/newsgroups_han.keras")
"""

from __future__ import annotations

import types

from captioner.settings_groups import GroupedSettings


def untracked_table(table):
    """A large JSON-like table a model reads (WordNet relations, a lexicon: {key: {word: [...]}})
    as a read-only mapping, or None. Held as a dict, Keras wraps every nested dict and list in a
    tracked container when it is assigned and, at every load, walks each of them looking for
    weights: the SICK ensemble's 121,543 containers made `load_model` take 9.9 s instead of 1.
    A mapping proxy is neither wrapped nor walked; `get_config` returns ``dict(table)``."""
    return types.MappingProxyType(table) if table else None


def check_token_ids(ids, vocab_size, name="token ids"):
    """InputError unless every id of `ids` is a vocabulary id (0 <= id < vocab_size), checked where a
    Python caller hands ids in (eager); inside a compiled graph it does nothing (the callers above it
    check). Keras's embedding would read a negative or too large id as a zero row and answer with
    logits of nothing."""
    import numpy as np
    import tensorflow as tf

    if not tf.executing_eagerly():
        return
    array = np.asarray(ids)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        from captioner.errors import InputError

        raise InputError(f"{name}: expected integer token ids, got {array.dtype}")
    if array.size and (array.min() < 0 or array.max() >= vocab_size):
        from captioner.errors import InputError

        raise InputError(f"{name}: ids must be 0..{vocab_size - 1} (the vocabulary), got {int(array.min())}.."
                         f"{int(array.max())}")


class TextTaskModel(GroupedSettings):
    """A mixin before `keras.Model` in a text task model's bases. A model whose constructor takes
    settings in groups names them in ``GROUPS``; its flat config loads through `of`."""

    model_kind = "a model"  # what a load error calls it: "a document classifier"
    train_hint = ""  # appended to the file-not-found message: " (train one with `captioner train ...`)"

    def inference_copy(self, dtype="float32"):
        """An uncompiled copy with the same weights (its saved file carries no optimizer state), in
        `dtype` whatever the training policy (None: the model's own)."""
        from captioner.models.pixel_model import inference_copy

        return inference_copy(self, dtype)

    @classmethod
    def load(cls, path):
        """`keras.models.load_model(path)` in safe mode, checked to hold this kind of model;
        InputError naming `path` otherwise."""
        from captioner.models.loading import load_model_file

        return load_model_file(path, cls, cls.model_kind, hint=cls.train_hint)
