"""`captioner train classify` on a generated 20 Newsgroups-layout corpus: its batches replay on
resume (the recipe's contract); the saved model loads, classifies, and its card names the dev
split and the command."""

import json

import keras
import pytest

from captioner.cli import main
from support import han
from support.training import assert_recipe_batches_replay


def _argv(data, dev, out, *more):
    return ["classify", "--data-dir", str(data), "--dev-list", str(dev), "--output-dir", str(out),
            "--embeddings", "none", "--embedding-dim", "8", "--word-units", "6", "--sentence-units", "6",
            "--attention-units", "8", "--min-count", "1", "--max-sentences", "6", "--max-words", "9",
            "--batch-size", "16", "--patience", "5", "--learning-rate", "0.02", *more]


@pytest.mark.slow  # one short training: ~10 s
def test_classify_batches_replay_and_a_run_saves_a_model_with_its_card(tmp_path):
    data, dev = han.make_corpus(tmp_path / "corpus")
    assert_recipe_batches_replay(_argv(data, dev, tmp_path / "contract"))
    assert main(["train", *_argv(data, dev, tmp_path / "run", "--epochs", "2")]) == 0
    path = tmp_path / "run" / "model.keras"
    model = keras.models.load_model(path)
    assert type(model).__name__ == "DocumentClassifier" and model.labels == tuple(sorted(han.TOPICS))
    [r] = model.classify(["The rocket of the orbit."])
    assert r.label in han.TOPICS and abs(sum(r.sentence_weights) - 1) < 1e-5
    card = json.loads((tmp_path / "run" / "model.json").read_text())
    assert card["task"] == "classify" and card["metrics"]["split"] == "dev"
    assert card["data"]["train_documents"] == 36 and card["data"]["dev_documents"] == 12
    assert "dev_accuracy" in card["metrics"] and card["metrics"]["dev"]["documents"] == 12


def test_frozen_embeddings_keep_the_vectors_as_given(tmp_path, capsys):
    import numpy as np

    data, dev = han.make_corpus(tmp_path / "corpus")
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("rocket 0.5 -1 2 0.25\norbit 1 1 -1 0\nthe 0 0.5 0 1\n", encoding="utf-8")
    argv = _argv(data, dev, tmp_path / "run", "--epochs", "1")
    argv[argv.index("none")] = str(vectors)
    assert main(["train", *argv, "--freeze-embeddings"]) == 0
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    table = model.word_encoder.embedding.get_weights()[0]
    assert table.shape[1] == 4  # --embedding-dim became the vectors'
    np.testing.assert_allclose(table[model.vocabulary.token_to_id("rocket")], [0.5, -1, 2, 0.25], atol=1e-3)
    np.testing.assert_allclose(table[model.vocabulary.token_to_id("orbit")], [1, 1, -1, 0], atol=1e-3)
    card = json.loads((tmp_path / "run" / "model.json").read_text())
    assert card["metrics"]["embeddings_frozen"] is True and card["metrics"]["embedding_words_found"] >= 2
    assert main(["train", *_argv(data, dev, tmp_path / "none"), "--freeze-embeddings"]) != 0
    assert "--freeze-embeddings needs --embeddings" in capsys.readouterr().err


def test_a_term_branch_run_saves_its_terms_in_the_run_and_the_model(tmp_path, capsys):
    data, dev = han.make_corpus(tmp_path / "corpus")
    argv = _argv(data, dev, tmp_path / "run", "--epochs", "1", "--tfidf", "--tfidf-terms")
    assert main(["train", *argv]) == 0
    terms = json.loads((tmp_path / "run" / "tfidf_terms.json").read_text())
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    assert list(model.tfidf_terms) == terms and "rocket" in terms
    assert float(model.idf.numpy()[1:].max()) > 1.0  # fitted on train (all ones before)
    [r] = model.classify(["The rocket of the orbit."])
    assert r.label in han.TOPICS
    assert main(["train", *_argv(data, dev, tmp_path / "bad"), "--tfidf-terms"]) != 0
    assert "--tfidf-terms is a setting of the tf-idf branch: add --tfidf" in capsys.readouterr().err
    for extra, message in ((["--tfidf", "--tfidf-ngrams", "2"], "are settings of --tfidf-terms: add it"),
                           (["--tfidf", "--tfidf-terms", "--tfidf-min-df", "0"], "must be >= 1, got 1 and 0"),
                           (["--tfidf", "--tfidf-terms", "--tfidf-dropout", "1"], "a probability in [0, 1), got 1.0")):
        assert main(["train", *_argv(data, dev, tmp_path / "bad"), *extra]) != 0
        assert message in capsys.readouterr().err, extra
