"""Object tags steer the image and the video captioner alike (issue 38 item 4): a backbone
whose pooled features the ImageNet head reads as an espresso makes the constrained search put
the tag's word in the caption, and the class name fills it in; without objects, nothing changes."""

import json

import keras
import numpy as np
import pytest

from captioner.models.caption_decoder_model import CaptionDecoderModel
from captioner.models.image_captioner import ImageCaptioner
from captioner.models.video_caption_model import VideoCaptionModel
from captioner.models.video_captioner import VideoCaptioner
from captioner.tagging.object_tagger import imagenet_head
from captioner.text import Vocabulary
from captioner.text.vocabulary import SPECIAL_TOKENS

ESPRESSO = 967
WORDS = ("a", "man", "is", "sitting", "on", "bench", "coffee", "dog")


def espresso_backbone(size=32, seen=None):
    """pixels -> the same features for every image: pooled features the efficientnet_lite0 head
    reads as an espresso (or class `seen`; least squares on its kernel), grid (B, 1, 1, 1280). Named as
    the variant, so the captioner tags with that variant's head."""
    kernel, bias = imagenet_head("efficientnet_lite0")
    logits = np.full(1000, -10.0, np.float32)
    logits[ESPRESSO if seen is None else seen] = 8.0
    target = np.linalg.lstsq(kernel.T, logits - bias, rcond=None)[0].astype(np.float32)  # (1280,)
    x = keras.Input((size, size, 3))
    zeros = keras.layers.Rescaling(0.0)(x)
    pooled = keras.layers.Dense(1280, kernel_initializer="zeros",
                                bias_initializer=keras.initializers.Constant(target))(
        keras.layers.GlobalAveragePooling2D()(zeros))
    grid = keras.layers.Reshape((1, 1, 1280))(pooled)
    return keras.Model(x, {"grid": grid, "pooled": pooled}, name="efficientnet_lite0")


def captioners():
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + WORDS)
    tagger = {"search": "constrained", "threshold": 0.5}
    image = ImageCaptioner(espresso_backbone(), CaptionDecoderModel.of(len(vocab), annotation_dim=1280, kind="attention",
                                                                    projection_dim=8, embedding_dim=8, units=8,
                                                                    attention_units=8, dropout=0.0),
                           vocab, beam_size=2, max_length=5, tagger=tagger)
    video = VideoCaptioner(espresso_backbone(), VideoCaptionModel(len(vocab), 1280, units=8, projection_dim=8,
                                                                  embedding_dim=8, attention_units=8),
                           vocab, num_frames=3, beam_size=2, max_length=5, tagger=tagger)
    return image, video


@pytest.mark.parametrize("kind", ["image", "video"])
def test_a_confident_novel_tag_is_in_the_caption_and_named(kind):
    image, video = captioners()
    rng = np.random.default_rng(0)
    if kind == "image":
        photos = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(2)]
        tagged, plain = image.caption(photos, objects=True), image.caption(photos)
    else:
        clips = [rng.integers(0, 256, (3, 32, 32, 3), dtype=np.uint8) for _ in range(2)]
        tagged, plain = video.caption(clips, objects=True), video.caption(clips)
    for t, p in zip(tagged, plain):
        assert "coffee" in t.tokens  # the constrained search: the tag's word is in every caption
        assert "espresso" in t.text.split()  # the class name fills in (the first) "coffee"
        first = t.objects[0]
        assert (first["word"], first["synset"], first["steered"], first["named"]) == \
            ("coffee", "espresso.n.01", True, True)
        assert p.objects == [] and "espresso" not in p.text
    if kind == "video":
        row = tagged[0].to_json()
        assert json.loads(json.dumps(row))["objects"][0]["word"] == "coffee"
        assert "objects" not in plain[0].to_json()


