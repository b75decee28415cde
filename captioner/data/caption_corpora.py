"""Several caption corpora in one captioner: `captioner train caption --corpus SPEC` (repeatable).

    --corpus flickr8k:../shared/datasets/flickr8k
    --corpus img2dataset:work/cc3m/data:train=00000+00001+00002:dev=00003:share=0.4

A SPEC is ``FORMAT:DIR`` then ``key=value`` fields, each after a ``:``:

* ``train=``, ``dev=``: the splits (Flickr8k: train / dev; COCO: train / val of the Karpathy json
  given by --karpathy-json; img2dataset: '+'-joined shard folders, no default);
* ``style=``: the corpus's style name (default: flickr8k, coco, web for img2dataset). Every
  training caption starts with the token ``<STYLE>`` instead of ``<start>``, so the one decoder
  learns how each corpus writes and a user picks one at decoding (`captioner caption --style`);
* ``share=``: this corpus's share of each epoch's captions, 0..1 (default: its natural share; the
  shares given must leave room for the others). A corpus below its natural share is subsampled,
  one above it repeats captions, each epoch drawn anew by (seed, epoch).
"""

from __future__ import annotations

import dataclasses

from captioner.errors import InputError

__all__ = ["Corpus", "parse_corpus", "corpus_photos", "epoch_shares", "style_token", "DEFAULT_STYLES"]

DEFAULT_STYLES = {"flickr8k": "flickr8k", "coco": "coco", "img2dataset": "web"}
DEFAULT_SPLITS = {"flickr8k": ("train", "dev"), "coco": ("train", "val"), "img2dataset": (None, None)}
KEYS = ("train", "dev", "style", "share")


@dataclasses.dataclass
class Corpus:
    format: str
    data_dir: str
    train: str
    dev: str
    style: str
    share: float | None = None

    def load(self, split, karpathy_json=None):
        """The CaptionDataset of `split` ("train" / "dev": this corpus's own split names)."""
        from captioner.data import load_coco_karpathy, load_flickr8k, load_img2dataset

        name = self.train if split == "train" else self.dev
        if self.format == "flickr8k":
            return load_flickr8k(self.data_dir, split=name)
        if self.format == "img2dataset":
            return load_img2dataset(self.data_dir, split=name, name=self.style)
        if not karpathy_json:
            raise InputError("--corpus coco:... needs --karpathy-json")
        return load_coco_karpathy(karpathy_json, self.data_dir, split=name)


def style_token(style):
    """The vocabulary token that starts a caption of `style`: "<web>"."""
    return f"<{style}>"


def parse_corpus(spec) -> Corpus:
    """A --corpus SPEC -> Corpus; InputError naming the spec and what is wrong."""
    parts = str(spec).split(":")
    if len(parts) < 2 or not parts[1]:
        raise InputError(f"--corpus {spec}: expected FORMAT:DIR[:train=...][:dev=...][:style=...][:share=...]")
    fmt, data_dir, fields = parts[0], parts[1], {}
    if fmt not in DEFAULT_STYLES:
        raise InputError(f"--corpus {spec}: format {fmt!r}; one of {', '.join(DEFAULT_STYLES)}")
    for part in parts[2:]:
        key, eq, value = part.partition("=")
        if not eq or key not in KEYS or not value:
            raise InputError(f"--corpus {spec}: {part!r}; fields are {', '.join(k + '=...' for k in KEYS)}")
        fields[key] = value
    train, dev = DEFAULT_SPLITS[fmt]
    train, dev = fields.get("train", train), fields.get("dev", dev)
    if not train or not dev:
        raise InputError(f"--corpus {spec}: an {fmt} corpus needs train=SHARDS and dev=SHARDS "
                         "(shard folders joined by '+', e.g. train=00000+00001:dev=00003)")
    style = fields.get("style", DEFAULT_STYLES[fmt])
    if not style.replace("_", "").replace("-", "").isalnum():
        raise InputError(f"--corpus {spec}: style {style!r} must be letters, digits, '-' or '_'")
    share = None
    if "share" in fields:
        try:
            share = float(fields["share"])
        except ValueError:
            share = -1.0
        if not 0.0 < share <= 1.0:
            raise InputError(f"--corpus {spec}: share {fields['share']!r} must be a number in (0, 1]")
    return Corpus(fmt, data_dir, train, dev, style, share)


def epoch_shares(corpora, sizes):
    """Each corpus's share of an epoch's captions: its `share`, the rest split among the others by
    their sizes (captions). InputError when the shares given do not add up."""
    given = sum(c.share for c in corpora if c.share is not None)
    free = [i for i, c in enumerate(corpora) if c.share is None]
    if given > 1.0 + 1e-9 or (not free and abs(given - 1.0) > 1e-6):
        raise InputError(f"--corpus shares add up to {given:g}: they must add up to 1 (or leave room for a "
                         "corpus without share=)")
    rest = sum(sizes[i] for i in free)
    return [c.share if c.share is not None else (1.0 - given) * sizes[i] / rest for i, c in enumerate(corpora)]


def check_styles(corpora):
    """`corpora` (Corpus list) as they are; InputError when two share a style (each needs its own token)."""
    styles = [c.style for c in corpora]
    if len(set(styles)) != len(styles):
        raise InputError(f"--corpus: two corpora share a style ({styles}); give each its own style=")
    return corpora


def load_corpora(corpora, split="train", karpathy_json=None):
    """Every corpus's `split` ("train" / "dev") as one CaptionDataset; ``metadata["corpus"]``: {path:
    corpus index}. Photos are keyed by file name in a `captioner extract` store: two photos of one
    name are refused."""
    import os

    from captioner.data.caption_dataset import CaptionDataset

    paths, captions, which, names = [], {}, {}, {}
    for index, corpus in enumerate(corpora):
        part = corpus.load(split, karpathy_json)
        for path in part.image_paths:
            name = os.path.basename(path)
            if name in names:
                raise InputError(f"{path}: has the file name of {names[name]}; the feature store keys photos by "
                                 "file name, so two corpora cannot share one")
            names[name] = path
            paths.append(path)
            captions[path] = part.captions[path]
            which[path] = index
    return CaptionDataset(paths, captions, name="+".join(c.style for c in corpora), split=split,
                          metadata={"corpus": which})


def first_per_corpus(dataset, n):
    """The first `n` photos of each corpus of a `load_corpora` dataset, in its order."""
    taken, kept = {}, []
    for path in dataset.image_paths:
        corpus = dataset.metadata["corpus"][path]
        taken[corpus] = taken.get(corpus, 0) + 1
        if taken[corpus] <= n:
            kept.append(path)
    return kept


def corpus_photos(specs, split="train"):
    """(photo paths, {file name: captions}) of the `split` of every --corpus SPEC (`load_corpora`)."""
    import os

    data = load_corpora([parse_corpus(spec) for spec in specs], split)
    return data.image_paths, {os.path.basename(p): data.captions[p] for p in data.image_paths}
