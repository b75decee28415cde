"""What the document readers share: decoding, dev splits, sentences and words with caps."""

import pytest

from captioner.data.documents import (
    apply_split,
    decode_bytes,
    make_dev_split,
    read_split_list,
    split_sentences,
    to_hierarchy,
    tokenize_words,
    write_split_list,
)
from captioner.errors import InputError


def test_decode_bytes_utf8_else_latin1():
    assert decode_bytes("naïve £5\r\nnext".encode()) == ("naïve £5\nnext", "utf-8")
    assert decode_bytes(b"\xef\xbb\xbfbom\rold mac") == ("bom\nold mac", "utf-8")
    assert decode_bytes("naïve £5".encode("latin-1")) == ("naïve £5", "latin-1")
    assert decode_bytes(bytes(range(256)))[1] == "latin-1"     # any bytes at all: never refused


def _ids():
    ids = [f"a/{i}" for i in range(30)] + [f"b/{i}" for i in range(10)] + ["c/1", "c/2", "d/only"]
    return ids, [i.split("/")[0] for i in ids]


def test_dev_split_is_deterministic_stratified_and_disjoint():
    ids, labels = _ids()
    dev = make_dev_split(ids, labels, 0.1)
    assert dev == make_dev_split(ids[::-1], labels[::-1], 0.1) == sorted(dev)   # order-independent
    count = {k: sum(d.startswith(k + "/") for d in dev) for k in "abcd"}
    assert count == {"a": 3, "b": 1, "c": 1, "d": 0}     # >= 1 where a label has 2+, never a whole label
    assert make_dev_split(ids, labels, 0.1, salt="other") != dev
    train = [i for i in ids if i not in set(dev)]
    assert not set(train) & set(dev) and len(train) + len(dev) == len(ids)
    latest = make_dev_split(ids, labels, 0.1, latest=lambda d: int(d.split("/")[1]) if d[2:].isdigit() else 0)
    assert latest == ["a/27", "a/28", "a/29", "b/9", "c/2"]
    with pytest.raises(InputError, match="ids repeat"):
        make_dev_split(["a/1", "a/1"], ["a", "a"])
    with pytest.raises(InputError, match="between 0 and 1"):
        make_dev_split(ids, labels, 1.5)


def test_split_list_round_trip_and_errors(tmp_path):
    path = write_split_list(tmp_path / "sub" / "dev.txt", ["b/2", "a/1"], comment="how\nmade")
    assert path.read_text() == "# how\n# made\na/1\nb/2\n"
    assert read_split_list(path) == ["a/1", "b/2"]
    bad = tmp_path / "bad.txt"
    bad.write_text("a/1\n\n../etc/passwd\n")
    with pytest.raises(InputError, match=rf"{bad}:3: '../etc/passwd' is not a '/'-separated path"):
        read_split_list(bad)
    bad.write_text("a/1\n# c\na/1\n")
    with pytest.raises(InputError, match=rf"{bad}:3: 'a/1' repeats line 1"):
        read_split_list(bad)
    with pytest.raises(InputError, match="split list not found"):
        read_split_list(tmp_path / "none.txt")


def test_apply_split():
    ids = ["a/1", "a/2", "b/1"]
    assert apply_split(ids, "dev", ["a/2"], id_of=str) == ["a/2"]
    assert apply_split(ids, "train", ["a/2"], id_of=str) == ["a/1", "b/1"]
    assert apply_split(ids, "all", None, id_of=str) == ids
    with pytest.raises(InputError, match="lacks"):
        apply_split(ids, "train", ["a/3"], id_of=str)
    with pytest.raises(InputError, match="split 'test'"):
        apply_split(ids, "test", ["a/2"], id_of=str)


def test_sentences_respect_paragraphs_wraps_abbreviations_and_initials():
    text = ("Dr. Smith met Zack T. Smith in the U.S. last week. It went well!\nWas it\nraining?\n\n"
            "A new paragraph without a stop\n\nEnd (really). \"Quoted start\" here.")
    assert split_sentences(text) == [
        "Dr. Smith met Zack T. Smith in the U.S. last week.", "It went well!", "Was it raining?",
        "A new paragraph without a stop", "End (really).", "\"Quoted start\" here."]
    assert split_sentences("version 3.1 is out. e.g. this one.") == ["version 3.1 is out. e.g. this one."]
    assert split_sentences("  \n\n ") == []


def test_words_and_hierarchy_caps():
    assert tokenize_words("Don't panic, it's $5.") == ["do", "n't", "panic", ",", "it", "'s", "$", "5", "."]
    assert tokenize_words("Don't", lower=False) == ["Do", "n't"]
    text = "One two three four. Five six. Seven eight nine.\n\nTen."
    assert to_hierarchy(text) == [["one", "two", "three", "four", "."], ["five", "six", "."],
                                  ["seven", "eight", "nine", "."], ["ten", "."]]
    assert to_hierarchy(text, max_sentences=2, max_words=3) == [["one", "two", "three"], ["five", "six", "."]]
    assert to_hierarchy(text, max_sentences=3, max_words=3, split_long=True) == [
        ["one", "two", "three"], ["four", "."], ["five", "six", "."]]
    assert to_hierarchy("a b c d e", max_words=2, split_long=True) == [["a", "b"], ["c", "d"], ["e"]]
    assert to_hierarchy("") == []
    for bad in (0, -1, 2.5):
        with pytest.raises(InputError, match="whole number >= 1"):
            to_hierarchy(text, max_words=bad)