@pytest.mark.parametrize("kind", ["image", "video"])
def test_a_learned_word_steers_both_captioners_and_travels_in_the_saved_file(kind, tmp_path):
    """A word learned from labelled photos (captioner.tagging.learned_words) that says yes to these
    photos: its word is in every caption beside the ImageNet tag's, its tag marked learned, and a
    saved and reloaded captioner says the same."""
    from captioner.tagging.learned_words import encode_weights

    weights = np.zeros((1280 + 1000 + 1, 1), np.float32)
    weights[-1, 0] = 5.0
    image, video = captioners()
    model = image if kind == "image" else video
    model.set_tagger(learned_words=["bench"], learned_weights=encode_weights(weights))
    rng = np.random.default_rng(0)
    shape = (32, 32, 3) if kind == "image" else (3, 32, 32, 3)
    inputs = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(2)]
    tagged = model.caption(inputs, objects=True)
    for caption in tagged:
        assert "bench" in caption.tokens and "coffee" in caption.tokens
        bench = next(o for o in caption.objects if o["word"] == "bench")
        assert bench["learned"] and bench["steered"] and bench["probability"] == pytest.approx(0.9933, abs=1e-4)
    path = tmp_path / "model.keras"
    model.save(path)
    again = keras.models.load_model(path)
    assert again.tagger_config["learned_words"] == ["bench"]
    assert [c.text for c in again.caption(inputs, objects=True)] == [c.text for c in tagged]


def test_the_tagger_settings_travel_in_the_config():
    image, video = captioners()
    for model in (image, video):
        config = model.get_config()
        assert config["tagger"] == {"search": "constrained", "threshold": 0.5}
        assert model.object_tagger().search == "constrained"


def test_a_photo_like_the_training_photos_is_familiar_and_its_tags_do_not_steer(tmp_path):
    """`captioner model fit-tagger --features`: the familiar-photo test fitted on a feature store of the
    training photos travels in the saved captioner; a photo like them is tagged but not steered, and
    with the test off (no centroids fitted) the same photo is steered again."""
    from captioner.cli import main
    from captioner.features.store import FeatureStore

    image, _ = captioners()
    path = tmp_path / "captioner.keras"
    image.save(path)
    photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    target = np.asarray(image.encode(photo[None])).reshape(1, -1)  # every photo's features (the fake backbone)
    names = [f"train_{i}.jpg" for i in range(40)]
    (tmp_path / "train.txt").write_text("\n".join(names) + "\n")
    rng = np.random.default_rng(1)
    pooled = target + 0.05 * np.linalg.norm(target) / np.sqrt(1280) * rng.normal(size=(40, 1280))
    with FeatureStore(tmp_path / "train.h5", "a", backbone="efficientnet_lite0", grid_shape=(1, 1), channels=1280,
                      pooled_dim=1280) as store:
        store.append(names, pooled[:, None, :].astype(np.float32), pooled.astype(np.float32))
    common = ["model", "fit-tagger", "--model", str(path), "--images", str(tmp_path / "train.txt"), "--image-dir", str(tmp_path),
              "--features", str(tmp_path / "train.h5"), "--min-images", "1000"]  # no class is known
    assert main(common + ["--familiar-centroids", "2"]) == 0
    model = keras.models.load_model(path)
    assert model.tagger_config["fitted_familiar_centroids"] == 2 and "familiar" in model.tagger_config
    caption = model.caption([photo], objects=True)[0]
    first = caption.objects[0]
    assert (first["synset"], first["familiar_photo"], first["steered"], first["named"]) == \
        ("espresso.n.01", True, False, False)
    assert caption.text == model.caption([photo])[0].text  # the captioner's own caption, no name filled in
    assert main(common + ["--familiar-centroids", "0"]) == 0  # the test off: forgotten, steered again
    model = keras.models.load_model(path)
    assert not any("familiar" in key for key in model.tagger_config)
    caption = model.caption([photo], objects=True)[0]
    assert caption.objects[0]["steered"] and not caption.objects[0]["familiar_photo"]
    assert "espresso" in caption.text.split()


