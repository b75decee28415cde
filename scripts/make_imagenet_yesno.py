"""Yes/no questions about animals of the ImageNet sample photos, answered by WordNet: VQA rows to score.

    python scripts/make_imagenet_yesno.py --output imagenet_yesno.jsonl
    captioner evaluate vqa --questions imagenet_yesno.jsonl --images ../shared/datasets/imagenet-sample/images

Each photo is asked "is there a dog?", "... a cat?", "... a bird?", "... a horse?" and "... a fish?";
the answer is "yes" where the photo's class (the wnid its file name starts with: `n02099601_golden_retriever.jpg`)
is a kind of that animal in WordNet 3.0 (its hypernym closure holds dog.n.01, cat.n.01, ...), else "no".
Rows are `captioner make-qa` rows (image, question, answer, type "yesno"), so `captioner evaluate vqa`
scores them, the classifier alone and as `captioner ask` answers. The photos lie outside every VQA
training set here: a test of whether the model looks, not of what it learned.
"""

import argparse
import json
import os
import sys

ANIMALS = {"dog": "dog.n.01", "cat": "cat.n.01", "bird": "bird.n.01", "horse": "horse.n.01", "fish": "fish.n.01"}


def rows(folder, wordnet):
    out = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("n") and name[1:9].isdigit()):
            continue
        synset = wordnet.synset_from_pos_and_offset("n", int(name[1:9]))
        kinds = {h.name() for path in synset.hypernym_paths() for h in path}
        for word, animal in ANIMALS.items():
            out.append({"image": name, "question": f"is there a {word}?",
                        "answer": "yes" if animal in kinds else "no", "type": "yesno"})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", default=os.path.join("..", "shared", "datasets", "imagenet-sample", "images"))
    p.add_argument("--output", required=True)
    args = p.parse_args(argv)
    from captioner.io import write_text
    from captioner.text.wordnet import load_wordnet

    wordnet, why = load_wordnet()
    if wordnet is None:
        sys.exit(f"WordNet is needed: {why}")
    if not os.path.isdir(args.images):
        sys.exit(f"--images {args.images}: not a folder")
    made = rows(args.images, wordnet)
    write_text(args.output, "".join(json.dumps(r) + "\n" for r in made))
    yes = {w: sum(r["answer"] == "yes" for r in made if r["question"] == f"is there a {w}?") for w in ANIMALS}
    print(f"{len(made)} questions of {len(made) // len(ANIMALS)} photos; 'yes' per animal: {yes} -> {args.output}")


if __name__ == "__main__":
    main()
