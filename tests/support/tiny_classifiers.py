"""Tiny random classifiers that show a probability (a VQA model, an entailment classifier), built in
milliseconds, for the model tests and the tests of what reads them (calibration, evaluate)."""

import keras
import numpy as np

from support.backbones import tiny_backbone

VQA_WORDS = ["what", "color", "is", "the", "shape", "there", "a", "red", "blue", "circle"]
VQA_ANSWERS = ["red", "blue", "yes", "no"]
ENTAILMENT_WORDS = ("a", "man", "woman", "is", "not", "playing", "singing", "there", "no", "guitar")


def tiny_vqa_model(kind="attention", hops=2, seed=0):
    """A `VQAModel` on a tiny random backbone (32x32 photos -> a 4 x 4 x 8 grid), answers VQA_ANSWERS."""
    from captioner.models.vqa_classifier import VQAClassifier
    from captioner.models.vqa_model import VQAModel
    from captioner.text.vocabulary import Vocabulary

    backbone = tiny_backbone(channels=8, two_layers=False, seed=seed)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple(VQA_WORDS))
    classifier = VQAClassifier.of(len(vocab), len(VQA_ANSWERS), image_dim=8, kind=kind, hops=hops,
                               embedding_dim=6, units=10, attention_units=7, dropout=0.0)
    return VQAModel(backbone, classifier, vocab, VQA_ANSWERS, max_question_length=12)


def random_image(seed=0, size=32):
    """A (size, size, 3) uint8 photo of noise, a function of `seed`."""
    return np.random.default_rng(seed).integers(0, 256, (size, size, 3)).astype(np.uint8)


def tiny_entailment(seed=0, **kw):
    """An `EntailmentClassifier` over ENTAILMENT_WORDS, random weights of `seed`."""
    from captioner.models.entailment import EntailmentClassifier
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + ENTAILMENT_WORDS)
    return EntailmentClassifier.of(vocab, embedding_dim=8, units=8, hidden_units=8, dropout=0.0, **kw)
