"""An ensemble's members saved without copies of what they share (issue 39: the three members of
`sick_entailment.keras` each held the same 3.7 MB of WordNet relations in their configs, those of
`multi30k_en_de.keras` the same vocabularies and SentencePiece models).

`split_shared` takes the members' serialized configs and moves every candidate key whose value is
the same in all of them into one dict, saved once beside them ("shared"); `join_shared` puts it
back into a member's config when the ensemble is rebuilt. A file saved before, with whole member
configs and no "shared", loads as it did.
"""


def split_shared(members, keys):
    """(members without the shared keys, {key: value}) for serialized member dicts; a key is
    shared when every member has it with the same value."""
    configs = [m["config"] for m in members]
    shared = {k: configs[0][k] for k in keys
              if k in configs[0] and all(k in c and c[k] == configs[0][k] for c in configs[1:])}
    return [{**m, "config": {k: v for k, v in m["config"].items() if k not in shared}} for m in members], shared


def join_shared(member, shared):
    """A serialized member dict with the shared keys put back (its own values win)."""
    return {**member, "config": {**(shared or {}), **member["config"]}} if shared else member
