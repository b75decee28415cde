import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from captioner.errors import InputError
from captioner.layers.stacked_attention import StackedAttention
from captioner.models.vqa_classifier import VQAClassifier
from support import fresh_python
from support.tiny_classifiers import VQA_ANSWERS, VQA_WORDS, random_image, tiny_vqa_model

WORDS, ANSWERS = VQA_WORDS, VQA_ANSWERS


LOAD_AND_ANSWER = """
import json, sys
import keras
import captioner.models.vqa_model  # registers the classes
model = keras.models.load_model(sys.argv[1])
out = [model.answer(sys.argv[2], q, top_k=4) for q in json.loads(sys.argv[3])]
print(json.dumps([{"top_k": r.top_k, "attention": None if r.attention is None else r.attention.tolist(),
                   "tokens": r.tokens} for r in out]))
"""


@pytest.mark.parametrize("kind", ["attention", "baseline"])
def test_save_load_in_a_fresh_process_gives_the_same_answers(tmp_path, kind):
    model = tiny_vqa_model(kind)
    image = tmp_path / "img.png"
    Image.fromarray(random_image(1)).save(image)
    questions = ["What color is the shape?", "is there a zorblax?"]
    expected = [model.answer(str(image), q, top_k=4) for q in questions]
    path = tmp_path / "vqa.keras"
    model.save(path)
    got = json.loads(fresh_python.last_line(LOAD_AND_ANSWER, path, image, json.dumps(questions), timeout=300))
    for r, g in zip(expected, got):
        assert [a for a, _ in r.top_k] == [a for a, _ in g["top_k"]]
        np.testing.assert_allclose([p for _, p in r.top_k], [p for _, p in g["top_k"]], atol=1e-5)
        if kind == "attention":
            assert r.attention.shape == (2, 4, 4)
            np.testing.assert_allclose(r.attention, np.array(g["attention"]), atol=1e-5)
        else:
            assert r.attention is None and g["attention"] is None
    assert got[1]["tokens"] == ["is", "there", "a", "<unk>"]


def test_unknown_words_map_to_unk_and_text_path_matches_ids():
    model = tiny_vqa_model("attention")
    image = random_image(2)
    r = model.answer(image, "What COLOUR is the blorp??")
    assert r.tokens == ["what", "<unk>", "is", "the", "<unk>"] and r.unknown_words == ["colour", "blorp"]
    assert r.answer in ANSWERS and r.answer == r.top_k[0][0]
    assert sum(p for _, p in r.top_k) == pytest.approx(1.0, abs=1e-5)  # 4 answers, top 5 lists all
    # the in-graph string path (tf_tokenize + lookup) gives the same probabilities
    out = model({"pixels": image[None], "question": tf.constant(["What COLOUR is the blorp??"])})
    np.testing.assert_allclose(out["probabilities"].numpy()[0],
                               [dict(r.top_k)[a] for a in ANSWERS], atol=1e-5)
    with pytest.raises(InputError, match="has no words"):
        model.answer(image, " ?! ")


def test_batch_with_shared_image_equals_single_answers():
    model = tiny_vqa_model("attention")
    a, b = random_image(3), random_image(4)
    qs = ["what color is the shape", "is there a red circle", "what color is the circle"]
    batch = model.answer_batch([a, b, a], qs)
    for img, q, r in zip([a, b, a], qs, batch):
        single = model.answer(img, q)
        np.testing.assert_allclose([p for _, p in single.top_k], [p for _, p in r.top_k], atol=1e-5)
        np.testing.assert_allclose(single.attention, r.attention, atol=1e-6)


