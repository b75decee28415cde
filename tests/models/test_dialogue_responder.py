"""The HRED dialogue model on generated dialogues: it learns which SYSTEM turn follows, its
attention over the turns sums to 1 over the real turns only, and it survives save -> load in
a fresh process with the same responses."""

import json

import keras
import numpy as np
import pytest
from support.dialogue import tiny_responder

from captioner.errors import InputError
from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.word_encoder import WordEncoder
from captioner.models.dialogue_responder import DialogueResponder
from support import fresh_python


@pytest.fixture(scope="module")
def trained():
    return tiny_responder(seed=0, train_epochs=40)


@pytest.mark.slow  # trains the tiny model for 40 epochs: ~15-45 s
def test_it_learns_the_next_system_turn(trained):
    got = trained.respond([[("USER", "I want a table in rome.")], [("USER", "I need a flight to lima.")],
                           [("USER", "I need a flight to lima."), ("SYSTEM", "Which date do you fly?"),
                            ("USER", "Next monday.")]])
    assert got[0].text == "what time would you like?"
    assert got[1].text == "which date do you fly?"
    assert got[2].text.startswith("your flight to")
    assert len(got[0].hypotheses) == 3 and got[0].hypotheses[0][0] == got[0].text


def test_turn_attention_sums_to_one_over_the_turns_read():
    trained = tiny_responder()
    turns = [("USER", "I want a table in rome."), ("SYSTEM", "What time would you like?"), ("USER", "At seven please."),
             ("SYSTEM", "Ok."), ("USER", "Thanks.")]
    [r] = trained.respond([turns])
    assert r.turns == turns[-3:] and r.turn_attention.shape[1] == 3 and r.turn_attention.shape[0] >= len(r.words)
    np.testing.assert_allclose(r.turn_attention.sum(-1), 1.0, atol=1e-5)
    [short] = trained.respond([turns[:1]])
    assert short.turn_attention.shape[1] == 1 and np.allclose(short.turn_attention, 1.0)
    # the padded turn slots get no weight in the raw search output
    gen = trained.generate(trained.context_ids([turns[:2]]), beam_size=1)
    assert (gen["attention"][0, 0, :, 2] == 0).all()


def test_the_encoders_are_the_han_layers():
    model = tiny_responder()
    assert type(model.utterances) is WordEncoder and type(model.context) is SentenceEncoder


def test_bad_contexts_are_refused():
    model = tiny_responder()
    with pytest.raises(InputError, match="context 2: no turns"):
        model.respond([[("USER", "hi")], []])
    with pytest.raises(InputError, match="speaker 'BOT'"):
        model.respond([[("BOT", "hi")]])
    with pytest.raises(ValueError, match="speaker tokens"):
        DialogueResponder.of(["<pad>", "<start>", "<end>", "<unk>", "a"])


@pytest.mark.slow  # a fresh Python imports TensorFlow: ~15-30 s
def test_save_and_load_in_a_fresh_process_give_the_same_responses(trained, tmp_path):
    path = tmp_path / "dialogue.keras"
    trained.inference_copy().save(path)
    contexts = [[["USER", "I want a table in paris."]], [["USER", "I need a flight to rome."], ["SYSTEM", "Which date?"],
                                                         ["USER", "Next monday."]]]
    expected = [[r.text, r.hypotheses, r.turn_attention.tolist()] for r in trained.respond(contexts)]
    script = ("import json, sys, captioner\n"
              "from captioner.models.dialogue_responder import load_dialogue_responder\n"
              "m = load_dialogue_responder(sys.argv[1])\n"
              "print(json.dumps([[r.text, r.hypotheses, r.turn_attention.tolist()] "
              "for r in m.respond([[tuple(t) for t in c] for c in json.loads(sys.argv[2])])]))\n")
    got = json.loads(fresh_python.last_line(script, path, json.dumps(contexts), timeout=300))
    for g, e in zip(got, expected):
        assert g[0] == e[0] and [h[0] for h in g[1]] == [h[0] for h in e[1]]
        np.testing.assert_allclose([h[1] for h in g[1]], [h[1] for h in e[1]], atol=1e-5)
        np.testing.assert_allclose(g[2], e[2], atol=1e-5)
    assert isinstance(keras.models.load_model(path), DialogueResponder)
