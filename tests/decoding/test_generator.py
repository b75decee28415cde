"""The one Generator, as different models use it: the image caption decoder, Seq2Seq (source
mask) and the video caption model (frame mask).

Checked: the models decode through it and get the same result type; banned ids never appear
(while they would without the ban); the compact search (memory gathered by row) gives the
tokens of the full search (memory tiled to every beam); the compiled-function cache traces
once per setting; the text helpers, by hand.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import (
    Decoding,
    Generation,
    Generator,
    hypothesis_texts,
    hypothesis_words,
    tile_beams,
)
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.seq2seq import Seq2Seq
from captioner.models.video_caption_model import VideoCaptionModel
from captioner.text import Vocabulary
from captioner.text.vocabulary import END_ID, PAD_ID, START_ID, UNK_ID
from search_cases import flat_search

WORDS = tuple("abcdefgh")
KEYS = {"tokens", "lengths", "scores", "log_probs", "finished", "attention"}


def _caption_model(kind="attention"):
    keras.utils.set_random_seed(0)
    return CaptionDecoderModel.of(len(WORDS) + 4, 10, kind=kind, projection_dim=12, embedding_dim=8, units=16,
                               attention_units=8, dropout=0.0)


def _seq2seq(kind="attention"):
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + WORDS)
    return Seq2Seq.of(vocab, vocab, kind=kind, embedding_dim=8, units=16, attention_units=8, dropout=0.0,
                   beam_size=3, alpha=1.0, max_length=8)


def _video_model():
    keras.utils.set_random_seed(0)
    return VideoCaptionModel(len(WORDS) + 4, 10, units=16, projection_dim=8, embedding_dim=8, attention_units=8,
                             dropout=0.0)


def _frames():
    """features (3, 5, 10) and their frame mask (3, 5): clips of 5, 3 and 1 real frames."""
    mask = np.arange(5)[None, :] < np.array([5, 3, 1])[:, None]
    return _features(3, 5), mask


def _features(batch=4, regions=6):
    return np.random.default_rng(1).normal(size=(batch, regions, 10)).astype("float32")


def _sources():
    return np.array([[4, 5, 6, 0], [7, 8, 0, 0], [9, 10, 11, 4]], np.int32)  # (3, 4), 0-padded


def _favour(decoder, ids, bonus=8.0):
    """Push the output bias of `ids` up, so that an unbanned search generates them."""
    bias = decoder.vocab_dense.bias.numpy()
    bias[list(ids)] += bonus
    decoder.vocab_dense.bias.assign(bias)


def _full_search(generator, inputs, beam_size, alpha, max_length):
    """The generator's search without the compact path: memory tiled to all B*K rows."""
    annotations, mask, initial_state = generator.encode(*inputs)
    memory, state = generator.decoder.prepare(annotations, mask, initial_state)
    memory = tile_beams(memory, beam_size)  # leaves (B*K, ...)
    return flat_search(lambda tokens, st: generator.decoder.step(tokens, st, memory), state,
                       tf.shape(annotations)[0], beam_size=beam_size, max_length=max_length,
                       start_id=START_ID, end_id=END_ID, alpha=alpha, attention_size=tf.shape(annotations)[1],
                       banned_ids=generator.banned_ids)


