"""Anki/Tatoeba TSV pairs, line reading (plain/gzip) and deterministic held-out splits."""

import gzip

import pytest

from captioner.data.tsv_pairs import load_anki_pairs, read_text_lines, split_by_key
from captioner.errors import InputError


def test_two_and_three_column_anki_lines(tmp_path):
    f = tmp_path / "fra.txt"
    f.write_text("Go.\tVa !\n\nI see.\tJe comprends.\tCC-BY 2.0 (France) Attribution: tatoeba.org #1\n",
                 encoding="utf-8")
    pairs = load_anki_pairs(f)
    assert [(p.source, p.target) for p in pairs] == [("Go.", "Va !"), ("I see.", "Je comprends.")]
    assert pairs[1].origin == f"{f}:3"
    rev = load_anki_pairs(f, reverse=True)
    assert (rev[0].source, rev[0].target) == ("Va !", "Go.")


@pytest.mark.parametrize("line,needle", [
    ("only one column", "expected 2 to 3 tab-separated columns, found 1"),
    ("a\tb\tc\td", "found 4"),
    ("\tVa !", "column 1 is empty"),
    ("Go.\t  ", "column 2 is empty"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, needle):
    f = tmp_path / "bad.tsv"
    f.write_text("Go.\tVa !\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"bad.tsv:2: .*{needle}"):
        load_anki_pairs(f)


def test_read_text_lines_gzip_bom_crlf_and_errors(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert read_text_lines(plain) == ["one", "two"]
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress("un\ndeux\n".encode()))
    assert read_text_lines(gz) == ["un", "deux"]
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"ok\nnot \xff utf8\n")
    with pytest.raises(InputError, match=r"b.txt:2: not UTF-8"):
        read_text_lines(bad)
    broken = tmp_path / "c.gz"
    broken.write_bytes(b"\x1f\x8bnot really gzip")
    with pytest.raises(InputError, match="not a valid gzip"):
        read_text_lines(broken)
    with pytest.raises(InputError, match="file not found"):
        read_text_lines(tmp_path / "missing.txt")
    empty = tmp_path / "empty.tsv"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no sentence pairs"):
        load_anki_pairs(empty)


def test_split_by_key_is_deterministic_and_keeps_keys_apart():
    items = [(f"english {i % 300}", f"french {i}") for i in range(1000)]
    a = split_by_key(items, key=lambda x: x[0], fractions={"dev": 0.1, "test": 0.2})
    b = split_by_key(list(reversed(items)), key=lambda x: x[0], fractions={"dev": 0.1, "test": 0.2})
    assert sorted(a["test"]) == sorted(b["test"]) and sorted(a["dev"]) == sorted(b["dev"])
    keys = {name: {x[0] for x in a[name]} for name in ("train", "dev", "test")}
    assert not keys["train"] & keys["test"] and not keys["train"] & keys["dev"] and not keys["dev"] & keys["test"]
    assert sum(len(a[n]) for n in ("train", "dev", "test", "dropped")) == 1000
    assert 0.1 < len(a["test"]) / 1000 < 0.3  # roughly the asked share
    with pytest.raises(InputError, match="leave some training"):
        split_by_key(items, key=lambda x: x[0], fractions={"test": 0.6, "dev": 0.5})


def test_split_by_key_drops_held_out_items_whose_second_key_is_in_train():
    # the same French sentence translates two English sentences
    items = [(f"en {i}", "bonjour" if i < 50 else f"fr {i}") for i in range(400)]
    s = split_by_key(items, key=lambda x: x[0], fractions={"test": 0.3}, exclusive=lambda x: x[1])
    train_fr = {x[1] for x in s["train"]}
    assert "bonjour" in train_fr
    assert all(x[1] not in train_fr for x in s["test"])
    assert s["dropped"] and all(x[1] == "bonjour" for x in s["dropped"])
