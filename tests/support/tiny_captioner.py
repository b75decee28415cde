"""Test helpers: a tiny random-weight ImageCaptioner (over support.backbones.tiny_backbone(): 32x32
pixels -> a 4x4x12 grid) saved to .keras, and an image folder with
real JPEG/PNG files, a nested folder, duplicate basenames and broken files."""

import os
import warnings

import keras
import numpy as np
from PIL import Image

from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary
from support.backbones import tiny_backbone

WORDS = ["a", "dog", "cat", "runs", "on", "the", "grass", "beach", "red", "ball", "man", "sits"]


def build_tiny_captioner(kind="attention", seed=0, max_length=6):
    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(SPECIAL_TOKENS + tuple(WORDS))
    decoder = CaptionDecoderModel.of(len(vocab), annotation_dim=12, kind=kind, projection_dim=8, embedding_dim=8,
                                  units=16, attention_units=8, dropout=0.0)
    return ImageCaptioner(tiny_backbone(), decoder, vocab, beam_size=2, alpha=0.0, max_length=max_length)


def save_tiny_captioner(path, **kwargs):
    model = build_tiny_captioner(**kwargs)
    with warnings.catch_warnings():  # "not yet been built": its backbone and decoder are
        warnings.simplefilter("ignore", UserWarning)
        model.save(path)
    return path


def make_images(root):
    """Write a folder of images; returns (good paths, broken paths), each sorted."""
    rng = np.random.default_rng(0)
    root = str(root)
    os.makedirs(os.path.join(root, "nested", "deeper"), exist_ok=True)
    os.makedirs(os.path.join(root, "other"), exist_ok=True)
    good = []
    specs = [("beach.jpg", (48, 64)), ("dog.png", (40, 40)), ("nested/cat.jpg", (64, 48)),
             ("nested/deeper/grass.png", (32, 32)), ("other/cat.jpg", (30, 70)), ("ball.JPEG", (50, 50)),
             ("grey.png", (36, 36))]
    for name, (h, w) in specs:
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.stack([xx * 255 // max(w - 1, 1), yy * 255 // max(h - 1, 1),
                        rng.integers(0, 256, (h, w))], axis=-1).astype(np.uint8)  # (h, w, 3)
        cy, cx = rng.integers(0, h), rng.integers(0, w)
        img[max(cy - 5, 0):cy + 5, max(cx - 5, 0):cx + 5] = (255, 0, 0)
        path = os.path.join(root, name)
        if name == "grey.png":
            Image.fromarray(img[..., 0], "L").save(path)
        else:
            Image.fromarray(img).save(path, quality=90) if name.lower().endswith((".jpg", ".jpeg")) \
                else Image.fromarray(img).save(path)
        good.append(path)
    truncated = os.path.join(root, "nested", "truncated.jpg")
    with open(good[0], "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 3])
    text = os.path.join(root, "notes.jpg")
    with open(text, "w") as f:
        f.write("this is a text file, not a JPEG\n")
    with open(os.path.join(root, "readme.txt"), "w") as f:  # not an image extension: not listed
        f.write("ignored\n")
    return sorted(good), sorted([truncated, text])
