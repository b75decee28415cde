"""Seq2Seq as an extractive pointer network (`extractive=True`; Vinyals et al. 2015): it points at
source positions in order and stops by its switch, so its output is a deletion-based compression
of the source; it trains, decodes through the one Generator, reloads and ensembles."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.models.caption_decoder_model import masked_sparse_ce
from captioner.models.seq2seq import POSITION, Seq2Seq, extract_words, may_end_on, position_vocabulary
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary

KEEP = ["b", "c", "d", "e"]  # the task: keep these words of the source, in order, drop the rest
WORDS = KEEP + ["w", "x", "to", "the"]  # "to", "the": an output never ends on them (FUNCTION_WORDS)
SPECIALS = ("<pad>", "<start>", "<end>", "<unk>")
LENGTH = 8


def _model(seed=0, **kw):
    keras.utils.set_random_seed(seed)
    args = dict(embedding_dim=16, units=48, attention_units=24, dropout=0.0, beam_size=2, alpha=1.0, max_length=10,
                source_tokenizer={"keep_punct": False}, max_source_length=LENGTH, pointer=True, extractive=True)
    args.update(kw)
    return Seq2Seq.of(Vocabulary(SPECIALS + tuple(WORDS)), position_vocabulary(args["max_source_length"]), **args)


def _sentences(rng, n):
    return [list(rng.choice(WORDS, size=rng.integers(3, LENGTH + 1))) for _ in range(n)]


def _batch(model, rng, n=32):
    sentences = _sentences(rng, n)
    src = model.source_vocabulary.encode_batch(sentences, add_start=False, add_end=False)
    tgt = model.target_vocabulary.encode_batch([[POSITION.format(j) for j, w in enumerate(s) if w in KEEP]
                                                for s in sentences])
    return {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]


@pytest.fixture(scope="module")
def trained():
    model = _model()
    model.compile(optimizer=keras.optimizers.Adam(1e-2, clipnorm=5.0), loss=masked_sparse_ce)
    rng = np.random.default_rng(0)
    for _ in range(200):
        model.train_on_batch(*_batch(model, rng))
    return model


def _is_subsequence(words, source):
    it = iter(source)
    return all(any(w == s for s in it) for w in words)


def test_extractive_pointer_learns_a_deletion_and_writes_source_words_as_written(trained):
    rng = np.random.default_rng(5)
    tests = [" ".join(s) for s in _sentences(rng, 40)]
    got = trained.translate(tests)
    want = [" ".join(dict.fromkeys(w for w in t.split() if w in KEEP)) for t in tests]  # each word once
    exact = np.mean([g.text.lower() == w for g, w in zip(got, want)])
    assert exact >= 0.8, [(t, g.text) for t, g in zip(tests, got)][:8]
    cased = trained.translate(["W C x B"])[0]
    assert cased.text == "C B" and cased.tokens == ["C", "B"]  # the source's own casing, first letter capital


def test_untrained_outputs_are_monotonic_deletions_without_repeats():
    model = _model(seed=3)
    rng = np.random.default_rng(1)
    sources = _sentences(rng, 16)
    ids = model.source_vocabulary.encode_batch(sources, add_start=False, add_end=False)
    out = model.generate(ids, beam_size=3)
    first = model._first_position
    for b, source in enumerate(sources):
        for k in range(3):
            steps = out["tokens"][b, k, : out["lengths"][b, k]]
            positions = [int(t) - first for t in steps if t >= first]
            assert positions == sorted(set(positions)) and all(p < len(source) for p in positions)
            assert out["finished"][b, k]  # it runs out of positions at the latest
    for g, source in zip(model.translate([" ".join(s) for s in sources]), sources):
        assert _is_subsequence([w.lower() for w in g.tokens], source) and len(set(g.tokens)) == len(g.tokens)
        assert g.tokens  # never stops before its first word
        if g.tokens[-1] in ("to", "the"):  # ends on a function word only when the source has no word after it
            assert g.tokens[-1] == source[-1] or not _is_subsequence(g.tokens + ["x"], source)
        assert g.attention.shape == (len(g.attention_labels), len(source))  # one row per word, then <end>


def test_teacher_forced_log_probs_are_normalized_and_mask_what_came_before(trained):
    inputs, _ = _batch(trained, np.random.default_rng(3), 6)
    log_p = trained(inputs).numpy()  # (B, T, V)
    np.testing.assert_allclose(np.exp(log_p).sum(-1), 1.0, atol=1e-4)
    first = trained._first_position
    for b, row in enumerate(inputs["tokens"]):
        for t, token in enumerate(row):
            if token >= first:  # after writing position j, nothing at or before j can be written
                assert np.exp(log_p[b, t, first: token + 1]).max() < 1e-6
    # one step at a time (the beam search's path) gives the same distribution as teacher forcing
    annotations, mask, state = trained.encode(tf.constant(inputs["source"]))
    memory, st = trained.decoder.prepare(annotations, mask, state)
    for t in range(inputs["tokens"].shape[1]):
        step_log_p, st, _ = trained.decoder.step(tf.constant(inputs["tokens"][:, t]), st, memory)
        real = inputs["tokens"][:, t] > 0
        np.testing.assert_allclose(step_log_p.numpy()[real], log_p[real, t], atol=2e-4)


def test_saved_extractive_model_reloads_and_ensembles(trained, tmp_path):
    texts = ["b x c to e", "the d b w", "w x to"]
    path = tmp_path / "ext.keras"
    trained.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.extractive and loaded.get_config()["extractive"] is True
    assert [t.text for t in loaded.translate(texts)] == [t.text for t in trained.translate(texts)]
    ensemble = Seq2SeqEnsemble([trained, loaded])
    assert ensemble.extractive and [t.text for t in ensemble.translate(texts)] == [t.text for t in trained.translate(texts)]


def test_extract_words_and_bad_settings():
    # ids -> words, each once, and the steps that wrote them
    assert extract_words([6, 4, 5, 2, 0], 4, ["Apple", "Pie", "apple"]) == (["apple", "Pie"], [0, 2])
    assert [may_end_on(w) for w in ("iphone", "to", "their", ",", "5")] == [True, False, False, False, True]
    with pytest.raises(ValueError, match="needs pointer=True"):
        _model(pointer=False)
    with pytest.raises(ValueError, match="position_vocabulary"):
        Seq2Seq.of(Vocabulary(SPECIALS + tuple(WORDS)), Vocabulary(SPECIALS + ("@0",)), pointer=True, extractive=True,
                max_source_length=LENGTH)
    with pytest.raises(ValueError, match="positions_from"):
        from captioner.layers.attention_decoder import AttentionDecoder

        AttentionDecoder.of(10, context="attention", init_state="given", positions_from=4)  # no pointer


def test_the_exported_graph_writes_the_same_headlines(trained, tmp_path):
    """`captioner export`: the SavedModel maps positions to the source's words as written, drops a
    repeated word and capitalizes, as `translate` does."""
    from captioner.export.saved_model import export_saved_model

    export_saved_model(trained, tmp_path / "ext")
    loaded = tf.saved_model.load(str(tmp_path / "ext"))
    sentences = ["W C x B c", "the B to D", "", "d D e w b", "x to the"]
    want = trained.translate(sentences)
    assert [t.text for t in want[:2]] == ["C B", "B D"]  # "c" after "C": said once; the first letter capital
    out = loaded.translate(tf.constant(sentences))
    assert [t.decode() for t in out["translation"].numpy()] == [t.text for t in want]
    for row, t in zip(out["hypotheses"].numpy(), want):
        assert [h.decode() for h in row][: len(t.hypotheses)] == [h for h, _ in t.hypotheses]


def test_a_beam_wider_than_a_short_source_allows_decodes_it(trained, tmp_path):
    """A one-word source at beam 6 has fewer possible steps than the beam is wide: the impossible
    candidates point past the source, and decoding (eager and exported) still writes the word."""
    from captioner.export.saved_model import export_saved_model

    sentences = ["C", "b d", "B x e"]
    want = trained.translate(sentences, beam_size=2)
    got = trained.translate(sentences, beam_size=6)
    assert [t.text for t in got] == [t.text for t in want] and got[0].text == "C"
    wide = Seq2Seq.from_config({**trained.get_config(), "beam_size": 6})
    wide.set_weights(trained.get_weights())
    export_saved_model(wide, tmp_path / "wide")
    loaded = tf.saved_model.load(str(tmp_path / "wide"))
    out = loaded.translate(tf.constant(sentences))
    assert [t.decode() for t in out["translation"].numpy()] == [t.text for t in got]


def test_a_whole_numbers_tokenizer_writes_the_same_headlines_exported(trained, tmp_path):
    """source_tokenizer {"numbers": True}: "1.5bn" is one source word in Python and in the graph."""
    from captioner.export.saved_model import export_saved_model

    whole = Seq2Seq.from_config({**trained.get_config(),
                                 "source_tokenizer": {**trained.source_tokenizer, "numbers": True}})
    whole.set_weights(trained.get_weights())
    sentences = ["B 1.5bn C x", "c 45,000 D", "W 2.5 to B"]
    assert whole.source_tokens(sentences[0]) == ["b", "1.5bn", "c", "x"]
    want = whole.translate(sentences)
    export_saved_model(whole, tmp_path / "numbers")
    loaded = tf.saved_model.load(str(tmp_path / "numbers"))
    out = loaded.translate(tf.constant(sentences))
    assert [t.decode() for t in out["translation"].numpy()] == [t.text for t in want]
    assert [t.decode() for t in out["source_tokens"].numpy()[0]][:4] == ["b", "1.5bn", "c", "x"]