def test_the_vqa_model_answers_what_is_this_from_the_imagenet_head():
    """An object question ("what is this?") about a photo whose tag is confident gets the class's
    name; any other question, or objects=False, or a photo the familiar-photo test knows, the
    classifier's answer; the tagger settings travel in the VQA model's config."""
    import base64

    from captioner.models.vqa_classifier import VQAClassifier
    from captioner.models.vqa_model import VQAModel, is_object_question

    assert is_object_question("What animal is this?") and is_object_question("what's in the picture")
    assert not is_object_question("what color is this?") and not is_object_question("what is the man holding?")
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + ("what", "is", "this", "color", "animal"))
    answers = ["red", "blue", "dog"]
    classifier = VQAClassifier.of(len(vocab), len(answers), image_dim=1280, kind="attention", hops=1, embedding_dim=4,
                               units=4, attention_units=4, dropout=0.0)
    model = VQAModel(espresso_backbone(), classifier, vocab, answers, tagger={"threshold": 0.5})
    photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    questions = ["what is this?", "what color is this?", "What animal is this"]
    tagged = model.answer_batch([photo] * 3, questions, top_k=2, objects=True)
    plain = model.answer_batch([photo] * 3, questions, top_k=2)
    assert [r.answer for r in tagged] == ["espresso", plain[1].answer, "espresso"]
    assert tagged[0].from_tag and tagged[0].model_answer == plain[0].answer and tagged[0].known
    assert tagged[0].top_k[0][0] == "espresso" and len(tagged[0].top_k) == 2
    row = tagged[0].to_json()
    assert row["from_tag"] and row["objects"][0]["synset"] == "espresso.n.01"
    assert not tagged[1].objects and "objects" not in plain[0].to_json()
    assert model.get_config()["tagger"] == {"threshold": 0.5}
    # a familiar photo (one centroid: this photo's own features) keeps the classifier's answer
    pooled = np.asarray(model.backbone(photo[None].astype(np.float32), training=False)["pooled"])
    unit = (pooled / np.linalg.norm(pooled)).astype(np.float16)
    model.set_tagger(familiar=base64.b64encode(unit.tobytes()).decode("ascii"), familiar_threshold=0.99)
    again = model.answer(photo, "what is this?", objects=True)
    assert again.answer == plain[0].answer and not again.from_tag and again.objects[0]["familiar_photo"]


def test_the_vqa_model_answers_whether_an_animal_is_there_from_the_imagenet_head():
    """"is there a dog?" of a photo the head reads as an espresso: "no"; of a golden retriever: "yes";
    about a thing ("is there a cup?"), with objects=False, or of a familiar photo: the classifier's answer."""
    import base64

    from captioner.models.vqa_classifier import VQAClassifier
    from captioner.models.vqa_model import VQAModel, presence_noun

    assert presence_noun("Is there a dog?") == "dog" and presence_noun("are there any birds") == "birds"
    assert presence_noun("is the dog there?") is None and presence_noun("what is this?") is None
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(SPECIAL_TOKENS + ("is", "there", "a", "dog", "cup", "any", "birds"))
    answers = ["yes", "no", "two"]
    classifier = VQAClassifier.of(len(vocab), len(answers), image_dim=1280, kind="attention", hops=1, embedding_dim=4,
                                  units=4, attention_units=4, dropout=0.0)
    photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    questions = ["is there a dog?", "are there any birds?", "is there a cup?"]
    for seen, expected in ((None, ["no", "no"]), (207, ["yes", "no"])):  # 207: a golden retriever
        model = VQAModel(espresso_backbone(seen=seen), classifier, vocab, answers, tagger={"threshold": 0.5})
        plain = model.answer_batch([photo] * 3, questions, top_k=2)
        tagged = model.answer_batch([photo] * 3, questions, top_k=2, objects=True)
        for result, before, answer in zip(tagged, plain, expected + [None]):
            assert result.answer == (answer or before.answer) and result.from_tag == (answer is not None)
        assert tagged[0].model_answer == plain[0].answer and tagged[0].top_k[0][0] == expected[0]
    # `captioner evaluate vqa` scores these answers too: the head's where it answered, else the classifier's
    from captioner.inference.calibration import DevSet, asked_figures

    asked = ["is there a dog?", "is there a cup?"]
    probs = model.answer_probabilities([photo] * 2, asked)
    dev = DevSet(probs, np.array([0, 1]), {}, groups=["yesno"] * 2, gold=["yes", "no"], inputs=([photo] * 2, asked))
    report = asked_figures(model, dev)
    assert report["from_tag"] == 1 and report["asked_again"] == 1
    assert report["accuracy"] == 50.0 + 50.0 * (answers[int(probs[1].argmax())] == "no")
    pooled = np.asarray(model.backbone(photo[None].astype(np.float32), training=False)["pooled"])
    unit = (pooled / np.linalg.norm(pooled)).astype(np.float16)
    model.set_tagger(familiar=base64.b64encode(unit.tobytes()).decode("ascii"), familiar_threshold=0.99)
    assert not model.answer(photo, "is there a dog?", objects=True).from_tag  # a familiar photo: the classifier's


