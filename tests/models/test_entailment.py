"""ESIM-lite entailment classifier: features, attention, save/load in a fresh process."""

import json

import keras
import numpy as np
import pytest

from captioner.errors import InputError
from captioner.models.entailment import (LABELS, EntailmentClassifier, EntailmentEnsemble, entail_tokens,
                                         pair_features)
from captioner.text import Vocabulary
from support import fresh_python
from support.tiny_classifiers import ENTAILMENT_WORDS, tiny_entailment

WORDS, _model = ENTAILMENT_WORDS, tiny_entailment


def test_pair_features_hand_worked():
    p = entail_tokens("A man is playing a guitar")
    h = entail_tokens("A man is not playing")
    f = pair_features(p, h)
    # h in p: a, man, is, playing (4 of 5); p in h: a, man, is, playing, a (5 of 6)
    np.testing.assert_allclose(f[:2], [4 / 5, 5 / 6], rtol=1e-6)
    assert f[2] == pytest.approx(4 / 6)  # {a, man, is, playing} / {a, man, is, playing, guitar, not}
    assert f[3] == 0 and f[4] == pytest.approx(1 / 3) and f[5] == pytest.approx(1 / 3) and f[6] == 1
    assert f[7] == pytest.approx(5 / 6) and f[8] == 1.0  # the one missing word is a negation
    assert pair_features([], []).shape == (9,)


def test_entail_returns_labels_probabilities_and_attention():
    model = _model()
    out = model.entail(["A man is playing a guitar", "There is no woman"], ["A man is playing", "A woman sings"])
    assert [o.label in LABELS for o in out] == [True, True]
    for o in out:
        assert abs(sum(o.probabilities.values()) - 1) < 1e-5
        assert o.attention.shape == (len(o.hypothesis_tokens), len(o.premise_tokens))
        np.testing.assert_allclose(o.attention.sum(1), 1.0, atol=1e-5)  # each hypothesis word over the premise
    with pytest.raises(InputError, match="hypothesis has no words"):
        model.entail(["a man"], ["!!"])
    with pytest.raises(InputError, match="2 premises but 1"):
        model.entail(["a", "b"], ["c"])


def test_padding_does_not_change_predictions():
    model = _model()
    x, _, _ = model.prepare(["a man is playing"], ["a man is not playing"])
    p1, _ = model.predict_proba(x)
    x2 = {k: (np.pad(v, [[0, 0], [0, 4]]) if k != "features" else v) for k, v in x.items()}
    p2, _ = model.predict_proba(x2)
    np.testing.assert_allclose(p1, p2, atol=1e-5)


def test_learns_negation_and_survives_save_load_in_fresh_process(tmp_path):
    model = _model()
    rng = np.random.default_rng(0)
    subj = ["a man", "a woman"]
    verbs = ["is playing", "is singing"]
    prem, hyp, y = [], [], []
    for _ in range(96):
        s, v, _v2 = subj[rng.integers(2)], verbs[rng.integers(2)], verbs[rng.integers(2)]
        kind = rng.integers(3)
        prem.append(f"{s} {v}")
        if kind == 0:
            hyp.append(f"{s} {v}"), y.append(1)                    # ENTAILMENT: same sentence
        elif kind == 1:
            hyp.append(f"{s} {v.replace('is', 'is not')}"), y.append(2)  # CONTRADICTION: negated
        else:
            hyp.append("there is no guitar"), y.append(0)          # NEUTRAL: unrelated
    x, _, _ = model.prepare(prem, hyp)
    model.compile(optimizer=keras.optimizers.Adam(2e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, np.array(y), epochs=25, batch_size=32, verbose=0)
    probs, _ = model.predict_proba(x)
    assert (probs.argmax(-1) == np.array(y)).mean() > 0.9

    path = tmp_path / "entail.keras"
    model.save(path)
    expected = [o.probabilities for o in model.entail(prem[:4], hyp[:4])]
    code = (
        "import json, keras, captioner\n"
        f"m = keras.models.load_model({str(path)!r})\n"
        f"print(json.dumps([o.probabilities for o in m.entail({prem[:4]!r}, {hyp[:4]!r})]))\n"
    )
    got = json.loads(fresh_python.last_line(code))
    for g, e in zip(got, expected):
        np.testing.assert_allclose([g[k] for k in LABELS], [e[k] for k in LABELS], atol=1e-5)


def test_lexicon_features_with_a_hand_made_table():
    from captioner.text.wordnet import lexicon_features

    lex = {"lemma": {"playing": "play", "plays": "play"}, "general": {"man": ["person"], "guitar": ["instrument"]},
           "antonym": {"sitting": ["standing"]}}
    p = entail_tokens("A man plays a guitar")
    h = entail_tokens("A person is playing an instrument")
    f = lexicon_features(p, h, lex)
    # a, person, playing (lemma play), instrument are covered; is, an are not: 4 of 6
    assert f[0] == pytest.approx(4 / 6) and f[1] == 0
    assert lexicon_features(entail_tokens("A man is sitting"), entail_tokens("A man is standing"), lex)[1] == 0.5
    # the table travels in the config: the feature width follows it
    m = _model(lexicon=lex)
    assert m.num_features == 12 and EntailmentClassifier.from_config(m.get_config()).lexicon == lex
    x, _, _ = m.prepare(["a man is playing"], ["a man is not playing"])
    assert x["features"].shape == (1, 12)


def test_ensemble_averages_member_probabilities_and_attention_and_loads_in_fresh_process(tmp_path):
    members = [_model(seed=s) for s in (0, 1, 2)]
    ens = EntailmentEnsemble(members, training_config={"seeds": [0, 1, 2]})
    prem, hyp = ["A man is playing a guitar", "There is no woman"], ["A man is playing", "A woman is singing"]
    got = ens.entail(prem, hyp)
    each = [m.entail(prem, hyp) for m in members]
    for i, o in enumerate(got):
        mean = {k: np.mean([e[i].probabilities[k] for e in each]) for k in LABELS}
        assert o.probabilities == pytest.approx(mean, abs=1e-5)
        assert o.label == max(mean, key=mean.get)
        np.testing.assert_allclose(o.attention, np.mean([e[i].attention for e in each], 0), atol=1e-5)
    path = tmp_path / "ensemble.keras"
    ens.save(path)
    code = (
        "import json, captioner\n"
        "from captioner.models.entailment import load_entailment\n"
        f"m = load_entailment({str(path)!r})\n"
        f"print(type(m).__name__, len(m.members), json.dumps([o.probabilities for o in m.entail({prem!r}, {hyp!r})]))\n"
    )
    name, n, probs = fresh_python.last_line(code).split(" ", 2)
    assert (name, n) == ("EntailmentEnsemble", "3")
    for g, o in zip(json.loads(probs), got):
        assert g == pytest.approx(o.probabilities, abs=1e-5)


def test_ensemble_members_must_read_the_same_input():
    other = EntailmentClassifier.of(Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "cat")), embedding_dim=8,
                                 units=8, hidden_units=8)
    with pytest.raises(ValueError, match="member 2 reads its input differently"):
        EntailmentEnsemble([_model(), other])
    with pytest.raises(ValueError, match="at least one member"):
        EntailmentEnsemble([])


