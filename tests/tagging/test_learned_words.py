"""Words learned from labelled photos (DCC's lexical classifiers): the features, the F1-best cut-off
folded into the bias, and the tagger giving a learned word's tag that steers on any photo."""

import numpy as np
import pytest

from captioner.tagging import ObjectTagger
from captioner.tagging.learned_words import best_cutoff, decode_weights, encode_weights, fit_words, region_features
from captioner.text import Vocabulary


def test_region_features_are_the_mean_and_each_class_s_largest_logit_over_the_real_regions():
    rng = np.random.default_rng(0)
    kernel, bias = rng.normal(size=(4, 3)).astype(np.float32), np.array([0.5, -1.0, 0.0], np.float32)
    regions = rng.normal(size=(2, 3, 4)).astype(np.float32)
    mask = np.array([[1, 1, 0], [0, 0, 0]], np.float32)  # the second clip has no frame
    out = region_features(kernel, bias, regions, mask)
    assert out.shape == (2, 4 + 3)
    np.testing.assert_allclose(out[0, :4], regions[0, :2].mean(0), rtol=1e-5)
    np.testing.assert_allclose(out[0, 4:], (regions[0, :2] @ kernel + bias).max(0), rtol=1e-5)
    np.testing.assert_allclose(out[1], np.r_[np.zeros(4), bias], atol=1e-6)
    # pooled features alone are one region
    np.testing.assert_allclose(region_features(kernel, bias, regions[:, 0]), region_features(kernel, bias, regions[:, :1]))
    with pytest.raises(ValueError, match="expected"):
        region_features(kernel, bias, np.zeros((2, 3, 5)))


def test_the_cutoff_is_the_f1_best_and_never_splits_tied_scores():
    labels = np.array([1, 1, 0, 1, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])
    cutoff, f1 = best_cutoff(labels, scores)
    assert cutoff == pytest.approx(0.6) and f1 == pytest.approx(2 * 3 / (4 + 3))
    cutoff, _ = best_cutoff(np.array([1, 0, 1]), np.array([0.5, 0.5, 0.1]))
    assert cutoff in (0.5, 0.1)


def test_weights_round_trip_and_a_wrong_size_is_named():
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(decode_weights(encode_weights(w), 3, 3), w)
    with pytest.raises(ValueError, match="learned_weights holds 12 numbers"):
        decode_weights(encode_weights(w), 4, 3)


def photos(n=120, seed=0):
    """Region features of n photos, one in three showing a "bench" (a direction in one of its regions)."""
    rng = np.random.default_rng(seed)
    regions = rng.normal(size=(n, 4, 1280)).astype(np.float32)
    labels = np.arange(n) % 3 == 0
    direction = rng.normal(size=1280).astype(np.float32)
    regions[labels, 1] += 0.5 * direction
    return regions, labels


def test_a_learned_word_tags_the_photos_that_show_it_and_steers_even_on_a_familiar_photo():
    vocab = Vocabulary.build([["a", "man", "bench", "dog"]] * 2, min_count=1)
    plain = ObjectTagger.of("efficientnet_lite0", vocab)
    regions, labels = photos()
    features = region_features(plain.kernel, plain.bias, regions)
    settings = fit_words(features[:90], labels[:90, None], ["bench"], vocab)
    assert settings["learned_words"] == ["bench"]
    report = settings["fitted_learned"]["words"]["bench"]
    assert report["photos"] == 30 and report["cv_f1"] > 80
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, known=(), **settings)
    tags = tagger.tag(regions[90:].mean(1), regions[90:])
    said = np.array([any(t.learned and t.word == "bench" and tagger.steers(t) for t in image_tags)
                     for image_tags in tags])
    assert (said == labels[90:]).mean() >= 0.9  # held-out photos
    tag = next(t for image_tags in tags for t in image_tags if t.learned)
    assert tag.as_dict()["learned"] is True and tag.synset == ""
    tag.familiar_photo = True  # a learned word was taught because the captioner does not say it
    assert tagger.steers(tag) == (tag.probability >= tagger.threshold)
    # the settings travel in the config and rebuild the same tagger
    again = ObjectTagger.of("efficientnet_lite0", vocab, **tagger.config())
    assert [[(t.word, round(t.probability, 6)) for t in image_tags] for image_tags in again.learned_tags(regions[90:])] \
        == [[(t.word, round(t.probability, 6)) for t in image_tags] for image_tags in tagger.learned_tags(regions[90:])]
    assert again.config()["learned_words"] == ["bench"]