def test_both_models_decode_through_one_generator():
    caption, seq2seq = _caption_model(), _seq2seq()
    assert isinstance(caption.generator, Generator) and isinstance(seq2seq.generator, Generator)
    assert caption.generator.decoder is caption.decoder and seq2seq.generator.decoder is seq2seq.decoder
    a = caption.generate(_features(), beam_size=3, alpha=0.5, max_length=7)
    b = seq2seq.generate(_sources(), beam_size=2, alpha=1.0, max_length=6)
    assert isinstance(a, Generation) and isinstance(b, Generation)
    assert set(a) == KEYS and set(b) == KEYS
    assert a["tokens"].shape == (4, 3, 7) and a["attention"].shape == (4, 3, 7, 6)
    assert b["tokens"].shape == (3, 2, 6) and b["attention"].shape == (3, 2, 6, 4)
    assert isinstance(b["tokens"], np.ndarray)  # Seq2Seq.generate returns NumPy
    assert isinstance(a.numpy()["scores"], np.ndarray)
    # best first
    assert np.all(np.diff(a.numpy()["scores"], axis=1) <= 0) and np.all(np.diff(b["scores"], axis=1) <= 0)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_banned_ids_are_never_generated(beam_size):
    model = _caption_model()
    banned = (PAD_ID, UNK_ID, START_ID)
    assert set(model.generator.banned_ids) == set(banned)
    _favour(model.decoder, banned)
    x = _features()
    free = Generator(model.decoder, model.generator.encode)  # the same model, nothing banned
    tokens = free(x, beam_size=beam_size, alpha=0.0, max_length=6).numpy()["tokens"]
    assert np.isin(tokens[..., 0], banned).any()  # the ban below is what keeps them out
    out = model.generate(x, beam_size=beam_size, alpha=0.0, max_length=6).numpy()
    for b in range(out["tokens"].shape[0]):
        for k in range(beam_size):
            generated = out["tokens"][b, k, :out["lengths"][b, k]]  # pad after <end> is not generated
            assert not np.isin(generated, banned).any(), generated
    # and for Seq2Seq's decoder, given as a parameter of the one generator
    s = _seq2seq()
    _favour(s.decoder, (UNK_ID,))
    src = _sources()
    assert (s.generate(src, beam_size=beam_size)["tokens"] == UNK_ID).any()
    ban_unk = Generator(s.decoder, s.encode, banned_ids=(UNK_ID,))
    out = ban_unk(src, beam_size=beam_size, alpha=1.0, max_length=8).numpy()
    assert not (out["tokens"] == UNK_ID).any()


def test_end_id_cannot_be_banned():
    model = _caption_model()
    with pytest.raises(ValueError, match="end_id"):
        Generator(model.decoder, model.generator.encode, banned_ids=(END_ID,))(
            _features(), beam_size=2, alpha=0.0, max_length=3)


@pytest.mark.parametrize("make, inputs", [
    (lambda: _caption_model("attention").generator, lambda: (_features(),)),
    (lambda: _caption_model("fc-init").generator, lambda: (_features()[:, 0],)),
    (lambda: _seq2seq("attention").generator, lambda: (_sources(),)),
    (lambda: _seq2seq("sutskever").generator, lambda: (_sources(),)),
    (lambda: _video_model().generator, _frames),
])
@pytest.mark.parametrize("beam_size, alpha", [(1, 0.0), (3, 0.0), (4, 1.0)])
def test_compact_search_equals_full_search(make, inputs, beam_size, alpha):
    generator, x = make(), [tf.constant(t) for t in inputs()]
    compact = generator(*x, beam_size=beam_size, alpha=alpha, max_length=9).numpy()
    full = {k: v.numpy() for k, v in _full_search(generator, x, beam_size, alpha, 9).items()}
    np.testing.assert_array_equal(compact["tokens"], full["tokens"])
    np.testing.assert_array_equal(compact["lengths"], full["lengths"])
    np.testing.assert_array_equal(compact["finished"], full["finished"])
    np.testing.assert_allclose(compact["scores"], full["scores"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compact["attention"], full["attention"], atol=1e-5)


def test_the_cache_compiles_once_per_setting():
    model = _caption_model()
    traces = []

    def encode(x):
        traces.append(x.shape)  # runs when the function is traced, not when it is called
        return model.project(x), None, None

    generator = Generator(model.decoder, encode, banned_ids=model.generator.banned_ids)
    for batch in (2, 3, 5, 1):  # batch sizes vary: the batch dim is left free
        generator(_features(batch), beam_size=2, alpha=0.0, max_length=5)
    assert len(traces) == 1 and traces[0][0] is None
    generator(_features(2), beam_size=2, alpha=0.0, max_length=5)
    assert len(traces) == 1
    generator(_features(2), beam_size=3, alpha=0.0, max_length=5)  # another setting: one more
    generator(_features(4), beam_size=3, alpha=0.0, max_length=5)
    generator(_features(4), beam_size=2, alpha=0.5, max_length=5)
    assert len(traces) == 3 and len(generator._compiled) == 3
    # a model's generate and the same generator's compiled function are one and the same
    x = tf.constant(_features(2))
    assert model.generator.compiled(x, decoding=Decoding(2, 0.0, 5)) is \
        model.generator.compiled(x, decoding=Decoding(beam_size=2, alpha=0.0, max_length=5))
    with pytest.raises(TypeError, match="not both"):
        model.generator(x, decoding=Decoding(2, 0.0, 5), beam_size=3)


def test_seq2seq_source_lengths_share_one_function():
    model = _seq2seq()
    model.generate(_sources(), beam_size=2, alpha=1.0, max_length=5)
    model.generate(_sources()[:, :2], beam_size=2, alpha=1.0, max_length=5)
    model.generate(np.zeros((1, 7), np.int32) + 4, beam_size=2, alpha=1.0, max_length=5)
    assert len(model.generator._compiled) == 1
    fn = next(iter(model.generator._compiled.values()))
    assert fn.experimental_get_tracing_count() == 1


def test_text_helpers_by_hand():
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "dog", ",", "runs", "."))
    a, dog, comma, runs, dot = 4, 5, 6, 7, 8
    result = {"tokens": np.array([[[a, dog, runs, dot, END_ID, 0], [a, dog, END_ID, 0, 0, 0]],
                                  [[dog, comma, a, dog, END_ID, 0], [UNK_ID, END_ID, 0, 0, 0, 0]]])}
    assert hypothesis_texts(result, vocab) == ["a dog runs.", "dog, a dog"]
    assert hypothesis_texts(result, vocab, beam=1) == ["a dog", "<unk>"]
    assert hypothesis_texts(result, vocab, beam=None) == [["a dog runs.", "a dog"], ["dog, a dog", "<unk>"]]
    assert Generation(result).texts(vocab) == ["a dog runs.", "dog, a dog"]
    # <unk> copies the source word its step attends to most (step 0 -> "jane")
    attention = np.array([[0.1, 0.8, 0.1], [0.6, 0.2, 0.2]])
    assert hypothesis_words(vocab, [UNK_ID, END_ID, 0], attention, ["x", "jane", "y"]) == (["jane"], 1)
    assert hypothesis_words(vocab, [UNK_ID, END_ID, 0], attention) == (["<unk>"], 0)
    assert hypothesis_words(vocab, [a, dog, END_ID]) == (["a", "dog"], 0)


