"""A tiny, quickly trained ImageCaptioner for the app tests.

The backbone is a one-layer conv net (224x224 pixels -> a 7x7x8 grid, the geometry of the
real EfficientNet-Lite0 grid) and the decoder is fitted for a few seconds to say one fixed
sentence, so the tests know the caption to expect while every part of the real inference
path (beam search, attention maps, saving, `keras.models.load_model`) runs.
"""

import keras
import numpy as np

from support.backbones import tiny_backbone

SENTENCE = ["a", "dog", "runs", "on", "the", "grass"]


def build_tiny_captioner(path, seed=0, steps=150):
    """Train and save a tiny attention captioner to `path` (.keras); returns the sentence it says."""
    from captioner.models.caption_decoder_model import CaptionDecoderModel, masked_sparse_ce
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.text.vocabulary import END_ID, SPECIAL_TOKENS, START_ID, Vocabulary

    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(list(SPECIAL_TOKENS) + SENTENCE + ["cat", "sits"])
    ids = [vocab.token_to_id(w) for w in SENTENCE]
    n = 8 * steps
    tokens = np.array([[START_ID] + ids] * n, dtype=np.int32)  # (n, 7) decoder input
    targets = np.array([ids + [END_ID]] * n, dtype=np.int32)  # (n, 7) next words
    rng = np.random.default_rng(seed)
    annotations = rng.random((n, 49, 8)).astype("float32")  # (n, R, C) like the tiny grid

    decoder = CaptionDecoderModel.of(len(vocab), 8, kind="attention", projection_dim=16, embedding_dim=8,
                                  units=16, attention_units=8, dropout=0.0)
    decoder.compile(optimizer=keras.optimizers.Adam(0.02), loss=masked_sparse_ce)
    decoder.fit({"annotations": annotations, "tokens": tokens}, targets, batch_size=8, epochs=1, verbose=0)
    backbone = tiny_backbone(224, channels=8, grid=7, preprocess="rescale", two_layers=False)  # (B, 7, 7, 8)
    model = ImageCaptioner(backbone, decoder, vocab, beam_size=3, alpha=0.0, max_length=12)
    model.save(path)
    return " ".join(SENTENCE)
