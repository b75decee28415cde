"""The n-best rescorer inside a Seq2Seq / Seq2SeqEnsemble: it re-ranks the one beam search's
hypotheses in `translate`, lives in the model's config (saved, loaded in a fresh process in safe
mode, same outputs), and models without one behave exactly as before."""

import json

import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.decoding.rescoring import LexiconRescorer
from captioner.models.seq2seq import Seq2Seq
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary
from support import fresh_python

LATIN = tuple("abcdefghijklmnopqrstuvwxyz")
DEVANAGARI = tuple("अकगतनमरलसािीे्ं")
WORDS = ["namaste", "ghar", "ja", "raha", "kal"]


def _tiny(seed, **kw):
    keras.utils.set_random_seed(seed)
    specials = ("<pad>", "<start>", "<end>", "<unk>")
    args = dict(embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=4, max_length=6,
                max_source_length=20, source_tokenizer={"chars": True, "lower": True},
                target_tokenizer={"chars": True, "lower": False}, replace_unk=False)
    args.update(kw)
    return Seq2Seq.of(Vocabulary(specials + LATIN), Vocabulary(specials + DEVANAGARI), **args)


def _dump(results):
    return [[(t, round(s, 4)) for t, s in r.hypotheses] for r in results]


@pytest.fixture(scope="module")
def plain():
    return _tiny(0)


def test_a_known_word_moves_up_by_its_weight(plain):
    before = plain.translate(WORDS)
    second = [r.hypotheses[1] for r in before]  # the beam's 2nd best of each word
    model = _tiny(0, rescorer=LexiconRescorer({t: 1 for t, _ in second}, lm_order=0, weights={"known": 100.0}))
    after = model.translate(WORDS)
    known = {t for t, _ in second}
    moved = 0
    for b, a, (text, _) in zip(before, after, second):
        # every hypothesis gains 100 if its text is in the word list (two beams may spell one text,
        # and a word's best may be another word's 2nd best), then a stable sort: the rest keep the
        # beam's order; model_scores are the model's own
        order = sorted(range(len(b.hypotheses)), key=lambda i: -(b.hypotheses[i][1] + 100.0 * (b.hypotheses[i][0] in known)))
        top_text, top_score = b.hypotheses[order[0]]
        assert a.text == top_text and a.score == pytest.approx(top_score + 100.0, abs=1e-6)  # a known word wins
        moved += a.text == text != b.text
        assert [t for t, _ in a.hypotheses] == [b.hypotheses[i][0] for i in order]
        assert [s for _, s in a.hypotheses] == pytest.approx(
            [b.hypotheses[i][1] + 100.0 * (b.hypotheses[i][0] in known) for i in order], abs=1e-6)
        assert a.model_scores == [b.hypotheses[i][1] for i in order]
        # the tokens (and alignment) are the chosen hypothesis's
        assert "".join(a.tokens) == a.text and a.attention.shape[1] == len(a.source_tokens)
    assert moved >= 1  # the 2nd best moved up to first for some word
    # rescore=False: the beam's own ranking
    assert _dump(model.translate(WORDS, rescore=False)) == _dump(before)
    assert all(r.model_scores is None for r in before)


def test_old_configs_have_no_rescorer_and_decode_as_before(plain, tmp_path):
    config = plain.get_config()
    assert "rescorer" not in config and plain.rescorer is None  # a model of before: the same config
    path = tmp_path / "old.keras"
    plain.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.rescorer is None and "rescorer" not in loaded.get_config()
    assert _dump(loaded.translate(WORDS)) == _dump(plain.translate(WORDS))
    ens = Seq2SeqEnsemble([plain, _tiny(1)])
    assert "rescorer" not in ens.get_config() and ens.rescorer is None
    assert all(r.model_scores is None for r in ens.translate(WORDS))


def test_save_load_in_a_fresh_process_in_safe_mode_gives_the_same_outputs(plain, tmp_path):
    lm_words = {"नमस्ते": 3, "घर": 2, "जा": 5, "रहा": 4, "कल": 1, "कमल": 1, "नमक": 2}
    rescorer = LexiconRescorer(lm_words, lm_order=3, weights={"lm": 0.5, "known": 1.0, "length": -0.1})
    ens = Seq2SeqEnsemble.of([plain, _tiny(1)], beam_size=5, rescorer=rescorer)
    plain_out = ens.translate(WORDS, rescore=False)
    want = ens.translate(WORDS)
    assert [r.model_scores for r in want] != [None] * len(WORDS)
    assert _dump(want) != _dump(plain_out)  # the LM moved something in this tiny case
    for w, p in zip(want, plain_out):
        assert sorted(w.model_scores) == sorted(s for _, s in p.hypotheses)
    path = tmp_path / "rescored.keras"
    ens.save(path)
    code = (
        "import json, keras, captioner\n"
        f"m = keras.models.load_model({str(path)!r}, safe_mode=True)\n"
        f"out = m.translate({WORDS!r})\n"
        "print(json.dumps({'rescorer': m.rescorer.get_config(), 'beam': m.beam_size, 'hyps': "
        "[[(t, round(s, 4)) for t, s in o.hypotheses] for o in out], "
        "'model': [[round(s, 4) for s in o.model_scores] for o in out]}, ensure_ascii=False))\n"
    )
    got = json.loads(fresh_python.last_line(code))
    assert got["rescorer"] == json.loads(json.dumps(rescorer.get_config())) and got["beam"] == 5
    assert [[t for t, _ in h] for h in got["hyps"]] == [[t for t, _ in h] for h in _dump(want)]
    np.testing.assert_allclose([[s for _, s in h] for h in got["hyps"]], [[s for _, s in h] for h in _dump(want)],
                               atol=1e-3)
    np.testing.assert_allclose(got["model"], [[round(s, 4) for s in r.model_scores] for r in want], atol=1e-3)
    # a single model carries its rescorer through save/load as well
    single = _tiny(0, rescorer=rescorer)
    single.save(tmp_path / "single.keras")
    again = keras.models.load_model(tmp_path / "single.keras")
    assert again.rescorer.get_config() == rescorer.get_config()
    assert _dump(again.translate(WORDS)) == _dump(single.translate(WORDS))


def test_export_refuses_a_model_with_a_rescorer(plain):
    from captioner.export.saved_model import TranslatorModule

    with pytest.raises(ValueError, match="rescorer"):
        TranslatorModule(_tiny(0, rescorer=LexiconRescorer(["क"], lm_order=0)))
