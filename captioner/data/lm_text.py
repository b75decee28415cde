"""The texts `captioner train lm` reads (see captioner/training/recipes/lm.py for the splits).

* char: text files read as they are (concatenated); dev is carved from the end once, from a blank
  line on (:func:`carve_char_dev`), or read from --dev files;
* word: a Flickr8k folder (train = the train images' captions, dev = the dev images') or files of
  one sentence per line (dev: the last lines, or --dev files).
"""

from __future__ import annotations

import os

from captioner.errors import InputError, text_file_errors


def read_text(path):
    """A UTF-8 file's text as it is (newlines kept); InputError naming the file when it cannot be
    read or holds nothing."""
    with text_file_errors(path):
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    if not text.strip():
        raise InputError(f"{path}: empty")
    return text


def carve_char_dev(text, fraction):
    """(train, dev, description): dev is the text after the first blank line at or after the first
    (1 - fraction) of the characters (the whole end when there is none)."""
    cut = text.find("\n\n", int(len(text) * (1 - fraction)))
    cut = int(len(text) * (1 - fraction)) if cut < 0 else cut + 1
    return text[:cut], text[cut:], f"characters {cut:,} to the end of --data (from a blank line on)"


def char_data(paths, dev_paths, fraction):
    """(train text, dev text, how dev was chosen) of a character model."""
    text = "".join(read_text(p) for p in paths)
    if dev_paths:
        return text, "".join(read_text(p) for p in dev_paths), "the --dev files"
    return carve_char_dev(text, fraction)


def word_data(paths, dev_paths, fraction):
    """(train sentences, dev sentences, how dev was chosen) of a word model."""
    from captioner.data.flickr8k import load_flickr8k

    if len(paths) == 1 and os.path.isdir(paths[0]):
        train, dev = load_flickr8k(paths[0], "train"), load_flickr8k(paths[0], "dev")
        sentences = [s for p in train.image_paths for s in train.captions[p]]
        dev_sentences = [s for p in dev.image_paths for s in dev.captions[p]]
        return sentences, dev_sentences, "Flickr8k: train images' captions; dev: the dev images' captions"
    lines = [line for p in paths for line in read_text(p).split("\n") if line.strip()]
    if dev_paths:
        return lines, [line for p in dev_paths for line in read_text(p).split("\n") if line.strip()], "the --dev files"
    cut = int(len(lines) * (1 - fraction))
    return lines[:cut], lines[cut:], f"the last {len(lines) - cut} lines of --data"
