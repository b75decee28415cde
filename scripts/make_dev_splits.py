#!/usr/bin/env python
"""Carve the dev splits of the document-classification corpora from their train folders, once.

    python scripts/make_dev_splits.py            # writes captioner/data/splits/{20newsgroups,bbc_news}_dev.txt
    python scripts/make_dev_splits.py --check    # only checks the bundled lists against the data

10% of each group / topic (`captioner.data.documents.make_dev_split`), stratified and the
same on every machine:

* 20 Newsgroups: the posts with the highest article numbers in each group, i.e. the latest
  (numbers grow with arrival time). The official bydate test split follows train in time;
  a dev split that does too has fewer posts continuing a thread seen in training (56% of dev
  Subjects, "Re:" stripped, also occur in train, against 68% for a hash-chosen 10%), so its
  figures are less inflated: tf-idf + LinearSVC on raw posts scores 91.5% on it, 93.1% on
  a hash-chosen 10% (the official test split: about 86%).
* BBC News (no threads, no known time order): the split of the headline task
  (`captioner.data.headlines.split_bbc_headlines`), so both BBC tasks share one dev set. It
  keeps copies together: the copy holds 111 pairs of identical articles and more re-published
  ones, and a split by file alone put 21 of its dev articles' copies in train.

The lists were made from the copies in ../shared/datasets (20 Newsgroups bydate train, 11,314
posts; BBC News, 2,004 of the 2,225 articles) and are shipped with the package; rerunning this
on the same data rewrites identical files.
"""

import argparse
import os
import sys


from captioner.data.bbc_news import DEV_LIST as BBC_DEV
from captioner.data.bbc_news import bbc_root, list_bbc_articles
from captioner.data.documents import (
    SPLIT_DIR,
    make_dev_split,
    read_split_list,
    write_split_list,
)
from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
from captioner.data.newsgroups import DEV_LIST as NG_DEV
from captioner.data.newsgroups import article_number, list_posts, newsgroups_root

FRACTION, SALT = 0.1, "captioner-dev-v1"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--newsgroups-dir", default="../shared/datasets/20newsgroups/20news-bydate-train")
    p.add_argument("--bbc-dir", default="../shared/datasets/bbc-news/bbc")
    p.add_argument("--out-dir", default=str(SPLIT_DIR))
    p.add_argument("--check", action="store_true", help="compare with the lists in --out-dir instead of writing")
    args = p.parse_args(argv)
    jobs = [(NG_DEV, list_posts(newsgroups_root(args.newsgroups_dir)), article_number,
             "20 Newsgroups bydate train (11,314 posts): dev split", "with the highest article numbers (the latest)"),
            (BBC_DEV, list_bbc_articles(bbc_root(args.bbc_dir)), "headlines",
             "BBC News (the 2,004-article copy): dev split", "")]
    status = 0
    for name, items, latest, what, how in jobs:
        if latest == "headlines":  # one BBC dev set for topics and headlines, copies kept together
            _, dev_pairs = split_bbc_headlines(load_bbc_headlines(bbc_root(args.bbc_dir)).pairs)
            dev = sorted(p.id for p in dev_pairs)
        else:
            dev = make_dev_split([i for i, _, _ in items], [label for _, label, _ in items], FRACTION, SALT, latest)
        path = os.path.join(args.out_dir, f"{name}.txt")
        if args.check:
            same = read_split_list(path) == dev
            print(f"{path}: {'matches' if same else 'DIFFERS FROM'} the split made from the data ({len(dev)} ids)")
            status |= not same
            continue
        if latest == "headlines":
            comment = (f"{what}: {len(dev)} of {len(items)} files, by the hash rule of the headline task on groups\n"
                       "of copies (captioner.data.headlines.split_bbc_headlines: no dev article has a copy in train);\n"
                       "made by scripts/make_dev_splits.py")
        else:
            comment = (f"{what}: {len(dev)} of {len(items)} files, the {FRACTION:.0%} of each label\n{how};\n"
                       "made by scripts/make_dev_splits.py (captioner.data.documents.make_dev_split)")
        write_split_list(path, dev, comment)
        print(f"wrote {path}: {len(dev)} of {len(items)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
