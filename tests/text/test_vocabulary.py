"""Tests for captioner.text.vocabulary: ids, building, encoding, JSON, Keras/tf.data parity."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.errors import InputError
from captioner.text import (
    END,
    END_ID,
    PAD,
    PAD_ID,
    SPECIAL_TOKENS,
    START,
    START_ID,
    UNK,
    UNK_ID,
    Vocabulary,
    VocabularyLookup,
    tokenize,
)

SENTENCES = [
    "A dog runs on the grass.",
    "A black dog jumps over a log.",
    "Two dogs play in the snow.",
    "A man rides a bike on the road.",
    "The dog is brown.",
    "Café à Paris, l'été.",
]


@pytest.fixture
def vocab():
    return Vocabulary.build([tokenize(s) for s in SENTENCES])


def test_specials_have_fixed_ids(vocab):
    assert (PAD, START, END, UNK) == ("<pad>", "<start>", "<end>", "<unk>")
    assert (PAD_ID, START_ID, END_ID, UNK_ID) == (0, 1, 2, 3)
    assert vocab.tokens[:4] == SPECIAL_TOKENS
    for token, token_id in zip(SPECIAL_TOKENS, range(4)):
        assert vocab.token_to_id(token) == token_id
        assert vocab.id_to_token(token_id) == token


def test_build_orders_by_count_then_token():
    v = Vocabulary.build([["b", "a", "c"], ["c", "b"], ["c", "d"]])
    # c:3, b:2, then a and d tie at 1 -> alphabetical.
    assert v.tokens[4:] == ("c", "b", "a", "d")
    # Input order does not matter.
    assert Vocabulary.build([["c", "d"], ["c", "b"], ["b", "a", "c"]]) == v


def test_min_count_and_max_size():
    lists = [["a", "a", "a", "b", "b", "c"]]
    assert Vocabulary.build(lists, min_count=2).tokens[4:] == ("a", "b")
    v = Vocabulary.build(lists, max_size=5)  # 4 specials + 1 word
    assert len(v) == 5 and v.tokens[4:] == ("a",)
    assert len(Vocabulary.build(lists, max_size=4)) == 4
    with pytest.raises(InputError):
        Vocabulary.build(lists, max_size=3)
    with pytest.raises(InputError):
        Vocabulary.build(lists, min_count=0)


def test_special_strings_in_text_are_not_words():
    v = Vocabulary.build([["<unk>", "<end>", "x", ""]])
    assert v.tokens == SPECIAL_TOKENS + ("x",)


def test_build_rejects_untokenized_strings():
    with pytest.raises(InputError, match="tokenize first"):
        Vocabulary.build(["a dog runs"])


def test_unknown_words_map_to_unk(vocab):
    assert vocab.token_to_id("zebra") == UNK_ID
    assert "dog" in vocab and "zebra" not in vocab
    assert vocab.encode(["a", "zebra"], add_start=False, add_end=False) == [vocab.token_to_id("a"), UNK_ID]


def test_encode_decode_round_trip(vocab):
    for sentence in SENTENCES:
        tokens = tokenize(sentence)
        ids = vocab.encode(tokens)
        assert ids[0] == START_ID and ids[-1] == END_ID
        assert vocab.decode(ids) == tokens


def test_encode_truncation_keeps_end(vocab):
    ids = vocab.encode(["a", "dog", "runs", "on"], max_length=4)
    assert ids == [START_ID, vocab.token_to_id("a"), vocab.token_to_id("dog"), END_ID]
    assert vocab.encode(["a"], add_start=False, add_end=False, max_length=0) == []
    with pytest.raises(InputError):
        vocab.encode(["a"], max_length=1)
    with pytest.raises(InputError, match="tokenize first"):
        vocab.encode("a dog")


def test_decode_stops_at_end_and_drops_pad_start(vocab):
    dog = vocab.token_to_id("dog")
    ids = [START_ID, dog, UNK_ID, END_ID, dog, PAD_ID]
    assert vocab.decode(ids) == ["dog", UNK]
    assert vocab.decode([PAD_ID, dog, PAD_ID]) == ["dog"]
    assert vocab.decode(ids, strip_special=False) == [START, "dog", UNK, END, "dog", PAD]
    assert vocab.decode(np.array(ids, dtype=np.int64)) == ["dog", UNK]
    with pytest.raises(InputError):
        vocab.decode([len(vocab)])
    with pytest.raises(InputError):
        vocab.id_to_token(-1)


def test_encode_batch_pads_with_zero(vocab):
    batch = vocab.encode_batch([["a", "dog"], ["dog"], []], max_length=6)
    assert batch.dtype == np.int32 and batch.shape == (3, 6)
    assert batch[1].tolist() == [START_ID, vocab.token_to_id("dog"), END_ID, 0, 0, 0]
    assert batch[2].tolist() == [START_ID, END_ID, 0, 0, 0, 0]
    longest = vocab.encode_batch([["a", "dog"], ["dog"]])
    assert longest.shape == (2, 4)
    assert vocab.decode_batch(longest) == [["a", "dog"], ["dog"]]
    assert vocab.encode_batch([], max_length=3).shape == (0, 3)


def test_config_and_file_round_trip(vocab, tmp_path):
    config = vocab.to_config()
    json.dumps(config)  # serialisable
    assert config["tokens"][:4] == list(SPECIAL_TOKENS)
    assert Vocabulary.from_config(config) == vocab

    path = tmp_path / "vocab.json"
    vocab.save(path)
    loaded = Vocabulary.load(path)
    assert loaded == vocab and loaded.metadata == vocab.metadata
    assert "été" in path.read_text(encoding="utf-8")  # readable UTF-8, not \u escapes
    vocab.save(path)  # overwriting works
    assert sorted(os.listdir(tmp_path)) == ["vocab.json"]  # no temp files left


def _write(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_not_json(tmp_path):
    path = _write(tmp_path, '{\n "tokens": [\n')
    with pytest.raises(InputError, match=r"bad\.json:\d+: not valid JSON"):
        Vocabulary.load(path)


def test_load_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        Vocabulary.load(tmp_path / "nope.json")


def test_load_missing_specials(tmp_path):
    path = _write(tmp_path, json.dumps({"tokens": ["<pad>", "<start>", "a", "b"]}))
    with pytest.raises(InputError, match="bad.json.*specials"):
        Vocabulary.load(path)


def test_load_duplicate_tokens(tmp_path):
    path = _write(tmp_path, json.dumps({"tokens": list(SPECIAL_TOKENS) + ["a", "b", "a"]}))
    with pytest.raises(InputError, match="duplicate token 'a' at positions 4 and 6"):
        Vocabulary.load(path)


@pytest.mark.parametrize(
    "config, message",
    [
        ([1, 2], "JSON object"),
        ({"words": []}, "tokens"),
        ({"tokens": "abc"}, "list"),
        ({"tokens": list(SPECIAL_TOKENS) + [""]}, "non-empty string"),
        ({"tokens": list(SPECIAL_TOKENS) + [7]}, "non-empty string"),
        ({"tokens": list(SPECIAL_TOKENS), "format": "other"}, "format"),
        ({"tokens": list(SPECIAL_TOKENS), "version": 99}, "version"),
    ],
)
def test_load_other_malformed(tmp_path, config, message):
    path = _write(tmp_path, json.dumps(config))
    with pytest.raises(InputError, match=message):
        Vocabulary.load(path)


def test_lookup_layer_matches_vocabulary(vocab):
    layer = vocab.lookup_layer()
    assert isinstance(layer, keras.layers.StringLookup)
    words = list(vocab.tokens) + ["zebra", "DOG", "", "[UNK]", "< oov >", "dog "]
    got = layer(tf.constant(words)).numpy().tolist()
    assert got == [vocab.token_to_id(w) for w in words]
    assert got[: len(vocab)] == list(range(len(vocab)))
    assert got[len(vocab):] == [UNK_ID] * 6
    assert layer.vocabulary_size() == len(vocab)
    assert layer.get_vocabulary() == list(vocab.tokens)
    # Ragged input keeps its structure.
    ragged = layer(tf.ragged.constant([["a", "zebra"], []]))
    assert ragged.to_list() == [[vocab.token_to_id("a"), UNK_ID], []]


def test_lookup_layer_survives_keras_save_load(vocab, tmp_path):
    inputs = keras.Input(shape=(None,), dtype="string")
    model = keras.Model(inputs, vocab.lookup_layer()(inputs))
    path = tmp_path / "lookup.keras"
    model.save(path)
    restored = keras.models.load_model(path)
    batch = tf.constant([["a", "dog", "zebra", "<end>"]])
    expected = [[vocab.token_to_id(t) for t in ["a", "dog", "zebra", "<end>"]]]
    assert restored(batch).numpy().tolist() == expected
    assert isinstance(restored.layers[-1], VocabularyLookup)


def test_lookup_layer_in_tf_data(vocab):
    layer = vocab.lookup_layer()
    tokens = [tokenize(s) for s in SENTENCES]
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(tokens)).map(layer)
    got = [row.tolist() for row in ds.as_numpy_iterator()]
    assert got == [vocab.encode(t, add_start=False, add_end=False) for t in tokens]


def test_tf_encode_in_tf_data_matches_python(vocab):
    sentences = SENTENCES + ["An unseen zebra!", ""]
    ds = tf.data.Dataset.from_tensor_slices(sentences).map(lambda s: vocab.tf_encode(s, max_length=8))
    got = [row.tolist() for row in ds.as_numpy_iterator()]
    expected = vocab.encode_batch([tokenize(s) for s in sentences], max_length=8).tolist()
    assert got == expected


def test_tf_encode_batch_shapes(vocab):
    sentences = ["A dog runs.", "", "The dog is brown and runs on the grass"]
    ragged = vocab.tf_encode(tf.constant(sentences))
    assert isinstance(ragged, tf.RaggedTensor)
    assert ragged.to_list() == [vocab.encode(tokenize(s)) for s in sentences]
    dense = vocab.tf_encode(sentences, max_length=5, add_start=False)
    assert dense.shape == (3, 5) and dense.dtype == tf.int32
    assert dense.numpy().tolist() == vocab.encode_batch(
        [tokenize(s) for s in sentences], max_length=5, add_start=False
    ).tolist()
    unframed = vocab.tf_encode("a dog", add_start=False, add_end=False)
    assert unframed.numpy().tolist() == vocab.encode(["a", "dog"], add_start=False, add_end=False)
    with pytest.raises(InputError):
        vocab.tf_encode(tf.constant([["a"]]))


def test_the_package_lazily_exports_every_vocabulary_name():
    import captioner.text
    from captioner.text import vocabulary

    assert list(captioner.text._VOCABULARY_NAMES) == vocabulary.__all__
    assert all(getattr(captioner.text, n) is getattr(vocabulary, n) for n in vocabulary.__all__)


def test_tf_decode_is_decode():
    from captioner.text.vocabulary import END_ID, PAD_ID, START_ID, UNK_ID

    vocab = Vocabulary(["<pad>", "<start>", "<end>", "<unk>", "a", "b", "c"])
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 7, size=(50, 9)).astype(np.int32)
    ids[0] = [4, 5, END_ID, 6, 6, 0, 0, 0, 0]
    ids[1] = [START_ID, 4, PAD_ID, UNK_ID, 5, 6, 4, 5, 6]  # no <end>
    got = vocab.tf_decode(tf.constant(ids)).to_list()
    assert [[t.decode() for t in row] for row in got] == [vocab.decode(row) for row in ids]
