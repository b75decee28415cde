"""The object tagger: WordNet words of ImageNet classes, calibrated probabilities, the token
bonus of the search, the names filled in, and the bundled captioner naming real photos."""

import base64

import numpy as np
import pytest

from captioner.tagging import ObjectTagger, Tag, name_objects
from captioner.tagging.object_tagger import class_words, fit_known, imagenet_classes
from captioner.text import Vocabulary

TABBY, ESPRESSO, GOLDEN, SETTER = 281, 967, 207, 212


def test_each_class_maps_to_its_nearest_word_the_vocabulary_knows():
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee", "animal", "drink"]] * 2, min_count=1)
    words = class_words(vocab)
    assert imagenet_classes()[TABBY]["synset"] == "tabby.n.01"
    assert words[TABBY] == "cat" and words[GOLDEN] == "dog" and words[ESPRESSO] == "coffee"
    assert imagenet_classes()[SETTER]["name"] == "English setter"
    assert words[0] == "animal" or words[0] is None  # a tench: no fish in this vocabulary


def test_probabilities_tags_and_bonus():
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, threshold=0.3, bonus=4.0)
    logits = np.full((2, 1000), -10.0, np.float32)
    logits[0, [GOLDEN, SETTER]] = 5.0  # two dog breeds: one "dog" tag of summed probability
    logits[1, ESPRESSO] = 8.0
    # invert the head on these logits: pooled @ W + b = logits has a least-squares solution
    pooled = np.linalg.lstsq(tagger.kernel.T, (logits - tagger.bias).T, rcond=None)[0].T
    probs = tagger.probabilities(pooled)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    tags = tagger.tags(probs)
    assert tags[0][0].word == "dog" and tags[0][0].probability == pytest.approx(probs[0, [GOLDEN, SETTER]].sum(), 1e-4)
    assert tags[1][0].word == "coffee" and tags[1][0].name == "espresso"
    bonus = tagger.token_bonus(tags)
    assert bonus.shape == (2, len(vocab))
    assert bonus[0, vocab.token_to_id("dog")] == pytest.approx(4.0 * tags[0][0].probability)
    assert np.count_nonzero(bonus[0]) == 1 and np.count_nonzero(bonus[1]) == 1
    tagger.temperature = 3.0  # a higher temperature flattens
    assert tagger.probabilities(pooled).max() < probs.max()


def pooled_for(tagger, rows):
    """Pooled features whose logits put +8 on the given class of each row (least squares)."""
    logits = np.full((len(rows), 1000), -10.0, np.float32)
    for i, c in enumerate(rows):
        logits[i, c] = 8.0
    return np.linalg.lstsq(tagger.kernel.T, (logits - tagger.bias).T, rcond=None)[0].T


def test_classes_the_training_photos_show_are_known_and_get_no_bonus_and_no_name():
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, bonus=4.0)
    train = pooled_for(tagger, [GOLDEN, GOLDEN, GOLDEN, SETTER, ESPRESSO])  # golden retrievers x3
    fitted = fit_known(tagger, train, min_images=3)
    assert fitted == {"known": ["golden_retriever.n.01"], "fitted_on_images": 5, "fitted_min_images": 3,
                      "fitted_probability": 0.5}
    known = ObjectTagger.of("efficientnet_lite0", vocab, bonus=4.0, **fitted)
    tags = known.tags(known.probabilities(pooled_for(tagger, [GOLDEN, SETTER, ESPRESSO])))
    bonus = known.token_bonus(tags)
    assert bonus[0].max() == 0  # known: the captioner says "dog" by itself
    assert bonus[1, vocab.token_to_id("dog")] > 0 and bonus[2, vocab.token_to_id("coffee")] > 0  # novel
    assert known.name_objects("a dog runs".split(), tags[0]) == "a dog runs".split()
    assert known.name_objects("a dog runs".split(), tags[1]) == "an english setter runs".split()
    assert known.config()["known"] == ["golden_retriever.n.01"] and known.config()["fitted_min_images"] == 3
    with pytest.raises(TypeError, match="unknown setting"):
        ObjectTagger.of("efficientnet_lite0", vocab, treshold=0.4)


