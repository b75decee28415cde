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
    tokens: np.ndarray  # (N, L + 2) int32: <start> w1 .. wn <end> <pad>...
    lengths: np.ndarray  # (N,) tokens incl. start/end

    @classmethod
    def build(cls, dataset, vocab, max_words):
        rows, seqs = [], []
        for i, path in enumerate(dataset.image_paths):
            for caption in dataset.captions[path]:
                words = tokenize(caption)[:max_words]
                if words:
                    rows.append(i)
                    seqs.append(vocab.encode(words, add_start=True, add_end=True))
        tokens = np.full((len(seqs), max_words + 2), PAD_ID, dtype=np.int32)
        for j, s in enumerate(seqs):
            tokens[j, : len(s)] = s
        return cls(np.array(rows), tokens, np.array([len(s) for s in seqs]))

    def __len__(self):
        return len(self.rows)

    def steps_per_epoch(self, batch_size):
        return int(np.ceil(len(self) / batch_size))

    def batches(self, epoch, seed, batch_size):
        """One pass for `epoch`: (rows into the feature array, tokens cut to the batch's longest
        caption) per batch, shuffled by (seed, epoch) alone."""
        order = np.random.default_rng(seed + epoch).permutation(len(self))
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            yield self.rows[idx], self.tokens[idx, :int(self.lengths[idx].max())]


def decode_captions(model, features, keys, vocab, beam_size=3, alpha=0.0, max_length=20, batch_size=100):
    """Beam-decode feature rows; returns {key: caption text}."""
    out = {}
    for start in range(0, len(keys), batch_size):
        result = model.generate(features[start:start + batch_size], beam_size=beam_size, alpha=alpha,
                                max_length=max_length)
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
