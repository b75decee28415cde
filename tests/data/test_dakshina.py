import pytest

from captioner.data.dakshina import load_dakshina, romanized_lexicon
from captioner.errors import InputError

DATA = "../shared/datasets/dakshina-hi/hi.translit.sampled.train.tsv"


def test_reads_entries_and_builds_the_lexicon(tmp_path):
    path = tmp_path / "hi.tsv"
    path.write_text("अंकुर\tankur\t4\nअंकुड़\tAnkur\t1\nइंडिया\tindia\t3\n\n", encoding="utf-8")
    pairs = load_dakshina(path)
    assert [(p.romanized, p.native, p.attestations) for p in pairs] == [
        ("ankur", "अंकुर", 4), ("ankur", "अंकुड़", 1), ("india", "इंडिया", 3)]
    assert pairs[1].origin == f"{path}:2"
    # every native word of a romanization, most attested first
    assert romanized_lexicon(pairs) == {"ankur": ["अंकुर", "अंकुड़"], "india": ["इंडिया"]}


@pytest.mark.parametrize("line, message", [
    ("अंकुर\tankur", "expected native<TAB>romanized<TAB>attestations"),
    ("अंकुर\t\t3", "empty word"),
    ("अंकुर\tअंकुर\t3", "not in Latin letters"),
    ("अंकुर\tankur\tmany", "not a whole number"),
    ("अंकुर\tankur\t0", "must be >= 1"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.tsv"
    path.write_text("इंडिया\tindia\t3\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"bad.tsv:2: .*{message}"):
        load_dakshina(path)


def test_empty_and_non_utf8_files(tmp_path):
    (tmp_path / "empty.tsv").write_text("\n")
    with pytest.raises(InputError, match="no lexicon entries"):
        load_dakshina(tmp_path / "empty.tsv")
    (tmp_path / "latin1.tsv").write_bytes("caf\xe9\tcafe\t1\n".encode("latin-1"))
    with pytest.raises(InputError, match="latin1.tsv:1: not UTF-8"):
        load_dakshina(tmp_path / "latin1.tsv")


def test_real_train_lexicon_holds_the_lecture_pair():
    import os

    if not os.path.exists(DATA):
        pytest.skip(f"{DATA} not here")
    pairs = load_dakshina(DATA)
    assert len(pairs) == 44204
    assert "इंडिया" in romanized_lexicon(pairs)["india"]
