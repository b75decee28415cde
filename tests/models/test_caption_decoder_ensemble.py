"""CaptionDecoderEnsemble: several caption decoders in the one beam search. A hypothesis's
log-probability is the sum of the members' combined per-step distributions (checked against
teacher forcing of each member), identical members decode as one, the members must match, and an
ImageCaptioner holding an ensemble saves, loads (safe mode) and captions as one file."""

import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import captioner  # noqa: F401  (registers the classes)
from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.text.vocabulary import END_ID, PAD_ID, SPECIAL_TOKENS, START_ID, Vocabulary
from support.backbones import tiny_backbone
from support.tiny_captioner import WORDS


V = len(SPECIAL_TOKENS) + len(WORDS)


def member(seed, vocab_size=V, annotation_dim=12, kind="attention"):
    keras.utils.set_random_seed(seed)
    return CaptionDecoderModel.of(vocab_size, annotation_dim=annotation_dim, kind=kind, projection_dim=8,
                               embedding_dim=8, units=16, attention_units=8, dropout=0.0)


def annotations(batch=3, regions=16, dim=12):
    return np.random.default_rng(1).normal(size=(batch, regions, dim)).astype(np.float32)


def teacher_forced_log_prob(members, feats, tokens, length, combine):
    """Sum over the generated steps of the combined log P(token), each member teacher-forced."""
    inputs = np.full((1, length), PAD_ID, np.int32)
    inputs[0, 0] = START_ID
    inputs[0, 1:] = tokens[:length - 1]
    per_member = [tf.nn.log_softmax(m({"annotations": feats, "tokens": inputs}), -1)[0] for m in members]  # (T, V)
    stacked = tf.stack(per_member)  # (K, T, V)
    if combine == "product":
        combined = tf.nn.log_softmax(tf.reduce_mean(stacked, 0), -1)
    else:
        combined = tf.reduce_logsumexp(stacked, 0) - np.log(len(members))
    return float(sum(combined[t, tokens[t]] for t in range(length)))


@pytest.mark.parametrize("combine", ["product", "mixture"])
def test_a_hypothesis_scores_the_members_combined_distribution(combine):
    members = [member(1), member(2), member(3)]
    ensemble = CaptionDecoderEnsemble(members, combine=combine)
    feats = annotations()
    out = ensemble.generate(feats, beam_size=2, alpha=0.0, max_length=6).numpy()
    for b in range(feats.shape[0]):
        length = int(out["lengths"][b, 0])
        tokens = out["tokens"][b, 0]
        expected = teacher_forced_log_prob(members, feats[b:b + 1], tokens, length, combine)
        np.testing.assert_allclose(out["log_probs"][b, 0], expected, rtol=1e-4, atol=1e-4)
        if out["finished"][b, 0]:
            assert tokens[length - 1] == END_ID


def test_identical_members_decode_as_the_single_decoder():
    single = member(4)
    twin = CaptionDecoderModel.from_config(single.get_config())
    twin.set_weights(single.get_weights())
    ensemble = CaptionDecoderEnsemble([single, twin])
    feats = annotations()
    a = single.generate(feats, beam_size=3, alpha=0.5, max_length=6).numpy()
    b = ensemble.generate(feats, beam_size=3, alpha=0.5, max_length=6).numpy()
    np.testing.assert_array_equal(a["tokens"], b["tokens"])
    np.testing.assert_allclose(a["log_probs"], b["log_probs"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a["attention"], b["attention"], atol=1e-6)  # the members' mean attention
    assert ensemble.feature == "grid" and ensemble.kind == "attention" and ensemble.vocab_size == V


def test_members_must_match():
    with pytest.raises(ValueError, match="at least two"):
        CaptionDecoderEnsemble([member(1)])
    with pytest.raises(ValueError, match="vocab_size"):
        CaptionDecoderEnsemble([member(1), member(2, vocab_size=V + 1)])
    with pytest.raises(ValueError, match="annotation_dim"):
        CaptionDecoderEnsemble([member(1), member(2, annotation_dim=10)])
    with pytest.raises(ValueError, match="kind"):
        CaptionDecoderEnsemble([member(1), member(2, kind="fc-init")])
    with pytest.raises(ValueError, match="not a CaptionDecoderModel"):
        CaptionDecoderEnsemble([member(1), keras.layers.Dense(3)])
    with pytest.raises(ValueError, match="combine"):
        CaptionDecoderEnsemble([member(1), member(2)], combine="vote")
    with pytest.raises(NotImplementedError, match="member by member"):
        CaptionDecoderEnsemble([member(1), member(2)])({"annotations": annotations(), "tokens": np.ones((3, 2))})


def test_an_image_captioner_with_an_ensemble_saves_and_loads_as_one_file(tmp_path):
    vocab = Vocabulary(SPECIAL_TOKENS + tuple(WORDS))
    model = ImageCaptioner(tiny_backbone(), CaptionDecoderEnsemble([member(1), member(2)]), vocab, beam_size=2,
                           alpha=0.5, max_length=6)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    before = model.generate(pixels)
    path = tmp_path / "ensemble.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.save(path)
    loaded = keras.models.load_model(path)  # safe mode
    assert isinstance(loaded.decoder, CaptionDecoderEnsemble) and len(loaded.decoder.members) == 2
    after = loaded.generate(pixels)
    np.testing.assert_array_equal(before["tokens"], after["tokens"])
    np.testing.assert_allclose(before["scores"], after["scores"], rtol=1e-5)
    captions = loaded.caption(list(pixels))
    steps = int(after["lengths"][0, 0])  # the words, then <end> when the caption finished within max_length
    assert captions[0].attention.shape == (steps, 4, 4) and steps in (len(captions[0].tokens), len(captions[0].tokens) + 1)
    np.testing.assert_allclose(captions[0].attention.sum((1, 2)), 1.0, rtol=1e-4)
    # the graph path (`call`: what export and serving trace) decodes the same
    np.testing.assert_array_equal(loaded(pixels)["tokens"].numpy(), after["tokens"])
