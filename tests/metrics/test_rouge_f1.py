"""ROUGE-1/2/L F1 through rouge-score: hand-worked cases, and how the project's ROUGE-L compares."""

import pytest

from captioner.errors import InputError
from captioner.metrics.rouge import rouge_l
from captioner.metrics.rouge_f1 import RougeF1, corpus_rouge_f1, rouge_tool_description


@pytest.fixture(scope="module")
def scorer():
    return RougeF1()


def test_hand_worked_pair(scorer):
    # 6 tokens each, none longer than 3 letters (nothing to stem).
    # unigrams shared: the x2, cat, on, mat = 5 -> P = R = 5/6.
    # bigrams: ref {the cat, cat sat, sat on, on the, the mat}, hyp {the cat, cat is, is on, on the, the mat}:
    # 3 shared of 5 -> 0.6.  LCS "the cat on the mat" = 5 -> 5/6.
    s = scorer.score("the cat sat on the mat", "the cat is on the mat")
    assert s == pytest.approx({"rouge1": 5 / 6, "rouge2": 0.6, "rougeL": 5 / 6})


def test_f1_not_recall_weighted(scorer):
    # ref 2 tokens, hyp 4 tokens containing both: P = 1/2, R = 1 -> F1 = 2/3 (beta = 1).
    assert scorer.score("cat mat", "cat dog mat hat")["rouge1"] == pytest.approx(2 / 3)
    assert scorer.score("cat mat", "cat dog mat hat")["rougeL"] == pytest.approx(2 / 3)


def test_tokenizer_lowercases_drops_punctuation_and_stems(scorer):
    assert scorer.tokenize("U.S. Stocks rallied -- 76%!") == ["u", "s", "stock", "ralli", "76"]
    assert scorer.score("Stocks rallied", "stock rallies")["rouge1"] == pytest.approx(1.0)
    assert RougeF1(use_stemmer=False).score("Stocks rallied", "stock rallies")["rouge1"] == 0.0
    assert scorer.tokenize("café naïve") == ["caf", "na", "ve"]  # non-ASCII letters split words


def test_empty_hypothesis_and_multi_reference(scorer):
    assert scorer.score("a headline", "") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    # several references: per type, the best F1 (rouge-score's score_multi)
    best = scorer.score(["dog bites man", "man bites dog"], "man bites dog")
    assert best == pytest.approx({"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0})
    with pytest.raises(InputError):
        scorer.score([], "x")


def test_corpus_is_mean_of_pair_f1_times_100():
    result = corpus_rouge_f1(["the cat sat", "a dog ran"], ["the cat sat", "birds fly"])
    assert result.scores == pytest.approx({"rouge1": 50.0, "rouge2": 50.0, "rougeL": 50.0})
    assert result.per_item["rouge1"] == [1.0, 0.0]
    assert result["rougeL"] == pytest.approx(50.0)
    assert "Porter stemmer on" in result.tool and "rouge-score 0.1.2" in result.tool
    assert "off" in rouge_tool_description(False)
    with pytest.raises(InputError):
        corpus_rouge_f1(["a"], ["a", "b"])


TEXTS = [
    ("Ad sales boost Time Warner profit", "Quarterly profits at US media giant TimeWarner jumped 76% to $1.13bn"),
    ("Over 4 Million Americans Roll Up Sleeves", "Health experts said it is too early -- U.S. ordered 171 million doses."),
    ("New On Netflix: 'Persuasion,' 'Ozark'", "The streaming service's movies (and shows) arriving: re-runs & more..."),
]


@pytest.mark.parametrize("reference,source", TEXTS)
def test_cached_token_path_equals_published_scorer(scorer, reference, source):
    words = scorer.tokenize_words(source)
    ref_tokens = scorer.tokenize(reference)
    for n in range(1, len(words) + 1):
        hyp_tokens = [t for w in words[:n] for t in w]
        fast = scorer.score_tokens(ref_tokens, hyp_tokens)
        assert fast == pytest.approx(scorer.score(reference, " ".join(source.split()[:n])), abs=1e-12)


@pytest.mark.parametrize("reference,candidate", [
    ("the cat sat on the mat", "the cat is on the mat"),
    ("a b c d e", "e d c b a"),
    ("police find the man in the car", "the man in the car was found by police"),
    ("x y z", "p q"),
])
def test_project_rouge_l_agrees_with_beta_1_on_plain_lowercase_words(scorer, reference, candidate):
    # Same LCS; the project's coco-caption ROUGE-L weighs recall by beta = 1.2, rouge-score's F1
    # is beta = 1: with beta = 1, no stemming to do (all words <= 3 letters or unchanged by
    # Porter) and plain lower-case words, they agree exactly.
    google = RougeF1(use_stemmer=False).score(reference, candidate)["rougeL"]
    assert rouge_l(candidate, [reference], beta=1.0) == pytest.approx(google, abs=1e-12)


def test_project_rouge_l_differs_as_documented(scorer):
    # 1. beta: P = 1/2, R = 1 -> F1 = 0.667 but F(beta=1.2) = 2.44 * 0.5 / (1 + 1.44 * 0.5) = 0.709
    assert scorer.score("cat mat", "cat dog mat hat")["rougeL"] == pytest.approx(2 / 3)
    assert rouge_l("cat dog mat hat", ["cat mat"]) == pytest.approx(2.44 * 0.5 / 1.72)
    # 2. tokens: whitespace only, so case, punctuation and inflection count in the project's
    assert rouge_l("Stocks rallied.", ["stock rallies"], beta=1.0) == 0.0
    assert scorer.score("stock rallies", "Stocks rallied.")["rougeL"] == pytest.approx(1.0)
