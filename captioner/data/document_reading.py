"""Documents for a classifier: the corpus splits `captioner train classify` reads (`load_documents`),
and how one document is read, wherever it comes from (`captioner classify` on a file,
`POST /v1/classify` on a string): `auto` reads a text that starts with a header block holding a
Subject as a Usenet post (the Subject and the author's own text, as the 20 Newsgroups reader
reads it), any other as plain text; `post`, `bbc` (headline line, then the text) and `text` force one."""

from __future__ import annotations

FORMATS = ("auto", "post", "bbc", "text")


def read_document_text(text, fmt="auto", where="<text>"):
    """(the text the model reads, how it was read: "post", "bbc" or "text"); InputError naming
    `where` for an empty text or one malformed for a forced format."""
    from captioner.data.bbc_news import parse_bbc_article
    from captioner.data.newsgroups import parse_post
    from captioner.errors import InputError

    if fmt not in FORMATS:
        raise InputError(f"{where}: unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    if not text.strip():
        raise InputError(f"{where}: empty text")
    if fmt == "auto":
        try:
            return parse_post(text, where=where).text, "post"
        except InputError:
            return text, "text"
    if fmt == "post":
        return parse_post(text, where=where).text, "post"
    if fmt == "bbc":
        return parse_bbc_article(text, where=where).text, "bbc"
    return text, "text"


def load_documents(dataset, data_dir, split, dev_list=None):
    """The `split` ("train", "dev", ...) of a classification corpus: `dataset` "newsgroups" (a bydate
    folder) or "bbc" (BBC News), with its bundled dev list unless `dev_list` names another."""
    if dataset == "newsgroups":
        from captioner.data.newsgroups import load_newsgroups

        return load_newsgroups(data_dir, split, dev_list=dev_list)
    from captioner.data.bbc_news import load_bbc_news

    return load_bbc_news(data_dir, split, dev_list=dev_list)
