"""`captioner train entail` (classify) on a generated SICK file, with pretrained vectors."""

import json

import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.cli import main

HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\tentailment_BA\t"
          "sentence_A_original\tsentence_B_original\tsentence_A_dataset\tsentence_B_dataset\tSemEval_set")
SUBJECTS = ["a man", "a woman", "a boy", "a girl"]
VERBS = ["is playing", "is singing", "is running", "is cooking"]


def _sick(tmp_path):
    rows, i = [], 0
    for split, n in (("TRAIN", 60), ("TRIAL", 12)):
        for k in range(n):
            s, v = SUBJECTS[k % 4], VERBS[(k // 4) % 4]
            label = ("ENTAILMENT", "CONTRADICTION", "NEUTRAL")[k % 3]
            hyp = {"ENTAILMENT": f"{s} {v}", "CONTRADICTION": f"{s} is not {v.split()[1]}",
                   "NEUTRAL": f"{SUBJECTS[(k + 1) % 4]} {v}"}[label]
            i += 1
            ba = {"ENTAILMENT": "B_entails_A", "CONTRADICTION": "B_contradicts_A", "NEUTRAL": "B_neutral_A"}[label]
            score = {"ENTAILMENT": "4.8", "CONTRADICTION": "3.6", "NEUTRAL": "2.1"}[label]
            rows.append("\t".join([str(i), f"{s} {v}", hyp, label, score, "x", ba, "a", "b", "F", "F", split]))
    f = tmp_path / "SICK.txt"
    f.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return str(f)


def test_pretrained_frozen_embeddings_and_extra_vocabulary(tmp_path):
    rng = np.random.default_rng(0)
    words = ["a", "man", "woman", "is", "not", "playing", "zebra", "giraffe"]
    glove = {w: rng.normal(size=6).round(4) for w in words}
    vec_file = tmp_path / "glove.txt"
    vec_file.write_text("".join(w + " " + " ".join(map(str, v)) + "\n" for w, v in glove.items()))
    out = tmp_path / "run"
    assert main(["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(out),
                 "--embeddings", str(vec_file), "--embeddings-vocab", "8", "--freeze-embeddings",
                 "--units", "8", "--hidden-units", "8", "--epochs", "2", "--batch-size", "16"]) == 0
    model = keras.models.load_model(out / "model.keras")
    vocab = model.vocabulary
    assert "zebra" in vocab and "giraffe" in vocab  # from the vectors, never in training
    table = model.encoder.embedding.get_weights()[0]
    assert table.shape == (len(vocab), 6)
    for w in ("man", "zebra", "not"):  # frozen: still the pretrained vectors after training (stored float16)
        np.testing.assert_allclose(table[vocab.token_to_id(w)], np.float16(glove[w]), rtol=0, atol=0)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["embeddings"]["frozen"] is True
    assert metrics["embeddings"]["vocabulary_words_with_vector"] == 8
    assert 0 <= metrics["TRIAL_accuracy"] <= 100


def test_embedding_options_need_embeddings(tmp_path, capsys):
    assert main(["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(tmp_path / "r"),
                 "--freeze-embeddings"]) != 0
    assert "need --embeddings" in capsys.readouterr().err


def test_ensemble_of_members_with_reverse_pairs_and_resume(tmp_path):
    out = tmp_path / "ens"
    args = ["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(out), "--members", "2",
            "--add-reverse-pairs", "--units", "8", "--hidden-units", "8", "--embedding-dim", "8", "--epochs", "2",
            "--batch-size", "16", "--seed", "5"]
    assert main(args) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["train_pairs"] == 2 * (60 - config["dev_pairs"])  # every train pair also reversed
    assert "reversed" in config["data"]["train"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert [m["seed"] for m in metrics["members"]] == [5, 6] and len(metrics["best_epoch"]) == 2
    for k in (1, 2):  # each member's checkpoint state names its own best weights
        state = json.loads((out / f"member{k}" / "checkpoint_state.json").read_text())
        assert (out / f"member{k}" / state["best_weights"]).exists()
    model = keras.models.load_model(out / "model.keras")
    assert type(model).__name__ == "EntailmentEnsemble" and len(model.members) == 2
    # the ensemble's accuracy is computed from the saved members
    from captioner.data.sick import load_sick
    from captioner.models.entailment import LABELS
    trial = load_sick(_sick(tmp_path), ["TRIAL"])
    pred = [o.label for o in model.entail([p.premise for p in trial], [p.hypothesis for p in trial])]
    acc = 100 * np.mean([a == p.label for a, p in zip(pred, trial)])
    assert metrics["TRIAL_accuracy"] == round(acc, 2) and set(pred) <= set(LABELS)
    # resuming a finished run retrains nothing and reports the same
    before = (out / "member2" / "checkpoint_state.json").read_text()
    assert main(args + ["--resume"]) == 0
    assert (out / "member2" / "checkpoint_state.json").read_text() == before
    assert json.loads((out / "metrics.json").read_text())["TRIAL_accuracy"] == metrics["TRIAL_accuracy"]


def test_members_must_be_positive(tmp_path, capsys):
    assert main(["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(tmp_path / "r"),
                 "--members", "0"]) != 0
    assert "--members 0: must be at least 1" in capsys.readouterr().err


def test_relatedness_auxiliary_loss_trains_its_head(tmp_path):
    out = tmp_path / "rel"
    assert main(["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(out), "--relatedness-weight", "1",
                 "--units", "8", "--hidden-units", "8", "--embedding-dim", "8", "--epochs", "3",
                 "--batch-size", "8", "--learning-rate", "0.01", "--seed", "3"]) == 0
    model = keras.models.load_model(out / "model.keras")
    assert model.relatedness_weight == 1.0
    x, _, _ = model.prepare(["a man is playing", "a man is playing"], ["a man is playing", "a boy is playing"])
    import tensorflow as tf
    hidden = model.hidden(tf.concat([tf.zeros((2, 4 * 8)), x["features"]], -1))
    assert model.relate(hidden).shape == (2, 1)
    # the head learnt something: its weights are no longer the fresh layer's
    keras.utils.set_random_seed(3)
    fresh = type(model).from_config(model.get_config())
    assert not np.allclose(fresh.relate.get_weights()[0], model.relate.get_weights()[0])
    # inference needs no relatedness input
    assert model.entail(["a man is playing"], ["a man is not playing"])[0].label


def test_word_relations_are_built_from_wordnet_and_stored_in_the_model(tmp_path):
    import pytest

    from captioner.text.wordnet import load_wordnet as _load_wordnet

    if _load_wordnet()[0] is None:
        pytest.skip("no WordNet here")
    out = tmp_path / "kim"
    assert main(["train", "entail", "--data", _sick(tmp_path), "--output-dir", str(out), "--word-relations",
                 "--units", "8", "--hidden-units", "8", "--embedding-dim", "8", "--epochs", "2",
                 "--batch-size", "16", "--seed", "2"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["word_relations"]["hypernym"] > 0
    model = keras.models.load_model(out / "model.keras")
    # WordNet's boy.n.03 ("a friendly informal reference to a grown man") is a man.n.01: the
    # hypernyms kept are the vocabulary's words only
    assert model.relations["hypernym"]["boy"] == {"man": 1} and model.relations["hypernym"]["girl"] == {"woman": 1}
    assert model.word_relations.pair("girl", "woman")[2] == 7  # hypernym, 1 edge: 1 - 1/8
    x, _, _ = model.prepare(["a boy is playing"], ["a girl is singing"])
    assert x["relations"].shape == (1, 4, 4, 5)
    assert model.entail(["a boy is playing"], ["a girl is singing"])[0].label


@pytest.mark.parametrize("task", ["classify", "generate"])
def test_batches_replay_on_resume(tmp_path, task):
    """The recipe's contract (the Trainer's resume itself: test_ensemble_of_members_... above)."""
    from support.training import assert_recipe_batches_replay

    assert_recipe_batches_replay(["entail", "--task", task, "--data", _sick(tmp_path), "--output-dir", tmp_path / "run",
                                  "--units", "8", "--hidden-units", "8", "--embedding-dim", "8", "--attention-units",
                                  "8", "--batch-size", "16", "--beam-size", "1", "--patience", "5"])
