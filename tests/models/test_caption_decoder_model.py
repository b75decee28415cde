"""CaptionDecoderModel training under mixed precision, and its attention penalty's dtype."""

import keras
import numpy as np
import pytest

from captioner.models.caption_decoder_model import CaptionDecoderModel, masked_sparse_ce


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(4, 6, 10)).astype("float32")
    tokens = rng.integers(1, 30, size=(4, 6)).astype("int32")
    tokens[1, 4:] = 0  # a shorter caption: <pad> targets are masked
    return {"annotations": feats, "tokens": tokens[:, :-1]}, tokens[:, 1:]


def _model(policy):
    keras.utils.set_random_seed(0)
    previous = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy(policy)
    try:
        model = CaptionDecoderModel.of(30, 10, projection_dim=12, embedding_dim=8, units=16,
                                    attention_units=8, dropout=0.0)
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=masked_sparse_ce)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    return model


def test_mixed_bfloat16_train_step_runs_with_finite_loss(batch):
    model = _model("mixed_bfloat16")
    assert model.compute_dtype == "bfloat16" and model.decoder.kernel_e.dtype == "float32"
    x, y = batch
    before = [w.numpy().copy() for w in model.trainable_weights]
    losses = [float(model.train_on_batch(x, y)) for _ in range(2)]
    assert all(np.isfinite(losses))
    assert any(not np.allclose(b, w.numpy()) for b, w in zip(before, model.trainable_weights))
    # the doubly stochastic penalty is a float32 loss next to the float32 cross-entropy
    model(x, training=True)
    assert [keras.backend.standardize_dtype(loss.dtype) for loss in model.losses] == ["float32"]
    # and it beam-decodes (compact beam search over bfloat16 states)
    out = model.generate(x["annotations"], beam_size=3, max_length=5)
    assert out["tokens"].shape == (4, 3, 5) and np.all(np.isfinite(out["scores"].numpy()[:, 0]))


def test_mixed_bfloat16_loss_close_to_float32(batch):
    x, y = batch
    losses = {}
    for policy in ("float32", "mixed_bfloat16"):
        model = _model(policy)
        losses[policy] = float(model.evaluate(x, y, verbose=0))
    assert losses["mixed_bfloat16"] == pytest.approx(losses["float32"], rel=0.05)


def test_transfer_word_weights_maps_the_output_layer_too_and_skips_words_without_vectors():
    """DCC's transfer on a plain decoder: the held-out words' embedding rows, output columns and
    biases are recovered when those are linear in the word vectors; words whose vector row is zero
    (no vector) are left out of the fit; a table of the wrong size is named."""
    keras.utils.set_random_seed(0)
    model = CaptionDecoderModel.of(30, 10, projection_dim=12, embedding_dim=8, units=16, attention_units=8)
    model.generate(np.zeros((1, 4, 10), np.float32), beam_size=1, max_length=2)  # builds the weights
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(30, 6))
    vectors[:4] = 0.0
    vectors[20] = 0.0  # a word without a vector: its (arbitrary) weights must not enter the fit
    kernel, bias = model.decoder.vocab_dense.kernel, model.decoder.vocab_dense.bias
    truth = {}
    for name, variable, width in (("embedding", model.decoder.embedding.embeddings, 8),
                                  ("kernel", kernel, kernel.shape[0]), ("bias", bias, 1)):
        rows = vectors @ rng.normal(size=(6, width)) + rng.normal(size=width)
        rows[20] = 1e3
        held = rows.copy()
        held[[11, 17]] = -50.0
        value = held if name == "embedding" else (held.T if name == "kernel" else held[:, 0])
        variable.assign(value.astype("float32"))
        truth[name] = rows
    model.transfer_word_weights([11, 17], vectors)
    got = {"embedding": model.decoder.embedding.embeddings.numpy(), "kernel": kernel.numpy().T,
           "bias": bias.numpy()[:, None]}
    for name in truth:
        np.testing.assert_allclose(got[name][[11, 17]], truth[name][[11, 17]], atol=1e-3, err_msg=name)
        np.testing.assert_allclose(got[name][4:11], truth[name][4:11], atol=1e-5, err_msg=name)
    with pytest.raises(ValueError, match="29 word vectors for 30 words"):
        model.transfer_word_weights([11], vectors[:29])
