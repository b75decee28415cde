"""20 Newsgroups reader: headers, quotes, signatures, encodings, errors, splits; the real copy."""

from pathlib import Path

import pytest

from captioner.data.documents import make_dev_split, read_split_list, write_split_list
from captioner.data.newsgroups import (
    article_number,
    list_posts,
    load_newsgroups,
    parse_post,
    read_post,
)
from captioner.errors import InputError

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "20newsgroups" / "20news-bydate-train"

REPLY = """\
From: alice@cs.example.edu (Alice Doe)
Subject: Re: Saturn pricing
Organization: Example University
Lines: 14

In article <C4vIr5.L3r@shuksan.example.com>, fred@shuksan (Fred) writes:
> Dealers make 2K on a car.
|> : nested old quote
>
I think the price is fair.
It is comparable to the competitors.

Second paragraph of my own.
--\x20
Alice Doe   | alice@cs.example.edu
Example University
"""


def _write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


@pytest.fixture
def corpus(tmp_path):
    """A tarball-shaped root: 20news-bydate-train/<group>/<id>, two groups."""
    train = tmp_path / "20news-bydate-train"
    _write(train / "rec.autos" / "101", REPLY)
    _write(train / "rec.autos" / "102", "From: b@x.org\nSubject: Engine noise\n\nMy engine knocks at idle.\n"
           "What should I check?\n\nThanks,\n\nBob\n")
    _write(train / "rec.autos" / "20", "From: c@x.org\nSubject: Tyres\n\nWhich tyres for winter?\n")
    _write(train / "sci.med" / "5", "From: d@x.org\nSubject: Caf\xe9 au lait spots\n\n"
           "J'ai vu un m\xe9decin \xe0 Montr\xe9al.\n".encode("latin-1"))
    _write(train / "sci.med" / "6", " uunet!olivea!orphan-path-continuation\nFrom: e@x.org\nSubject: Vitamin D\n"
           "Keywords: vitamin,\n\tsunlight\n\nHow much vitamin D is enough?\n")
    _write(train / "sci.med" / ".hidden", "not a post")
    return tmp_path


def test_reply_parts_are_separated(corpus):
    doc = read_post(corpus / "20news-bydate-train" / "rec.autos" / "101", doc_id="rec.autos/101", label="rec.autos")
    assert doc.title == "Re: Saturn pricing" and doc.label == "rec.autos" and doc.encoding == "utf-8"
    assert doc.body == "I think the price is fair.\nIt is comparable to the competitors.\n\nSecond paragraph of my own."
    assert doc.quotes.splitlines() == ["In article <C4vIr5.L3r@shuksan.example.com>, fred@shuksan (Fred) writes:",
                                       "> Dealers make 2K on a car.", "|> : nested old quote", ">"]
    assert doc.signature.splitlines()[0] == "-- " and "Example University" in doc.signature
    assert doc.headers.startswith("From: alice@") and doc.headers.endswith("Lines: 14")
    # default keep: the Subject and the author's own text, nothing else
    assert doc.text == "Re: Saturn pricing\n\n" + doc.body
    for dropped in ("alice@cs.example.edu", "Organization", "Dealers make", "In article", "Lines:"):
        assert dropped not in doc.text


def test_keep_options_choose_parts_in_file_order(corpus):
    path = corpus / "20news-bydate-train" / "rec.autos" / "101"
    with_quotes = read_post(path, keep=("subject", "body", "quotes")).text
    assert with_quotes.index("Dealers make") < with_quotes.index("I think the price")
    assert "Alice Doe   |" not in with_quotes
    assert read_post(path, keep=("body",)).text == read_post(path).body
    assert "Alice Doe   |" in read_post(path, keep=("body", "signature")).text
    everything = read_post(path, keep=("headers", "subject", "body", "quotes", "signature")).text
    assert everything.split() == REPLY.split()          # keeping every part gives the post back
    assert everything.count("Re: Saturn pricing") == 1  # the Subject is in the headers once
    with pytest.raises(InputError, match="keep=.*expected one or more of"):
        read_post(path, keep=("subject", "footer"))