def test_training_decode_helpers_use_the_text_helper():
    from captioner.training.caption_data import decode_captions

    model = _caption_model()
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + WORDS)
    x = _features(5)
    got = decode_captions(model, x, list("vwxyz"), vocab, beam_size=2, max_length=6, batch_size=2)
    want = hypothesis_texts(model.generate(x, beam_size=2, max_length=6), vocab)
    assert got == dict(zip("vwxyz", want))


def test_distinct_copies_skip_words_already_written():
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "dog"))
    source = ["smith", "beats", "jones", "a"]
    # three <unk> steps whose attention stays on "smith"; the second ranks "jones" next, the third "a"
    # (already written by step 0) then "beats"
    attention = np.array([[0.0, 0.0, 0.0, 1.0],            # step 0: "a" (not an <unk>: no copy)
                          [0.7, 0.1, 0.2, 0.0],            # <unk> -> smith
                          [0.6, 0.1, 0.3, 0.0],            # <unk> -> smith again (argmax) / jones (distinct)
                          [0.5, 0.2, 0.0, 0.3],            # <unk> -> smith / a is taken -> beats
                          [0.25, 0.25, 0.25, 0.25]])       # <end>
    ids = [4, UNK_ID, UNK_ID, UNK_ID, END_ID]
    assert hypothesis_words(vocab, ids, attention, source) == (["a", "smith", "smith", "smith"], 3)
    assert hypothesis_words(vocab, ids, attention, source, distinct=True) == (["a", "smith", "jones", "beats"], 3)
    # every source word taken: the most attended one, as without `distinct`
    assert hypothesis_words(vocab, [UNK_ID, UNK_ID, END_ID], np.array([[1.0], [1.0], [1.0]]), ["x"],
                            distinct=True) == (["x", "x"], 2)


