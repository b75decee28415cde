"""Issue 70's target: every public model and layer constructor (and the one search) takes at most
10 parameters; more settings go in groups (`captioner.settings_groups`), whose flat saved configs
load through `of`."""

import importlib
import inspect
import pkgutil

import keras
import pytest

import captioner  # noqa: F401

MOST = 10


def _params(fn):
    return [p for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def _classes():
    for package in ("models", "layers", "tagging", "decoding"):
        root = importlib.import_module(f"captioner.{package}")
        for info in pkgutil.walk_packages(root.__path__, f"captioner.{package}."):
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if (inspect.isclass(obj) and obj.__module__ == module.__name__ and not name.startswith("_")
                        and "__init__" in vars(obj)
                        and (issubclass(obj, (keras.layers.Layer, keras.Model)) or name in ("ObjectTagger", "Generator"))):
                    yield f"{info.name}.{name}", obj


CLASSES = dict(_classes())


def test_the_scan_finds_the_models():
    assert {"captioner.models.seq2seq.Seq2Seq", "captioner.models.document_classifier.DocumentClassifier",
            "captioner.layers.attention_decoder.AttentionDecoder",
            "captioner.tagging.object_tagger.ObjectTagger"} <= set(CLASSES)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_constructor_takes_at_most_ten_parameters(name):
    params = _params(CLASSES[name].__init__)
    assert len(params) <= MOST, f"{name}: {len(params)} parameters ({', '.join(p.name for p in params)})"


def test_the_search_takes_at_most_ten_parameters():
    from captioner.decoding.beam_search import beam_search

    assert len(_params(beam_search)) <= MOST


def test_every_recipe_is_at_most_250_lines():
    """Issue 70 item 6: a task is a short recipe on the one Trainer; what grows past this belongs in
    the shared code (data, models, decoding), not in one recipe."""
    import pathlib

    import captioner.training.recipes as recipes

    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines())
               for p in pathlib.Path(recipes.__file__).parent.glob("*.py")}
    assert len(lengths) >= 10 and max(lengths.values()) <= 250, sorted(lengths.items(), key=lambda kv: -kv[1])[:3]