def test_latin1_post_is_read_not_refused(corpus):
    doc = read_post(corpus / "20news-bydate-train" / "sci.med" / "5")
    assert doc.encoding == "latin-1"
    assert doc.title == "Café au lait spots" and doc.body == "J'ai vu un médecin à Montréal."


def test_header_continuations_and_orphan_path_remains(corpus):
    doc = read_post(corpus / "20news-bydate-train" / "sci.med" / "6")
    assert doc.title == "Vitamin D" and doc.body == "How much vitamin D is enough?"
    assert "sunlight" in doc.headers and "sunlight" not in doc.text
    folded = parse_post("Subject: A long\n  folded subject\nFrom: x\n\nbody text here\n")
    assert folded.title == "A long folded subject"


def test_short_trailing_block_is_a_signature_but_a_last_sentence_is_not():
    closing = parse_post("Subject: s\n\nMy engine knocks at idle.\nWhat should I check?\n\nThanks,\n\nBob\n")
    assert closing.body == "My engine knocks at idle.\nWhat should I check?"
    assert closing.signature == "Thanks,\n\nBob"
    contact = parse_post("Subject: s\n\nSee the FAQ first.\n\nlarry kepko\nlkepko@igpp.example.edu\n")
    assert contact.signature == "larry kepko\nlkepko@igpp.example.edu" and contact.body == "See the FAQ first."
    own = parse_post("Subject: s\n\nSee the FAQ first.\n\nI agree with you.\n")
    assert own.signature == "" and own.body.endswith("I agree with you.")
    code = parse_post("Subject: s\n\nMy main loop:\n\nXtRealizeWidget(top);\nXtAppMainLoop(app);\n}\n")
    assert code.signature == "" and code.body.endswith("}")
    alone = parse_post("Subject: s\n\nThanks!\n")          # nothing of the author's own before it: kept
    assert alone.body == "Thanks!" and alone.signature == ""
    long_after_dashes = parse_post("Subject: s\n\nintro\n--\n" + "".join(f"table row {i}\n" for i in range(20)))
    assert long_after_dashes.signature == "" and "table row 19" in long_after_dashes.body


def test_two_line_attribution_and_wrote_lines_are_quotes():
    doc = parse_post("Subject: s\n\nIn article <1993Apr5.1@x.edu>\n  bob@x.edu (Bob Roe)\n  writes:\n"
                     ">quoted\nsomeone@y.org wrote:\n> more\nMy answer is no.\n")
    assert doc.body == "My answer is no."
    assert doc.quotes.splitlines()[:3] == ["In article <1993Apr5.1@x.edu>", "  bob@x.edu (Bob Roe)", "  writes:"]
    assert "someone@y.org wrote:" in doc.quotes


def test_malformed_posts_name_file_and_line(tmp_path):
    empty = _write(tmp_path / "g" / "1", b"")
    with pytest.raises(InputError, match=rf"{empty}: empty post"):
        read_post(empty)
    bad_header = _write(tmp_path / "g" / "2", "From: a@b.c\nSubject: x\nthis is not a header\n\nbody\n")
    with pytest.raises(InputError, match=rf"{bad_header}:3: malformed header line 'this is not a header'"):
        read_post(bad_header)
    no_headers = _write(tmp_path / "g" / "3", "\nJust a body.\n")
    with pytest.raises(InputError, match=rf"{no_headers}:1: no header block"):
        read_post(no_headers)
    no_subject = _write(tmp_path / "g" / "4", "From: a@b.c\nLines: 2\n\nbody\n")
    with pytest.raises(InputError, match=rf"{no_subject}: no Subject header in lines 1-2"):
        read_post(no_subject)
    with pytest.raises(InputError, match="file not found"):
        read_post(tmp_path / "g" / "missing")


