"""Seq2SeqEnsemble: one .keras file of several Seq2Seq members that loads in safe mode and
decodes like a Seq2Seq (translate, n-best, attention), with its checks on the members."""

import keras
import numpy as np
import pytest

from captioner.models.seq2seq import Seq2Seq, Translator, load_translator
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary

WORDS = [chr(ord("a") + i) for i in range(8)]


def _tiny(seed, words=WORDS, units=32, **kw):
    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple(words))
    args = dict(embedding_dim=16, units=units, attention_units=16, dropout=0.0, beam_size=3, alpha=1.0,
                max_length=8, source_tokenizer={"keep_punct": False}, target_tokenizer={"keep_punct": False})
    args.update(kw)
    return Seq2Seq.of(vocab, vocab, **args)


SENTENCES = ["a b c d", "h g", "e", "", "a a a b b"]


def test_ensemble_of_one_translates_like_its_member():
    member = _tiny(0)
    ensemble = Seq2SeqEnsemble([member])
    for got, want in zip(ensemble.translate(SENTENCES), member.translate(SENTENCES)):
        assert got.text == want.text
        assert [t for t, _ in got.hypotheses] == [t for t, _ in want.hypotheses]
        np.testing.assert_allclose([s for _, s in got.hypotheses], [s for _, s in want.hypotheses], atol=1e-5)


def test_save_load_same_outputs_and_settings(tmp_path):
    ensemble = Seq2SeqEnsemble.of([_tiny(1), _tiny(2, units=24)], combine="mixture", beam_size=4, alpha=0.5)
    assert (ensemble.beam_size, ensemble.alpha, ensemble.max_length) == (4, 0.5, 8)
    path = tmp_path / "ensemble.keras"
    ensemble.save(path)
    loaded = keras.models.load_model(path)  # safe mode
    # a Translator (what every translation command loads), not a Seq2Seq network it would train
    assert isinstance(loaded, Seq2SeqEnsemble) and isinstance(loaded, Translator) and not isinstance(loaded, Seq2Seq)
    assert isinstance(load_translator(path), Seq2SeqEnsemble)
    assert loaded.combine == "mixture" and len(loaded.members) == 2 and loaded.beam_size == 4
    for got, want in zip(loaded.translate(SENTENCES), ensemble.translate(SENTENCES)):
        assert got.text == want.text
        assert [t for t, _ in got.hypotheses] == [t for t, _ in want.hypotheses]
        if want.attention is not None:
            np.testing.assert_allclose(got.attention, want.attention, atol=1e-6)
    copy = loaded.inference_copy()
    assert [t.text for t in copy.translate(SENTENCES)] == [t.text for t in ensemble.translate(SENTENCES)]


def test_members_must_agree():
    with pytest.raises(ValueError, match="vocabularies"):
        Seq2SeqEnsemble([_tiny(0), _tiny(1, words=WORDS[:-1])])
    with pytest.raises(ValueError, match="source_tokenizer"):
        Seq2SeqEnsemble([_tiny(0), _tiny(1, source_tokenizer={"keep_punct": True})])
    with pytest.raises(ValueError, match="combine"):
        Seq2SeqEnsemble([_tiny(0)], combine="vote")
    with pytest.raises(NotImplementedError):
        Seq2SeqEnsemble([_tiny(0)])({"source": np.zeros((1, 2), np.int32), "tokens": np.zeros((1, 2), np.int32)})
