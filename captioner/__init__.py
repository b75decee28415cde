"""captioner: attention encoder-decoder models in Keras 3.

Importing the package makes every captioner Keras layer and model known to Keras, so that

    import captioner, keras
    model = keras.models.load_model("assets/models/flickr8k_attention.keras")

works in a fresh process with safe mode on.

`import captioner` itself stays light (the `captioner` command prints its help without loading
TensorFlow): the classes are registered as soon as Keras is there. If Keras (or TensorFlow) is
already imported they are registered now; otherwise the first import of either, by anyone,
ends by registering them (an import hook, removed once it has fired; when a captioner module
is what imports Keras, at the end of that module's import). `captioner.layers`,
`captioner.models` and the other subpackages are also imported on first attribute access.
"""

import importlib
import importlib.abc
import sys

__version__ = "0.1.0"

_TRIGGERS = ("keras", "tensorflow")
_registered = False
_pending = False  # Keras is imported, registration waits for the imports under way to end


def register_keras_classes():
    """Import captioner.layers and captioner.models, which registers every Keras class."""
    global _registered
    if not _registered:
        _registered = True
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterImport)]
        importlib.import_module("captioner.layers")
        importlib.import_module("captioner.models")


def _watched(name):
    return name in _TRIGGERS or name.startswith(__name__ + ".")


def _busy(done):
    """Whether a watched module other than `done` is halfway through its import."""
    return any(getattr(getattr(module, "__spec__", None), "_initializing", False)
               for name, module in list(sys.modules.items()) if name != done and _watched(name))


def _after_import(done):
    """After module `done` ran its code: once Keras is there, register, as soon as no import of
    Keras, TensorFlow (each imports the other) or a captioner module (which may itself be
    what imported Keras) is halfway done."""
    global _pending
    if done in _TRIGGERS:
        _pending = True
    if _pending and not _registered and not _busy(done):
        register_keras_classes()


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _after_import(module.__name__)

    def __getattr__(self, name):  # get_source, get_resource_reader, is_package, ... of the real loader
        return getattr(self.loader, name)


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loaders of keras, tensorflow and captioner's own modules
    so that the end of their import can register captioner's classes (see `_after_import`)."""

    def find_spec(self, name, path=None, target=None):
        if _registered or not _watched(name):
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


if any(name in sys.modules for name in _TRIGGERS):
    register_keras_classes()  # Keras is loaded already: no cost to register now
else:
    sys.meta_path.insert(0, _RegisterAfterImport())
