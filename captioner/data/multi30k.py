"""Multi30k (Elliott et al. 2016) parallel line files: ``{split}.{lang}`` or ``{split}.{lang}.gz``,
one raw sentence a line, lines aligned across languages."""

from __future__ import annotations

from pathlib import Path

from captioner.data.tsv_pairs import SentencePair, read_text_lines
from captioner.errors import InputError

__all__ = ["read_parallel", "load_multi30k", "multi30k_path"]


def read_parallel(source_path, target_path, allow_empty=False) -> list[SentencePair]:
    """Pairs of two aligned line files (plain or .gz).

    The files must have the same number of lines (else InputError naming both counts); an
    empty line on either side raises InputError naming ``file:line`` unless ``allow_empty``
    (then the pair is skipped).
    """
    src = read_text_lines(source_path)
    tgt = read_text_lines(target_path)
    # A final empty line (trailing newline run) is not a sentence.
    while src and tgt and not src[-1].strip() and not tgt[-1].strip():
        src.pop(), tgt.pop()
    if len(src) != len(tgt):
        raise InputError(f"{source_path} has {len(src)} lines but {target_path} has {len(tgt)}: "
                         "parallel files must be aligned line by line")
    pairs = []
    for i, (s, t) in enumerate(zip(src, tgt), start=1):
        s, t = s.strip(), t.strip()
        if not s or not t:
            if allow_empty:
                continue
            which = source_path if not s else target_path
            raise InputError(f"{which}:{i}: empty sentence")
        pairs.append(SentencePair(s, t, f"{source_path}:{i}"))
    return pairs


def multi30k_path(data_dir, split, lang) -> Path:
    """``data_dir/split.lang`` or ``data_dir/split.lang.gz``, whichever exists."""
    base = Path(data_dir) / f"{split}.{lang}"
    for candidate in (base, base.with_name(base.name + ".gz")):
        if candidate.exists():
            return candidate
    raise InputError(f"{data_dir}: neither {base.name} nor {base.name}.gz found (Multi30k split {split!r}, "
                     f"language {lang!r})")


def load_multi30k(data_dir, split="train", source="en", target="de") -> list[SentencePair]:
    """The ``split`` pairs of a Multi30k folder, ``source`` -> ``target``."""
    return read_parallel(multi30k_path(data_dir, split, source), multi30k_path(data_dir, split, target))
