"""scripts/ensemble_captioners.py: every member keeps its own row, also when two runs' models
share a file name (the figures of one used to overwrite the other's)."""

from script_support import load_script


def test_members_are_named_by_file_name_or_by_path_where_file_names_repeat():
    names = load_script("ensemble_captioners").member_names
    assert names(["a/x.keras", "b/y.keras"]) == ["x.keras", "y.keras"]
    assert names(["run2/flickr8k_attention.keras", "run3/flickr8k_attention.keras"]) == [
        "run2/flickr8k_attention.keras", "run3/flickr8k_attention.keras"]
    assert names(["m.keras", "m.keras"]) == ["1: m.keras", "2: m.keras"]
