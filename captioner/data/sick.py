"""SICK (Marelli et al. 2014): the 12-column tab-separated file with a header line::

    pair_ID sentence_A sentence_B entailment_label relatedness_score entailment_AB entailment_BA
    sentence_A_original sentence_B_original sentence_A_dataset sentence_B_dataset SemEval_set

``entailment_BA`` (the judgment with the sentences swapped, B -> A) becomes a pair's
``reverse_label``; `reversed_pairs` turns it into extra training pairs. (The SemEval-2014
per-split files, ``SICK_train.txt`` etc., have only the first 5 columns and no
``SemEval_set``; both are read). Errors name ``file:line``.
"""

from __future__ import annotations

import dataclasses

from captioner.data.tsv_pairs import read_text_lines
from captioner.errors import InputError

__all__ = ["EntailmentPair", "LABELS", "load_sick", "reversed_pairs"]

LABELS = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")
REQUIRED = ("pair_ID", "sentence_A", "sentence_B", "entailment_label")
REVERSE = {"B_neutral_A": "NEUTRAL", "B_entails_A": "ENTAILMENT", "B_contradicts_A": "CONTRADICTION"}


@dataclasses.dataclass(frozen=True)
class EntailmentPair:
    premise: str
    hypothesis: str
    label: str               # one of LABELS
    pair_id: str = ""
    split: str = ""          # TRAIN / TRIAL / TEST for SICK; train/dev/test for SNLI
    relatedness: float | None = None
    origin: str = ""         # file:line
    reverse_label: str | None = None  # SICK's entailment_BA: the label of hypothesis -> premise, if given


def load_sick(path, splits=None) -> list[EntailmentPair]:
    """Pairs of a SICK file, optionally only those whose ``SemEval_set`` is in ``splits``
    (e.g. ``("TRAIN",)``; case-insensitive). Lines in the order of the file."""
    lines = read_text_lines(path)
    if not lines:
        raise InputError(f"{path}: empty file")
    header = lines[0].split("\t")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"{path}:1: not a SICK header (missing column(s) {', '.join(missing)}); "
                         f"found {header[:6]}")
    col = {name: i for i, name in enumerate(header)}
    wanted = {s.upper() for s in splits} if splits else None
    if wanted and "SemEval_set" not in col:
        raise InputError(f"{path}: has no SemEval_set column, so splits {sorted(wanted)} cannot be selected")
    pairs = []
    for line_no, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(f"{path}:{line_no}: expected {len(header)} tab-separated columns, found {len(cells)}")
        label = cells[col["entailment_label"]].strip().upper()
        if label not in LABELS:
            raise InputError(f"{path}:{line_no}: unknown entailment_label {label!r} (expected one of {LABELS})")
        premise, hypothesis = cells[col["sentence_A"]].strip(), cells[col["sentence_B"]].strip()
        if not premise or not hypothesis:
            raise InputError(f"{path}:{line_no}: empty sentence_A or sentence_B")
        split = cells[col["SemEval_set"]].strip().upper() if "SemEval_set" in col else ""
        if wanted and split not in wanted:
            continue
        relatedness = None
        if "relatedness_score" in col:
            try:
                relatedness = float(cells[col["relatedness_score"]])
            except ValueError:
                raise InputError(f"{path}:{line_no}: relatedness_score "
                                 f"{cells[col['relatedness_score']]!r} is not a number") from None
        reverse = REVERSE.get(cells[col["entailment_BA"]].strip()) if "entailment_BA" in col else None
        pairs.append(EntailmentPair(premise, hypothesis, label, cells[col["pair_ID"]].strip(), split,
                                    relatedness, f"{path}:{line_no}", reverse))
    if not pairs:
        raise InputError(f"{path}: no pairs" + (f" in split(s) {sorted(wanted)}" if wanted else ""))
    return pairs


def reversed_pairs(pairs) -> list[EntailmentPair]:
    """The pairs with premise and hypothesis swapped, labelled with their ``reverse_label``
    (SICK's entailment_BA): e.g. "A man is playing" / "A man is playing a guitar" is NEUTRAL,
    its reverse ENTAILMENT. Every pair must carry a reverse label (InputError naming the first
    that does not)."""
    out = []
    for p in pairs:
        if p.reverse_label is None:
            raise InputError(f"{p.origin or p.pair_id}: no entailment_BA judgment ({', '.join(REVERSE)}), "
                             "so the pair cannot be reversed")
        out.append(dataclasses.replace(p, premise=p.hypothesis, hypothesis=p.premise, label=p.reverse_label,
                                       reverse_label=p.label, origin=f"{p.origin} (reversed)"))
    return out
