"""Seq2Seq with a pointer-generator decoder (See et al. 2017): it learns to write source words
its target vocabulary lacks, trains and decodes through the one Trainer path and the one
Generator, survives save/load, ensembles and exports."""

from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.models.caption_decoder_model import masked_sparse_ce
from captioner.models.seq2seq import Seq2Seq
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary
from seq2seq_support import fresh_process_translations

REPO = Path(__file__).resolve().parents[2]
SOURCE_WORDS = [chr(ord("a") + i) for i in range(12)]  # a..l
TARGET_WORDS = SOURCE_WORDS[:4]  # a..d: e..l can only be written by pointing at them
SPECIALS = ("<pad>", "<start>", "<end>", "<unk>")


def _model(seed=0, pointer=True, **kw):
    keras.utils.set_random_seed(seed)
    args = dict(embedding_dim=16, units=48, attention_units=24, dropout=0.0, beam_size=2, alpha=1.0, max_length=8,
                source_tokenizer={"keep_punct": False}, target_tokenizer={"keep_punct": False}, pointer=pointer)
    args.update(kw)
    return Seq2Seq.of(Vocabulary(SPECIALS + tuple(SOURCE_WORDS)), Vocabulary(SPECIALS + tuple(TARGET_WORDS)), **args)


def _copy_batch(model, rng, n=32):
    """The task: write the source back, in order. Target ids of e..l are <unk>."""
    sentences = [list(rng.choice(SOURCE_WORDS, size=rng.integers(2, 6))) for _ in range(n)]
    src = model.source_vocabulary.encode_batch(sentences, add_start=False, add_end=False)
    tgt = model.target_vocabulary.encode_batch(sentences)
    return {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]


def _trained(seed=0, steps=250, pointer=True):
    model = _model(seed, pointer=pointer)
    model.compile(optimizer=keras.optimizers.Adam(1e-2, clipnorm=5.0), loss=masked_sparse_ce)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        model.train_on_batch(*_copy_batch(model, rng))
    return model


@pytest.fixture(scope="module")
def trained():
    return _trained()


def _tests(n=40, seed=7):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(SOURCE_WORDS, size=rng.integers(2, 6))) for _ in range(n)]


def test_copy_table_maps_source_ids_to_target_ids_with_unk_for_missing_words():
    model = _model()
    table = model._copy_table
    assert table[model.source_vocabulary.token_to_id("c")] == model.target_vocabulary.token_to_id("c")
    assert table[model.source_vocabulary.token_to_id("h")] == 3  # <unk>: the copy writes the source word
    with pytest.raises(ValueError, match="kind must be 'attention'"):
        _model(kind="sutskever")
    assert "pointer" not in _model(pointer=False).get_config()


def test_pointer_learns_to_write_words_outside_its_vocabulary(trained):
    """Most test sentences hold a word of e..l: the copy writes them through <unk> + pointing."""
    tests = _tests()
    got = trained.translate(tests)
    exact = np.mean([g.text == s for s, g in zip(tests, got)])
    assert exact >= 0.8, [(s, g.text) for s, g in zip(tests, got)][:10]
    assert sum(g.replaced_unk for g in got) > 20
    # the training loss is a proper cross-entropy: the model's log P sums to 1 per step
    inputs, _ = _copy_batch(trained, np.random.default_rng(3), 4)
    log_p = trained(inputs)
    np.testing.assert_allclose(np.exp(log_p.numpy()).sum(-1), 1.0, atol=1e-4)


def test_pointer_model_reloads_in_a_fresh_process_with_the_same_outputs(trained, tmp_path):
    path = tmp_path / "pointer.keras"
    trained.save(path)
    tests = _tests(6, seed=11)
    expected = [(t.text, round(t.score, 4)) for t in trained.translate(tests)]
    got = fresh_process_translations(path, tests, check="m.pointer and m.decoder.pointer")
    assert [t for t, _ in got] == [t for t, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-3)


def test_an_ensemble_of_pointer_models_decodes_in_the_one_beam_search(trained):
    """Each member gets its own copy ids through its own encode/prepare; one member alone as an
    ensemble gives that member's hypotheses and scores."""
    tests = _tests(8, seed=5)
    alone = Seq2SeqEnsemble([trained]).translate(tests)
    want = trained.translate(tests)
    assert [a.text for a in alone] == [w.text for w in want]
    np.testing.assert_allclose([a.score for a in alone], [w.score for w in want], atol=1e-4)
    ensemble = Seq2SeqEnsemble([trained, _model(seed=1, pointer=False)])  # members may differ in this
    assert ensemble.pointer
    pair = ensemble.translate(tests)
    assert len(pair) == len(tests) and all(p.attention.shape[1] == len(p.source_tokens) for p in pair)


def test_pointer_model_exports_and_the_graph_writes_the_same_text(trained, tmp_path):
    from captioner.export.saved_model import export_saved_model

    from tests.export.test_saved_model import _same_translations

    export_saved_model(trained, tmp_path / "sm")
    loaded = tf.saved_model.load(str(tmp_path / "sm"))
    for settings in [{}, {"beam_size": 1, "alpha": 0.0, "max_length": 6}]:
        _same_translations(trained, loaded, _tests(8, seed=9) + [""], settings)
