"""captioner.text.wordnet: the one WordNet loader, and KIM's word relations (hand-worked
tables, and built from WordNet when it is installed)."""

import json

import pytest

from captioner.text.wordnet import RELATIONS, WordRelations, build_relations, load_wordnet


def test_meteor_and_entailment_share_the_loader():
    import captioner.metrics.caption_metrics as caption_metrics
    import captioner.models.entailment as entailment

    assert caption_metrics.load_wordnet is load_wordnet
    assert entailment.WordRelations is WordRelations and entailment.RELATIONS is RELATIONS
    wordnet, reason = load_wordnet()
    assert (wordnet is None) != (reason is None)


REL_TABLE = {"base": {"playing": ["play", "playing"], "plays": ["play"]}, "synonym": {},
             "antonym": {"sitting": ["standing"]}, "hypernym": {"man": {"person": 1}, "guitar": {"instrument": 2}},
             "parents": {"guitar": ["stringed_instrument.n.01"], "piano": ["stringed_instrument.n.01"]}}


def test_word_relations_hand_worked():
    w = WordRelations(REL_TABLE)
    assert RELATIONS == ("synonym", "antonym", "hypernym", "hyponym", "co-hyponym")
    assert w.pair("plays", "playing").tolist() == [8, 0, 0, 0, 0]       # same base form
    assert w.pair("standing", "sitting").tolist() == [0, 8, 0, 0, 0]    # antonyms either way round
    assert w.pair("man", "person").tolist() == [0, 0, 7, 0, 0]          # 1 edge up: 1 - 1/8
    assert w.pair("instrument", "guitar").tolist() == [0, 0, 0, 6, 0]   # the hypothesis word is more specific
    assert w.pair("guitar", "piano").tolist() == [0, 0, 0, 0, 8]        # a parent in common
    assert w.pair("man", "guitar").tolist() == [0, 0, 0, 0, 0]
    m = w.matrix(["a", "man"], ["person"], 3, 2)
    assert m.shape == (3, 2, 5) and m[1, 0, 2] == 7 and m.sum() == 7
    assert w.named_pairs(["a", "man", "plays", "a", "guitar"], ["a", "person", "playing", "piano"]) == [
        ("man", "person", "hypernym", 7 / 8), ("plays", "playing", "synonym", 1.0), ("guitar", "piano", "co-hyponym", 1.0)]


def test_build_relations_from_wordnet():
    wordnet, reason = load_wordnet()
    if wordnet is None:
        pytest.skip(reason)
    words = "a is banana fruit big small guitar piano sawing cutting man person dog animal".split()
    table = build_relations(words, wordnet)
    json.dumps(table)  # it travels in the model's config
    w = WordRelations(table)
    assert w.pair("banana", "fruit")[2] > 0 and w.pair("fruit", "banana")[3] > 0  # hypernym / hyponym
    assert w.pair("dog", "animal")[2] > 0 and w.pair("man", "person")[2] > 0
    assert w.pair("big", "small")[1] == 8 and w.pair("small", "big")[1] == 8     # antonyms
    assert w.pair("guitar", "piano")[4] == 8                                      # co-hyponyms
    assert w.pair("sawing", "cutting")[2] > 0                                     # via the base form "saw"
    assert "a" not in table["parents"] and "is" not in table["base"]              # function words left out
    assert all(h in {"banana", "fruit", "big", "small", "guitar", "piano", "saw", "cut", "cutting", "man",
                     "person", "dog", "animal"} for hyp in table["hypernym"].values() for h in hyp)
