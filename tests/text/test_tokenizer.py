"""Tests for captioner.text.tokenizer: regex words, characters, detokenization, tf twin."""

import unicodedata

import pytest

from captioner.text.tokenizer import char_tokenize, detokenize, tf_tokenize, tokenize


def test_english_lowercase_drops_punctuation():
    text = "A child in a pink dress is climbing up a set of stairs in an entry way ."
    assert tokenize(text) == "a child in a pink dress is climbing up a set of stairs in an entry way".split()


def test_keep_case_and_punctuation():
    assert tokenize("Hello, World!", lower=False, keep_punct=True) == ["Hello", ",", "World", "!"]
    assert tokenize("Hello, World!", lower=False) == ["Hello", "World"]


def test_inner_apostrophes_and_hyphens_stay_in_the_word():
    assert tokenize("L'Afrique, c'est aujourd'hui!") == ["l'afrique", "c'est", "aujourd'hui"]
    assert tokenize("Don't wear a t-shirt") == ["don't", "wear", "a", "t-shirt"]
    # Curly apostrophe is unified with the straight one.
    assert tokenize("l\u2019Afrique") == ["l'afrique"]


def test_stray_apostrophes_and_hyphens_are_punctuation():
    assert tokenize("'quoted' -- x- -y") == ["quoted", "x", "y"]
    assert tokenize("'quoted' -- x-", keep_punct=True) == ["'", "quoted", "'", "-", "-", "x", "-"]


