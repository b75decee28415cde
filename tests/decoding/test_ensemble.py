"""Ensembles inside the one beam search: the combination rules against hand-worked numbers, an
ensemble of one equals its member, two members equal a hand-written greedy decoder over the
members' own steps, and the caption decoder ensembles through the same class."""


import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding.ensemble import EnsembleDecoder, combine_log_probs
from captioner.decoding.generator import Generator
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary

WORDS = [chr(ord("a") + i) for i in range(8)]


def _tiny(seed, units=32):
    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple(WORDS))
    return Seq2Seq.of(vocab, vocab, embedding_dim=16, units=units, attention_units=16, dropout=0.0, beam_size=3,
                   alpha=1.0, max_length=8, source_tokenizer={"keep_punct": False},
                   target_tokenizer={"keep_punct": False})


def test_combine_rules_hand_worked():
    p1, p2 = np.array([[0.7, 0.2, 0.1]]), np.array([[0.1, 0.2, 0.7]])
    log_probs = tf.constant(np.log(np.stack([p1, p2])), tf.float32)  # (2, 1, 3)
    geometric = np.sqrt(p1 * p2)  # 0.2646, 0.2, 0.2646
    np.testing.assert_allclose(np.exp(combine_log_probs(log_probs, "product")), geometric / geometric.sum(), atol=1e-6)
    np.testing.assert_allclose(np.exp(combine_log_probs(log_probs, "mixture")), [[0.4, 0.2, 0.4]], atol=1e-6)
    with pytest.raises(ValueError):
        combine_log_probs(log_probs, "vote")
    with pytest.raises(ValueError):
        EnsembleDecoder([])


def _source():
    return np.array([[4, 5, 6, 7, 0], [8, 9, 10, 0, 0], [11, 4, 0, 0, 0]], np.int32)  # (B, S) 0-padded


@pytest.mark.parametrize("combine", ["product", "mixture"])
def test_an_ensemble_of_one_is_its_member(combine):
    model = _tiny(0)
    ensemble = EnsembleDecoder([(model.decoder, model.encode)], combine)
    got = Generator(ensemble, ensemble.encode, banned_ids=model.generator.banned_ids)(
        _source(), beam_size=3, alpha=1.0, max_length=8).numpy()
    want = model.generator(_source(), beam_size=3, alpha=1.0, max_length=8).numpy()
    np.testing.assert_array_equal(got["tokens"], want["tokens"])
    np.testing.assert_allclose(got["scores"], want["scores"], atol=1e-5)
    np.testing.assert_allclose(got["attention"], want["attention"], atol=1e-6)


@pytest.mark.parametrize("combine", ["product", "mixture"])
def test_two_members_greedy_equals_a_hand_written_decoder(combine):
    a, b = _tiny(1), _tiny(2, units=24)  # members of different sizes
    source = _source()
    ensemble = EnsembleDecoder([(a.decoder, a.encode), (b.decoder, b.encode)], combine)
    got = Generator(ensemble, ensemble.encode)(source, beam_size=1, alpha=0.0, max_length=6).numpy()

    # reference: each member's own prepare/step, probabilities combined in NumPy, argmax
    prepared = [m.decoder.prepare(*m.encode(tf.constant(source))) for m in (a, b)]
    memories, states = [p[0] for p in prepared], [p[1] for p in prepared]
    tokens = np.full(len(source), 1, np.int32)  # <start>
    done = np.zeros(len(source), bool)
    out, total = [], np.zeros(len(source))
    for _ in range(6):
        steps = [m.decoder.step(tf.constant(tokens), s, mem) for m, s, mem in zip((a, b), states, memories)]
        states = [s[1] for s in steps]
        lp = np.stack([s[0].numpy() for s in steps]).astype(np.float64)  # (2, B, V)
        if combine == "product":
            mixed = lp.mean(0)
            mixed = mixed - np.log(np.exp(mixed).sum(-1, keepdims=True))
        else:
            mixed = np.log(np.exp(lp).mean(0))
        tokens = np.where(done, 0, mixed.argmax(-1)).astype(np.int32)
        total += np.where(done, 0.0, mixed[np.arange(len(source)), tokens])
        out.append(tokens)
        done |= tokens == 2
        if done.all():
            break
    want = np.stack(out, 1)  # (B, steps)
    np.testing.assert_array_equal(got["tokens"][:, 0, :want.shape[1]], want)
    np.testing.assert_allclose(got["log_probs"][:, 0], total, atol=1e-4)


