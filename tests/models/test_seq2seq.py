"""Seq2Seq (Bahdanau attention / fixed-context baselines) and its text encoder."""

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
import pytest

from captioner.layers.text_encoder import TextEncoder
from captioner.models.caption_decoder_model import masked_sparse_ce
from captioner.models.seq2seq import Seq2Seq, Translation, text_tokens
from captioner.text import Vocabulary
from seq2seq_support import fresh_process_translations

REPO = Path(__file__).resolve().parents[2]
WORDS = [chr(ord("a") + i) for i in range(8)]  # a..h


def _vocab(words=WORDS):
    return Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple(words))


def _tiny(kind="attention", **kw):
    keras.utils.set_random_seed(0)
    args = dict(embedding_dim=16, units=32, attention_units=16, dropout=0.0, beam_size=2, alpha=1.0,
                max_length=10, source_tokenizer={"keep_punct": False}, target_tokenizer={"keep_punct": False})
    args.update(kw)
    return Seq2Seq.of(_vocab(), _vocab(), kind=kind, **args)


def _reverse_batches(rng, n, vocab, max_len=5):
    lengths = rng.integers(2, max_len + 1, n)
    src = np.zeros((n, max_len), np.int32)
    tgt = np.zeros((n, max_len + 2), np.int32)
    for i, length in enumerate(lengths):
        ids = rng.integers(4, len(vocab), length)
        src[i, :length] = ids
        seq = [1] + list(ids[::-1]) + [2]
        tgt[i, :len(seq)] = seq
    return {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]


def test_text_tokens_split_french_elisions_only_when_asked():
    s = "Jane visite l'Afrique, qu'elle aime."
    assert text_tokens(s) == ["jane", "visite", "l'afrique", ",", "qu'elle", "aime", "."]
    assert text_tokens(s, {"split_elisions": True}) == ["jane", "visite", "l'", "afrique", ",", "qu'", "elle",
                                                         "aime", "."]
    assert text_tokens("I don't know", {"split_elisions": True}) == ["i", "don't", "know"]


@pytest.mark.parametrize("bidirectional,cell,reverse", [(True, "gru", False), (False, "lstm", True)])
def test_encoder_ignores_padding(bidirectional, cell, reverse):
    """Extra padding changes neither the annotations of real words nor the final state."""
    keras.utils.set_random_seed(1)
    enc = TextEncoder(12, embedding_dim=6, units=5, cell=cell, bidirectional=bidirectional, num_layers=2,
                      reverse_source=reverse)
    enc.build((None, None))
    short = np.array([[4, 5, 6, 0], [7, 8, 0, 0]], np.int32)
    long = np.pad(short, [[0, 0], [0, 3]])
    a1, m1, f1 = enc(short)
    a2, m2, f2 = enc(long)
    np.testing.assert_allclose(a1.numpy(), a2.numpy()[:, :4], atol=1e-5)
    assert not a2.numpy()[:, 4:].any()  # padding annotations are zero
    np.testing.assert_allclose(f1["h"].numpy(), f2["h"].numpy(), atol=1e-5)
    assert enc.output_dim == (10 if bidirectional else 5)
    assert a1.shape == (2, 4, enc.output_dim) and m1.numpy().tolist() == (short > 0).tolist()


def test_reverse_source_reads_right_to_left_and_keeps_annotation_order():
    """With reverse_source the RNN sees the words reversed, and annotation j stays with word j."""
    keras.utils.set_random_seed(2)
    fwd = TextEncoder(12, embedding_dim=4, units=3, cell="gru", bidirectional=False)
    rev = TextEncoder(12, embedding_dim=4, units=3, cell="gru", bidirectional=False, reverse_source=True)
    fwd.build((None, None)), rev.build((None, None))
    rev.set_weights(fwd.get_weights())
    x = np.array([[4, 5, 6, 7, 0]], np.int32)
    x_rev = np.array([[7, 6, 5, 4, 0]], np.int32)
    a_rev, _, f_rev = rev(x)
    a_fwd, _, f_fwd = fwd(x_rev)
    np.testing.assert_allclose(f_rev["h"].numpy(), f_fwd["h"].numpy(), atol=1e-6)
    np.testing.assert_allclose(a_rev.numpy()[0, :4], a_fwd.numpy()[0, :4][::-1], atol=1e-6)


