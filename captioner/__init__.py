"""captioner: attention encoder-decoder models in Keras 3.

Importing the package makes every captioner Keras layer and model known to Keras, so that

    import captioner, keras
    model = keras.models.load_model("assets/models/flickr8k_attention.keras")

works in a fresh process with safe mode on.

`import captioner` itself stays light (the `captioner` command prints its help without loading
TensorFlow): the classes are registered as soon as Keras is there. If Keras (or TensorFlow) is
already imported they are registered now; otherwise the first import of either, by anyone,
ends by registering them (an import hook, removed once it has fired). `captioner.layers`,
`captioner.models` and the other subpackages are also imported on first attribute access.
"""

import importlib
import importlib.abc
import sys

__version__ = "0.1.0"

_TRIGGERS = ("keras", "tensorflow")
_registered = False


def register_keras_classes():
    """Import captioner.layers and captioner.models, which registers every Keras class."""
    global _registered
    if not _registered:
        _registered = True
        importlib.import_module("captioner.layers")
        importlib.import_module("captioner.models")


def _initializing(name):
    module = sys.modules.get(name)
    return module is not None and getattr(getattr(module, "__spec__", None), "_initializing", False)


def _register_when_ready(done):
    """After trigger `done` ran its module code: register, unless the other trigger is still
    halfway through its own import (each imports the other; the outer one's end fires again)."""
    if _registered or any(_initializing(name) for name in _TRIGGERS if name != done):
        return
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterImport)]
    register_keras_classes()


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _register_when_ready(module.__name__)

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the real loader
        return getattr(self.loader, name)


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of `keras` / `tensorflow` so that the end of
    their import registers captioner's classes."""

    def find_spec(self, name, path=None, target=None):
        if name not in _TRIGGERS or _registered:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


def __getattr__(name):
    """`captioner.layers`, `captioner.models`, ...: imported on first use."""
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{name}":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        raise
    return module


if any(name in sys.modules and not _initializing(name) for name in _TRIGGERS):
    register_keras_classes()  # Keras is loaded already: no cost to register now
else:
    sys.meta_path.insert(0, _RegisterAfterImport())
