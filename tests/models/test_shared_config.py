"""split_shared / join_shared: what every member's config holds alike is saved once."""

from captioner.models.shared_config import join_shared, split_shared


def test_only_keys_equal_in_every_member_are_shared_and_join_puts_them_back():
    members = [{"class_name": "M", "config": {"vocab": ["a", "b"], "units": 4, "tok": "x"}},
               {"class_name": "M", "config": {"vocab": ["a", "b"], "units": 8, "tok": "x"}}]
    slim, shared = split_shared(members, ("vocab", "units", "tok", "absent"))
    assert shared == {"vocab": ["a", "b"], "tok": "x"}  # units differ: each keeps its own
    assert [m["config"] for m in slim] == [{"units": 4}, {"units": 8}]
    assert [join_shared(m, shared) for m in slim] == members
    assert join_shared(members[0], None) is members[0]  # a file saved before: whole members, no "shared"
