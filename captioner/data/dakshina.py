"""Reader of the Dakshina romanization lexicons (Roark et al. 2020), for transliteration.

Each line of ``<lang>.translit.sampled.<split>.tsv`` is::

    native<TAB>romanized<TAB>attestations

(the native-script word, one attested Latin-script romanization of it, and how many
annotators wrote that romanization). A native word has one or more romanizations, and one
romanization can belong to several native words (``ankur`` may be अंकुर or अंकुड़). The task
of the field is romanized -> native; a prediction counts as right when it is ANY native word
the lexicon pairs with that romanization (:func:`romanized_lexicon`).

Errors name ``file:line``.
"""

from __future__ import annotations

import collections
import dataclasses
import unicodedata

from captioner.data.tsv_pairs import read_text_lines
from captioner.errors import InputError

__all__ = ["TranslitPair", "load_dakshina", "romanized_lexicon"]


@dataclasses.dataclass(frozen=True)
class TranslitPair:
    """One lexicon entry: Latin-script ``romanized`` -> ``native`` script."""

    romanized: str
    native: str
    attestations: int = 1
    origin: str = ""


def load_dakshina(path) -> list[TranslitPair]:
    """The entries of a Dakshina lexicon TSV, in file order.

    Romanizations are lower-cased (the lexicon's are, and users' input is not); both sides
    are NFC-normalized (a native word typed with a decomposed nukta is the same word).
    Raises InputError naming ``file:line`` for a line without three tab-separated fields, an
    empty word, a romanization with non-Latin letters, or attestations that are not a
    positive integer.
    """
    pairs = []
    for number, line in enumerate(read_text_lines(path), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(f"{where}: expected native<TAB>romanized<TAB>attestations, got {len(fields)} field(s)")
        native, romanized, count = (unicodedata.normalize("NFC", f.strip()) for f in fields)
        if not native or not romanized:
            raise InputError(f"{where}: empty word")
        romanized = romanized.lower()
        if not all(c.isascii() for c in romanized):
            raise InputError(f"{where}: romanization {romanized!r} is not in Latin letters")
        try:
            attestations = int(count)
        except ValueError:
            raise InputError(f"{where}: attestations {count!r} is not a whole number") from None
        if attestations < 1:
            raise InputError(f"{where}: attestations must be >= 1, got {attestations}")
        pairs.append(TranslitPair(romanized, native, attestations, where))
    if not pairs:
        raise InputError(f"{path}: no lexicon entries")
    return pairs


def romanized_lexicon(pairs) -> dict[str, list[str]]:
    """romanized word -> the native words it is paired with, most attested first.

    The evaluation unit of transliteration accuracy: each distinct romanization once, right
    when the prediction is any of its native words.
    """
    counts = collections.defaultdict(collections.Counter)
    for p in pairs:
        counts[p.romanized][p.native] += p.attestations
    return {rom: [w for w, _ in c.most_common()] for rom, c in counts.items()}
