"""The hierarchical encoders (HAN word and sentence levels) and the query-free attention they
share with the decoders' AdditiveAttention: weights sum to 1 over the real words and sentences
only, padding changes nothing, and the query-free score is HAN's u^T tanh(W h + b)."""

import numpy as np
import pytest
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention
from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.word_encoder import WordEncoder


def _documents():
    rng = np.random.default_rng(1)
    ids = rng.integers(1, 20, size=(3, 5, 6)).astype("int32")
    ids[0, 1, 2:] = 0  # a sentence of two words
    ids[0, 3:] = 0  # document 0: three sentences
    ids[1, 1:] = 0  # document 1: one sentence
    ids[2, :, 4:] = 0  # document 2: five sentences of four words
    return ids


def test_query_free_attention_is_hans_formula():
    layer = AdditiveAttention(4, use_query=False)
    h = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    context, alpha = layer.pool(h, mask)
    w, b = layer.key_dense.get_weights()
    (u,) = layer.score_dense.get_weights()
    scores = (np.tanh(h @ w + b) @ u)[..., 0]
    scores = np.where(mask, scores, -np.inf)
    expected = np.exp(scores - scores.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(alpha.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(context.numpy(), np.einsum("br,brd->bd", expected, h), rtol=1e-5, atol=1e-6)
    assert layer.query_dense is None and len(layer.weights) == 3  # no W for a query


def test_query_free_attention_gives_an_all_padding_row_no_weight():
    layer = AdditiveAttention(4, use_query=False)
    h = np.ones((2, 3, 3), "float32")
    context, alpha = layer.pool(h, np.array([[0, 0, 0], [1, 1, 0]], bool))
    assert alpha.numpy()[0].tolist() == [0, 0, 0] and context.numpy()[0].tolist() == [0, 0, 0]
    np.testing.assert_allclose(alpha.numpy()[1], [0.5, 0.5, 0.0], atol=1e-6)


def test_pool_refuses_a_query_attention():
    with pytest.raises(ValueError, match="use_query=False"):
        AdditiveAttention(4).pool(tf.zeros((1, 2, 3)))


def test_word_weights_sum_to_one_over_real_words_and_padding_gets_zero():
    ids = _documents()
    encoder = WordEncoder(20, embedding_dim=6, units=5, attention_units=4)
    vectors, alpha, sentence_mask = (t.numpy() for t in encoder(ids))
    real_words = ids != 0
    real_sentences = real_words.any(-1)
    np.testing.assert_array_equal(sentence_mask, real_sentences)
    np.testing.assert_allclose(alpha.sum(-1)[real_sentences], 1.0, atol=1e-5)
    assert (alpha[~real_words] == 0).all()
    assert (vectors[~real_sentences] == 0).all() and (np.abs(vectors[real_sentences]).sum(-1) > 0).all()
    assert vectors.shape == (3, 5, 10) and alpha.shape == ids.shape


def test_word_encoder_gives_each_sentence_the_vector_it_gets_alone():
    """Gathering the real sentences into one batch (and cutting padding columns) changes nothing."""
    ids = _documents()
    encoder = WordEncoder(20, embedding_dim=6, units=5, attention_units=4)
    vectors, alpha, _ = (t.numpy() for t in encoder(ids))
    for b, s in [(0, 1), (1, 0), (2, 4)]:
        words = ids[b, s][ids[b, s] != 0]
        alone, alone_alpha, _ = (t.numpy() for t in encoder(words[None, :]))
        np.testing.assert_allclose(vectors[b, s], alone[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(alpha[b, s, :len(words)], alone_alpha[0], rtol=1e-5, atol=1e-6)
    # more padding (words and sentences) around the same document: the same outputs
    wider = np.zeros((3, 7, 9), "int32")
    wider[:, :5, :6] = ids
    v2, a2, _ = (t.numpy() for t in encoder(wider))
    np.testing.assert_allclose(v2[:, :5], vectors, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a2[:, :5, :6], alpha, rtol=1e-5, atol=1e-6)


def test_word_encoder_can_return_its_word_annotations():
    """return_annotations=True adds the per-word BiGRU annotations (zero at padding) and the word
    mask; each sentence vector is the attention-weighted sum of its word annotations."""
    ids = _documents()
    encoder = WordEncoder(20, embedding_dim=6, units=5, attention_units=4)
    plain = [t.numpy() for t in encoder(ids)]
    vectors, alpha, sentence_mask, words, word_mask = (t.numpy() for t in encoder(ids, return_annotations=True))
    for a, b in zip(plain, (vectors, alpha, sentence_mask)):
        np.testing.assert_array_equal(a, b)
    assert words.shape == ids.shape + (10,) and word_mask.shape == ids.shape
    np.testing.assert_array_equal(word_mask, ids != 0)
    assert (words[ids == 0] == 0).all() and (np.abs(words[ids != 0]).sum(-1) > 0).all()
    np.testing.assert_allclose((alpha[..., None] * words).sum(-2), vectors, rtol=1e-5, atol=1e-6)
    single = [t.numpy() for t in encoder(ids[2], return_annotations=True)]  # 2-D: (S, W) sentences
    assert len(single) == 5
    np.testing.assert_allclose(single[3], words[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(single[4], word_mask[2])


def test_sentence_weights_sum_to_one_over_real_sentences_and_padding_changes_nothing():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 4, 7)).astype("float32")
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    encoder = SentenceEncoder(7, units=5, attention_units=4)
    document, alpha, annotations = (t.numpy() for t in encoder(x, mask=mask))
    np.testing.assert_allclose(alpha.sum(-1), 1.0, atol=1e-5)
    assert (alpha[~mask] == 0).all() and (annotations[~mask] == 0).all()
    # the padded document's vector is that of its two real sentences alone
    alone, alone_alpha, _ = (t.numpy() for t in encoder(x[:1, :2], mask=mask[:1, :2]))
    np.testing.assert_allclose(document[0], alone[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(alpha[0, :2], alone_alpha[0], rtol=1e-5, atol=1e-6)
    # what is in the padding does not matter
    noisy = x.copy()
    noisy[0, 2:] = 100.0
    np.testing.assert_allclose(encoder(noisy, mask=mask)[0].numpy(), document, rtol=1e-5, atol=1e-6)
