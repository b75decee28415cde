"""`captioner train respond` on generated SGD-layout dialogues: its batches replay on resume
(the recipe's contract); the saved model loads and responds; the card reports dev BLEU and
distinct-n and names its selection."""

import json

import keras
import pytest

from captioner.cli import main
from support import dialogue as ds
from support.training import assert_recipe_batches_replay


@pytest.mark.slow  # one short training: ~10-20 s
def test_respond_batches_replay_and_a_run_saves_a_model_with_its_card(tmp_path):
    train, dev = ds.make_sgd(tmp_path / "sgd", train=40, dev=6)
    argv = ["respond", "--train-dir", train, "--dev-dir", dev, "--embedding-dim", "8", "--units", "6",
            "--context-units", "6", "--decoder-units", "8", "--attention-units", "6", "--min-count", "1",
            "--batch-size", "16", "--select-fraction", "0.2", "--max-response", "8", "--patience", "5"]
    assert_recipe_batches_replay([*argv, "--output-dir", tmp_path / "contract"])
    assert main(["train", *map(str, argv), "--output-dir", str(tmp_path / "run"), "--epochs", "1"]) == 0
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    assert type(model).__name__ == "DialogueResponder"
    [r] = model.respond([[("USER", "I want a table in rome.")]])
    assert isinstance(r.text, str)
    card = json.loads((tmp_path / "run" / "model.json").read_text())
    assert card["task"] == "dialogue" and card["metrics"]["split"] == "dev"
    assert {"BLEU", "distinct_1", "distinct_2"} <= set(card["metrics"]["dev_beam4"])
    assert card["data"]["dev_examples_scored"] == 12 and "held-out train dialogues" in card["metrics"]["selection"]


@pytest.mark.slow  # one short training: ~10-20 s
def test_attend_words_is_trained_saved_and_named_in_the_card(tmp_path):
    train, dev = ds.make_sgd(tmp_path / "sgd", train=30, dev=4)
    out = tmp_path / "words"
    assert main(["train", "respond", "--train-dir", str(train), "--dev-dir", str(dev), "--output-dir", str(out),
                 "--attend", "words", "--embedding-dim", "8", "--units", "6", "--context-units", "6",
                 "--decoder-units", "8", "--attention-units", "6", "--min-count", "1", "--batch-size", "16",
                 "--select-fraction", "0.2", "--max-response", "8", "--epochs", "1"]) == 0
    model = keras.models.load_model(out / "model.keras")
    assert model.attend == "words" and model.decoder.annotation_dim == 12
    [r] = model.respond([[("USER", "I want a table in rome.")]])
    assert r.word_attention is not None and r.turn_attention.shape[1] == 1
    card = json.loads((out / "model.json").read_text())
    assert card["config"]["attend"] == "words" and "BLEU" in card["metrics"]["dev_beam4"]


def test_score_responses_by_hand():
    from captioner.training.recipes.respond import score_responses

    s = score_responses(["the table is booked", "the table is booked"], ["the table is booked", "what time?"])
    assert s["distinct_1"] == 50.0 and s["responses"] == 2 and 0 < s["BLEU"] < 100
