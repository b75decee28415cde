"""The dialogue model with attend="words": the same decoder attends over the word annotations of
the last turns (B, N*W, 2U). Its attention sums to 1 over the real words, padding words get 0,
a turn's share is the sum over its words, and it survives save -> load_model (safe mode) with
the same outputs; a model file written before the option existed still loads as "turns"."""

import json
import zipfile

import keras
import numpy as np
import pytest
from support.dialogue import tiny_responder

from captioner.models.dialogue_responder import DialogueResponder

TURNS = [("USER", "I want a table in rome."), ("SYSTEM", "What time would you like?"), ("USER", "At seven please."),
         ("SYSTEM", "Ok."), ("USER", "Thanks.")]


@pytest.fixture(scope="module")
def words_model():
    return tiny_responder(seed=1, attend="words")


def test_the_decoder_attends_over_the_words_of_the_turns(words_model):
    m = words_model
    assert m.attend == "words" and m.decoder.annotation_dim == m.utterances.output_dim
    ids = m.context_ids([TURNS[:2]])  # two turns: the third turn slot is padding
    annotations, mask, state = m.encode(ids)
    n, w = m.context_turns, m.max_words
    assert tuple(annotations.shape) == (1, n * w, m.utterances.output_dim) and tuple(mask.shape) == (1, n * w)
    np.testing.assert_array_equal(mask.numpy(), (ids != 0).reshape(1, n * w))
    gen = m.generate(ids, beam_size=1)
    att = gen["attention"][0, 0, :int(gen["lengths"][0, 0])]  # (steps, N*W)
    real = (ids != 0).reshape(-1)
    np.testing.assert_allclose(att[:, real].sum(-1), 1.0, atol=1e-5)
    assert (att[:, ~real] == 0).all()


def test_turn_share_is_the_sum_over_its_words(words_model):
    [r] = words_model.respond([TURNS])
    assert r.turns == TURNS[-3:]
    assert r.turn_attention.shape == (r.word_attention.shape[0], 3) and r.turn_attention.shape[0] >= len(r.words)
    assert r.word_attention.shape[1:] == (3, words_model.max_words)
    np.testing.assert_allclose(r.turn_attention, r.word_attention.sum(-1), atol=1e-6)
    np.testing.assert_allclose(r.turn_attention.sum(-1), 1.0, atol=1e-5)
    ids = words_model.context_ids([TURNS])[0]  # (3, W): the turns read, their padding words are 0
    assert (r.word_attention[:, ids == 0] == 0).all() and (r.word_attention[:, ids != 0] > 0).all()
    [short] = words_model.respond([TURNS[:1]])
    assert short.turn_attention.shape[1] == 1 and np.allclose(short.turn_attention, 1.0, atol=1e-5)


def test_turns_model_has_no_word_attention_and_bad_attend_is_refused():
    [r] = tiny_responder().respond([TURNS])
    assert r.word_attention is None
    with pytest.raises(ValueError, match="attend must be one of"):
        DialogueResponder.from_config({**tiny_responder().get_config(), "attend": "letters"})


def test_save_and_load_model_give_the_same_outputs(words_model, tmp_path):
    path = tmp_path / "words.keras"
    words_model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert isinstance(loaded, DialogueResponder) and loaded.attend == "words"
    assert loaded.get_config()["attend"] == "words"
    contexts = [TURNS[:1], TURNS]
    x = {"context": words_model.context_ids(contexts), "tokens": np.array([[1, 5, 6, 7], [1, 8, 9, 0]], np.int32)}
    np.testing.assert_allclose(loaded(x).numpy(), words_model(x).numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(words_model.respond(contexts), loaded.respond(contexts)):
        assert a.text == b.text and [h[0] for h in a.hypotheses] == [h[0] for h in b.hypotheses]
        np.testing.assert_allclose(a.word_attention, b.word_attention, atol=1e-6)
        np.testing.assert_allclose(a.turn_attention, b.turn_attention, atol=1e-6)


def test_a_few_training_steps_run():
    model = tiny_responder(seed=2, train_epochs=2, attend="words")  # fits, asserts a finite loss
    [r] = model.respond([TURNS[:1]])
    assert isinstance(r.text, str)


def test_an_old_model_file_without_the_attend_key_loads_as_turns(tmp_path):
    old = tiny_responder(seed=3)
    path, legacy = tmp_path / "new.keras", tmp_path / "old.keras"
    old.save(path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(legacy, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                assert config["config"].pop("attend") == "turns"
                data = json.dumps(config).encode()
            dst.writestr(item, data)
    loaded = keras.models.load_model(legacy, safe_mode=True)
    assert loaded.attend == "turns" and loaded.decoder.annotation_dim == loaded.context.output_dim
    a, b = old.respond([TURNS]), loaded.respond([TURNS])
    assert a[0].text == b[0].text
    np.testing.assert_allclose(a[0].turn_attention, b[0].turn_attention, atol=1e-6)
