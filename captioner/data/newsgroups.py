"""20 Newsgroups (Lang 1995), "bydate" version, as the public tarball unpacks::

    20news-bydate-train/<group>/<id>     raw Usenet posts, one file each, 20 group folders
    20news-bydate-test/<group>/<id>

Any root works: a folder of group folders, or the folder holding ``20news-bydate-train`` (and
``-test``). Each post becomes a :class:`~captioner.data.documents.Document`:

* **headers** (the block before the first blank line, RFC 822 ``Name: value`` lines with
  indented continuations) are parsed; **Subject is kept** (as ``title``), **every other header
  is dropped** from the text (From, Organization, Lines, Reply-To, ... name the author and site,
  which identify the group without reading the post; the raw block stays in ``headers``). The
  bydate copies sometimes begin with the orphaned continuation of a removed ``Path:`` header;
  such leading indented lines are tolerated. A header line that is neither ``Name: value`` nor
  a continuation, an empty file, or a post without a Subject is malformed: InputError naming
  ``file:line``.
* **quotes** are lines starting with ``>`` or ``|`` (``|>`` too), and attributions: "In article
  <...> ... writes:" (over up to three lines) and lines ending in ``writes:`` / ``wrote:``.
  Dropped unless ``keep`` has ``"quotes"``.
* **signature**: everything after the last ``-- `` (or ``--``) line when at most
  ``SIGNATURE_MAX_LINES`` non-empty lines follow; otherwise a short trailing block (the
  author's last paragraph or two, at most 4 lines together, after some text of the author's
  own) whose lines all look like a signature: an e-mail address, URL, phone number, rule of
  repeated punctuation, a ``|`` column, or at most three words not ending a sentence, a
  lead-in (``:``) or a line of code ("Deborah", "Thanks,", "$0.02,", "Zack T. Smith").
  Dropped unless ``keep`` has ``"signature"``.
* **body**: the remaining lines, the author's own text.

``keep`` names the parts ``Document.text`` is made of, in file order: any of ``"headers"``
(the whole header block, which contains the Subject), ``"subject"``, ``"body"``, ``"quotes"``,
``"signature"``; default ``("subject", "body")``. Keeping everything gives back the post.

Bytes are decoded as UTF-8 and, where that fails, as Latin-1: a post is never refused for its
encoding (``Document.encoding`` says which was used).
"""

from __future__ import annotations

import re
from pathlib import Path

from captioner.data.documents import (
    Document,
    read_document_file,
    apply_split,
    check_keep,
    only_labels,
    bundled_split_list,
)
from captioner.errors import InputError

__all__ = [
    "DEFAULT_KEEP",
    "DEV_LIST",
    "PARTS",
    "article_number",
    "list_posts",
    "load_newsgroups",
    "newsgroups_root",
    "parse_post",
    "read_post",
]

PARTS = ("headers", "subject", "body", "quotes", "signature")
DEFAULT_KEEP = ("subject", "body")
DEV_LIST = "20newsgroups_dev"   # captioner/data/splits/20newsgroups_dev.txt: the latest 10% of each group of bydate train
SIGNATURE_MAX_LINES = 15

_HEADER = re.compile(r"^([!-9;-~]+):[ \t]?(.*)$")   # field name: printable ASCII but ':' (RFC 5322)
_QUOTE = re.compile(r"^[ \t]*[>|]")
_ATTRIBUTION_START = re.compile(r"^\s*In (?:article )?<", re.IGNORECASE)
_ATTRIBUTION_END = re.compile(r"\b(?:writes|wrote)\s*:\s*$", re.IGNORECASE)
_SIG_DASHES = re.compile(r"^--\s*$")
_SIG_CUE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"           # e-mail
    r"|https?://|www\.|ftp\."                 # URL
    r"|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"        # phone
    r"|([-=_*#~+])\1{2,}"                     # a rule: ---, ===, ***
    r"|\|")