def test_sampling_serves_the_caption_decoder_too():
    """Sampling is a rule of the one search for every generator, not the language model's alone:
    the caption decoder samples through its own Generator, seeded; T -> 0 and top-1 are greedy."""
    model, feats = _caption_model(), _features()
    greedy = model.generator(feats, beam_size=1, alpha=0.0, max_length=7)["tokens"].numpy()
    cold = model.generator(feats, beam_size=1, alpha=0.0, max_length=7, temperature=1e-4, seed=1)
    np.testing.assert_array_equal(cold["tokens"].numpy(), greedy)
    top1 = model.generator(feats, beam_size=1, alpha=0.0, max_length=7, temperature=2.0, top_k=1, seed=2)
    np.testing.assert_array_equal(top1["tokens"].numpy(), greedy)
    hot = [model.generator(feats, beam_size=1, alpha=0.0, max_length=7, temperature=3.0, seed=s)["tokens"].numpy()
           for s in (5, 5, 6)]
    np.testing.assert_array_equal(hot[0], hot[1])
    assert not np.isin(hot[0], [UNK_ID, START_ID]).any()  # banned ids stay banned when sampling
    with pytest.raises(ValueError, match="beam_size must be 1"):
        model.generator(feats, beam_size=3, alpha=0.0, max_length=7, temperature=1.0)


@pytest.mark.parametrize("make, inputs, spec", [
    (lambda: _caption_model("attention").generator, lambda: (_features(),), tf.TensorSpec((None, None, 10))),
    (lambda: _seq2seq("attention").generator, lambda: (_sources(),), tf.TensorSpec((None, None), tf.int32)),
])
def test_settings_as_tensors_give_the_python_int_search(make, inputs, spec):
    """One graph with beam_size, alpha and max_length as inputs (what an exported SavedModel
    signature holds) decodes exactly like the search traced per python setting."""
    generator, x = make(), tf.constant(inputs()[0])
    scalar = tf.TensorSpec((), tf.int32)
    one_graph = tf.function(
        lambda x, k, a, t: dict(generator.search(x, decoding=Decoding(k, a, t))),
        input_signature=[spec, scalar, tf.TensorSpec((), tf.float32), scalar])
    for beam_size, alpha, max_length in [(1, 0.0, 5), (3, 0.5, 9), (4, 1.0, 7)]:
        want = generator(x, beam_size=beam_size, alpha=alpha, max_length=max_length).numpy()
        got = {k: v.numpy() for k, v in one_graph(x, beam_size, alpha, max_length).items()}
        assert got["tokens"].shape == want["tokens"].shape
        for key in ("tokens", "lengths", "finished"):
            np.testing.assert_array_equal(got[key], want[key])
        np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["attention"], want["attention"], atol=1e-6)
    assert len(one_graph._list_all_concrete_functions()) == 1  # traced once for every setting
    with pytest.raises(tf.errors.InvalidArgumentError, match="beam_size must be >= 1"):
        one_graph(x, 0, 0.0, 5)
    # the documented upper bounds, in the graph (issue 40 item 9: max_length 2**31-1 reached 9.5 GB)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_length must be at most 1000"):
        one_graph(x, 2, 0.0, 2**31 - 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="beam_size must be at most 64"):
        one_graph(x, 100000, 0.0, 5)


def test_sampling_traces_once_for_every_seed():
    """The seed is an input of the compiled sampling function (self-critical training draws with a
    new seed every batch): one trace serves all seeds, and each seed draws what the uncompiled
    search draws with it."""
    model, feats = _caption_model(), _features()
    draws = {s: model.generator(feats, beam_size=1, alpha=0.0, max_length=7, temperature=1.5, seed=s)
             for s in (3, 4, 2**31 + 3)}
    assert len(model.generator._compiled) == 1
    fn = next(iter(model.generator._compiled.values()))
    assert fn.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(draws[3]["tokens"].numpy(), draws[2**31 + 3]["tokens"].numpy())  # mod 2**31
    assert (draws[3]["tokens"].numpy() != draws[4]["tokens"].numpy()).any()
    for s in (3, 4):
        eager = model.generator.search(tf.constant(feats), decoding=Decoding(1, 0.0, 7, temperature=1.5),
                                       seed=s)
        np.testing.assert_array_equal(eager["tokens"].numpy(), draws[s]["tokens"].numpy())
        np.testing.assert_allclose(eager["log_probs"].numpy(), draws[s]["log_probs"].numpy(), rtol=1e-5)
