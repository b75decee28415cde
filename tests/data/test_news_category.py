"""News Category JSON-lines reader (description -> headline) and its dev split."""

import json

import pytest

from captioner.data.headlines import HeadlinePair
from captioner.data.news_category import load_news_category, split_news_category
from captioner.errors import InputError


def _rec(link, headline="A headline", desc="A short description.", category="POLITICS", **extra):
    return json.dumps({"link": link, "headline": headline, "short_description": desc, "category": category,
                       "authors": "", "date": "2022-09-23", **extra})


def test_reads_pairs_and_counts_dropped(tmp_path):
    f = tmp_path / "news.json"
    f.write_text("\n".join([
        _rec("https://x/1", "Cats Win Election", "  Voters chose cats.  ", "POLITICS"),
        _rec("https://x/2", "No Description", "   "),
        "",
        _rec("https://x/3", "", "Headline missing."),
        _rec("https://x/4", "Dogs Lose", "Dogs did not win.", "WORLD NEWS"),
    ]) + "\n", encoding="utf-8")
    corpus = load_news_category(f)
    assert corpus.pairs == [
        HeadlinePair("Voters chose cats.", "Cats Win Election", "https://x/1", "POLITICS", f"{f}:1"),
        HeadlinePair("Dogs did not win.", "Dogs Lose", "https://x/4", "WORLD NEWS", f"{f}:5"),
    ]
    assert corpus.dropped == [(f"{f}:2", "empty short_description"), (f"{f}:4", "empty headline")]
    assert corpus.summary() == "2 pairs, 2 records dropped (1 empty headline, 1 empty short_description)"


@pytest.mark.parametrize("line,needle", [
    ('{"link": "https://x/2", "headline": ', ":2: not valid JSON"),
    ('["a", "list"]', ":2: expected a JSON object, got list"),
    (json.dumps({"link": "https://x/2", "headline": "h", "category": "C"}), ":2: missing 'short_description'"),
    (json.dumps({"headline": "h", "short_description": "d", "category": "C"}), ":2: missing 'link'"),
    (_rec("https://x/2", headline=None), ":2: 'headline' is NoneType, expected a string"),
    (_rec(""), ":2: empty 'link'"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, needle):
    f = tmp_path / "bad.json"
    f.write_text(_rec("https://x/1") + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_news_category(f)
    assert f"{f}{needle}" in str(e.value)


def test_not_utf8_names_the_line(tmp_path):
    f = tmp_path / "latin1.json"
    latin1 = _rec("https://x/2", "Caf\xe9").replace("\\u00e9", "\xe9").encode("latin-1")
    f.write_bytes(_rec("https://x/1").encode() + b"\n" + latin1 + b"\n")
    with pytest.raises(InputError, match=r"latin1\.json:2: not UTF-8"):
        load_news_category(f)


def test_nothing_usable_and_missing_file(tmp_path):
    f = tmp_path / "empty_desc.json"
    f.write_text(_rec("https://x/1", desc="") + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no record with both"):
        load_news_category(f)
    with pytest.raises(InputError, match="file not found"):
        load_news_category(tmp_path / "absent.json")


def _pairs(n):
    return [HeadlinePair(f"description number {i}", f"headline {i}", f"https://x/{i}") for i in range(n)]


def test_split_is_deterministic_disjoint_and_about_ten_percent():
    pairs = _pairs(2000)
    train, dev = split_news_category(pairs)
    train2, dev2 = split_news_category(list(reversed(pairs)))
    assert {p.id for p in dev} == {p.id for p in dev2} and {p.id for p in train} == {p.id for p in train2}
    assert not {p.id for p in train} & {p.id for p in dev}
    assert len(train) + len(dev) == 2000 and 150 < len(dev) < 250
    # a record keeps its side when others are removed
    _, dev_half = split_news_category(pairs[:1000])
    assert {p.id for p in dev_half} == {p.id for p in dev if int(p.id.rsplit("/", 1)[1]) < 1000}
    # fixed forever: these ids are in dev (a change of rule would silently move the figures)
    assert [p.id for p in dev[:3]] == FIRST_DEV_IDS


FIRST_DEV_IDS = ["https://x/19", "https://x/21", "https://x/32"]  # the rule as first committed


def test_copies_land_on_one_side():
    pairs = _pairs(300)
    # same description (any case/spacing) under another link, and the same headline under a third
    pairs += [HeadlinePair(f"DESCRIPTION  number {i}", f"other {i}", f"https://y/{i}") for i in range(300)]
    pairs += [HeadlinePair(f"unrelated {i}", f"Headline {i}", f"https://z/{i}") for i in range(300)]
    train, dev = split_news_category(pairs)
    dev_numbers = {p.id.rsplit("/", 1)[1] for p in dev}
    train_numbers = {p.id.rsplit("/", 1)[1] for p in train}
    assert dev_numbers and not dev_numbers & train_numbers