@pytest.mark.parametrize("kind", ["attention", "fixed", "sutskever"])
def test_kinds_train_step_and_generate_shapes(kind):
    model = _tiny(kind)
    model.compile(optimizer="adam", loss=masked_sparse_ce)
    x, y = _reverse_batches(np.random.default_rng(0), 8, _vocab())
    assert model(x).shape == (8, x["tokens"].shape[1], len(_vocab()))
    loss = model.train_on_batch(x, y)
    assert np.isfinite(loss)
    out = model.generate(x["source"], beam_size=3, alpha=1.0, max_length=7)
    assert out["tokens"].shape == (8, 3, 7)
    r = out["attention"].shape[-1]
    assert r == (x["source"].shape[1] if kind == "attention" else 1)
    assert np.all(np.diff(out["scores"], axis=1) <= 1e-6)  # best first
    t = model.translate(["a b c", "d"])
    assert len(t) == 2 and all(isinstance(x, Translation) for x in t)
    assert (t[0].attention is None) == (kind != "attention")


def test_fixed_context_decoders_start_from_the_source():
    """The fixed-context kinds carry the sentence only in the decoder's initial state, so that
    state must follow the source: sutskever hands over the encoder's final (h, c) as they are
    (Sutskever et al. 2014); fixed maps them, c linearly (a tanh of the cell saturated at +-1
    for every sentence, and the decoder learnt a language model that ignored the source)."""
    x, _ = _reverse_batches(np.random.default_rng(1), 16, _vocab())
    sut = _tiny("sutskever", encoder_cell="lstm", decoder_cell="lstm", encoder_layers=2, reverse_source=True)
    _, _, final = sut.encoder(x["source"])
    _, _, state = sut.encode(x["source"])
    np.testing.assert_array_equal(state["h"], final["h"])
    np.testing.assert_array_equal(state["c"], final["c"])
    fixed = _tiny("fixed", encoder_cell="lstm", decoder_cell="lstm")
    _, _, final = fixed.encoder(x["source"])
    _, _, state = fixed.encode(x["source"])
    big = 10.0 * final["c"]  # a large cell state still gives a c0 that follows it
    np.testing.assert_allclose(fixed.init_c(big) - fixed.init_c(tf.zeros_like(big)),
                               10.0 * (fixed.init_c(final["c"]) - fixed.init_c(tf.zeros_like(big))), rtol=1e-4,
                               atol=1e-4)
    assert np.asarray(state["c"]).std(0).mean() > 1e-3  # differs between sources


def test_attention_learns_to_reverse_and_survives_save_load_in_fresh_process(tmp_path):
    """The Bahdanau model learns to reverse short strings in a few hundred steps; the saved
    file then loads with keras.models.load_model in a new process and translates identically."""
    model = _tiny("attention", units=48, embedding_dim=24, attention_units=24)
    model.compile(optimizer=keras.optimizers.Adam(1e-2, clipnorm=5.0), loss=masked_sparse_ce)
    rng = np.random.default_rng(0)
    for _ in range(250):
        model.train_on_batch(*_reverse_batches(rng, 32, _vocab()))
    tests = [" ".join(rng.choice(WORDS[:], size=rng.integers(2, 6))) for _ in range(40)]
    got = model.translate(tests, beam_size=2)
    exact = np.mean([g.text == " ".join(s.split()[::-1]) for s, g in zip(tests, got)])
    assert exact >= 0.8, [(s, g.text) for s, g in zip(tests, got)][:10]
    # the alignment of a reversal is the anti-diagonal
    g = got[0]
    n = len(g.source_tokens)
    assert g.finished and g.attention.shape == (len(g.tokens) + 1, n)
    if g.tokens == g.source_tokens[::-1]:
        assert np.argmax(g.attention[0]) == n - 1

    path = tmp_path / "rev.keras"
    model.save(path)
    expected = [(t.text, round(t.score, 4)) for t in model.translate(tests[:5])]
    got_loaded = fresh_process_translations(path, tests[:5], check="type(m).__name__ == 'Seq2Seq'")
    assert [t for t, _ in got_loaded] == [t for t, _ in expected]
    np.testing.assert_allclose([s for _, s in got_loaded], [s for _, s in expected], atol=1e-3)