def test_stacked_attention_hops_and_shared_images():
    keras.utils.set_random_seed(0)
    layer = StackedAttention(hops=2, units=5, dim=6)
    rng = np.random.default_rng(0)
    query = rng.normal(size=(3, 6)).astype("float32")
    regions = rng.normal(size=(2, 4, 6)).astype("float32")  # 2 images, 4 regions
    index = np.array([1, 0, 1])
    u, alphas = layer(query, regions, image_index=index)
    assert u.shape == (3, 6) and alphas.shape == (3, 2, 4)
    np.testing.assert_allclose(alphas.numpy().sum(-1), 1.0, atol=1e-5)
    u2, alphas2 = layer(query, regions[index])  # same as giving each question its own copy
    np.testing.assert_allclose(u, u2, atol=1e-5)
    np.testing.assert_allclose(alphas, alphas2, atol=1e-6)
    # u^1 = u^0 + sum_i p_i v_i, by hand from hop 1's weights
    hop1 = layer.attentions[0]
    v = regions[index]
    _, p1 = hop1(query, hop1.project_keys(v), v)
    np.testing.assert_allclose(p1, alphas[:, 0], atol=1e-6)
    u1 = query + np.einsum("br,brd->bd", p1.numpy(), v)
    _, p2 = layer.attentions[1](u1, layer.attentions[1].project_keys(v), v)
    np.testing.assert_allclose(p2, alphas[:, 1], atol=1e-5)
    with pytest.raises(ValueError, match="hops"):
        StackedAttention(hops=0)


def test_baseline_is_softmax_of_V_times_concatenated_encodings():
    keras.utils.set_random_seed(1)
    clf = VQAClassifier.of(vocab_size=12, num_answers=3, image_dim=5, kind="baseline", embedding_dim=4, units=6,
                        dropout=0.0)
    rng = np.random.default_rng(1)
    pooled = rng.normal(size=(2, 5)).astype("float32")
    tokens = np.array([[4, 5, 6, 0], [7, 8, 0, 0]], "int32")
    logits = clf({"image": pooled, "question": tokens}).numpy()
    h_q = np.stack([clf.question_lstm(clf.embedding(tokens[i:i + 1, :n])).numpy()[0]
                    for i, n in enumerate([3, 2])])  # padding must not change h_q
    h_i = np.tanh(pooled @ clf.image_projection.kernel.numpy() + clf.image_projection.bias.numpy())
    s = np.concatenate([h_q, h_i], -1)
    np.testing.assert_allclose(logits, s @ clf.answer_dense.kernel.numpy() + clf.answer_dense.bias.numpy(),
                               atol=1e-5)
    clone = VQAClassifier.from_config({**clf.get_config(), "fusion": "product", "question_words": True})
    assert clone.get_config()["fusion"] == "product" and clone.get_config()["question_words"]
    logits2 = clone({"image": pooled, "question": tokens})
    assert logits2.shape == (2, 3)
    clone = VQAClassifier.from_config(clf.get_config())
    assert clone.get_config() == clf.get_config()
    with pytest.raises(ValueError, match="kind"):
        VQAClassifier.of(5, 2, 3, kind="mlp")


def test_frozen_reduction_raw_and_reduced_features_agree():
    keras.utils.set_random_seed(2)
    clf = VQAClassifier.of(vocab_size=12, num_answers=3, image_dim=8, kind="attention", hops=1, embedding_dim=4,
                        units=6, attention_units=5, dropout=0.0, hidden_units=7, reduce_dim=3)
    rng = np.random.default_rng(2)
    mean, components = rng.normal(size=8), np.linalg.qr(rng.normal(size=(8, 8)))[0][:, :3]
    clf.set_reduction(mean, components)
    grid = rng.normal(size=(2, 4, 8)).astype("float32")
    reduced = clf.reduce_features(grid)
    np.testing.assert_allclose(reduced, (grid - mean) @ components, atol=1e-5)
    tokens = np.array([[4, 5, 0], [6, 7, 8]], "int32")
    raw_logits, raw_alphas = clf.forward({"image": grid, "question": tokens})
    red_logits, red_alphas = clf.forward({"image": reduced, "question": tokens})
    np.testing.assert_allclose(raw_logits, red_logits, atol=1e-5)
    np.testing.assert_allclose(raw_alphas, red_alphas, atol=1e-6)
    frozen = {id(w) for w in clf.input_reduction.weights}
    assert not clf.input_reduction.trainable and not frozen & {id(w) for w in clf.trainable_weights}
    with pytest.raises(ValueError, match="components"):
        clf.set_reduction(mean, components[:, :2])
