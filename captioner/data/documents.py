"""What the document readers share: the :class:`Document` record, byte decoding, saved dev
splits, and documents -> sentences -> words for hierarchical models (HAN, Yang et al. 2016).

Both readers (:mod:`captioner.data.newsgroups`, :mod:`captioner.data.bbc_news`) return
``Document`` records, so one recipe reads either: ``doc.text`` is what the reader was told to
keep, ``doc.label`` the class, ``doc.title`` the Subject line or headline.

Dev splits are carved from a train folder once (:func:`make_dev_split`: per label, the
latest documents or a hash-chosen tenth), written as a list of
relative paths (:func:`write_split_list`) and shipped with the package under
``captioner/data/splits/``; :func:`apply_split` selects ``train`` (every file not listed) or
``dev`` (the files listed) and refuses a list that names files the corpus lacks, so a list made
for another copy of the data cannot silently leak dev posts into training.

Sentence splitting is a regular expression (NLTK's punkt models cannot be downloaded here):
paragraph breaks always end a sentence; inside a paragraph a ``.``, ``!`` or ``?`` (and any
closing quotes or brackets) followed by white space and a capital letter, digit or opening
quote ends one, except after a known abbreviation (``Mr.``, ``e.g.``, ``U.S.``) or a single
capital initial (``T. Smith``). Words are NLTK's Treebank tokens
(``word_tokenize(s, preserve_line=True)``, which needs no download).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import defaultdict
from pathlib import Path

from captioner.errors import InputError

__all__ = [
    "SPLITS",
    "Document",
    "apply_split",
    "bundled_split_list",
    "decode_bytes",
    "make_dev_split",
    "read_split_list",
    "split_sentences",
    "to_hierarchy",
    "tokenize_words",
    "write_split_list",
]

SPLITS = ("train", "dev", "all")
SPLIT_DIR = Path(__file__).resolve().with_name("splits")


@dataclasses.dataclass(frozen=True)
class Document:
    """One document of a classification corpus, its parts kept apart.

    ``text`` is what the reader's ``keep`` option chose, in the order of the file; the other
    fields hold every part whether kept or not, so a caller can recompose (and a benchmark can
    measure what each part is worth).
    """

    doc_id: str  # path relative to the corpus root, '/'-separated: "sci.med/58043", "tech/001.txt"
    label: str  # the folder: newsgroup or topic
    title: str  # the Subject header (20 Newsgroups) or the headline (BBC)
    body: str  # the author's own text: no headers, quotes or signature
    text: str  # the parts the reader kept, joined in file order
    quotes: str = ""  # quoted lines and their attributions ("In article <...> ... writes:")
    signature: str = ""  # the signature block
    headers: str = ""  # the raw header block, Subject included
    encoding: str = "utf-8"  # how the bytes were decoded: "utf-8" or "latin-1"
    path: str = ""  # the file read


def decode_bytes(data: bytes) -> tuple[str, str]:
    """``(text, encoding)``: UTF-8 (a BOM is dropped) when the bytes are valid UTF-8, otherwise
    Latin-1, which maps every byte to a character and so never fails (Usenet posts of the 1990s
    are often Latin-1). Line ends are normalised to ``\\n``."""
    try:
        text, encoding = data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = data.decode("latin-1"), "latin-1"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def read_document_file(path) -> tuple[str, str]:
    """``(text, encoding)`` of a document file (:func:`decode_bytes`); a missing or unreadable
    file is an InputError naming it."""
    from captioner.features.paths import not_a_regular_file

    reason = not_a_regular_file(path)  # a FIFO would block the run
    if reason:
        raise InputError(f"{path}: {reason}")
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return decode_bytes(data)


def read_text_file(path) -> tuple[str, str]:
    """:func:`read_document_file` for a file that must be text: a binary file (NUL bytes in its
    first 8 KiB) is an InputError naming it, never read as Latin-1 (`classify`, `respond`, `chat`)."""
    text, encoding = read_document_file(path)
    if "\0" in text[:8192]:
        raise InputError(f"{path}: a binary file (NUL bytes), not text")
    return text, encoding


# ---------------------------------------------------------------------------------------------
# dev splits


def _rank(salt: str, doc_id: str) -> str:
    return hashlib.sha256(f"{salt}\0{doc_id}".encode()).hexdigest()


def make_dev_split(doc_ids, labels, fraction: float = 0.1, salt: str = "captioner-dev-v1", latest=None) -> list[str]:
    """The dev part of a train folder: in each label, ``round(fraction * n)`` documents (at
    least one where a label has two or more, never all of them).

    Without ``latest``, the ones whose ``sha256(salt, doc_id)`` is smallest: a random-like
    choice that is the same on every machine. With ``latest`` (a function of the id giving a
    sortable time, e.g. the Usenet article number), the most recent ones: dev then follows
    train in time, as a "bydate" test split does, so fewer dev documents continue a thread
    seen in training. Stratified and independent of file-system order either way. Returns
    the chosen ids sorted."""
    if not 0 < fraction < 1:
        raise InputError(f"dev fraction {fraction}: must be between 0 and 1")
    doc_ids, labels = list(doc_ids), list(labels)
    if len(doc_ids) != len(labels):
        raise InputError(f"{len(doc_ids)} document ids but {len(labels)} labels")
    if len(set(doc_ids)) != len(doc_ids):
        raise InputError("document ids repeat; a split needs unique ids")
    by_label = defaultdict(list)
    for doc_id, label in zip(doc_ids, labels, strict=True):
        by_label[label].append(doc_id)
    chosen = []
    for ids in by_label.values():
        n = round(fraction * len(ids))
        if len(ids) >= 2:
            n = min(max(n, 1), len(ids) - 1)
        if latest is None:
            chosen += sorted(ids, key=lambda d: _rank(salt, d))[:n]
        else:
            chosen += sorted(ids, key=lambda d: (latest(d), d))[len(ids) - n :]
    return sorted(chosen)


def write_split_list(path, doc_ids, comment: str = "") -> Path:
    """Write ids one a line (sorted), after ``# comment`` lines saying how they were chosen."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    path.write_text(head + "".join(f"{d}\n" for d in sorted(doc_ids)), encoding="utf-8")
    return path