def test_unk_output_copies_most_attended_source_word():
    model = _tiny("attention")
    unk, end = 3, 2
    a = model.target_vocabulary.token_to_id("a")
    out = {"tokens": np.array([[[unk, a, end, 0]]]), "scores": np.array([[-0.5]]), "finished": np.array([[True]]),
           "log_probs": np.array([[-1.5]]), "lengths": np.array([[3]]),
           "attention": np.array([[[[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.3, 0.3, 0.4], [0, 0, 0]]]])}
    t = model._decode_one(out, 0, ["x", "jane", "y"], replace_unk=True)
    assert t.tokens == ["jane", "a"] and t.text == "jane a" and t.replaced_unk == 1
    assert t.attention.shape == (3, 3) and t.attention_labels == ["jane", "a", "<end>"]
    t = model._decode_one(out, 0, ["x", "jane", "y"], replace_unk=False)
    assert t.tokens == ["<unk>", "a"] and t.replaced_unk == 0


@pytest.mark.parametrize("favoured", ["<pad>", "<start>", "<unk>"])
def test_pad_and_start_are_never_generated(favoured):
    """A <pad> or <start> output would be dropped from the words and leave its attention row
    behind (the <unk> copy of later steps would read the wrong row): the search bans both."""
    model = _tiny("attention", beam_size=3, max_length=6)
    kernel, bias = model.decoder.vocab_dense.get_weights()
    i = model.target_vocabulary.token_to_id(favoured)
    bias[i] += 100.0
    model.decoder.vocab_dense.set_weights([kernel, bias])
    out = model.generate(model.encode_sources([["a", "b", "c"]]), beam_size=3, max_length=6)
    tokens = np.asarray(out["tokens"])
    assert not (tokens == 1).any()  # no <start>
    ended = np.cumsum(tokens == 2, axis=-1) > 0  # <pad> only after <end>
    assert not ((tokens == 0) & ~ended).any()
    if favoured == "<unk>":  # still generated, to be replaced by a source word
        assert (tokens == 3).any()
    [t] = model.translate(["a b c"])
    assert t.attention.shape == (len(t.tokens) + t.finished, 3)


def test_coverage_penalty_hand_worked_and_reranks_the_beam():
    from captioner.decoding import coverage_penalty

    # source words got 1.2, 0.5 and 0.25 of attention in all: log(1) + log(0.5) + log(0.25)
    attn = np.array([[0.7, 0.3, 0.0], [0.5, 0.2, 0.25]])
    assert coverage_penalty(attn, 0.2) == pytest.approx(0.2 * (np.log(0.5) + np.log(0.25)))
    assert coverage_penalty(np.eye(3), 1.0) == 0.0  # every word attended to once: no penalty
    model = _tiny("attention")
    a, b, end = model.target_vocabulary.token_to_id("a"), model.target_vocabulary.token_to_id("b"), 2
    # beam 1 ("a") scores higher but never looks at source word 3; beam 2 ("a b") covers all three
    out = {"tokens": np.array([[[a, end, 0], [a, b, end]]]), "scores": np.array([[-0.2, -0.3]]),
           "finished": np.array([[True, True]]), "log_probs": np.array([[-0.4, -0.9]]),
           "lengths": np.array([[2, 3]]),
           "attention": np.array([[[[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0, 0, 0]],
                                   [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]])}
    plain = model._decode_one(out, 0, ["x", "y", "z"], replace_unk=True)
    assert plain.text == "a" and plain.coverage == 0.0
    covered = model._decode_one(out, 0, ["x", "y", "z"], replace_unk=True, beta=0.2)
    assert covered.text == "a b" and covered.coverage == 0.0 and covered.score == pytest.approx(-0.3)
    assert covered.hypotheses[1] == ("a", pytest.approx(-0.2 + 0.2 * np.log(1e-6)))
    # the model's default travels in its config; translate() takes an override and checks it
    m2 = _tiny("attention", coverage_penalty=0.3)
    assert Seq2Seq.from_config(m2.get_config()).coverage_penalty == 0.3
    got = m2.translate(["a b c"], coverage_penalty=0.0)[0]
    assert got.coverage == 0.0 and got.score == pytest.approx(m2.translate(["a b c"], coverage_penalty=0.0)[0].score)
    assert m2.translate(["a b c"])[0].coverage <= 0.0
    with pytest.raises(ValueError, match="coverage_penalty"):
        m2.translate(["a b"], coverage_penalty=-1)


def test_attention_lambda_adds_the_source_coverage_loss_in_training_only():
    from captioner.layers.attention_decoder import doubly_stochastic_penalty

    model = _tiny("attention", attention_lambda=0.5)
    assert Seq2Seq.from_config(model.get_config()).attention_lambda == 0.5
    x = {"source": np.array([[4, 5, 6], [7, 0, 0]], np.int32), "tokens": np.array([[1, 4, 5, 6], [1, 7, 0, 0]], np.int32)}
    model(x, training=False)
    assert not model.losses
    model(x, training=True)
    [loss] = model.losses
    annotations, mask, state = model.encode(x["source"])
    _, alphas = model.decoder(x["tokens"], annotations, annotation_mask=mask, initial_state=state)
    expected = 0.5 * np.mean(doubly_stochastic_penalty(alphas, x["tokens"] != 0, mask).numpy()) / 4
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)  # dropout 0: the same attention
    # the second sentence has one source word, which takes all the attention at both real steps:
    # (1 - 2)^2, the padded source positions count for nothing
    assert float(doubly_stochastic_penalty(alphas, x["tokens"] != 0, mask)[1]) == pytest.approx(1.0, abs=1e-5)
    fixed = _tiny("sutskever", attention_lambda=0.5)  # no attention over the source: no penalty
    fixed(x, training=True)
    assert not fixed.losses


