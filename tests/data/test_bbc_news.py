"""BBC News topics reader: headline and body, encodings, errors, splits; the real copy."""

from pathlib import Path

import pytest

from captioner.data.bbc_news import list_bbc_articles, load_bbc_news, read_bbc_article
from captioner.data.documents import make_dev_split, read_split_list, to_hierarchy
from captioner.errors import InputError

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "bbc-news" / "bbc"


def _write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


@pytest.fixture
def corpus(tmp_path):
    bbc = tmp_path / "bbc"
    _write(bbc / "README.TXT", "not an article")
    _write(bbc / "tech" / "001.txt", "Ink helps drive democracy\n\nThe Kyrgyz Republic is using ink.\n\n"
           "This new technology is causing worries.  It also\nbrings hope.\n")
    _write(bbc / "tech" / "002.txt", "Phones get smarter\n\nPhones do more every year.\n")
    _write(bbc / "sport" / "001.txt", "Mutu fee row\n\nChelsea paid a \xa315.8m fee for Mutu.\n".encode("latin-1"))
    _write(bbc / "sport" / "002.txt", "Cup draw made\n\nThe draw was made on Monday.\n")
    return tmp_path


def test_headline_body_and_keep(corpus):
    doc = read_bbc_article(corpus / "bbc" / "tech" / "001.txt", doc_id="tech/001.txt", label="tech")
    assert doc.title == "Ink helps drive democracy" and doc.label == "tech"
    assert doc.body == "The Kyrgyz Republic is using ink.\n\nThis new technology is causing worries. It also brings hope."
    assert doc.text == doc.title + "\n\n" + doc.body
    assert read_bbc_article(corpus / "bbc" / "tech" / "001.txt", keep=("body",)).text == doc.body
    assert read_bbc_article(corpus / "bbc" / "tech" / "001.txt", keep="headline").text == doc.title
    assert [len(s) for s in to_hierarchy(doc.text, max_sentences=3)] == [4, 7, 7]
    with pytest.raises(InputError, match="keep="):
        read_bbc_article(corpus / "bbc" / "tech" / "001.txt", keep=("subject",))


def test_latin1_article_is_read(corpus):
    doc = read_bbc_article(corpus / "bbc" / "sport" / "001.txt")
    assert doc.encoding == "latin-1" and "£15.8m" in doc.body


def test_malformed_articles_name_file_and_line(tmp_path):
    for name, content, message in (("e.txt", b"", r"e.txt: empty file"),
                                   ("h.txt", "\nNo headline here.\n", r"h.txt:1: empty headline"),
                                   ("b.txt", "Only a headline\n\n\n", r"b.txt:2: no article text")):
        path = _write(tmp_path / "tech" / name, content)
        with pytest.raises(InputError, match=message):
            read_bbc_article(path)


def test_load_listing_and_splits(corpus, tmp_path):
    every = load_bbc_news(corpus, "all")             # the parent of bbc/ or bbc/ itself
    assert [d.doc_id for d in every] == ["sport/001.txt", "sport/002.txt", "tech/001.txt", "tech/002.txt"]
    assert [d.doc_id for d in load_bbc_news(corpus / "bbc", "all", topics=["tech"])] == ["tech/001.txt", "tech/002.txt"]
    dev_ids = make_dev_split([d.doc_id for d in every], [d.label for d in every])
    dev = load_bbc_news(corpus, "dev", dev_list=dev_ids)
    train = load_bbc_news(corpus, "train", dev_list=dev_ids)
    assert {d.label for d in dev} == {"sport", "tech"} and len(dev) == 2 and len(train) == 2
    assert not {d.doc_id for d in dev} & {d.doc_id for d in train}
    with pytest.raises(InputError, match=r"bbc_news_dev.txt: names \d+ document"):
        load_bbc_news(corpus, "train")
    with pytest.raises(InputError, match="no articles"):
        load_bbc_news(_write(tmp_path / "empty" / "tech" / "x.md", "").parent.parent, "all")
    with pytest.raises(InputError, match=r"no topic folder\(s\) \['world'\]"):
        load_bbc_news(corpus, "all", topics=["world"])


@pytest.mark.skipif(not REAL.is_dir(), reason="BBC News not in ../shared/datasets")
def test_real_copy_and_the_saved_dev_split():
    items = list_bbc_articles(REAL)
    assert len(items) == 2004 and {t for _, t, _ in items} == {"business", "entertainment", "politics", "sport", "tech"}
    saved = read_split_list(Path(__file__).resolve().parents[2] / "captioner" / "data" / "splits" / "bbc_news_dev.txt")
    # one BBC dev set for topics and headlines: the headline task's split, copies kept together
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines

    corpus = load_bbc_headlines(REAL)
    assert saved == sorted(p.id for p in split_bbc_headlines(corpus.pairs)[1])
    dev = load_bbc_news(REAL.parent, "dev")
    train_texts = {" ".join(d.body.split()) for d in load_bbc_news(REAL.parent, "train")}
    assert not any(" ".join(d.body.split()) in train_texts for d in dev)  # no dev article has a copy in train
    assert sorted(d.doc_id for d in dev) == saved and len(dev) == 205
    assert all(d.title and d.body for d in dev)