def test_accents_and_other_scripts():
    assert tokenize("Straße, ÉTÉ naïve Café") == ["straße", "été", "naïve", "café"]
    # Devanagari combining marks must not split words.
    assert tokenize("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]


def test_nfc_normalisation():
    decomposed = unicodedata.normalize("NFD", "café")
    assert len(decomposed) == 5
    assert tokenize(decomposed) == ["café"]


def test_underscores_and_symbols():
    assert tokenize("snake_case $10 50%") == ["snake", "case", "10", "50"]
    assert tokenize("$10", keep_punct=True) == ["$", "10"]


def test_empty_and_whitespace():
    assert tokenize("") == []
    assert tokenize(" \t\n ") == []


def test_rejects_non_strings():
    with pytest.raises(TypeError):
        tokenize(None)


def test_char_tokenize_code_points_and_graphemes():
    assert char_tokenize("  ab  c ") == ["a", "b", " ", "c"]
    assert char_tokenize("AbC", lower=True) == ["a", "b", "c"]
    assert char_tokenize("नमस्ते") == ["न", "म", "स", "्", "त", "े"]
    clusters = char_tokenize("नमस्ते", graphemes=True)
    assert "".join(clusters) == "नमस्ते" and len(clusters) < 6
    assert char_tokenize(unicodedata.normalize("NFD", "é")) == ["é"]


@pytest.mark.parametrize(
    "sentence",
    [
        "A dog runs on the grass.",
        "Is it (really) a cat, or a dog?",
        'She said "hello" to me; I left.',
        "L'Afrique est grande: 50% des gens!",
        "It's a t-shirt... isn't it?",
        "The 'best' day/night",
    ],
)
def test_detokenize_inverts_tokenize_with_punctuation(sentence):
    assert detokenize(tokenize(sentence, lower=False, keep_punct=True)) == sentence


def test_detokenize_edge_cases():
    assert detokenize([]) == ""
    assert detokenize(["a", "", "b"]) == "a b"
    assert detokenize(["¿", "qué", "?"]) == "¿qué?"


TF_CASES = [
    "A child in a pink dress is climbing up a set of stairs in an entry way .",
    "L'Afrique, c'est grand!  Aujourd'hui -- t-shirt... 'quoted' don't",
    "a-b-c-d x--y -z z- 'a' _under_score_ 3.5 $10 e-mail's",
    "Deccan's $1.8bn deal: rates 5.25%, 45,000 jobs, 1,234,567 U.S. a1.b2 1.-2 9. 3.5.6 1,5-2,5",
    "Straße ÉTÉ naïve Café",
    "नमस्ते दुनिया",
    "tab\tnew\nline\u00a0nbsp\u2009thin",
    "",
    "   ",
]


@pytest.mark.parametrize("numbers", [False, True])
@pytest.mark.parametrize("keep_punct", [False, True])
@pytest.mark.parametrize("text", TF_CASES)
def test_tf_tokenize_matches_python(text, keep_punct, numbers):
    got = [t.decode("utf-8") for t in tf_tokenize(text, keep_punct=keep_punct, numbers=numbers).numpy()]
    assert got == tokenize(text, keep_punct=keep_punct, numbers=numbers)


def test_numbers_stay_whole_only_with_digits_on_both_sides():
    text = "A $1.8bn deal: 5.25%, 45,000 jobs in 2023, U.S. 9."
    assert tokenize(text, keep_punct=True, numbers=True) == [
        "a", "$", "1.8bn", "deal", ":", "5.25", "%", ",", "45,000", "jobs", "in", "2023", ",", "u", ".", "s", ".", "9", "."]
    assert tokenize(text, keep_punct=True)[1:5] == ["$", "1", ".", "8bn"]  # the default is unchanged
    assert detokenize(tokenize("a $1.8bn deal", keep_punct=True, numbers=True)) == "a $1.8bn deal"


def test_tf_tokenize_batch_is_ragged():
    import tensorflow as tf

    out = tf_tokenize(tf.constant(["A b", "", "c, d!"]), lower=False)
    assert isinstance(out, tf.RaggedTensor)
    assert out.to_list() == [[b"A", b"b"], [], [b"c", b"d"]]


def test_tf_detokenize_is_detokenize():
    """The graph twin attaches punctuation and alternates quotes exactly as the Python one."""
    import numpy as np
    import tensorflow as tf

    from captioner.text.tokenizer import tf_detokenize

    rows = [
        ["a", "dog", "(", "brown", ")", "runs", ",", "says", '"', "hi", '"', "."],
        ['"', "quoted", '"', "and", "'", "single", "'", "!", "$", "5", "and", "a", "/", "b"],
        ["ein", "hund", "läuft", "…", "«", "oui", "»", "?"],
        ["'", "'", "'", "x", '"', '"', "y", "", "z"],
        [],
        ["¿", "qué", "?", "#", "tag", "@", "me", "%", ";", "]"],
    ]
    rng = np.random.default_rng(0)
    vocab = ["a", "b", ".", ",", '"', "'", "(", ")", "/", "$", "%", "¿", "-"]
    rows += [list(rng.choice(vocab, size=rng.integers(0, 12))) for _ in range(40)]
    width = max(len(r) for r in rows)
    dense = [r + [""] * (width - len(r)) for r in rows]
    got = [s.decode("utf-8") for s in tf_detokenize(tf.constant(dense)).numpy()]
    assert got == [detokenize(r) for r in rows]
    ragged = tf.ragged.constant(rows, dtype=tf.string)
    assert [s.decode("utf-8") for s in tf_detokenize(ragged).numpy()] == got


def test_indefinite_article_follows_the_first_sound():
    from captioner.text.tokenizer import indefinite_article

    cases = {"cat": "a", "espresso": "an", "egyptian": "an", "hourglass": "an", "honest": "an", "horse": "a",
             "unicycle": "a", "uniform": "a", "umbrella": "an", "european": "a", "one": "a", "oystercatcher": "an",
             "Hourglass": "an", "": "a"}
    assert {w: indefinite_article(w) for w in cases} == cases


def test_tf_split_elisions_is_split_elisions():
    """One pattern, two readings (Python's regex, RE2 in an exported translator's graph)."""
    import tensorflow as tf

    from captioner.text.tokenizer import split_elisions, tf_split_elisions

    sentences = ["Jane visite l'Afrique, qu'elle aime jusqu'à l'été.", "Lorsqu'il s'ennuie, j'écoute d'abord.",
                 "I don't know", "", "l' ' d'1 qu'", "C'est l'heure: n'importe quoi, m'a-t-il dit."]
    for lower in (True, False):
        got = tf_split_elisions(tf_tokenize(tf.constant(sentences), lower=lower, keep_punct=True)).to_list()
        want = [split_elisions(tokenize(s, lower=lower, keep_punct=True)) for s in sentences]
        assert [[t.decode("utf-8") for t in row] for row in got] == want
    assert want[0][:5] == ["Jane", "visite", "l'", "Afrique", ","] and "qu'" in want[0] and "j'" in want[1]


@pytest.mark.parametrize("settings", [{}, {"split_elisions": True}, {"numbers": True, "keep_punct": True},
                                      {"lower": False, "keep_punct": False}, {"lower": True, "spm": "ignored here"}])
def test_a_word_preprocessor_reads_the_same_words_in_python_and_in_the_graph(settings):
    """Issue 70 item 2: a translator's tokenizer settings are one object whose Python and graph readings agree
    (the exported SavedModel and `Seq2Seq.translate` read through it), its words and its words as written."""
    import tensorflow as tf

    from captioner.text.tokenizer import WordPreprocessor

    pre = WordPreprocessor.of(settings)
    assert pre == WordPreprocessor(**{k: v for k, v in settings.items() if k != "spm"})
    sentences = ["Jane visite l'Afrique, qu'elle aime.", "Sales rose 5.25% to $1.8bn in the U.S.", "", "  ",
                 "Don't STOP -- it's 45,000 km!"]
    for python, graph in ((pre.tokens, pre.tf_tokens), (pre.as_written, pre.tf_as_written)):
        got = [[t.decode("utf-8") for t in row] for row in graph(tf.constant(sentences)).to_list()]
        assert got == [python(s) for s in sentences]
    assert pre.as_written("L'Afrique")[0] == "L'Afrique"
