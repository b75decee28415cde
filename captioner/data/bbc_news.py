"""BBC News (Greene and Cunningham 2006), as published (``bbc.zip`` unpacks to)::

    bbc/<topic>/NNN.txt        topics: business, entertainment, politics, sport, tech

The first line of each file is the headline, the rest (after a blank line) the article in
paragraphs. Each file becomes a :class:`~captioner.data.documents.Document` with
``label`` = the topic folder, ``title`` = the headline, ``body`` = the article (paragraphs
split at blank lines, white space inside each collapsed, joined by blank lines); ``keep``
(any of ``"headline"``, ``"body"``; default both) says what ``text`` holds, so the same
hierarchical recipe reads this and 20 Newsgroups, and a summarizer can take ``body`` as source
and ``title`` as target (``keep=("body",)`` keeps the headline out of the source text).

Bytes are UTF-8, else Latin-1 (one file of the public copy, ``sport/199.txt``, has a Latin-1
pound sign). An empty file, an empty first line or an article without body text is malformed:
InputError naming ``file:line``.
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
    "TOPICS",
    "bbc_root",
    "list_bbc_articles",
    "load_bbc_news",
    "parse_bbc_article",
    "read_bbc_article",
]

TOPICS = ("business", "entertainment", "politics", "sport", "tech")
PARTS = ("headline", "body")
DEFAULT_KEEP = ("headline", "body")
DEV_LIST = "bbc_news_dev"   # captioner/data/splits/bbc_news_dev.txt: 10% of each topic of the copy here


def bbc_root(root) -> Path:
    """The folder of topic folders: ``root`` itself or ``root/bbc``."""
    root = Path(root)
    if (root / "bbc").is_dir() and not any((root / t).is_dir() for t in TOPICS):
        return root / "bbc"
    if not root.is_dir():
        raise InputError(f"{root}: no such folder (expected BBC News topic folders)")
    return root


def list_bbc_articles(root) -> list[tuple[str, str, Path]]:
    """``(doc_id, topic, path)`` of every ``*.txt`` in the topic folders under ``root``, sorted.
    Any folder name is a topic (the five public ones are ``TOPICS``); files at the top
    (``README.TXT``) and hidden files are skipped."""
    root = Path(root)
    items = []
    for topic_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for p in sorted(topic_dir.iterdir()):
            if p.is_file() and p.suffix.lower() == ".txt" and not p.name.startswith("."):
                items.append((f"{topic_dir.name}/{p.name}", topic_dir.name, p))
    if not items:
        raise InputError(f"{root}: no articles (expected <topic>/NNN.txt files)")
    return items


def parse_bbc_article(text: str, *, where: str = "<article>", doc_id: str = "", label: str = "",
                      keep=DEFAULT_KEEP, encoding: str = "utf-8", path: str = "") -> Document:
    """One article's text (headline line, then the article) as a Document."""
    keep = check_keep(keep, PARTS)
    if not text.strip():
        raise InputError(f"{where}: empty file (expected a headline line, then the article)")
    lines = text.split("\n")
    headline = lines[0].strip()
    if not headline:
        raise InputError(f"{where}:1: empty headline (the first line must be the headline)")
    body = "\n".join(lines[1:]).strip()
    if not body:
        raise InputError(f"{where}:2: no article text after the headline")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n[ \t]*\n", body) if p.strip()]
    body = "\n\n".join(paragraphs)
    kept = ([headline] if "headline" in keep else []) + ([body] if "body" in keep else [])
    return Document(doc_id=doc_id, label=label, title=headline, body=body, text="\n\n".join(kept),
                    encoding=encoding, path=path)


def read_bbc_article(path, *, doc_id: str = "", label: str = "", keep=DEFAULT_KEEP) -> Document:
    """One article file (UTF-8, else Latin-1). Errors name the file (and line)."""
    path = Path(path)
    text, encoding = read_document_file(path)
    return parse_bbc_article(text, where=str(path), doc_id=doc_id or path.name, label=label, keep=keep,
                             encoding=encoding, path=str(path))


def load_bbc_news(root, split: str, *, keep=DEFAULT_KEEP, dev_list=None, topics=None) -> list[Document]:
    """Articles under ``root`` as Documents, sorted by topic then file name.

    ``split``: ``"train"`` (all but the dev list), ``"dev"`` (the dev list), ``"all"``.
    ``dev_list``: a path or a list of ``topic/NNN.txt``; default the bundled 10% of each topic
    of the 2,004-article copy in ``../shared/datasets`` (``captioner/data/splits/bbc_news_dev.txt``;
    a user with all 2,225 articles gets the other 221 in train). ``topics``: only these."""
    keep = check_keep(keep, PARTS)
    folder = bbc_root(root)
    items = list_bbc_articles(folder)
    items = apply_split(items, split, dev_list if dev_list is not None or split == "all"
                        else bundled_split_list(DEV_LIST), id_of=lambda p: p[0])
    items = only_labels(items, topics, list_bbc_articles(folder) if topics is not None else (), folder, "topic")
    return [read_bbc_article(path, doc_id=doc_id, label=topic, keep=keep) for doc_id, topic, path in items]