def test_headers_only_post_has_an_empty_body(tmp_path):
    doc = read_post(_write(tmp_path / "g" / "1", "From: a@b.c\nSubject: Only a subject\n"))
    assert doc.title == "Only a subject" and doc.body == "" and doc.text == "Only a subject"


def test_listing_order_and_whole_folder_errors(corpus, tmp_path):
    ids = [doc_id for doc_id, _, _ in list_posts(corpus / "20news-bydate-train")]
    assert ids == ["rec.autos/20", "rec.autos/101", "rec.autos/102", "sci.med/5", "sci.med/6"]  # numeric, no .hidden
    (tmp_path / "nothing").mkdir()
    with pytest.raises(InputError, match="no posts"):
        load_newsgroups(tmp_path / "nothing", "all")
    with pytest.raises(InputError, match="no such folder"):
        load_newsgroups(tmp_path / "absent", "all")
    with pytest.raises(InputError, match="no 20news-bydate-test"):
        load_newsgroups(corpus, "test")
    with pytest.raises(InputError, match="split 'valid'"):
        load_newsgroups(corpus, "valid")


def test_splits_from_a_dev_list(corpus, tmp_path):
    every = load_newsgroups(corpus, "all")      # the tarball root or the train folder itself
    assert [d.doc_id for d in every] == [d.doc_id for d in load_newsgroups(corpus / "20news-bydate-train", "all")]
    dev_ids = make_dev_split([d.doc_id for d in every], [d.label for d in every], fraction=0.3)
    assert dev_ids == make_dev_split([d.doc_id for d in every][::-1], [d.label for d in every][::-1], fraction=0.3)
    lst = write_split_list(tmp_path / "dev.txt", dev_ids, comment="test split")
    assert read_split_list(lst) == dev_ids
    dev = load_newsgroups(corpus, "dev", dev_list=lst)
    train = load_newsgroups(corpus, "train", dev_list=lst)
    assert [d.doc_id for d in dev] == dev_ids and {d.label for d in dev} == {"rec.autos", "sci.med"}
    assert not {d.doc_id for d in dev} & {d.doc_id for d in train}
    assert len(dev) + len(train) == len(every) == 5
    assert [d.doc_id for d in load_newsgroups(corpus, "all", groups=["sci.med"])] == ["sci.med/5", "sci.med/6"]
    with pytest.raises(InputError, match=r"no group folder\(s\) \['sci.space'\]"):
        load_newsgroups(corpus, "all", groups=["sci.space"])
    with pytest.raises(InputError, match=r"names 1 document\(s\) that the corpus lacks \(first: 'sci.med/999'\)"):
        load_newsgroups(corpus, "train", dev_list=[*dev_ids, "sci.med/999"])
    # the bundled list belongs to the real corpus, not to this one
    with pytest.raises(InputError, match="20newsgroups_dev.txt: names 1130 document"):
        load_newsgroups(corpus, "dev")


@pytest.mark.skipif(not REAL.is_dir(), reason="20 Newsgroups bydate train not in ../shared/datasets")
def test_real_bydate_train_and_the_saved_dev_split():
    posts = list_posts(REAL)
    assert len(posts) == 11314 and len({g for _, g, _ in posts}) == 20
    saved = read_split_list(Path(__file__).resolve().parents[2] / "captioner" / "data" / "splits"
                            / "20newsgroups_dev.txt")
    assert saved == make_dev_split([i for i, _, _ in posts], [g for _, g, _ in posts], 0.1, latest=article_number)
    assert len(saved) == 1130
    # the latest posts of each group: every dev article number is above every train one of its group
    for group in {g for _, g, _ in posts}:
        dev_n = [article_number(i) for i in saved if i.startswith(group + "/")]
        train_n = [article_number(i) for i, g, _ in posts if g == group and i not in set(saved)]
        assert min(dev_n) > max(train_n)
    dev = load_newsgroups(REAL, "dev")
    assert sorted(d.doc_id for d in dev) == saved and all(d.title for d in dev)
    assert len(load_newsgroups(REAL.parent, "train", groups=["sci.med"])) == 594 - 59
