"""One keras-hub style harness run for every registered captioner layer, and for the task
models' trainable cores built from them (CaptionDecoderModel, Seq2Seq, VQAClassifier, ...).

Each entry of CASES is (class, constructor kwargs, example inputs, how to call it). For each,
the harness checks:

* config round trip: ``from_config(get_config())`` gives the same config;
* ``from_config`` + ``set_weights`` gives the same outputs;
* a tiny model holding the layer survives ``.keras`` save -> ``keras.models.load_model``
  (safe mode on) with the same outputs;
* under the ``mixed_bfloat16`` policy every variable is float32 and every floating output is
  in the compute dtype (bfloat16), except the outputs a layer documents as float32.

``test_every_registered_layer_has_a_case`` fails when a layer registered under
``captioner/layers/`` (package "captioner") has no entry here; the test after it, when a class
registered anywhere in captioner/ has neither an entry nor a line in TESTED_ELSEWHERE.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from collections.abc import Callable
from typing import Any

import keras
import numpy as np
import pytest
import tensorflow as tf

import captioner.layers
from captioner.layers.additive_attention import AdditiveAttention
from captioner.layers.attention_decoder import AttentionDecoder
from captioner.layers.causal_transformer import CausalTransformer
from captioner.layers.frame_encoder import FrameEncoder
from captioner.layers.image_preprocessing import ImagePreprocessing
from captioner.layers.stacked_attention import StackedAttention
from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.text_encoder import TextEncoder
from captioner.layers.word_encoder import WordEncoder
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.dialogue_responder import DialogueResponder
from captioner.models.document_classifier import DocumentClassifier
from captioner.models.entailment import NUM_PAIR_FEATURES, EntailmentClassifier
from captioner.models.language_model import LanguageModel
from captioner.models.seq2seq import Seq2Seq
from captioner.models.video_caption_model import VideoCaptionModel
from captioner.models.video_classifier_model import VideoClassifierModel
from captioner.models.vqa_classifier import VQAClassifier
from captioner.text.vocabulary import Vocabulary, VocabularyLookup


def _rng():
    return np.random.default_rng(0)


def _normal(*shape):
    return _rng().normal(size=shape).astype("float32")


def _tokens(batch, length, vocab, pad_from=None):
    ids = _rng().integers(1, vocab, size=(batch, length)).astype("int32")
    if pad_from is not None:
        ids[-1, pad_from:] = 0  # the last sentence is shorter: padding id 0
    return ids


def _documents(batch, sentences, words, vocab):
    """(batch, sentences, words) ids with padding words and padding sentences."""
    ids = _rng().integers(1, vocab, size=(batch, sentences, words)).astype("int32")
    ids[0, 1, 3:] = 0  # a short sentence
    ids[1, 2:] = 0  # a document of two sentences
    ids[2, 1:] = 0  # a document of one sentence
    return ids


MASK_3x4 = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], bool)


@dataclasses.dataclass
class Case:
    id: str
    cls: type
    kwargs: dict[str, Any]
    inputs: Callable[[], dict[str, np.ndarray]]  # named example inputs (fresh arrays each time)
    call: Callable[[keras.layers.Layer, dict], Any] = lambda layer, x: layer(x["x"])
    float32_outputs: tuple[int, ...] = ()  # flat output indices float32 by design under mixed precision
    mixed_precision: bool = True  # False: the layer holds no floating variables or outputs
    model: bool = False  # a registered keras.Model: saved as itself, not inside HarnessModel

    def __repr__(self):
        return self.id


CASES = [
    Case("additive_attention", AdditiveAttention, {"units": 5},
         lambda: {"query": _normal(3, 6), "annotations": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: _attend(layer, x)),
    Case("additive_attention_no_query", AdditiveAttention, {"units": 5, "use_query": False},
         lambda: {"annotations": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: layer.pool(x["annotations"], x["mask"])),
    Case("attention_decoder_lstm_attention", AttentionDecoder,
         dict(vocab_size=11, embedding_dim=6, units=8, attention_units=5, cell="lstm", context="attention",
              init_state="mean", gate=True, deep_output=True, dropout=0.2),
         lambda: {"tokens": _tokens(3, 5, 11), "annotations": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: layer(x["tokens"], x["annotations"], annotation_mask=x["mask"])),
    Case("attention_decoder_gru_given_maxout", AttentionDecoder,
         dict(vocab_size=11, embedding_dim=6, units=8, attention_units=5, cell="gru", context="attention",
              init_state="given", gate=False, deep_output=True, maxout=True),
         lambda: {"tokens": _tokens(3, 5, 11), "annotations": _normal(3, 4, 7), "mask": MASK_3x4,
                  "h": _normal(3, 8)},
         lambda layer, x: layer(x["tokens"], x["annotations"], annotation_mask=x["mask"],
                                initial_state={"h": x["h"], "c": tf.zeros_like(x["h"])})),
    Case("attention_decoder_concat", AttentionDecoder,
         dict(vocab_size=11, embedding_dim=6, units=8, cell="lstm", context="concat", init_state="mean"),
         lambda: {"tokens": _tokens(2, 4, 11), "annotations": _normal(2, 1, 7)},
         lambda layer, x: layer(x["tokens"], x["annotations"])),
    Case("attention_decoder_no_context", AttentionDecoder,
         dict(vocab_size=11, embedding_dim=6, units=8, cell="lstm", context="none", init_state="zero",
              deep_output=False),
         lambda: {"tokens": _tokens(2, 4, 11), "annotations": _normal(2, 1, 7)},
         lambda layer, x: layer(x["tokens"], x["annotations"])),
    # an extractive pointer (positions 0-3 are ids 4-7): its log P is float32 by design
    Case("attention_decoder_extractive_pointer", AttentionDecoder,
         dict(vocab_size=8, embedding_dim=6, units=8, attention_units=5, cell="gru", context="attention",
              init_state="given", gate=False, maxout=True, pointer=True, positions_from=4),
         lambda: {"tokens": np.array([[1, 4, 6], [1, 5, 0], [1, 4, 0]], "int32"), "annotations": _normal(3, 4, 7),
                  "mask": MASK_3x4, "h": _normal(3, 8)},
         lambda layer, x: layer(x["tokens"], x["annotations"], annotation_mask=x["mask"],
                                initial_state={"h": x["h"], "copy_ids": np.tile(np.arange(4, 8, dtype="int32"), (3, 1)),
                                               "stop_after": np.array([[1, 0, 1, 1]] * 3, bool)}),
         float32_outputs=(0,)),
    # the beam-search interface: log-probabilities and attention weights are float32 by design
    Case("attention_decoder_step", AttentionDecoder,
         dict(vocab_size=11, embedding_dim=6, units=8, attention_units=5),
         lambda: {"tokens": _tokens(3, 1, 11)[:, 0], "annotations": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: _decoder_step(layer, x), float32_outputs=(2, 3)),
    Case("causal_transformer", CausalTransformer,
         dict(vocab_size=11, units=8, num_layers=2, num_heads=2, context=6, dropout=0.2),
         lambda: {"tokens": _tokens(3, 5, 11)},
         lambda layer, x: layer(x["tokens"])),
    # its beam-search step: log-probabilities and the (empty) attention are float32 by design
    Case("causal_transformer_step", CausalTransformer,
         dict(vocab_size=11, units=8, num_layers=1, num_heads=2, context=4),
         lambda: {"tokens": _tokens(3, 1, 11)[:, 0], "context": _tokens(3, 4, 11)},
         lambda layer, x: _transformer_step(layer, x), float32_outputs=(0, 1)),
    Case("frame_encoder_pooled", FrameEncoder,
         dict(feature_dim=7, units=8, projection_dim=6, dropout=0.2),
         lambda: {"frames": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: layer(x["frames"], mask=x["mask"])),
    Case("frame_encoder_grid", FrameEncoder,
         dict(feature_dim=5, units=8, projection_dim=6, grid_regions=4, grid_channels=3),
         lambda: {"frames": _normal(2, 3, 4, 5)},
         lambda layer, x: layer(x["frames"])),
    Case("image_preprocessing_lite", ImagePreprocessing, {"mode": "lite"},
         lambda: {"x": _rng().integers(0, 256, size=(2, 5, 5, 3)).astype("uint8")}),
    Case("image_preprocessing_caffe", ImagePreprocessing, {"mode": "caffe"},
         lambda: {"x": _rng().integers(0, 256, size=(2, 5, 5, 3)).astype("float32")}),
    Case("image_preprocessing_torch", ImagePreprocessing, {"mode": "torch"},
         lambda: {"x": _rng().integers(0, 256, size=(2, 5, 5, 3)).astype("float32")}),
    Case("stacked_attention", StackedAttention, {"hops": 2, "units": 5},
         lambda: {"query": _normal(3, 6), "regions": _normal(2, 4, 6), "index": np.array([0, 1, 1], "int32")},
         lambda layer, x: layer(x["query"], x["regions"], image_index=x["index"])),
    Case("word_encoder_documents", WordEncoder, dict(vocab_size=13, embedding_dim=6, units=5, attention_units=4,
                                                     dropout=0.2),
         lambda: {"x": _documents(3, 4, 5, 13)}),
    Case("word_encoder_sentences", WordEncoder, dict(vocab_size=13, embedding_dim=6, units=5, attention_units=4),
         lambda: {"x": _tokens(3, 6, 13, pad_from=3)}),
    Case("sentence_encoder", SentenceEncoder, dict(input_dim=7, units=5, attention_units=4, dropout=0.2),
         lambda: {"vectors": _normal(3, 4, 7), "mask": MASK_3x4},
         lambda layer, x: layer(x["vectors"], mask=x["mask"])),
    Case("text_encoder_bigru", TextEncoder,
         dict(vocab_size=13, embedding_dim=6, units=5, cell="gru", bidirectional=True, dropout=0.2),
         lambda: {"x": _tokens(3, 6, 13, pad_from=3)}),
    Case("text_encoder_deep_lstm_reversed", TextEncoder,
         dict(vocab_size=13, embedding_dim=6, units=5, cell="lstm", bidirectional=False, num_layers=2,
              reverse_source=True),
         lambda: {"x": _tokens(3, 6, 13, pad_from=2)}),
    Case("vocabulary_lookup", VocabularyLookup,
         {"vocabulary": ["<pad>", "<start>", "<end>", "<unk>", "a", "dog", "runs"]},
         lambda: {"x": np.array([["a", "dog", "flies"], ["runs", "<end>", "cat"]])},
         mixed_precision=False),
]


def _attend(layer, x):
    if not layer.built:  # project_keys runs outside __call__: callers build the layer first
        layer.build(x["query"].shape, x["annotations"].shape)
    return layer(x["query"], layer.project_keys(x["annotations"]), x["annotations"], x["mask"])


def _vocab(n=7):
    return Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple("abcdefghijkl"[:n]))


def _model_call(model, x):
    return model(x)


# The task models' trainable cores built from the layers above (the wrappers around a backbone,
# ImageCaptioner / VQAModel / VideoCaptioner / VideoClassifier, have their own bundled-model tests).
CASES += [
    Case("caption_decoder_model", CaptionDecoderModel,
         dict(vocab_size=11, annotation_dim=7, projection_dim=6, embedding_dim=6, units=8, attention_units=5),
         lambda: {"annotations": _normal(2, 4, 7), "tokens": _tokens(2, 5, 11)}, _model_call, model=True),
    Case("seq2seq", Seq2Seq,
         dict(source_vocabulary=_vocab(), target_vocabulary=_vocab(5), embedding_dim=6, units=5, attention_units=4),
         lambda: {"source": _tokens(2, 6, 11, pad_from=4), "tokens": _tokens(2, 5, 9)}, _model_call, model=True),
    Case("language_model", LanguageModel, dict(vocabulary=_vocab(), level="char", embedding_dim=6, units=5),
         lambda: {"tokens": _tokens(2, 5, 11)}, _model_call, model=True),
    Case("vqa_classifier", VQAClassifier,
         dict(vocab_size=12, num_answers=3, image_dim=6, kind="attention", hops=2, embedding_dim=4, units=6,
              attention_units=5, hidden_units=7, question_words=True, fusion="product"),
         lambda: {"question": _tokens(2, 5, 12, pad_from=3), "image": _normal(2, 4, 6)}, _model_call, model=True),
    Case("document_classifier", DocumentClassifier,
         dict(vocabulary=_vocab(), labels=["x", "y", "z"], embedding_dim=6, word_units=5, sentence_units=4,
              attention_units=3, max_sentences=4, max_words=5),
         lambda: {"document": _documents(3, 4, 5, 11)}, _model_call, model=True),
    Case("dialogue_responder", DialogueResponder,
         dict(vocabulary=list(_vocab().tokens) + ["<user>", "<system>"], embedding_dim=6, units=5, context_units=4,
              decoder_units=7, attention_units=3, context_turns=3, max_words=5),
         lambda: {"context": _documents(3, 3, 5, 13), "tokens": _tokens(3, 4, 13)}, _model_call, model=True),
    Case("entailment_classifier", EntailmentClassifier,
         dict(vocabulary=_vocab(), embedding_dim=6, units=5, hidden_units=7),
         lambda: {"premise": _tokens(2, 6, 11, pad_from=4), "hypothesis": _tokens(2, 4, 11, pad_from=2),
                  "features": _normal(2, NUM_PAIR_FEATURES)},
         _model_call, model=True),
    Case("video_caption_model", VideoCaptionModel,
         dict(vocab_size=11, feature_dim=7, projection_dim=6, units=8, embedding_dim=6, attention_units=5),
         lambda: {"features": _normal(3, 4, 7), "mask": MASK_3x4, "tokens": _tokens(3, 5, 11)}, _model_call,
         model=True),
    Case("video_classifier_model", VideoClassifierModel,
         dict(num_classes=4, feature_dim=5, feature="grid", grid_regions=4, grid_channels=3, projection_dim=6,
              units=8),
         lambda: {"features": _normal(2, 3, 4, 5)}, _model_call, model=True),
]


def _decoder_step(layer, x):
    if not layer.built:  # prepare and step run outside __call__: callers build the decoder first
        layer.build(x["annotations"].shape)
    memory, state = layer.prepare(x["annotations"], x["mask"])
    log_probs, state, alpha = layer.step(x["tokens"], state, memory)
    return state["h"], state["c"], log_probs, alpha  # (flat indices 0, 1, 2, 3)


def _transformer_step(layer, x):
    if not layer.built:
        layer.build()
    memory, state = layer.prepare(tf.zeros((3, 1, 1)), None, layer.context_state(x["context"][:, :2]))
    log_probs, state, attention = layer.step(x["tokens"], state, memory)
    return log_probs, attention, state["context"], state["length"]


# ----------------------------------------------------------------------------- coverage

def _registered_layer_classes():
    """Every class under captioner/layers/ registered with package "captioner"."""
    found = set()
    for info in pkgutil.iter_modules(captioner.layers.__path__):
        module = importlib.import_module(f"captioner.layers.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if obj.__module__ == module.__name__ and \
                    keras.saving.get_registered_name(obj) == f"captioner>{obj.__name__}":
                found.add(obj)
    return found


def test_every_registered_layer_has_a_case():
    registered = _registered_layer_classes()
    assert len(registered) >= 6
    missing = sorted(c.__name__ for c in registered - {case.cls for case in CASES})
    assert not missing, f"registered layers without a harness case in {__file__}: {missing}"


# Registered classes outside captioner/layers/ that the harness does not run, and where their
# save -> load -> same outputs test is instead (they wrap a backbone, or other whole models).
TESTED_ELSEWHERE = {
    "ImageCaptioner": "tests/inference (tests/support/tiny_captioner.py) and the bundled flickr8k model",
    "VQAModel": "tests/models/test_vqa_model.py, test_vqa_bundled.py",
    "VideoCaptioner": "tests/models/test_video_models.py",
    "VideoClassifier": "tests/models/test_video_models.py",
    "EntailmentEnsemble": "tests/models/test_entailment.py (members are EntailmentClassifier, run here)",
    "DocumentEnsemble": "tests/models/test_document_classifier.py (members are DocumentClassifier, run here)",
    "Seq2SeqEnsemble": "tests/models/test_seq2seq_ensemble.py (members are Seq2Seq, run here)",
    "CaptionDecoderEnsemble": "tests/models/test_caption_decoder_ensemble.py (members are CaptionDecoderModel, run here)",
}


def test_every_registered_class_in_captioner_is_run_here_or_named_as_tested_elsewhere():
    """A new registered layer or model anywhere in captioner/ gets a case, or a line above."""
    root = Path(captioner.layers.__file__).resolve().parents[1]
    pattern = re.compile(r'register_keras_serializable\(package="captioner"\)\s*\nclass (\w+)')
    registered = {name for path in root.rglob("*.py") for name in pattern.findall(path.read_text(encoding="utf-8"))}
    assert len(registered) >= 15
    covered = {case.cls.__name__ for case in CASES} | set(TESTED_ELSEWHERE)
    assert not registered - covered, f"registered classes with no harness case: {sorted(registered - covered)}"
    assert not set(TESTED_ELSEWHERE) - registered, "TESTED_ELSEWHERE names a class that is not registered"


# ----------------------------------------------------------------------------- helpers

def _make(case):
    # a class whose settings come in groups (AttentionDecoder, Seq2Seq) takes them flat through `of`
    return case.cls.of(**case.kwargs) if hasattr(case.cls, "of") else case.cls(**case.kwargs)


def _build(case):
    layer = _make(case)
    outputs = case.call(layer, case.inputs())
    return layer, outputs


def _flat(outputs):
    return [np.asarray(t) for t in tf.nest.flatten(outputs)]


def _assert_same(a, b):
    a, b = _flat(a), _flat(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x.astype("float64") if x.dtype.kind == "f" else x,
                                   y.astype("float64") if y.dtype.kind == "f" else y, rtol=1e-6, atol=1e-6)


@keras.saving.register_keras_serializable(package="captioner_tests")
class HarnessModel(keras.Model):
    """The smallest model that holds one layer: calls it the way its case says."""

    def __init__(self, case, layer, **kwargs):
        super().__init__(**kwargs)
        self.case = case
        self.inner = layer

    def call(self, inputs):
        return CASES_BY_ID[self.case].call(self.inner, inputs)

    def get_config(self):
        return {"name": self.name, "case": self.case, "layer": keras.saving.serialize_keras_object(self.inner)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = keras.saving.deserialize_keras_object(config.pop("layer"))
        return cls(layer=layer, **config)

    def get_build_config(self):
        return {"case": self.case}

    def build_from_config(self, config):
        self(CASES_BY_ID[config["case"]].inputs())  # creates every weight before they are loaded


CASES_BY_ID = {case.id: case for case in CASES}
assert len(CASES_BY_ID) == len(CASES)


@pytest.fixture
def restore_policy():
    policy = keras.config.dtype_policy()
    yield
    keras.config.set_dtype_policy(policy)


# ----------------------------------------------------------------------------- the harness

@pytest.mark.parametrize("case", CASES, ids=repr)
def test_config_round_trip(case):
    layer, _ = _build(case)
    config = layer.get_config()
    clone = case.cls.from_config(config)
    assert clone.get_config() == config
    case.call(clone, case.inputs())  # building does not change what the config says either
    assert clone.get_config() == config


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_from_config_and_set_weights_give_the_same_outputs(case):
    keras.utils.set_random_seed(0)
    layer, outputs = _build(case)
    clone = case.cls.from_config(layer.get_config())
    case.call(clone, case.inputs())
    assert [w.shape for w in clone.get_weights()] == [w.shape for w in layer.get_weights()]
    clone.set_weights(layer.get_weights())
    _assert_same(case.call(clone, case.inputs()), outputs)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_keras_save_and_load_give_the_same_outputs(case, tmp_path):
    keras.utils.set_random_seed(0)
    layer = _make(case)
    model = layer if case.model else HarnessModel(case.id, layer)
    outputs = case.call(model, case.inputs()) if case.model else model(case.inputs())
    path = tmp_path / f"{case.id}.keras"
    model.save(path)
    loaded = keras.models.load_model(path)  # safe_mode on
    inner = loaded if case.model else loaded.inner
    assert isinstance(inner, case.cls) and inner.get_config() == layer.get_config()
    _assert_same(case.call(inner, case.inputs()) if case.model else loaded(case.inputs()), outputs)


@pytest.mark.parametrize("case", [c for c in CASES if c.mixed_precision], ids=repr)
def test_mixed_bfloat16_float32_variables_and_compute_dtype_outputs(case, restore_policy):
    keras.config.set_dtype_policy("mixed_bfloat16")
    layer, outputs = _build(case)
    assert layer.compute_dtype == "bfloat16" and layer.variable_dtype == "float32"
    assert all(w.dtype == "float32" for w in layer.weights), {w.path: w.dtype for w in layer.weights}
    for i, out in enumerate(tf.nest.flatten(outputs)):
        if not out.dtype.is_floating:
            continue
        want = "float32" if i in case.float32_outputs else "bfloat16"
        assert out.dtype.name == want, f"output {i}: {out.dtype.name}, expected {want}"
