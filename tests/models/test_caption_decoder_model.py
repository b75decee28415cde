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


def _copy_model(vocab_size=30, class_words=None, seed=0):
    """A tiny copy decoder (LSTM-C) over EfficientNet-Lite0's real ImageNet head (1280 features)."""
    from captioner.models.caption_decoder_model import check_copy_tags

    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    if class_words is None:
        class_words = rng.integers(-1, vocab_size, size=1000)
    spec = check_copy_tags({"variant": "efficientnet_lite0", "class_words": class_words, "vector_dim": 5}, vocab_size)
    vectors = rng.normal(size=(vocab_size, 5)).astype("float32")
    return CaptionDecoderModel.of(vocab_size, 1280, projection_dim=12, embedding_dim=8, units=16, attention_units=8,
                               dropout=0.0, copy_tags=spec, tag_vectors=vectors), vectors


def test_copy_decoder_generates_a_word_only_its_tags_hold():
    """Every ImageNet class tagged as word 7 -> each image's one tag is 7 with probability 1; with
    the vocabulary side never saying 7 and the switch shut, the caption's first word is 7."""
    model, vectors = _copy_model(class_words=np.full(1000, 7))
    feats = np.random.default_rng(1).normal(size=(2, 4, 1280)).astype("float32")
    tags = model.tag_state(feats)
    np.testing.assert_array_equal(tags["tag_ids"].numpy()[:, 0], [7, 7])
    np.testing.assert_allclose(tags["tag_probs"].numpy(), [[1, 0, 0], [1, 0, 0]], atol=1e-5)  # k=3, one word
    np.testing.assert_allclose(tags["tag_vectors"].numpy()[:, 0], [vectors[7]] * 2, atol=1e-6)
    kernel, bias = model.decoder.vocab_dense.get_weights()
    bias[7] = -50.0
    model.decoder.vocab_dense.set_weights([kernel, bias])
    switch_kernel, _ = model.decoder.switch.get_weights()
    model.decoder.switch.set_weights([np.zeros_like(switch_kernel), np.array([100.0], "float32")])  # p_gen = 1
    assert not np.any(model.generate(feats, beam_size=2, max_length=4)["tokens"].numpy() == 7)
    model.decoder.switch.set_weights([np.zeros_like(switch_kernel), np.array([-100.0], "float32")])
    first = model.generate(feats, beam_size=2, max_length=4)["tokens"].numpy()[:, 0, 0]
    np.testing.assert_array_equal(first, [7, 7])


def test_copy_decoder_saves_and_loads_with_its_tags(tmp_path):
    model, _ = _copy_model()
    feats = np.random.default_rng(3).normal(size=(3, 4, 1280)).astype("float32")
    before = model.generate(feats, beam_size=3, max_length=6)
    path = tmp_path / "copy.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.get_config()["copy_tags"] == model.get_config()["copy_tags"]
    np.testing.assert_allclose(loaded.tag_vectors.numpy(), model.tag_vectors.numpy())
    after = loaded.generate(feats, beam_size=3, max_length=6)
    np.testing.assert_array_equal(after["tokens"], before["tokens"])
    np.testing.assert_allclose(after["scores"], before["scores"], atol=1e-4)


def test_copy_decoder_checks_its_spec():
    from captioner.models.caption_decoder_model import check_copy_tags

    with pytest.raises(ValueError, match="missing"):
        check_copy_tags({"variant": "efficientnet_lite0"}, 30)
    with pytest.raises(ValueError, match="1,000 vocabulary ids"):
        check_copy_tags({"variant": "efficientnet_lite0", "class_words": [3] * 10, "vector_dim": 5}, 30)
    with pytest.raises(ValueError, match="1,000 vocabulary ids"):
        check_copy_tags({"variant": "efficientnet_lite0", "class_words": [30] * 1000, "vector_dim": 5}, 30)
    with pytest.raises(ValueError, match="reads 1280 features"):
        spec = check_copy_tags({"variant": "efficientnet_lite0", "class_words": [3] * 1000, "vector_dim": 5}, 30)
        CaptionDecoderModel.of(30, 64, projection_dim=12, embedding_dim=8, units=16, attention_units=8, copy_tags=spec)
    plain = CaptionDecoderModel.of(30, 10, projection_dim=12, embedding_dim=8, units=16, attention_units=8)
    with pytest.raises(ValueError, match="copy_tags decoder"):
        plain.transfer_input_embeddings([5])


def test_transfer_input_embeddings_recovers_a_linear_map():
    """Held-out words get vector @ M + b, the least-squares map fitted on every other word: when
    the learned embeddings are exactly linear in the word vectors, the held-out rows are recovered."""
    model, vectors = _copy_model()
    rng = np.random.default_rng(4)
    mapping, offset = rng.normal(size=(5, 8)), rng.normal(size=8)
    table = vectors @ mapping + offset
    held = [11, 17]
    garbage = table.copy()
    garbage[held] = 100.0
    model.decoder.embedding.embeddings.assign(garbage.astype("float32"))
    model.transfer_input_embeddings(held)
    got = model.decoder.embedding.embeddings.numpy()
    np.testing.assert_allclose(got[held], table[held], atol=1e-3)
    np.testing.assert_allclose(got[4:11], table[4:11], atol=1e-6)  # seen words untouched


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
