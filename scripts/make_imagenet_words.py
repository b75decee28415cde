"""Write captioner/tagging/imagenet_words.json: for each of the 1,000 ImageNet-1k classes (in the
order of an ImageNet classifier's logits) its WordNet 3.0 synset, common name, own lemmas and
the lemmas of its hypernyms by distance (nearest first). The object tagger picks from these the
words a caption vocabulary knows, so inference needs no WordNet.

    python scripts/make_imagenet_words.py --classes ../shared/datasets/imagenet-sample/classes.tsv

classes.tsv: `index<TAB>wnid<TAB>name` (the standard sorted-wnid order; timm ships the same list
as imagenet_synsets.txt). WordNet: NLTK's data or Debian's wordnet-base (captioner.text.wordnet).
"""

import argparse
import csv
import os


from captioner.io import write_json  # noqa: E402
from captioner.text.wordnet import load_wordnet  # noqa: E402

MAX_DEPTH = 7  # hypernym edges followed
# too general to name what a photo shows
GENERIC = {"entity", "physical_entity", "object", "whole", "unit", "thing", "matter", "abstraction", "artifact",
           "artefact", "organism", "being", "living_thing", "instrumentality", "instrumentation", "causal_agent",
           "cause", "causal_agency", "physical_object", "group", "relation", "part", "portion", "covering",
           "commodity", "trade_good", "good", "structure", "construction", "equipment", "system", "attribute"}


def words_of(synset):
    return [name.replace("_", " ").lower() for name in synset.lemma_names() if name.lower() not in GENERIC]


def class_entry(wordnet, wnid, name):
    synset = wordnet.synset_from_pos_and_offset("n", int(wnid[1:]))
    levels, seen, frontier = [], {synset}, [synset]
    for _ in range(MAX_DEPTH):
        frontier = [h for s in frontier for h in s.hypernyms() + s.instance_hypernyms() if h not in seen]
        seen.update(frontier)
        if not frontier:
            break
        levels.append(sorted({w for s in frontier for w in words_of(s)}))
    return {"wnid": wnid, "synset": synset.name(), "name": name.replace("_", " "), "lemmas": words_of(synset),
            "hypernyms": levels}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", required=True, help="classes.tsv: index, wnid, name of the 1,000 classes")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "..", "captioner", "tagging",
                                                         "imagenet_words.json"))
    args = parser.parse_args(argv)
    wordnet, why = load_wordnet()
    if wordnet is None:
        raise SystemExit(f"WordNet is needed: {why}")
    with open(args.classes, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if [int(r["index"]) for r in rows] != list(range(1000)):
        raise SystemExit(f"{args.classes}: expected the 1,000 classes in index order")
    classes = [class_entry(wordnet, r["wnid"], r["name"]) for r in rows]
    write_json(args.output, {"source": "WordNet 3.0 hypernyms of the ImageNet-1k synsets; "
                                       "scripts/make_imagenet_words.py", "max_depth": MAX_DEPTH, "classes": classes})
    print(f"wrote {len(classes)} classes -> {args.output}")


if __name__ == "__main__":
    main()