REL_TABLE = {"base": {"playing": ["play", "playing"], "plays": ["play"]}, "synonym": {},
             "antonym": {"sitting": ["standing"]}, "hypernym": {"man": {"person": 1}, "guitar": {"instrument": 2}},
             "parents": {"guitar": ["stringed_instrument.n.01"], "piano": ["stringed_instrument.n.01"]}}


def test_relations_bias_attention_save_and_pad(tmp_path):
    model = _model(relations=REL_TABLE)
    assert EntailmentClassifier.from_config(model.get_config()).relations == REL_TABLE
    x, _, _ = model.prepare(["a man plays a guitar"], ["a person is playing"])
    assert x["relations"].shape == (1, 5, 4, 5) and x["relations"].dtype == np.uint8
    p1, a1 = model.predict_proba(x)
    # padding the tokens and the relations alike changes nothing
    xp = {"premise": np.pad(x["premise"], [[0, 0], [0, 3]]), "hypothesis": np.pad(x["hypothesis"], [[0, 0], [0, 2]]),
          "features": x["features"], "relations": np.pad(x["relations"], [[0, 0], [0, 3], [0, 2], [0, 0]])}
    np.testing.assert_allclose(model.predict_proba(xp)[0], p1, atol=1e-5)
    # the relations move the attention: "person" (hypothesis word 2) looks more at "man" with them
    no_rel = dict(x, relations=np.zeros_like(x["relations"]))
    _, a0 = model.predict_proba(no_rel)
    assert a1[0, 1, 1] > a0[0, 1, 1]
    path = tmp_path / "rel.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict_proba(x)[0], p1, atol=1e-6)
    assert loaded.entail(["a man plays a guitar"], ["a person is playing"])[0].attention.shape == (4, 5)
    # the tables are read-only mappings, not dicts: Keras neither wraps their nested containers in
    # tracked ones nor walks them for weights at each load (9.9 s -> 1 s for the bundled ensemble)
    from keras.src.saving.saving_lib import _walk_saveable

    walked = {name for name, value in _walk_saveable(loaded) if isinstance(value, (list, dict, tuple))}
    assert "relations" not in walked and "lexicon" not in walked
    assert type(loaded.get_config()["relations"]) is dict and loaded.relations == REL_TABLE


def test_an_ensemble_saves_what_its_members_share_once_and_still_reads_the_old_layout(tmp_path):
    members = [_model(seed=s, relations=REL_TABLE) for s in (0, 1)]
    ens = EntailmentEnsemble(members)
    config = ens.get_config()
    assert set(config["shared"]) == {"vocabulary", "lexicon", "relations"}
    assert all("relations" not in m["config"] and "vocabulary" not in m["config"] for m in config["members"])
    again = EntailmentEnsemble.from_config(config)
    assert again.members[1].relations == REL_TABLE and list(again.vocabulary.tokens) == list(ens.vocabulary.tokens)
    old = {**config, "members": [keras.saving.serialize_keras_object(m) for m in members]}  # each member whole
    del old["shared"]
    assert EntailmentEnsemble.from_config(old).members[0].relations == REL_TABLE
    path = tmp_path / "e.keras"
    ens.save(path)
    loaded = keras.models.load_model(path)
    prem, hyp = ["A man is playing a guitar"], ["A person plays"]
    assert loaded.entail(prem, hyp)[0].probabilities == pytest.approx(ens.entail(prem, hyp)[0].probabilities, abs=1e-5)
