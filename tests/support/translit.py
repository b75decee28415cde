"""Generated romanized -> Devanagari pairs for the transliteration tests (no real data)."""

import itertools

import numpy as np

# Latin syllable -> Devanagari: words are 1-3 syllables, so the mapping is learnable and exact
SYLLABLES = {"ka": "क", "ki": "कि", "ma": "म", "mi": "मि", "na": "न", "ra": "र", "ta": "त", "la": "ल",
             "ga": "ग", "sa": "स", "pa": "प", "da": "द"}


def generated_pairs(n, seed=0):
    """n distinct (romanized, native) pairs."""
    rng = np.random.default_rng(seed)
    keys = list(SYLLABLES)
    seen, out = set(), []
    for _ in itertools.count():
        k = rng.integers(1, 4)
        syl = [keys[i] for i in rng.integers(0, len(keys), k)]
        rom = "".join(syl)
        if rom not in seen:
            seen.add(rom)
            out.append((rom, "".join(SYLLABLES[s] for s in syl)))
        if len(out) == n:
            return out


def write_dakshina(folder, n_train=300, n_dev=40, lang="hi"):
    """<lang>.translit.sampled.{train,dev}.tsv in Dakshina's format (native, romanized, count)."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = generated_pairs(n_train + n_dev)
    for split, rows in (("train", pairs[:n_train]), ("dev", pairs[n_train:])):
        lines = [f"{nat}\t{rom}\t{1 + i % 3}" for i, (rom, nat) in enumerate(rows)]
        (folder / f"{lang}.translit.sampled.{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pairs


LATIN = tuple("abcdefghijklmnopqrstuvwxyz")
DEVANAGARI = tuple("अकगतनमरलसािीे्ं")


def tiny_transliterator(beam_size=3, max_length=8):
    """A random-weight Latin -> Devanagari character model (seed 0)."""
    import keras

    from captioner.models.seq2seq import Seq2Seq
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(0)
    specials = ("<pad>", "<start>", "<end>", "<unk>")
    return Seq2Seq.of(Vocabulary(specials + LATIN), Vocabulary(specials + DEVANAGARI), embedding_dim=8, units=8,
                   attention_units=8, dropout=0.0, beam_size=beam_size, max_length=max_length, max_source_length=20,
                   source_tokenizer={"chars": True, "lower": True}, target_tokenizer={"chars": True, "lower": False},
                   replace_unk=False)
