"""Multi30k parallel line files, plain or gzip."""

import gzip

import pytest

from captioner.data.multi30k import load_multi30k, multi30k_path, read_parallel
from captioner.errors import InputError


def _write(path, lines, gz=False):
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_plain_and_gzip_files_pair_line_by_line(tmp_path):
    _write(tmp_path / "train.en.gz", ["A dog runs.", "Two men talk."], gz=True)
    _write(tmp_path / "train.de", ["Ein Hund rennt.", "Zwei Männer reden."])
    pairs = load_multi30k(tmp_path, "train", "en", "de")
    assert [(p.source, p.target) for p in pairs] == [("A dog runs.", "Ein Hund rennt."),
                                                     ("Two men talk.", "Zwei Männer reden.")]
    assert pairs[1].origin.endswith("train.en.gz:2")
    assert multi30k_path(tmp_path, "train", "de").name == "train.de"


def test_line_count_mismatch_is_a_clear_error(tmp_path):
    src = _write(tmp_path / "val.en", ["a", "b", "c"])
    tgt = _write(tmp_path / "val.de", ["x", "y"])
    with pytest.raises(InputError, match=r"val.en has 3 lines but .*val.de has 2"):
        read_parallel(src, tgt)


def test_empty_sentence_names_file_and_line(tmp_path):
    src = _write(tmp_path / "s.txt", ["a", "", "c"])
    tgt = _write(tmp_path / "t.txt", ["x", "y", "z"])
    with pytest.raises(InputError, match=r"s.txt:2: empty sentence"):
        read_parallel(src, tgt)
    assert [p.source for p in read_parallel(src, tgt, allow_empty=True)] == ["a", "c"]


def test_missing_split_names_both_candidates(tmp_path):
    with pytest.raises(InputError, match=r"test.en nor test.en.gz"):
        load_multi30k(tmp_path, "test", "en", "de")