def test_caption_decoders_ensemble_through_the_same_class():
    from support.tiny_captioner import build_tiny_captioner

    first, second = build_tiny_captioner(seed=0), build_tiny_captioner(seed=3)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3), dtype=np.uint8)
    features = first.encode(pixels)  # the same tiny backbone architecture; (B, 16, 12)
    one = EnsembleDecoder([(first.decoder.generator.decoder, first.decoder.generator.encode)])
    got = Generator(one, one.encode, banned_ids=first.decoder.generator.banned_ids)(
        features, beam_size=2, alpha=0.0, max_length=6).numpy()
    want = first.decoder.generate(features, beam_size=2, alpha=0.0, max_length=6).numpy()
    np.testing.assert_array_equal(got["tokens"], want["tokens"])
    two = EnsembleDecoder([(c.decoder.generator.decoder, c.decoder.generator.encode) for c in (first, second)])
    out = Generator(two, two.encode, banned_ids=first.decoder.generator.banned_ids)(
        features, beam_size=2, alpha=0.0, max_length=6).numpy()
    assert out["attention"].shape == want["attention"].shape
    np.testing.assert_allclose(out["attention"][:, 0, 0].sum(-1), 1.0, atol=1e-5)  # still a distribution


def test_members_over_different_grids_take_their_own_inputs_and_one_members_attention():
    """Captioners on different backbones (a 4x4 and a 2x2 grid here) ensemble with routed inputs;
    the attention is the chosen member's; a hand-written greedy decoder over both members agrees."""
    from support.tiny_captioner import build_tiny_captioner

    first, second = build_tiny_captioner(seed=0), build_tiny_captioner(seed=3)
    rng = np.random.default_rng(1)
    big = tf.constant(rng.random((2, 16, 12)), tf.float32)   # member 0: 16 regions
    small = tf.constant(rng.random((2, 4, 12)), tf.float32)  # member 1: 4 regions
    g0, g1 = first.decoder.generator, second.decoder.generator
    with pytest.raises(ValueError, match="attention_from"):
        EnsembleDecoder([(g0.decoder, g0.encode)], attention_from=1)
    ens = EnsembleDecoder([(g0.decoder, lambda a, b: g0.encode(a)), (g1.decoder, lambda a, b: g1.encode(b))],
                          attention_from=0)
    out = Generator(ens, ens.encode, banned_ids=g0.banned_ids)(big, small, beam_size=1, alpha=0.0,
                                                               max_length=5).numpy()
    assert out["attention"].shape[-1] == 16
    # by hand: greedy over the product of the two members' distributions
    (a0, m0, s0), (a1, m1, s1) = g0.encode(big), g1.encode(small)
    mem0, st0 = g0.decoder.prepare(a0, m0, s0)
    mem1, st1 = g1.decoder.prepare(a1, m1, s1)
    tokens = tf.fill([2], 1)  # <start>
    want, att = [], []
    for _ in range(5):
        lp0, st0, al0 = g0.decoder.step(tokens, st0, mem0)
        lp1, st1, _ = g1.decoder.step(tokens, st1, mem1)
        lp = combine_log_probs(tf.stack([lp0, lp1]), "product").numpy()
        lp[:, list(g0.banned_ids)] = -np.inf
        tokens = tf.constant(lp.argmax(-1), tf.int32)
        want.append(tokens.numpy())
        att.append(al0.numpy())
    want = np.stack(want, 1)
    for b in range(2):
        n = int(out["lengths"][b, 0])
        np.testing.assert_array_equal(out["tokens"][b, 0, :n], want[b, :n])
        np.testing.assert_allclose(out["attention"][b, 0, :n], np.stack(att, 1)[b, :n], atol=1e-5)