def newsgroups_root(root, split: str = "train") -> Path:
    """The folder of group folders: ``root`` itself, or ``root/20news-bydate-train`` (``-test``
    for ``split="test"``) where ``root`` is the folder the tarball unpacked into."""
    root = Path(root)
    sub = root / ("20news-bydate-test" if split == "test" else "20news-bydate-train")
    if sub.is_dir():
        return sub
    if split == "test" and (root / "20news-bydate-train").is_dir():
        raise InputError(f"{root}: has 20news-bydate-train but no 20news-bydate-test")
    if not root.is_dir():
        raise InputError(f"{root}: no such folder (expected 20 Newsgroups group folders)")
    return root


def article_number(doc_id: str) -> int:
    """The Usenet article number of ``group/number`` (-1 for a name that is not a number):
    numbers grow with arrival time on the server, so they order a group's posts in time."""
    name = doc_id.rsplit("/", 1)[-1]
    return int(name) if name.isdigit() else -1


def list_posts(root) -> list[tuple[str, str, Path]]:
    """``(doc_id, group, path)`` of every post under ``root`` (one folder per group), sorted by
    group then by numeric id. Hidden files and nested folders are skipped."""
    root = Path(root)
    posts = []
    for group_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = [p for p in group_dir.iterdir() if p.is_file() and not p.name.startswith(".")]
        files.sort(key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name))
        posts += [(f"{group_dir.name}/{p.name}", group_dir.name, p) for p in files]
    if not posts:
        raise InputError(f"{root}: no posts (expected one folder per newsgroup, each holding post files)")
    return posts


def _split_headers(lines, where):
    """(header lines, index of the first body line); checks each header line."""
    end = len(lines)
    for i, line in enumerate(lines):
        if not line.strip():
            end = i
            break
        if line[:1] in (" ", "\t"):
            continue      # a continuation (a leading one is the remains of a removed Path: header)
        if not _HEADER.match(line):
            raise InputError(f"{where}:{i + 1}: malformed header line {line[:60]!r} "
                             "(expected 'Name: value' before the first blank line)")
    if end == 0:
        raise InputError(f"{where}:1: no header block (a post starts with header lines such as 'Subject: ...')")
    return lines[:end], min(end + 1, len(lines))


def _subject(header_lines, where):
    for i, line in enumerate(header_lines):
        match = _HEADER.match(line)
        if match and match.group(1).lower() == "subject":
            value = [match.group(2)]
            for cont in header_lines[i + 1:]:
                if cont[:1] not in (" ", "\t"):
                    break
                value.append(cont.strip())
            return " ".join(v.strip() for v in value if v.strip())
    raise InputError(f"{where}: no Subject header in lines 1-{len(header_lines)}")


def _looks_like_signature(line: str) -> bool:
    s = line.strip()
    if not s or _SIG_CUE.search(s):
        return True
    if s[-1] in ":;{}()" or "=" in s:          # a lead-in ("Candidate:") or code, not a name
        return False
    words = s.split()
    return len(words) <= 3 and not (len(words) >= 2 and s[-1] in ".?!")


def _classify_body(lines):
    """A kind per line: 'body', 'quotes' or 'signature'."""
    kinds = ["body"] * len(lines)
    i = 0
    while i < len(lines):                      # quotes and attributions
        line = lines[i]
        if _QUOTE.match(line):
            kinds[i] = "quotes"
        elif _ATTRIBUTION_START.match(line):
            end = i
            for j in range(i, min(i + 3, len(lines))):
                if _ATTRIBUTION_END.search(lines[j]):
                    end = j
                    break
            for j in range(i, end + 1):
                kinds[j] = "quotes"
            i = end
        elif _ATTRIBUTION_END.search(line) and len(line) < 120:
            kinds[i] = "quotes"
        i += 1

    nonempty = [i for i, line in enumerate(lines) if line.strip()]
    dashes = [i for i in nonempty if _SIG_DASHES.match(lines[i])]
    if dashes and sum(1 for i in nonempty if i > dashes[-1]) <= SIGNATURE_MAX_LINES:
        for j in range(dashes[-1], len(lines)):
            kinds[j] = "signature"
        return kinds
    own = [i for i in nonempty if kinds[i] == "body"]
    start = None                               # where a short signature-like trailing block begins
    end = own[-1] + 1 if own else 0
    for _ in range(2 if own else 0):           # the author's last paragraph, and the one before it
        first = end - 1
        while first > 0 and lines[first - 1].strip():
            first -= 1
        block = [i for i in range(first, end) if lines[i].strip()]
        taken = [i for i in nonempty if start is not None and start <= i]
        if (not block or len(block) + len(taken) > 4 or any(kinds[i] != "body" for i in block)
                or not all(_looks_like_signature(lines[i]) for i in block)
                or not any(kinds[i] == "body" for i in nonempty if i < first)):
            break
        start = first
        end = first
        while end > 0 and not lines[end - 1].strip():
            end -= 1
    if start is not None:
        for j in range(start, len(lines)):
            if kinds[j] == "body":
                kinds[j] = "signature"
    return kinds