def test_a_class_is_known_only_where_the_training_captions_name_it():
    """fit_known(captions=...): golden retrievers whose captions say "dog" teach the word; espresso
    photos whose captions never say coffee (or espresso) teach none, however often they are seen."""
    from captioner.tagging.object_tagger import naming_words

    vocab = Vocabulary.build([["a", "cat", "dog", "coffee", "man"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab)
    assert {"dog", "dogs"} <= naming_words("golden_retriever.n.01", vocab)
    assert {"espresso", "coffee", "coffees"} <= naming_words("espresso.n.01", vocab)
    assert "beverage" not in naming_words("espresso.n.01", vocab)  # no higher than the tag word's level
    train = pooled_for(tagger, [GOLDEN] * 3 + [ESPRESSO] * 3)
    captions = [[["a", "dog", "runs"], ["a", "golden", "retriever"]]] * 3 + [[["a", "man", "sits"]]] * 3
    assert fit_known(tagger, train, 3)["known"] == ["espresso.n.01", "golden_retriever.n.01"]
    fitted = fit_known(tagger, train, 3, captions=captions)
    assert fitted["known"] == ["golden_retriever.n.01"] and fitted["fitted_named_in_captions"] is True
    with pytest.raises(ValueError, match="captions for 6 photos"):
        fit_known(tagger, train, 3, captions=captions[:2])


def test_photos_like_the_training_photos_are_familiar_and_their_tags_neither_steer_nor_name():
    """fit_familiar: k-means centroids of the training photos and a threshold at a quantile of held-out
    photos' closeness; a familiar photo's tags do not steer, whatever the class, and the settings
    survive the model's config (base64 float16)."""
    from captioner.tagging.object_tagger import decode_centroids, fit_familiar

    rng = np.random.default_rng(0)
    channels = 1280
    centres = rng.normal(size=(3, channels))
    train = centres[rng.integers(0, 3, 600)] + 0.3 * rng.normal(size=(600, channels))
    fitted = fit_familiar(train, centroids=3, quantile=0.05)
    assert fitted["fitted_familiar_centroids"] == 3 and fitted["fitted_familiar_photos"] == 600
    assert decode_centroids(fitted["familiar"], channels).shape == (3, channels)
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, bonus=4.0, **fitted)
    new_like_train = centres[rng.integers(0, 3, 200)] + 0.3 * rng.normal(size=(200, channels))
    assert 0.85 <= np.mean(tagger.familiarity(new_like_train) >= tagger.familiar_threshold) <= 1.0
    assert not np.any(tagger.familiarity(rng.normal(size=(50, channels))) >= tagger.familiar_threshold)

    # a photo exactly at a centroid is familiar; the espresso photo is not: only its tag steers
    # (two directions the head does not see, so the photos differ though the classes stay the same)
    null = np.linalg.svd(tagger.kernel.T)[2][-2:]  # (2, C): kernel.T @ v = 0
    photos = pooled_for(tagger, [TABBY, ESPRESSO])
    photos = photos + 10 * np.linalg.norm(photos, axis=1, keepdims=True) * null
    unit = photos[:1] / np.linalg.norm(photos[:1])
    assert float((unit @ (photos[1:] / np.linalg.norm(photos[1:])).T)[0, 0]) < 0.9
    familiar = base64.b64encode(unit.astype(np.float16).tobytes()).decode("ascii")
    gated = ObjectTagger.of("efficientnet_lite0", vocab, bonus=4.0, familiar=familiar, familiar_threshold=0.99)
    tags = gated.tag(photos)
    assert tags[0][0].word == "cat" and tags[0][0].familiar_photo and not gated.steers(tags[0][0])
    assert tags[1][0].word == "coffee" and not tags[1][0].familiar_photo and gated.steers(tags[1][0])
    bonus = gated.token_bonus(tags)
    assert bonus[0].max() == 0 and bonus[1, vocab.token_to_id("coffee")] > 0
    assert gated.name_objects("a cat sits".split(), tags[0]) == "a cat sits".split()
    assert tags[0][0].as_dict()["familiar_photo"] is True
    # the saved settings rebuild the same test; without them every photo may be steered
    again = ObjectTagger.of("efficientnet_lite0", vocab, **gated.config())
    assert [t.familiar_photo for t in again.tag(photos)[0]] == [t.familiar_photo for t in tags[0]]
    plain = ObjectTagger.of("efficientnet_lite0", vocab)
    assert plain.familiarity(photos) is None and not any(t.familiar_photo for ts in plain.tag(photos) for t in ts)
    with pytest.raises(ValueError, match="photos to fit"):
        fit_familiar(train[:10], centroids=64)


def test_the_subspace_test_calls_photos_off_the_training_photos_span_unfamiliar():
    """fit_familiar(test="subspace"): the training photos vary along a few directions; a photo with as
    much spread as theirs but along a new direction is unfamiliar, even though it is as close to their
    mean as they are (which the nearest-centroid test cannot tell); the settings survive the config."""
    from captioner.tagging.object_tagger import decode_centroids, familiarity, fit_familiar

    rng = np.random.default_rng(0)
    channels = 1280
    base = rng.normal(size=channels)
    span = np.linalg.qr(rng.normal(size=(channels, 5)))[0].T  # (5, C) orthonormal
    scale = np.linalg.norm(base)

    def photos(n, directions):
        return base + 0.3 * scale * rng.normal(size=(n, len(directions))) @ directions

    train = photos(800, span)
    fitted = fit_familiar(train, quantile=0.05, test="subspace", dims=5)
    assert fitted["familiar_test"] == "subspace" and fitted["fitted_familiar_dims"] == 5
    assert "fitted_familiar_centroids" not in fitted
    rows = decode_centroids(fitted["familiar"], channels)
    assert rows.shape == (6, channels)
    around = np.linalg.qr(np.concatenate([span, base[None]]).T)[0].T  # the unit photos vary in span and base
    np.testing.assert_allclose(np.linalg.norm(rows[1:] @ around.T, axis=1), 1.0, atol=0.02)  # the directions found
    vocab = Vocabulary.build([["a", "cat", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, **fitted)
    assert tagger.familiar_test == "subspace"
    like_train = photos(300, span)
    assert 0.85 <= np.mean(tagger.familiarity(like_train) >= tagger.familiar_threshold) <= 1.0
    new = np.linalg.qr(rng.normal(size=(channels, 5)))[0].T
    off_span = photos(300, new - (new @ span.T) @ span)
    assert np.mean(tagger.familiarity(off_span) >= tagger.familiar_threshold) < 0.05
    # as near the mean as the training photos: the nearest-centroid test calls them familiar
    centroid = fit_familiar(train, centroids=1, quantile=0.05)
    cosine = familiarity(decode_centroids(centroid["familiar"], channels), off_span)
    assert np.mean(cosine >= centroid["familiar_threshold"]) > 0.5
    again = ObjectTagger.of("efficientnet_lite0", vocab, **tagger.config())
    assert again.config()["familiar_test"] == "subspace"
    np.testing.assert_array_equal(again.familiarity(off_span), tagger.familiarity(off_span))
    assert "familiar_test" not in ObjectTagger.of("efficientnet_lite0", vocab, **centroid).config()
    with pytest.raises(ValueError, match="familiar_test must be one of"):
        ObjectTagger.of("efficientnet_lite0", vocab, familiar_test="gaussian")
    with pytest.raises(ValueError, match="5 principal directions"):
        fit_familiar(train[:5], test="subspace", dims=5)
    with pytest.raises(ValueError, match="test must be one of"):
        fit_familiar(train, test="knn")


def tag(word, name, synset, p):
    return Tag(word=word, probability=p, name=name, synset=synset, name_probability=p)


def test_names_fill_in_the_tag_word():
    cat = tag("cat", "tabby", "tabby.n.01", 0.8)
    assert name_objects("a cat is sitting on a bench".split(), [cat]) == "a tabby cat is sitting on a bench".split()
    coffee = tag("coffee", "espresso", "espresso.n.01", 0.9)
    assert name_objects("a cup of coffee".split(), [coffee]) == "a cup of espresso".split()
    setter = tag("dog", "English setter", "english_setter.n.01", 0.7)
    assert name_objects("a dog runs".split(), [setter]) == "an english setter runs".split()
    unsure = tag("dog", "English setter", "english_setter.n.01", 0.2)
    assert name_objects("a dog runs".split(), [unsure]) == "a dog runs".split()
    assert name_objects("a man runs".split(), [cat]) == "a man runs".split()


def test_an_unfamiliar_photo_is_described_by_its_object_alone():
    """describe="object": where the familiar test says the decoder's scene is not the photo's, the
    caption is the steering object with the decoder's descriptive words before it; a familiar photo,
    a caption without the tag's word, and describe="sentence" keep the decoder's sentence."""
    from captioner.tagging.object_tagger import describe_object

    finch = tag("bird", "house finch", "house_finch.n.01", 0.9)
    said = "two small brown birds are standing in front of a white building".split()
    assert describe_object(said, finch) == "a photo of a small brown house finch".split()
    cat = tag("cat", "tabby", "tabby.n.01", 0.9)
    assert describe_object("a girl cat in the air".split(), cat) == "a photo of a tabby cat".split()
    assert describe_object("a cat runs".split(), cat, medium="video") == "a video of a tabby cat".split()
    unsure = tag("coffee", "espresso", "espresso.n.01", 0.3)
    assert describe_object("a coffee is standing".split(), unsure) == "a photo of a coffee".split()
    with pytest.raises(ValueError, match="not in the caption"):
        describe_object("a man runs".split(), cat)

    vocab = Vocabulary.build([["a", "cat", "dog", "coffee", "is", "in", "the", "air"]] * 2, min_count=1)
    plain = ObjectTagger.of("efficientnet_lite0", vocab)
    null = np.linalg.svd(plain.kernel.T)[2][-2:]  # two directions the head does not see: the photos differ
    photos = pooled_for(plain, [TABBY, ESPRESSO])
    photos = photos + 10 * np.linalg.norm(photos, axis=1, keepdims=True) * null
    unit = photos[:1] / np.linalg.norm(photos[:1])  # the tabby photo is a training photo, the espresso one is not
    familiar = base64.b64encode(unit.astype(np.float16).tobytes()).decode("ascii")
    settings = dict(familiar=familiar, familiar_threshold=0.99)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, describe="object", **settings)
    tags = tagger.tag(photos)
    assert tagger.name_objects("a cat is in the air".split(), tags[0]) == "a cat is in the air".split()
    coffee = "a coffee is in the air".split()
    assert tagger.described_tag(coffee, tags[1]) is tags[1][0]
    assert tagger.name_objects(coffee, tags[1]) == "a photo of an espresso".split()
    assert tagger.name_objects("a dog is in the air".split(), tags[1]) == "a dog is in the air".split()
    assert ObjectTagger.of("efficientnet_lite0", vocab, **tagger.config()).describe == "object"
    sentence = ObjectTagger.of("efficientnet_lite0", vocab, **settings)
    assert sentence.name_objects(coffee, tags[1]) == "an espresso is in the air".split()
    assert "describe" not in sentence.config()
    with pytest.raises(ValueError, match="describe must be one of"):
        ObjectTagger.of("efficientnet_lite0", vocab, describe="template")


def test_a_learned_word_on_a_familiar_photo_keeps_the_sentence_and_has_no_deadline():
    """A learned word steers familiar photos too; there the captioner's sentence holds it where it
    fits (no deadline, no described object), while an unfamiliar photo gets the object early and
    described; the deadline is an int when every photo has the same one."""
    vocab = Vocabulary.build([["a", "man", "is", "playing", "guitar", "cat"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, search="constrained", deadline=3, describe="object",
                          familiar=base64.b64encode(np.ones((1, 1280), np.float16).tobytes()).decode("ascii"),
                          familiar_threshold=0.5)
    familiar = Tag("guitar", 0.9, "guitar", "", 0.9, familiar_photo=True, learned=True)
    novel = tag("cat", "tabby", "tabby.n.01", 0.9)
    inputs = tagger.search_inputs([[familiar], [novel], []])
    deadlines = inputs["constraint_deadline"]
    assert isinstance(deadlines, np.ndarray) and deadlines.dtype == np.int32 and deadlines.tolist() == [0, 3, 3]
    assert tagger.search_inputs([[novel], []])["constraint_deadline"] == 3
    assert tagger.search_inputs([[familiar]])["constraint_deadline"].tolist() == [0]
    assert ObjectTagger.of("efficientnet_lite0", vocab, search="constrained").search_inputs([[familiar], [novel]])[
        "constraint_deadline"] == 0
    said = "a man is playing a guitar".split()
    assert tagger.described_tag(said, [familiar]) is None and tagger.name_objects(said, [familiar]) == said
    assert tagger.name_objects("a cat is playing".split(), [novel]) == "a photo of a tabby cat".split()


@pytest.mark.slow
def test_the_bundled_captioner_names_the_sample_photos(tmp_path):
    """Issue 38: "a person is sitting on a bench" for a cat, "a brown dog" for an espresso."""
    import json
    from pathlib import Path

    from captioner.cli import main

    root = Path(__file__).resolve().parents[2]
    samples = root / "assets" / "samples"
    # the default captioner (Flickr8k and web photos) writes a sentence that names each
    out = tmp_path / "default.jsonl"
    assert main(["caption", str(samples / "cat.jpg"), str(samples / "coffee.jpg"), "--output", str(out),
                 "--no-progress"]) == 0
    rows = {Path(r["image"]).name: r for r in map(json.loads, out.read_text().splitlines())}
    assert " cat " in f' {rows["cat.jpg"]["caption"]} ' and "espresso" in rows["coffee.jpg"]["caption"]
    assert not any(r["caption"].startswith("a photo of") for r in rows.values())
    # the Flickr8k captioner: its tagger describes an unfamiliar photo by its object
    flickr8k = ["--model", str(root / "assets" / "models" / "flickr8k_attention.keras")]
    out = tmp_path / "c.jsonl"
    assert main(["caption", str(samples / "cat.jpg"), str(samples / "coffee.jpg"), "--output", str(out),
                 "--no-progress", *flickr8k]) == 0
    rows = {Path(r["image"]).name: r for r in map(json.loads, out.read_text().splitlines())}
    assert " cat" in rows["cat.jpg"]["caption"] and rows["cat.jpg"]["objects"][0]["word"] == "cat"
    assert "espresso" in rows["coffee.jpg"]["caption"] or "coffee" in rows["coffee.jpg"]["caption"]
    assert rows["coffee.jpg"]["objects"][0]["synset"] == "espresso.n.01"
    assert main(["caption", str(samples / "cat.jpg"), "--output", str(tmp_path / "plain.jsonl"), "--no-objects",
                 "--no-progress", *flickr8k]) == 0
    assert "objects" not in json.loads((tmp_path / "plain.jsonl").read_text())
    # the constrained search: the steering tag's word must be in the caption (then named)
    assert main(["caption", str(samples / "cat.jpg"), str(samples / "coffee.jpg"), "--output",
                 str(tmp_path / "cbs.jsonl"), "--tag-search", "constrained", "--tag-deadline", "3", "--no-progress",
                 *flickr8k]) == 0
    rows = {Path(r["image"]).name: r for r in map(json.loads, (tmp_path / "cbs.jsonl").read_text().splitlines())}
    assert rows["cat.jpg"]["objects"][0]["steered"] and " cat " in f' {rows["cat.jpg"]["caption"]} '
    # both photos are unlike the training photos: the caption is the object alone (describe="object")
    assert rows["coffee.jpg"]["caption"] == "a photo of an espresso" and rows["coffee.jpg"]["objects"][0]["described"]
    assert rows["cat.jpg"]["caption"] == "a photo of an egyptian cat"
    assert main(["caption", str(samples / "cat.jpg"), "--output", str(tmp_path / "bad.jsonl"), "--tag-deadline", "-1",
                 "--no-progress"]) == 2


def test_the_reported_log_probability_is_the_models_own_without_the_tag_bonus():
    from captioner.models.pixel_model import remove_bonus

    bonus = np.zeros((1, 6), np.float32)
    bonus[0, 4] = 3.0  # token 4 was pushed by a tag
    out = {"tokens": np.array([[[4, 5, 4, 2, 0], [5, 5, 2, 0, 0]]]), "lengths": np.array([[4, 3]]),
           "log_probs": np.array([[-1.0, -2.0]], np.float32), "scores": np.array([[-0.5, -2.0 / 3 ** 0.5]], np.float32)}
    remove_bonus(out, bonus, alpha=0.5)
    np.testing.assert_allclose(out["log_probs"], [[-4.0, -2.0]])  # the bonus counted once, only where held
    np.testing.assert_allclose(out["scores"], [[-4.0 / 4 ** 0.5, -2.0 / 3 ** 0.5]], rtol=1e-6)
    np.testing.assert_allclose(out["tag_bonus"], [[3.0, 0.0]])


def test_steering_tags_become_disjunctive_constraints_with_the_constrained_search():
    vocab = Vocabulary.build([["a", "cat", "cats", "dog", "coffee"]] * 2, min_count=1)
    tagger = ObjectTagger.of("efficientnet_lite0", vocab, search="constrained", max_constraints=1, threshold=0.3)
    tags = [[tag("cat", "tabby", "tabby.n.01", 0.8), tag("coffee", "espresso", "espresso.n.01", 0.6)],
            [tag("dog", "English setter", "english_setter.n.01", 0.2)], []]
    inputs = tagger.search_inputs(tags)
    assert list(inputs) == ["constraints", "constraint_deadline"]
    c = inputs["constraints"]  # (3, C=1, D=2): the most probable steering tag, the word or its plural
    assert c.shape == (3, 1, 2) and c.dtype == np.int32
    assert c[0, 0].tolist() == [vocab.token_to_id("cat"), vocab.token_to_id("cats")]
    assert c[1].tolist() == [[-1, -1]] and c[2].tolist() == [[-1, -1]]  # unsure, or no tag: no constraint
    assert tagger.search_inputs([[], [tag("dog", "x", "x.n.01", 0.1)]]) == {}  # nothing steers: plain search
    assert tagger.config()["search"] == "constrained"
    assert list(ObjectTagger.of("efficientnet_lite0", vocab).search_inputs(tags)) == ["token_bonus"]
    with pytest.raises(ValueError, match="search must be"):
        ObjectTagger.of("efficientnet_lite0", vocab, search="hard")


def test_animal_nouns_name_their_classes_and_the_head_says_yes_no_or_cannot_tell():
    from captioner.tagging.object_tagger import ANIMAL_CLASSES, animal_classes, animal_present

    dogs = animal_classes("dog")
    assert GOLDEN in dogs and SETTER in dogs and TABBY not in dogs and 100 < len(dogs) < 130
    np.testing.assert_array_equal(animal_classes("dogs"), dogs)
    assert TABBY in animal_classes("cats") and 0 in animal_classes("fish")  # a tench
    assert len(animal_classes("animal")) == ANIMAL_CLASSES
    assert imagenet_classes()[ANIMAL_CLASSES - 1]["name"] == "puffer"
    assert animal_classes("coffee") is None and animal_classes("bus") is None and animal_classes("qwerty") is None
    p = np.zeros(1000)
    p[ESPRESSO] = 0.99
    p[GOLDEN] = 0.005
    assert animal_present(p, dogs, 0.5) == ("no", pytest.approx(0.995))
    p[[GOLDEN, SETTER]] = 0.3, 0.3  # two breeds: one dog
    p[ESPRESSO] = 0.4
    assert animal_present(p, dogs, 0.5) == ("yes", pytest.approx(0.6))
    assert animal_present(p, animal_classes("cat"), 0.5)[0] is None  # nothing confident enough to rule a cat out