def test_empty_and_long_inputs():
    model = _tiny("attention", max_source_length=4)
    out = model.translate(["", "   ", "a b", "a b c d e f"])
    assert [o.text for o in out[:2]] == ["", ""] and out[0].hypotheses == []
    assert out[2].source_tokens == ["a", "b"] and not out[2].truncated
    assert out[3].source_tokens == ["a", "b", "c", "d"] and out[3].truncated
    with pytest.raises(TypeError):
        model.translate("a b")


def test_config_round_trip_keeps_vocabularies_and_settings():
    model = _tiny("sutskever", encoder_layers=2, reverse_source=True)
    clone = Seq2Seq.from_config(model.get_config())
    assert clone.source_vocabulary == model.source_vocabulary
    assert clone.kind == "sutskever" and clone.encoder.num_layers == 2 and clone.encoder.reverse_source
    assert clone.encoder_cell == "lstm" and clone.decoder_cell == "lstm"
    assert clone.source_tokenizer == model.source_tokenizer


def test_no_repeat_ngram_and_distinct_copies_are_model_settings(tmp_path):
    model = _tiny(max_length=12, no_repeat_ngram=1, copy_distinct=True)
    sources = ["a b c d", "h h g", "e"]
    for out in model.translate(sources, replace_unk=False):  # n = 1: no id twice (an untrained model repeats)
        assert len(out.tokens) == len(set(out.tokens)), out.tokens
    free = _tiny(max_length=12)
    assert any(len(o.tokens) != len(set(o.tokens)) for o in free.translate(sources, beam_size=1))  # not vacuous
    assert [o.text for o in free.translate(sources, no_repeat_ngram=1)] == [o.text for o in model.translate(sources)]
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert (loaded.no_repeat_ngram, loaded.copy_distinct) == (1, True)
    assert [o.text for o in loaded.translate(sources)] == [o.text for o in model.translate(sources)]


def test_a_gru_decoder_stores_no_cell_state_weights_and_older_files_with_them_still_load(tmp_path):
    """Issue 39: an LSTM decoder's c0 = W_c c needs init_c; a GRU decoder has no cell state, so
    nothing of init_c is built or saved. Bundled GRU files written before this still hold an unused
    init_c group: they load, and translate as the model without it does."""
    import h5py
    import zipfile

    gru, lstm = _tiny(decoder_cell="gru"), _tiny(decoder_cell="lstm")
    assert not hasattr(gru, "init_c") and hasattr(lstm, "init_c")
    assert all("init_c" not in v.path for v in gru.weights)
    path = tmp_path / "gru.keras"
    gru.save(path)
    with zipfile.ZipFile(path) as z:
        z.extract("model.weights.h5", tmp_path)
    with h5py.File(tmp_path / "model.weights.h5") as f:
        names = []
        f.visit(names.append)
    assert not [n for n in names if "init_c" in n]

    # an older file: the same weights plus an init_c group nobody reads
    with h5py.File(tmp_path / "model.weights.h5", "a") as f:
        group = f.create_group("init_c/vars")
        group["0"], group["1"] = np.ones((32, 32), np.float32), np.ones(32, np.float32)
    older = tmp_path / "older.keras"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(older, "w") as dst:
        for item in src.namelist():
            data = (tmp_path / "model.weights.h5").read_bytes() if item == "model.weights.h5" else src.read(item)
            dst.writestr(item, data)
    loaded = keras.models.load_model(older)
    assert [t.text for t in loaded.translate(["a b c"])] == [t.text for t in gru.translate(["a b c"])]
