"""BBC News article -> headline adapter and the duplicate-aware dev split."""

import pytest

from captioner.data.headlines import (
    HeadlinePair,
    aligned_positions,
    duplicate_groups,
    load_bbc_headlines,
    split_bbc_headlines,
    split_headlines,
)
from captioner.errors import InputError


def _write(root, rel, data):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_reads_headline_and_article(tmp_path):
    _write(tmp_path, "business/001.txt", "Ad sales boost profit\n\nProfits jumped 76%.\n\nSales rose 2%.\n")
    _write(tmp_path, "tech/002.txt", "\n  Phones get smaller  \r\n\r\nA phone.\r\n")
    _write(tmp_path, "tech/003.txt", "Headline only\n\n")
    _write(tmp_path, "tech/004.txt", "")
    _write(tmp_path, "README.TXT", "not an article")
    corpus = load_bbc_headlines(tmp_path)
    assert corpus.pairs == [
        HeadlinePair("Profits jumped 76%.\n\nSales rose 2%.", "Ad sales boost profit", "business/001.txt",
                     "business", str(tmp_path / "business/001.txt")),
        HeadlinePair("A phone.", "Phones get smaller", "tech/002.txt", "tech", str(tmp_path / "tech/002.txt")),
    ]
    assert corpus.dropped == [(str(tmp_path / "tech/003.txt"), "empty article"),
                              (str(tmp_path / "tech/004.txt"), "empty headline")]


def test_windows_1252_file_is_read_and_noted(tmp_path):
    # the public corpus has one such file (sport/199.txt: a Latin-1 pound sign)
    _write(tmp_path, "sport/199.txt", b"Mutu faces ban\n\nA \xa315.8m signing.\n")
    corpus = load_bbc_headlines(tmp_path)
    assert corpus.pairs[0].source == "A \u00a315.8m signing."
    assert corpus.notes == [f"{tmp_path / 'sport/199.txt'}: not UTF-8, read as Windows-1252"]
    assert "read as Windows-1252" in corpus.summary()


def test_undecodable_bytes_name_file_and_line(tmp_path):
    _write(tmp_path, "sport/001.txt", b"Headline\n\nfine line\nbad \x81 byte\n")  # 0x81: not UTF-8, not cp1252
    with pytest.raises(InputError, match=r"sport/001\.txt:4: neither UTF-8 nor Windows-1252"):
        load_bbc_headlines(tmp_path)


def test_bad_roots(tmp_path):
    with pytest.raises(InputError, match="not a folder"):
        load_bbc_headlines(tmp_path / "absent")
    with pytest.raises(InputError, match="no <topic>/"):
        load_bbc_headlines(tmp_path)
    _write(tmp_path, "tech/001.txt", "Only a headline\n")
    with pytest.raises(InputError, match="no file with both"):
        load_bbc_headlines(tmp_path)


def test_duplicate_groups_follow_chains_ignoring_case_and_spacing():
    pairs = [HeadlinePair("text a", "head 1", "t/1"), HeadlinePair("Text  A", "head 2", "t/2"),
             HeadlinePair("text b", "HEAD 2", "t/3"), HeadlinePair("text c", "head 3", "t/4")]
    assert duplicate_groups(pairs) == {"t/1": "t/1", "t/2": "t/1", "t/3": "t/1", "t/4": "t/4"}


def test_split_deterministic_disjoint_and_keeps_copies_together():
    pairs = [HeadlinePair(f"article {i}", f"headline {i}", f"topic/{i:03d}.txt") for i in range(1000)]
    copies = [HeadlinePair(f"article {i}", f"headline {i}", f"topic/{i + 1000}.txt") for i in range(0, 1000, 7)]
    train, dev = split_bbc_headlines(pairs + copies)
    again_train, again_dev = split_bbc_headlines(list(reversed(pairs + copies)))
    assert sorted(p.id for p in dev) == sorted(p.id for p in again_dev)
    assert sorted(p.id for p in train) == sorted(p.id for p in again_train)
    assert not {p.id for p in train} & {p.id for p in dev}
    assert not {p.source for p in train} & {p.source for p in dev}
    assert 60 < len(dev) < 160
    # the salt matters: another dataset's rule gives another split
    _, other_dev = split_headlines(pairs, salt="news-category")
    assert {p.id for p in other_dev} != {p.id for p in dev if p in pairs}
    with pytest.raises(InputError, match="dev_fraction"):
        split_headlines(pairs, dev_fraction=1.0)


DATA = __import__("pathlib").Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


@pytest.mark.skipif(not (DATA / "bbc-news" / "bbc").is_dir() or not (DATA / "news-category").is_dir(),
                    reason="the shared dataset copies are not here")
