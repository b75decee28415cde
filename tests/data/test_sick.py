"""SICK 12-column TSV reader."""

import pytest

from captioner.data.sick import load_sick, reversed_pairs
from captioner.errors import InputError

HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\tentailment_BA\t"
          "sentence_A_original\tsentence_B_original\tsentence_A_dataset\tsentence_B_dataset\tSemEval_set")


def _row(i, a, b, label, split, score="3.5", ba="B_neutral_A"):
    return "\t".join([str(i), a, b, label, score, "A_x_B", ba, a, b, "FLICKR", "FLICKR", split])


def _file(tmp_path, rows):
    f = tmp_path / "SICK.txt"
    f.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return f


def test_reads_pairs_and_filters_splits(tmp_path):
    f = _file(tmp_path, [_row(1, "A man sings", "A man is singing", "ENTAILMENT", "TRAIN"),
                         _row(2, "A dog runs", "No dog runs", "CONTRADICTION", "TRIAL", "2.1"),
                         _row(3, "A cat sleeps", "A boy eats", "NEUTRAL", "TRAIN")])
    pairs = load_sick(f)
    assert [p.label for p in pairs] == ["ENTAILMENT", "CONTRADICTION", "NEUTRAL"]
    trial = load_sick(f, splits=["trial"])
    assert len(trial) == 1 and trial[0].premise == "A dog runs" and trial[0].relatedness == 2.1
    assert trial[0].pair_id == "2" and trial[0].origin.endswith("SICK.txt:3")
    assert [p.pair_id for p in load_sick(f, splits=["TRAIN"])] == ["1", "3"]


def test_reverse_judgments_make_reversed_pairs(tmp_path):
    f = _file(tmp_path, [_row(1, "A man is playing a guitar", "A man is playing", "ENTAILMENT", "TRAIN"),
                         _row(2, "A dog runs", "No dog runs", "CONTRADICTION", "TRAIN", ba="B_contradicts_A")])
    pairs = load_sick(f)
    assert [p.reverse_label for p in pairs] == ["NEUTRAL", "CONTRADICTION"]
    rev = reversed_pairs(pairs)
    assert (rev[0].premise, rev[0].hypothesis, rev[0].label) == ("A man is playing", "A man is playing a guitar",
                                                                 "NEUTRAL")
    assert rev[0].pair_id == "1" and rev[0].origin.endswith("SICK.txt:2 (reversed)")
    assert rev[1].label == "CONTRADICTION" and reversed_pairs(rev)[0] == pairs[0].__class__(**{
        **pairs[0].__dict__, "origin": pairs[0].origin + " (reversed) (reversed)"})


def test_five_column_semeval_files_are_read(tmp_path):
    f = tmp_path / "SICK_train.txt"
    f.write_text("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        load_sick(f)
    f.write_text("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n1\ta b\tc d\tNEUTRAL\t3\n")
    assert load_sick(f)[0].label == "NEUTRAL" and load_sick(f)[0].reverse_label is None
    with pytest.raises(InputError, match=r"SICK_train.txt:2: no entailment_BA judgment"):
        reversed_pairs(load_sick(f))
    g = _file(tmp_path, [_row(1, "a", "b", "NEUTRAL", "TRAIN", ba="B_x_A")])
    with pytest.raises(InputError, match=r"SICK.txt:2: no entailment_BA judgment \(B_neutral_A, B_entails_A"):
        reversed_pairs(load_sick(g))
    with pytest.raises(InputError, match="no SemEval_set column"):
        load_sick(f, splits=["TRAIN"])


@pytest.mark.parametrize("row,needle", [
    (_row(9, "a", "b", "MAYBE", "TRAIN"), "unknown entailment_label 'MAYBE'"),
    ("9\ta\tb\tNEUTRAL", "expected 12 tab-separated columns, found 4"),
    (_row(9, "a", "b", "NEUTRAL", "TRAIN", score="high"), "relatedness_score 'high' is not a number"),
    (_row(9, " ", "b", "NEUTRAL", "TRAIN"), "empty sentence_A or sentence_B"),
])
def test_malformed_rows_name_file_and_line(tmp_path, row, needle):
    f = _file(tmp_path, [_row(1, "a", "b", "NEUTRAL", "TRAIN"), row])
    with pytest.raises(InputError, match=rf"SICK.txt:3: {needle}"):
        load_sick(f)


def test_not_a_sick_file(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("hello\tworld\n")
    with pytest.raises(InputError, match=r"x.txt:1: not a SICK header"):
        load_sick(f)
    f2 = _file(tmp_path, [_row(1, "a", "b", "NEUTRAL", "TRAIN")])
    with pytest.raises(InputError, match="no pairs in split"):
        load_sick(f2, splits=["TEST"])
