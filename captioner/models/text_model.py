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


def untracked_table(table):
    """A large JSON-like table a model reads (WordNet relations, a lexicon: {key: {word: [...]}})
    as a read-only mapping, or None. Held as a dict, Keras wraps every nested dict and list in a
    tracked container when it is assigned and, at every load, walks each of them looking for
    weights: the SICK ensemble's 121,543 containers made `load_model` take 9.9 s instead of 1.
    A mapping proxy is neither wrapped nor walked; `get_config` returns ``dict(table)``."""
    return types.MappingProxyType(table) if table else None


class TextTaskModel:
    """A mixin before `keras.Model` in a text task model's bases."""

    model_kind = "a model"  # what a load error calls it: "a document classifier"
    train_hint = ""  # appended to the file-not-found message: " (train one with `captioner train ...`)"

    @classmethod
    def from_config(cls, config):
        return cls(**config)

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
