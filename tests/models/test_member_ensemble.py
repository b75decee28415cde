"""The one ensemble family (captioner.models.ensemble.MemberEnsemble): what every ensemble class
takes from it, checked on all three (translators, caption decoders, entailment classifiers)."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding.ensemble import combine_log_probs
from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.ensemble import MemberEnsemble
from captioner.models.entailment import LABELS, EntailmentClassifier, EntailmentEnsemble
from captioner.models.seq2seq import Seq2Seq
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary

WORDS = ("<pad>", "<start>", "<end>", "<unk>", "a", "man", "dog", "is", "playing", "no", "woman")


def _seq2seq(seed):
    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(WORDS)
    return Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=2, max_length=6)


def _decoder(seed):
    keras.utils.set_random_seed(seed)
    return CaptionDecoderModel.of(len(WORDS), 6, projection_dim=8, embedding_dim=8, units=8, attention_units=8,
                               dropout=0.0)


def _entail(seed):
    keras.utils.set_random_seed(seed)
    return EntailmentClassifier.of(Vocabulary(WORDS), embedding_dim=8, units=8, hidden_units=8)


FAMILY = [(Seq2SeqEnsemble, _seq2seq), (CaptionDecoderEnsemble, _decoder), (EntailmentEnsemble, _entail)]


@pytest.mark.parametrize("cls, make", FAMILY, ids=lambda x: getattr(x, "__name__", ""))
def test_every_ensemble_checks_its_members_alike(cls, make):
    assert issubclass(cls, MemberEnsemble)
    with pytest.raises(ValueError, match=rf"^{cls.what}: member 2 is a Dense, not a {cls.member_class.__name__}$"):
        cls([make(1), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match=rf"^{cls.what}: combine must be one of"):
        cls([make(1), make(2)], combine="vote")
    inner = cls([make(1), make(2)])
    with pytest.raises(ValueError, match="member 1 is a"):  # an ensemble is not a member
        cls([inner, make(3)])
    with pytest.raises(ValueError, match="at least"):
        cls([])


@pytest.mark.parametrize("cls, make", FAMILY, ids=lambda x: getattr(x, "__name__", ""))
def test_every_ensemble_saves_members_and_combine_and_loads_in_safe_mode(cls, make, tmp_path):
    ensemble = cls([make(1), make(2)], combine="mixture")
    config = ensemble.get_config()
    assert config["combine"] == "mixture" and len(config["members"]) == 2
    assert ("shared" in config) == bool(cls.SHARED)
    json.dumps(config)  # plain JSON: nothing pickled
    path = tmp_path / "ensemble.keras"
    ensemble.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is cls and loaded.combine == "mixture" and len(loaded.members) == 2
    for got, want in zip(loaded.members, ensemble.members):
        for a, b in zip(got.weights, want.weights):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_generating_ensembles_are_trained_member_by_member():
    with pytest.raises(NotImplementedError, match="trained member by member: train each Seq2Seq"):
        Seq2SeqEnsemble([_seq2seq(1)])({"source": np.zeros((1, 2), np.int32), "tokens": np.zeros((1, 2), np.int32)})
    with pytest.raises(NotImplementedError, match="train each CaptionDecoderModel"):
        CaptionDecoderEnsemble([_decoder(1), _decoder(2)])({"annotations": np.zeros((1, 4, 6), np.float32),
                                                            "tokens": np.ones((1, 2), np.int32)})


@pytest.mark.parametrize("combine", ["mixture", "product"])
def test_a_classifier_ensemble_combines_probabilities_by_the_decoders_rule(combine):
    members = [_entail(s) for s in (1, 2, 3)]
    ensemble = EntailmentEnsemble(members, combine=combine)
    premise, hypothesis = ["a man is playing", "no dog"], ["a woman is playing", "a dog"]
    inputs, _, _ = ensemble.prepare(premise, hypothesis)
    logits = [np.asarray(m(inputs)) for m in members]
    probs = [np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)
             for x in logits]
    if combine == "mixture":  # by hand: the mean of the distributions
        want = np.mean(probs, 0)
    else:  # by hand: the normalized geometric mean
        geo = np.exp(np.mean(np.log(probs), 0))
        want = geo / geo.sum(-1, keepdims=True)
    got = np.exp(np.asarray(ensemble(inputs)))
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(got, np.exp(combine_log_probs(tf.math.log(tf.constant(np.stack(probs))), combine)),
                               atol=1e-6)
    out = ensemble.entail(premise, hypothesis)
    assert [o.label for o in out] == [LABELS[int(i)] for i in want.argmax(-1)]


def test_an_entailment_ensemble_saved_before_combine_existed_loads_as_the_mixture(tmp_path):
    ensemble = EntailmentEnsemble([_entail(1), _entail(2)])
    config = ensemble.get_config()
    del config["combine"]  # the layout of the bundled sick_entailment.keras
    assert EntailmentEnsemble.from_config(config).combine == "mixture"