def test_rows_no_tag_steers_are_decoded_apart_and_give_what_the_whole_batch_search_gives():
    """A constrained search keeps 2 ** C beams per beam for its whole batch: `steered_search` decodes the
    unsteered rows with the plain search and merges by row; every row is what the one search over the
    whole batch gives (tokens equal, scores to float tolerance)."""
    from captioner.models.pixel_model import steered_rows

    image, _ = captioners()
    features = np.random.default_rng(1).normal(size=(4, 1, 1280)).astype(np.float32)
    coffee = image.vocabulary.token_to_id("coffee")
    constraints = np.full((4, 1, 2), -1, np.int32)
    constraints[2, 0, 0] = coffee
    steering = {"constraints": constraints, "constraint_deadline": 0}
    assert steered_rows(steering).tolist() == [False, False, True, False]
    assert steered_rows({"token_bonus": np.eye(3, 5)[[0, 2]] * 0}).tolist() == [False, False]
    assert steered_rows({}) is None

    def generate(f, **kw):
        return image.decoder.generate(f, 2, 0.0, 5, **kw)

    split = image.steered_search(generate, (features,), steering)
    whole = {k: v.numpy() for k, v in generate(features, **steering).items()}
    assert coffee in split["tokens"][2, 0]
    for key in ("tokens", "lengths"):
        np.testing.assert_array_equal(split[key], whole[key])
    np.testing.assert_allclose(split["scores"], whole["scores"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(split["attention"], whole["attention"], rtol=1e-5, atol=1e-6)

    # each row its own deadline (int32 (B,), an input of the compiled search): subset with the rows, the same
    # as the whole batch's search; a deadline of 1 puts the word first, where none leaves it where it fits
    constraints[0, 0, 0] = coffee
    for due in ([1, 3, 0, 3], [0, 3, 1, 3]):
        steering = {"constraints": constraints, "constraint_deadline": np.array(due, np.int32)}
        split = image.steered_search(generate, (features,), steering)
        whole = {k: v.numpy() for k, v in generate(features, **steering).items()}
        for key in ("tokens", "lengths"):
            np.testing.assert_array_equal(split[key], whole[key])
        np.testing.assert_allclose(split["scores"], whole["scores"], rtol=1e-5, atol=1e-5)
        first = 0 if due[0] == 1 else 2
        assert split["tokens"][first, 0, 0] == coffee
        alone = {k: v.numpy() for k, v in generate(features[first:first + 1], constraints=constraints[first:first + 1],
                                                      constraint_deadline=1).items()}
        np.testing.assert_array_equal(split["tokens"][first], alone["tokens"][0])


def test_the_tagger_runs_on_one_blas_thread_and_gives_them_back():
    """OpenBLAS's idle worker threads spin after a call and took the 2 cores from the next beam search:
    the tagger's NumPy work runs on one BLAS thread, and the setting is restored after it."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    image, _ = captioners()
    before = blas_threads()
    seen = []
    tagger = image.object_tagger()
    tag = tagger.tag
    tagger.tag = lambda *a, **k: (seen.append(blas_threads()), tag(*a, **k))[1]
    photo = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    assert "coffee" in image.caption([photo], objects=True)[0].tokens
    assert seen and all(n == 1 for threads in seen for n in threads)
    assert blas_threads() == before
