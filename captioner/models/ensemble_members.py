"""The members of an ensemble, checked once for every ensemble (translators, caption decoders,
entailment classifiers): enough of them, each of the kind the ensemble combines, each reading its
input as the first does. Members are numbered from 1 in the messages, as `captioner model
ensemble` lists them."""

from __future__ import annotations

_COUNT = {1: "one", 2: "two"}


def check_members(members, kind, same, minimum=1, what="an ensemble", exclude=None):
    """`members` (a list), or ValueError naming the first member that does not fit.

    kind: the class every member is (`exclude`: a subclass none may be, e.g. an ensemble);
    same: {name: function of a member} of what every member must share with member 1 (its
    vocabulary's tokens, its annotation size, ...); minimum: how many members at least."""
    members = list(members)
    if len(members) < minimum:
        raise ValueError(f"{what} needs at least {_COUNT.get(minimum, minimum)} member"
                         f"{'s' if minimum > 1 else ''}, got {len(members)}")
    for k, member in enumerate(members, start=1):
        if not isinstance(member, kind) or (exclude is not None and isinstance(member, exclude)):
            raise ValueError(f"{what}: member {k} is a {type(member).__name__}, not a {kind.__name__}")
        for name, read in same.items():
            if k > 1 and read(member) != read(members[0]):
                raise ValueError(f"{what}: member {k} reads its input differently from member 1: its {name} "
                                 f"differs ({read(member)!r:.80} against {read(members[0])!r:.80})")
    return members