def test_a_learned_word_replaces_the_imagenet_tag_of_the_same_word():
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab)
    weights = np.zeros((1280 + 1000 + 1, 1), np.float32)
    weights[-1, 0] = -3.0  # says no (probability 0.047) to every photo
    learned = ObjectTagger.of("efficientnet_lite0", vocab, learned_words=["coffee"], learned_weights=encode_weights(weights),
                           min_probability=0.01)
    logits = np.full((1, 1000), -10.0, np.float32)
    logits[0, 967] = 8.0  # espresso
    pooled = np.linalg.lstsq(tagger.kernel.T, (logits - tagger.bias).T, rcond=None)[0].T
    assert tagger.tag(pooled)[0][0].word == "coffee" and tagger.steers(tagger.tag(pooled)[0][0])
    tags = learned.tag(pooled)[0]
    coffee = [t for t in tags if t.word == "coffee"]
    assert len(coffee) == 1 and coffee[0].learned and not learned.steers(coffee[0])
    # a class named by a learned word ("bike" for a mountain bike, whose tag word is "bicycle") gives way too
    vocab = Vocabulary.build([["a", "bicycle", "bike", "dog"]] * 2, min_count=1)
    bikes = ObjectTagger.of("efficientnet_lite0", vocab, learned_words=["bike"], learned_weights=encode_weights(weights),
                         min_probability=0.01)
    logits[0, 967], logits[0, 671] = -10.0, 8.0  # mountain bike
    pooled = np.linalg.lstsq(tagger.kernel.T, (logits - tagger.bias).T, rcond=None)[0].T
    assert ObjectTagger.of("efficientnet_lite0", vocab).tag(pooled)[0][0].word == "bicycle"
    assert [t.word for t in bikes.tag(pooled)[0] if not t.learned] == []


def test_fit_words_names_what_is_wrong():
    vocab = Vocabulary.build([["a", "bench"]] * 2, min_count=1)
    features = np.zeros((20, 5), np.float32)
    with pytest.raises(ValueError, match="not in the caption vocabulary"):
        fit_words(features, np.zeros((20, 1)), ["guitar"], vocab)
    with pytest.raises(ValueError, match="'bench' has 2 labelled photos of 20"):
        fit_words(features, (np.arange(20) < 2)[:, None], ["bench"], vocab)
    with pytest.raises(ValueError, match="labels of shape"):
        fit_words(features, np.zeros((19, 1)), ["bench"], vocab)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        ObjectTagger.of("efficientnet_lite0", vocab, learned_words=["guitar"], learned_weights="")


def test_word_features_concatenate_each_scale_and_the_tagger_needs_them_all():
    from captioner.tagging.learned_words import check_scales, word_features

    rng = np.random.default_rng(1)
    kernel, bias = rng.normal(size=(4, 3)).astype(np.float32), np.zeros(3, np.float32)
    regions, big = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(2, 9, 4)).astype(np.float32)
    out = word_features(kernel, bias, regions, scaled=[big])
    np.testing.assert_allclose(out, np.hstack([region_features(kernel, bias, regions), region_features(kernel, bias, big)]))
    np.testing.assert_array_equal(word_features(kernel, bias, regions), region_features(kernel, bias, regions))
    with pytest.raises(ValueError, match="2 photos, but scaled regions of \\[1\\]"):
        word_features(kernel, bias, regions, scaled=[big[:1]])
    assert check_scales([455, 390]) == [390, 455]
    for bad in ([390, 390], [16], ["big"]):
        with pytest.raises(ValueError, match="learned-word scales"):
            check_scales(bad)
    vocab = Vocabulary.build([["a", "bench"]] * 2, min_count=1)
    weights = encode_weights(np.zeros((2 * (1280 + 1000) + 1, 1), np.float32))
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, learned_words=["bench"], learned_weights=weights,
                          learned_scales=[390])
    assert tagger.config()["learned_scales"] == [390]
    grid = rng.normal(size=(1, 4, 1280)).astype(np.float32)
    assert len(tagger.tag(grid.mean(1), grid, scaled=[grid])[0]) >= 1
    with pytest.raises(ValueError, match=r"read the photo at \[390\] px too; got regions at 0"):
        tagger.tag(grid.mean(1), grid)
    with pytest.raises(ValueError, match=r"scales \[455, 390\] must be given as"):  # features follow the given order
        fit_words(np.zeros((20, 5), np.float32), np.zeros((20, 1)), ["bench"], vocab, scales=[455, 390])
    with pytest.raises(ValueError, match="learned_weights holds"):  # weights of one scale for two
        ObjectTagger.of("efficientnet_lite0", vocab, learned_words=["bench"], learned_scales=[390],
                     learned_weights=encode_weights(np.zeros((1280 + 1000 + 1, 1), np.float32)))
