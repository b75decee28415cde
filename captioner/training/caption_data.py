"""Caption training examples over cached features (images or clips), and beam decoding them to text."""

import dataclasses

import numpy as np

from captioner.decoding import hypothesis_texts
from captioner.text import tokenize
from captioner.text.vocabulary import PAD_ID


@dataclasses.dataclass
class CaptionExamples:
    """One row per (image, caption): the image's row in the feature array and its tokens."""

    rows: np.ndarray    # (N,) int: index into the feature array (image order of the dataset)
    tokens: np.ndarray  # (N, L + 2) int32: <start> w1 .. wn <end> <pad>... (<start>: the row's style token)
    lengths: np.ndarray  # (N,) tokens incl. start/end
    corpus: np.ndarray = None  # (N,) int: the corpus of each row (several corpora), else None

    @classmethod
    def build(cls, dataset, vocab, max_words, start_ids=None):
        """start_ids: {image path: (corpus index, start token id)} where captions of several corpora
        start with their corpus's style token (`captioner.data.caption_corpora`); None: <start>."""
        rows, seqs, corpus = [], [], []
        for i, path in enumerate(dataset.image_paths):
            for caption in dataset.captions[path]:
                words = tokenize(caption)[:max_words]
                if words:
                    rows.append(i)
                    seq = vocab.encode(words, add_start=True, add_end=True)
                    if start_ids is not None:
                        corpus.append(start_ids[path][0])
                        seq[0] = start_ids[path][1]
                    seqs.append(seq)
        tokens = np.full((len(seqs), max_words + 2), PAD_ID, dtype=np.int32)
        for j, s in enumerate(seqs):
            tokens[j, : len(s)] = s
        return cls(np.array(rows), tokens, np.array([len(s) for s in seqs]),
                   np.array(corpus) if start_ids is not None else None)

    def __len__(self):
        return len(self.rows)

    def steps_per_epoch(self, batch_size):
        return int(np.ceil(len(self) / batch_size))

    def epoch_order(self, epoch, seed, shares=None):
        """The example indices of one pass, shuffled by (seed, epoch) alone. shares: each corpus's
        share of the pass's len(self) examples (a corpus under its natural share drawn without
        repeats, one over it repeated: every caption once, then a fresh draw)."""
        rng = np.random.default_rng(seed + epoch)
        if shares is None:
            return rng.permutation(len(self))
        parts = []
        for c, share in enumerate(shares):
            members = np.flatnonzero(self.corpus == c)
            want = int(round(share * len(self)))
            draws = [rng.permutation(members) for _ in range(-(-want // max(len(members), 1)))]
            parts.append(np.concatenate(draws)[:want] if draws else members[:0])
        return rng.permutation(np.concatenate(parts))

    def batches(self, epoch, seed, batch_size, shares=None):
        """One pass for `epoch`: (rows into the feature array, tokens cut to the batch's longest
        caption) per batch, shuffled by (seed, epoch) alone; `shares` as in `epoch_order`."""
        order = self.epoch_order(epoch, seed, shares)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            yield self.rows[idx], self.tokens[idx, :int(self.lengths[idx].max())]


def decode_captions(model, features, keys, vocab, beam_size=3, alpha=0.0, max_length=20, batch_size=100,
                    style=None):
    """Beam-decode feature rows; returns {key: caption text}. style: the style a decoder trained on
    several corpora writes in (its start token)."""
    out = {}
    for start in range(0, len(keys), batch_size):
        batch = features[start:start + batch_size]
        extra = {} if style is None else {"start_tokens": model.style_tokens(style, len(batch))}
        result = model.generate(batch, beam_size=beam_size, alpha=alpha, max_length=max_length, **extra)
        out.update(zip(keys[start:start + batch_size], hypothesis_texts(result, vocab)))
    return out


def decode_clips(model, features, mask, vocab, beam_size=3, alpha=0.0, max_length=20, batch_size=128):
    """Beam-decode video feature batches; returns [caption text] in order."""
    out = []
    for start in range(0, len(features), batch_size):
        result = model.generate(features[start:start + batch_size], mask[start:start + batch_size],
                                beam_size=beam_size, alpha=alpha, max_length=max_length)
        out += hypothesis_texts(result, vocab)
    return out


def extract_missing(trainer, features, backbone, paths):
    """Extract the features `paths` lack into the store `features` (resumable); the paths that could
    not be read. Multi-worker: the chief extracts while the other workers wait, then they read its
    store (which must be where they can read it)."""
    import os

    from captioner.errors import InputError
    from captioner.features.extract import extract_features
    from captioner.features.store import FeatureStore
    from captioner.training.distribute import barrier

    role = trainer.role
    ids = [os.path.basename(p) for p in paths]
    if role.chief:
        report = extract_features(paths, features, backbone=backbone, ids=ids)
    barrier(trainer.strategy, role, "the chief extracts the features")
    if role.chief:
        return {p for p, _ in report.failed}
    if not os.path.exists(features):
        raise InputError(f"--features {features}: not found by {role.name}; in multi-worker training the "
                         "chief extracts the features and the other workers read its store, so it must be on "
                         "storage every worker reads (or a copy of the complete store on each)")
    with FeatureStore(features) as store:
        return {p for p, k in zip(paths, ids) if k not in store}  # the files the chief could not read