def read_split_list(path) -> list[str]:
    """The ids of a split list (blank lines and ``#`` comments skipped). Errors name
    ``file:line`` for an absolute path, a ``..`` part, a backslash or a repeated id."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: split list not found") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e})") from None
    ids, seen = [], {}
    for line_no, line in enumerate(lines, start=1):
        doc_id = line.strip()
        if not doc_id or doc_id.startswith("#"):
            continue
        if doc_id.startswith("/") or "\\" in doc_id or ".." in doc_id.split("/"):
            raise InputError(f"{path}:{line_no}: {doc_id!r} is not a '/'-separated path relative to the corpus root")
        if doc_id in seen:
            raise InputError(f"{path}:{line_no}: {doc_id!r} repeats line {seen[doc_id]}")
        seen[doc_id] = line_no
        ids.append(doc_id)
    return ids


def bundled_split_list(name: str) -> Path:
    """The dev list shipped with the package, e.g. ``bundled_split_list("20newsgroups_dev")``."""
    path = SPLIT_DIR / f"{name}.txt"
    if not path.is_file():
        raise InputError(f"no bundled split list {name!r} in {SPLIT_DIR}")
    return path


def check_keep(keep, parts) -> tuple[str, ...]:
    """A reader's ``keep`` option (one part or several) as a tuple; InputError unless each is one of `parts`."""
    keep = (keep,) if isinstance(keep, str) else tuple(keep)
    unknown = [k for k in keep if k not in parts]
    if unknown or not keep:
        raise InputError(f"keep={keep!r}: expected one or more of {tuple(parts)}")
    return keep


def only_labels(items, labels, every_item, folder, what):
    """`items` ((doc_id, label, path) of a corpus folder) restricted to `labels` (None: all);
    InputError naming any label that has no folder among `every_item`. `what`: "topic", "group"."""
    if labels is None:
        return items
    unknown = sorted(set(labels) - {label for _, label, _ in every_item})
    if unknown:
        raise InputError(f"{folder}: no {what} folder(s) {unknown}")
    return [item for item in items if item[1] in set(labels)]


