"""Caption training examples over cached features, fed through tf.data."""

import dataclasses

import numpy as np
import tensorflow as tf

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

    def dataset(self, features, batch_size, seed=0):
        """tf.data of ({"annotations", "tokens"}, targets): shuffled anew each epoch, each batch
        cut to its longest caption. `features` is the in-memory (images, R, D) or (images, D) array."""
        state = {"epoch": 0}

        def batches():
            rng = np.random.default_rng(seed + state["epoch"])
            state["epoch"] += 1
            order = rng.permutation(len(self))
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                width = int(self.lengths[idx].max())
                toks = self.tokens[idx, :width]
                yield ({"annotations": features[self.rows[idx]], "tokens": toks[:, :-1]}, toks[:, 1:])

        feat_spec = tf.TensorSpec((None,) + features.shape[1:], tf.as_dtype(features.dtype))
        spec = ({"annotations": feat_spec, "tokens": tf.TensorSpec((None, None), tf.int32)},
                tf.TensorSpec((None, None), tf.int32))
        # repeat(): Keras keeps one iterator across epochs when steps_per_epoch is given; each
        # pass re-runs the generator, which reshuffles with the next epoch's seed.
        return tf.data.Dataset.from_generator(batches, output_signature=spec).repeat().prefetch(2)


def decode_captions(model, features, keys, vocab, beam_size=3, alpha=0.0, max_length=20, batch_size=100):
    """Beam-decode feature rows; returns {key: caption text}."""
    out = {}
    for start in range(0, len(keys), batch_size):
        result = model.generate(features[start:start + batch_size], beam_size=beam_size, alpha=alpha,
                                max_length=max_length)
        out.update(zip(keys[start:start + batch_size], hypothesis_texts(result, vocab)))
    return out
