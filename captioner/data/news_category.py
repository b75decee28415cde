"""Reader of the HuffPost News Category Dataset (Misra 2022) for headline generation.

``News_Category_Dataset_v3.json`` holds one JSON object a line::

    {"link": ..., "headline": ..., "category": ..., "short_description": ...,
     "authors": ..., "date": ...}

The task is short description -> headline. Records whose description or headline is empty
(after stripping) are dropped and counted (the full v3 release has many empty
descriptions). The id is the ``link`` (the article's URL); the dev split is the hash rule of
:mod:`captioner.data.headlines` (salt ``news-category``, 10%, records sharing a link, a
description or a headline kept on one side), so no split file is kept.

Errors name ``file:line``: bad JSON, a line that is not an object, a missing field, or a
field that is not a string; non-UTF-8 bytes name the line too.
"""

from __future__ import annotations


from captioner.data.headlines import (
    DEV_FRACTION,
    HeadlineCorpus,
    HeadlinePair,
    split_headlines,
)
from captioner.data.json_file import json_objects
from captioner.errors import InputError

__all__ = ["NEWS_CATEGORY_SALT", "load_news_category", "split_news_category"]

NEWS_CATEGORY_SALT = "news-category"
_FIELDS = ("link", "headline", "short_description", "category")


def load_news_category(path) -> HeadlineCorpus:
    """Description -> headline pairs of a News Category JSON-lines file (plain or .gz), in file order."""
    pairs, dropped = [], []
    for where, obj in json_objects(path):
        for key in _FIELDS:
            if key not in obj:
                raise InputError(f"{where}: missing {key!r}")
            if not isinstance(obj[key], str):
                raise InputError(f"{where}: {key!r} is {type(obj[key]).__name__}, expected a string")
        link = obj["link"].strip()
        if not link:
            raise InputError(f"{where}: empty 'link' (the record's id)")
        description, headline = obj["short_description"].strip(), obj["headline"].strip()
        if not description or not headline:
            dropped.append((where, "empty short_description" if not description else "empty headline"))
            continue
        pairs.append(HeadlinePair(description, headline, link, obj["category"].strip(), where))
    if not pairs:
        raise InputError(f"{path}: no record with both a short_description and a headline")
    return HeadlineCorpus(pairs, dropped)


def split_news_category(pairs, dev_fraction: float = DEV_FRACTION):
    """``(train, dev)``: the project's fixed dev split of the News Category records (hash of the link)."""
    return split_headlines(pairs, dev_fraction, salt=NEWS_CATEGORY_SALT)