def test_real_corpora_split_sizes_are_pinned():
    from captioner.data.news_category import load_news_category, split_news_category

    bbc = load_bbc_headlines(DATA / "bbc-news" / "bbc")
    assert (len(bbc.pairs), len(bbc.dropped), len(bbc.notes)) == (2004, 0, 1)  # sport/199.txt is Windows-1252
    train, dev = split_bbc_headlines(bbc.pairs)
    assert (len(train), len(dev)) == (1799, 205)
    assert not {" ".join(p.source.lower().split()) for p in train} & {" ".join(p.source.lower().split()) for p in dev}
    news = load_news_category(DATA / "news-category" / "News_Category_Dataset_v3.json")
    assert (len(news.pairs), len(news.dropped)) == (9000, 0)
    train, dev = split_news_category(news.pairs)
    assert (len(train), len(dev)) == (8060, 940)


def test_aligned_positions_are_the_longest_common_subsequence_in_source_order():
    source = "british airways has blamed high fuel prices for a 40 % drop in profits .".split()
    positions, words = aligned_positions(source, ["high", "fuel", "prices", "hit", "ba's", "profits", "!"])
    assert [source[j] for j in positions] == ["high", "fuel", "prices", "profits"] and words == 6  # "!" not a word
    # plural and possessive forms match; the longest in-order match wins over the first-found one
    assert aligned_positions(["profit", "of", "the", "firm's", "rival"], ["firms", "profits"])[0] in ([0], [3])
    assert aligned_positions(["b", "a", "c", "a", "b"], ["a", "c", "b"]) == ([1, 2, 4], 3)
    assert aligned_positions(["a", "b"], ["x", "y"]) == ([], 2)
    assert aligned_positions([], ["x"]) == ([], 1) and aligned_positions(["a"], []) == ([], 0)


def test_verb_forms_align_a_headlines_verb_with_the_articles_other_form_of_it():
    from captioner.data.headlines import verb_forms
    from captioner.text.wordnet import load_wordnet

    wordnet, reason = load_wordnet()
    assert wordnet is not None, reason  # the Makefile installs WordNet (Debian's wordnet-base)
    keys = verb_forms(wordnet)
    source = "japan 's industrial output fell 2 % in november , the ministry said .".split()
    headline = ["industrial", "output", "falls", "in", "japan"]
    assert [source[j] for j in aligned_positions(source, headline)[0]] == ["industrial", "output", "in"]
    assert [source[j] for j in aligned_positions(source, headline, keys)[0]] == ["industrial", "output", "fell", "in"]
    assert "rise" in keys("rose") & keys("rises") & keys("Rising") and keys("profits") == frozenset({"profit"})
    assert keys("Boeing") == frozenset({"boeing"}) and keys("2%") == frozenset({"2%"})  # no verb: the word itself
    assert aligned_positions(["a", "b"], ["x", "y"], keys) == ([], 2)


def test_verb_test_reads_wordnets_tagged_sense_counts():
    from captioner.data.headlines import verb_test
    from captioner.text.wordnet import load_wordnet

    wordnet, reason = load_wordnet()
    assert wordnet is not None, reason
    is_verb = verb_test(wordnet)
    assert is_verb("fell") and is_verb("shares") and is_verb("Sacked", True)
    assert not is_verb("profits") and not is_verb("the") and not is_verb("Sacked") and not is_verb("2%")


def test_with_source_verb_adds_the_articles_verb_where_the_headline_has_one():
    from captioner.data.headlines import with_source_verb

    verbs = {"offloading", "soared", "said", "hits"}
    is_verb = lambda word, first=False: word in verbs  # noqa: E731
    source = "shares in jarvis have soared on news that jarvis is offloading its stake in tube lines".split()
    stake, tube = source.index("stake"), source.index("tube")
    jarvis = source.index("jarvis", 3)
    aligned = [jarvis, stake, tube]  # "jarvis ... stake ... tube": no verb
    headline = ["jarvis", "hits", "tube", "stake"]
    # the first verb within 3 words after an aligned word and before the next one; not before the first
    assert with_source_verb(aligned, source, headline, is_verb, 3) == [jarvis, jarvis + 2, stake, tube]
    assert with_source_verb(aligned, source, headline, is_verb, 1) == aligned  # "offloading" is 2 words on
    assert with_source_verb(aligned, source, ["jarvis", "tube", "stake"], is_verb, 3) == aligned  # no verb to stand for
    with_verb = [source.index("soared"), stake]
    assert with_source_verb(with_verb, source, headline, is_verb, 3) == with_verb  # has one already
    said = "the minister said taxes rise".split()
    assert with_source_verb([1, 3], said, headline, is_verb, 3, skip=lambda w: w == "said") == [1, 3]
    assert with_source_verb([1, 3], said, headline, is_verb, 3) == [1, 2, 3]
    assert with_source_verb([], source, headline, is_verb, 3) == []
