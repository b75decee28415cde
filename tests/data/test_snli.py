"""SNLI jsonl reader."""

import gzip
import json

import pytest

from captioner.data.snli import load_snli
from captioner.errors import InputError


def _line(s1, s2, gold, pid="p"):
    return json.dumps({"sentence1": s1, "sentence2": s2, "gold_label": gold, "pairID": pid})


def test_reads_labels_and_skips_no_consensus(tmp_path):
    f = tmp_path / "snli_dev.jsonl"
    f.write_text("\n".join([_line("A dog runs.", "An animal moves.", "entailment", "1"),
                            _line("A dog runs.", "A cat sleeps.", "-", "2"),
                            "",
                            _line("A dog runs.", "The dog sleeps.", "contradiction", "3")]) + "\n")
    pairs = load_snli(f, split="dev")
    assert [(p.pair_id, p.label) for p in pairs] == [("1", "ENTAILMENT"), ("3", "CONTRADICTION")]
    assert pairs[1].origin.endswith("snli_dev.jsonl:4") and pairs[0].split == "dev"
    gz = tmp_path / "snli.jsonl.gz"
    gz.write_bytes(gzip.compress((_line("a", "b", "neutral") + "\n").encode()))
    assert load_snli(gz)[0].label == "NEUTRAL"


@pytest.mark.parametrize("line,needle", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"sentence1": "a", "gold_label": "neutral"}), "missing 'sentence2'"),
    (_line("a", "b", "maybe"), "unknown gold_label 'maybe'"),
    (_line("a", " ", "neutral"), "empty sentence1 or sentence2"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, needle):
    f = tmp_path / "bad.jsonl"
    f.write_text(_line("a", "b", "neutral") + "\n" + line + "\n")
    with pytest.raises(InputError, match=rf"bad.jsonl:2: {needle}"):
        load_snli(f)


def test_only_unlabelled_pairs_is_an_error(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text(_line("a", "b", "-") + "\n")
    with pytest.raises(InputError, match="no labelled pairs"):
        load_snli(f)
