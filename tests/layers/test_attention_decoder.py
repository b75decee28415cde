import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention
from captioner.layers.attention_decoder import AttentionDecoder

CONFIGS = [
    dict(cell="lstm", context="attention", init_state="mean", gate=True, deep_output=True),
    dict(cell="gru", context="attention", init_state="given", gate=False, deep_output=True, maxout=True),
    dict(cell="lstm", context="concat", init_state="mean", deep_output=True),
    dict(cell="lstm", context="none", init_state="zero", deep_output=False),
    dict(cell="lstm", context="none", init_state="given", gate=False, deep_output=False),  # the language model
]


def _decoder(**kw):
    dec = AttentionDecoder.of(vocab_size=11, embedding_dim=6, units=8, attention_units=5, **kw)
    dec.build((None, None, 7))
    return dec


@pytest.mark.parametrize("config", CONFIGS)
def test_teacher_forcing_equals_stepwise_decoding(config):
    """call() over a sequence must give the logits that step() gives one token at a time."""
    keras.utils.set_random_seed(0)
    dec = _decoder(**config)
    rng = np.random.default_rng(0)
    ann = rng.normal(size=(3, 4, 7)).astype("float32")
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], bool)
    tokens = rng.integers(0, 11, size=(3, 5)).astype("int32")
    init = {"h": rng.normal(size=(3, 8)).astype("float32"), "c": rng.normal(size=(3, 8)).astype("float32")}
    logits, alphas = dec(tokens, ann, annotation_mask=mask, initial_state=init)
    assert logits.shape == (3, 5, 11) and alphas.shape == (3, 5, 4)
    memory, state = dec.prepare(ann, mask, init)
    for t in range(5):
        log_probs, state, alpha = dec.step(tokens[:, t], state, memory)
        np.testing.assert_allclose(log_probs, tf.nn.log_softmax(logits[:, t]), atol=1e-5)
        np.testing.assert_allclose(alpha, alphas[:, t], atol=1e-6)
    # attention never looks at masked annotations and sums to one
    np.testing.assert_allclose(alphas.numpy().sum(-1), 1.0, atol=1e-5)
    assert np.all(alphas.numpy()[~np.broadcast_to(mask[:, None, :], alphas.shape)] < 1e-6)
    # return_state: the state after the last step is step()'s, and reading the sequence in two
    # windows with it carried over gives the same logits (a language model's long texts)
    same, _, final = dec(tokens, ann, annotation_mask=mask, initial_state=init, return_state=True)
    np.testing.assert_allclose(same, logits, atol=1e-6)
    np.testing.assert_allclose(final["h"], state["h"], atol=1e-5)
    np.testing.assert_allclose(final["c"], state["c"], atol=1e-5)
    if config["init_state"] == "given":
        first, _, mid = dec(tokens[:, :2], ann, annotation_mask=mask, initial_state=init, return_state=True)
        second, _ = dec(tokens[:, 2:], ann, annotation_mask=mask, initial_state=mid)
        np.testing.assert_allclose(np.concatenate([first, second], 1), logits, atol=1e-5)


def _pointer_inputs(rng, batch=3, regions=4, steps=5, vocab=11):
    ann = rng.normal(size=(batch, regions, 7)).astype("float32")
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], bool)[:batch, :regions]
    tokens = rng.integers(0, vocab, size=(batch, steps)).astype("int32")
    init = {"h": rng.normal(size=(batch, 8)).astype("float32"), "c": np.zeros((batch, 8), "float32"),
            "copy_ids": np.array([[5, 7, 5, 3], [9, 4, 0, 0], [6, 0, 0, 0]], np.int32)[:batch, :regions]}
    return ann, mask, tokens, init


def _distribution_stepping_like_teacher_forcing(dec, tokens, ann, mask, init):
    """A copying decoder's call(): (log P, alphas), checked to be a distribution that step() gives
    one token at a time."""
    log_p, alphas = dec(tokens, ann, annotation_mask=mask, initial_state=init)
    np.testing.assert_allclose(np.exp(log_p.numpy()).sum(-1), 1.0, atol=1e-5)
    memory, state = dec.prepare(ann, mask, init)
    for t in range(tokens.shape[1]):
        step_log_p, state, alpha = dec.step(tokens[:, t], state, memory)
        np.testing.assert_allclose(step_log_p, log_p[:, t], atol=1e-5)
        np.testing.assert_allclose(alpha, alphas[:, t], atol=1e-6)
    return log_p, alphas