def apply_split(items, split: str, dev_list, id_of=lambda item: item.doc_id):
    """The items of ``split``: ``"dev"`` the ones whose id ``dev_list`` names, ``"train"`` the
    others, ``"all"`` every one. ``dev_list`` is a path or a list of ids; for ``train`` and
    ``dev`` every id it names must be among the items (InputError otherwise: a list made for
    another corpus would put that corpus's dev documents into training)."""
    if split not in SPLITS:
        raise InputError(f"split {split!r}: expected one of {SPLITS}")
    items = list(items)
    if split == "all":
        return items
    source = str(dev_list) if isinstance(dev_list, (str, Path)) else "the dev list"
    dev = set(read_split_list(dev_list) if isinstance(dev_list, (str, Path)) else dev_list)
    present = {id_of(item) for item in items}
    missing = sorted(dev - present)
    if missing:
        raise InputError(
            f"{source}: names {len(missing)} document(s) that the corpus lacks (first: {missing[0]!r}); "
            "it was made for another copy of the data: make one for this corpus with make_dev_split, "
            "or read split='all'"
        )
    want_dev = split == "dev"
    return [item for item in items if (id_of(item) in dev) == want_dev]


# ---------------------------------------------------------------------------------------------
# documents -> sentences -> words

ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "vs",
        "etc",
        "eg",
        "ie",
        "cf",
        "al",
        "approx",
        "dept",
        "univ",
        "inc",
        "ltd",
        "corp",
        "co",
        "no",
        "vol",
        "fig",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "gen",
        "gov",
        "sen",
        "rep",
        "rev",
        "capt",
        "col",
        "lt",
        "sgt",
        "ave",
    ]
)

_PARAGRAPH = re.compile(r"\n[ \t]*\n+")
_BOUNDARY = re.compile(r"""(?<=[.!?])["')\]]*\s+(?=["'(\[]?[A-Z0-9])""")
_LAST_WORD = re.compile(r"(\S+)$")


def _is_abbreviation(fragment: str) -> bool:
    match = _LAST_WORD.search(fragment)
    if not match:
        return False
    word = match.group(1).rstrip(".")
    if len(word) == 1 and word.isalpha():  # an initial: "Zack T. Smith", "J. R. R. Tolkien"
        return True
    if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):  # "U.S", "e.g", "i.e", "a.m"
        return True
    return word.lower().lstrip("(\"'") in ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: paragraphs (blank-line separated) are split at sentence ends,
    white space inside a sentence (hard line wraps included) is collapsed to single spaces."""
    sentences = []
    for paragraph in _PARAGRAPH.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        start, pending = 0, ""
        for match in _BOUNDARY.finditer(paragraph):
            fragment = paragraph[start : match.start()]
            if _is_abbreviation(fragment):
                pending += paragraph[start : match.end()]
            else:
                sentences.append(pending + fragment)
                pending = ""
            start = match.end()
        sentences.append(pending + paragraph[start:])
    return [s for s in (s.strip() for s in sentences) if s]


def tokenize_words(sentence: str, lower: bool = True) -> list[str]:
    """Treebank word tokens of one sentence (``nltk.word_tokenize(s, preserve_line=True)``:
    no punkt download), lower-cased unless ``lower=False``."""
    from nltk.tokenize import word_tokenize

    tokens = word_tokenize(sentence, preserve_line=True)
    return [t.lower() for t in tokens] if lower else tokens


def to_hierarchy(
    text: str,
    max_sentences: int | None = None,
    max_words: int | None = None,
    lower: bool = True,
    split_long: bool = False,
) -> list[list[str]]:
    """``text`` as sentences of words, the input of a hierarchical model: at most
    ``max_sentences`` sentences (the first ones) of at most ``max_words`` words each.

    A sentence longer than ``max_words`` is cut to its first words, or, with ``split_long``,
    continued as further sentences of ``max_words`` (Usenet paragraphs without punctuation,
    lists and code, otherwise lose all but their start). Sentences without a token are
    dropped. ``None`` means no cap. An empty text gives ``[]``."""
    for name, cap in (("max_sentences", max_sentences), ("max_words", max_words)):
        if cap is not None and (not isinstance(cap, int) or cap < 1):
            raise InputError(f"{name} {cap!r}: must be a whole number >= 1 (or None for no cap)")
    out = []
    for sentence in split_sentences(text):
        words = tokenize_words(sentence, lower=lower)
        step = max_words or max(len(words), 1)
        pieces = [words[i : i + step] for i in range(0, len(words), step)] if split_long else [words[:step]]
        for piece in pieces:
            if max_sentences is not None and len(out) >= max_sentences:
                return out
            if piece:
                out.append(piece)
    return out
