#!/usr/bin/env python
"""A second time-ordered dev split of 20 Newsgroups bydate train (issue 42): does a classifier's
dev figure hold on other posts, or did model selection fit the bundled dev split?

    python scripts/newsgroups_second_split.py --out /work/data/ng_split2
    captioner train classify --data-dir /work/data/ng_split2/20news-bydate-train \\
        --dev-list /work/data/ng_split2/dev2.txt ...
    python scripts/classify_baselines.py --dataset newsgroups \\
        --data-dir /work/data/ng_split2/20news-bydate-train --dev-list /work/data/ng_split2/dev2.txt

The bundled dev split is, in each group, the 10% of posts with the highest article numbers (the
latest). The second one is the 10% of each group just before them (the 80th to 90th percentile
of article numbers, `make_dev_split(..., latest=article_number)` on the posts the bundled dev
split leaves), and its train part is what precedes it: OUT/20news-bydate-train holds links to
every post except both dev splits' (the bundled dev posts, later than dev2, are in neither part),
so train still precedes dev in time. Nothing is copied; rerunning rewrites the same links.
"""

import argparse
import os
import sys

from captioner.data.documents import bundled_split_list, make_dev_split, read_split_list, write_split_list
from captioner.data.newsgroups import DEV_LIST, article_number, list_posts, newsgroups_root


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--newsgroups-dir", default="../shared/datasets/20newsgroups/20news-bydate-train")
    p.add_argument("--out", required=True, help="folder for 20news-bydate-train/ (links) and dev2.txt")
    args = p.parse_args(argv)
    posts = list_posts(newsgroups_root(args.newsgroups_dir))
    dev1 = set(read_split_list(bundled_split_list(DEV_LIST)))
    rest = [(i, g, path) for i, g, path in posts if i not in dev1]
    dev2 = make_dev_split([i for i, _, _ in rest], [g for _, g, _ in rest], 1 / 9, latest=article_number)
    root = os.path.join(args.out, "20news-bydate-train")
    for _, group, path in rest:
        link = os.path.join(root, group, os.path.basename(path))
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(path), link)
    write_split_list(os.path.join(args.out, "dev2.txt"), dev2,
                     f"20 Newsgroups bydate train, second time-ordered dev split: {len(dev2)} posts, in each group the\n"
                     "10% just before the bundled dev split (scripts/newsgroups_second_split.py)")
    print(f"{len(posts)} posts: bundled dev {len(dev1)} (left out), dev2 {len(dev2)}, train {len(rest) - len(dev2)} "
          f"-> {root}, {os.path.join(args.out, 'dev2.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