def test_pointer_decoder_is_a_normalized_mixture_and_steps_like_teacher_forcing():
    """pointer=True: call() and step() give the same log P, a distribution (sums to 1), that is
    P_vocab when the switch is pinned open (p_gen = 1) and the attention scattered onto the copy
    ids when it is pinned shut (p_gen = 0): two source positions of one id add up."""
    keras.utils.set_random_seed(0)
    dec = _decoder(**{**CONFIGS[1], "pointer": True})
    ann, mask, tokens, init = _pointer_inputs(np.random.default_rng(1))
    log_p, alphas = _distribution_stepping_like_teacher_forcing(dec, tokens, ann, mask, init)
    kernel, _ = dec.switch.get_weights()
    dec.switch.set_weights([np.zeros_like(kernel), np.array([-100.0], "float32")])  # p_gen = 0: copy only
    log_p, alphas = dec(tokens, ann, annotation_mask=mask, initial_state=init)
    p, a = np.exp(log_p.numpy()), alphas.numpy()
    np.testing.assert_allclose(p[0, :, 5], a[0, :, 0] + a[0, :, 2], atol=1e-5)  # id 5 at positions 0 and 2
    np.testing.assert_allclose(p[0, :, 7], a[0, :, 1], atol=1e-5)
    np.testing.assert_allclose(p[2, :, 6], 1.0, atol=1e-5)  # one real position
    assert p[1, :, 8].max() < 1e-6  # an id no source position holds
    dec.switch.set_weights([np.zeros_like(kernel), np.array([100.0], "float32")])  # p_gen = 1: the vocabulary
    log_p, _ = dec(tokens, ann, annotation_mask=mask, initial_state=init)
    plain = AttentionDecoder.from_config({**dec.get_config(), "pointer": False})
    plain.build((None, None, 7))
    plain.set_weights(dec.get_weights()[:len(plain.get_weights())])
    logits, _ = plain(tokens, ann, annotation_mask=mask, initial_state=init)
    np.testing.assert_allclose(log_p, tf.nn.log_softmax(logits), atol=1e-4)


def test_pointer_decoder_needs_its_copy_ids_and_attention():
    with pytest.raises(ValueError, match="context='attention'"):
        AttentionDecoder.of(10, context="none", init_state="given", pointer=True)
    dec = _decoder(**{**CONFIGS[1], "pointer": True})
    ann, mask, _, init = _pointer_inputs(np.random.default_rng(0))
    with pytest.raises(ValueError, match="copy_ids"):
        dec.prepare(ann, mask, {"h": init["h"]})
    assert AttentionDecoder.from_config(dec.get_config()).pointer
    assert "pointer" not in _decoder(**CONFIGS[1]).get_config()  # configs of models of before: unchanged


def test_additive_attention_hand_case():
    """With v = 1, W = 0, U = identity the scores are sum(tanh(a_i)); softmax by hand."""
    att = AdditiveAttention(2)
    att.build((None, 3), (None, None, 2))
    att.query_dense.set_weights([np.zeros((3, 2), "float32")])
    att.key_dense.set_weights([np.eye(2, dtype="float32"), np.zeros(2, "float32")])
    att.score_dense.set_weights([np.ones((2, 1), "float32")])
    ann = np.array([[[0.0, 0.0], [1.0, 1.0]]], "float32")
    context, alpha = att(np.zeros((1, 3), "float32"), att.project_keys(ann), ann)
    e = np.array([0.0, 2 * np.tanh(1.0)])
    expected = np.exp(e) / np.exp(e).sum()
    np.testing.assert_allclose(alpha[0], expected, atol=1e-6)
    np.testing.assert_allclose(context[0], expected[1] * np.ones(2), atol=1e-6)


def test_config_round_trip():
    dec = _decoder(**CONFIGS[1])
    clone = AttentionDecoder.from_config(dec.get_config())
    assert clone.get_config() == dec.get_config()


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="cell"):
        AttentionDecoder.of(10, cell="rnn")


def test_doubly_stochastic_penalty_hand_worked():
    from captioner.layers.attention_decoder import doubly_stochastic_penalty

    # 2 real steps (the third is padding) over 3 annotations, the third of them padding too
    alphas = np.array([[[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [0.9, 0.1, 0.0]]], np.float32)
    steps = np.array([[True, True, False]])
    # totals over real steps: 0.7, 1.3, 0 -> 0.3^2 + 0.3^2 (+ 1^2 for the padded annotation)
    got = doubly_stochastic_penalty(alphas, steps, np.array([[True, True, False]])).numpy()
    np.testing.assert_allclose(got, [0.18], atol=1e-6)
    np.testing.assert_allclose(doubly_stochastic_penalty(alphas, steps).numpy(), [1.18], atol=1e-6)
    assert doubly_stochastic_penalty(tf.cast(alphas, tf.bfloat16), steps).dtype == tf.float32
