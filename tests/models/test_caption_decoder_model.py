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
        model = CaptionDecoderModel(30, 10, projection_dim=12, embedding_dim=8, units=16,
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