def _join(lines) -> str:
    return "\n".join(lines).strip("\n")


def parse_post(text: str, *, where: str = "<post>", doc_id: str = "", label: str = "",
               keep=DEFAULT_KEEP, encoding: str = "utf-8", path: str = "") -> Document:
    """One post's text as a Document (see the module docstring for what each part is)."""
    keep = check_keep(keep, PARTS)
    if not text.strip():
        raise InputError(f"{where}: empty post (no headers, no body)")
    lines = text.split("\n")
    header_lines, body_start = _split_headers(lines, where)
    subject = _subject(header_lines, where)
    body_lines = lines[body_start:]
    kinds = _classify_body(body_lines)

    parts = {k: [line for line, kind in zip(body_lines, kinds, strict=True) if kind == k]
             for k in ("body", "quotes", "signature")}
    kept = []
    if "headers" in keep:
        kept.append(_join(header_lines))
    elif "subject" in keep:
        kept.append(subject)
    kept_lines = [line for line, kind in zip(body_lines, kinds, strict=True) if kind in keep]
    kept.append(_join(kept_lines))
    return Document(doc_id=doc_id, label=label, title=subject, body=_join(parts["body"]),
                    text="\n\n".join(k for k in kept if k.strip()), quotes=_join(parts["quotes"]),
                    signature=_join(parts["signature"]), headers=_join(header_lines), encoding=encoding,
                    path=path)


def read_post(path, *, doc_id: str = "", label: str = "", keep=DEFAULT_KEEP) -> Document:
    """One post file (UTF-8, else Latin-1). Errors name the file (and line)."""
    path = Path(path)
    text, encoding = read_document_file(path)
    return parse_post(text, where=str(path), doc_id=doc_id or path.name, label=label, keep=keep,
                      encoding=encoding, path=str(path))


def load_newsgroups(root, split: str, *, keep=DEFAULT_KEEP, dev_list=None, groups=None) -> list[Document]:
    """Posts of a bydate folder as Documents, sorted by group then id.

    ``split``: ``"train"`` (the train folder minus the dev list), ``"dev"`` (the posts the dev
    list names), ``"all"`` (every post of the folder), ``"test"`` (every post of
    ``20news-bydate-test``, where ``root`` holds it). ``dev_list``: a path or a list of
    ``group/id``; default the bundled dev split of bydate train
    (``captioner/data/splits/20newsgroups_dev.txt``: in each group, the 10% with the highest
    article numbers, i.e. the latest posts, as the bydate test split follows train in time). ``groups``: only these groups."""
    keep = check_keep(keep, PARTS)
    folder = newsgroups_root(root, split)
    posts = list_posts(folder)
    if split in ("train", "dev"):
        posts = apply_split(posts, split, dev_list if dev_list is not None else bundled_split_list(DEV_LIST),
                            id_of=lambda p: p[0])
    elif split not in ("all", "test"):
        raise InputError(f"split {split!r}: expected train, dev, all or test")
    posts = only_labels(posts, groups, list_posts(folder) if groups is not None else (), folder, "group")
    return [read_post(path, doc_id=doc_id, label=group, keep=keep) for doc_id, group, path in posts]
