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


def test_an_svm_started_frozen_branch_stays_the_svm_scikit_learn_fits(tmp_path, capsys):
    """--tfidf-init svm --freeze-tfidf: after training, the branch's logits are still the decision
    values of scikit-learn's LinearSVC fitted on the branch's train features (the HAN learned
    beside it); without --freeze-tfidf the branch starts there and moves."""
    import numpy as np
    from sklearn.svm import LinearSVC

    from captioner.data.newsgroups import load_newsgroups
    from captioner.training.tfidf_branch import branch_features

    data, dev = han.make_corpus(tmp_path / "corpus")
    argv = _argv(data, dev, tmp_path / "run", "--epochs", "2", "--tfidf", "--tfidf-terms", "--tfidf-init", "svm")
    assert main(["train", *argv, "--freeze-tfidf"]) == 0
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    train = load_newsgroups(data, "train", dev_list=dev)
    texts = [d.text for d in train]
    x = {"document": np.zeros((len(texts), model.max_sentences, model.max_words), np.int32),
         **model.encode_terms(texts)}
    features = branch_features(model, x)
    assert features.shape == (len(texts), len(model.tfidf_terms) + 1) and features.nnz > 0
    labels = np.array([model.labels.index(d.label) for d in train])
    svm = LinearSVC(C=1.0, random_state=0).fit(features, labels)
    card = json.loads((tmp_path / "run" / "model.json").read_text())
    assert card["config"]["freeze_tfidf"] is True and card["config"]["tfidf_folds"] == 5
    fit = card["metrics"]["tfidf_init"]
    assert fit["method"] == "svm" and fit["features"] == len(model.tfidf_terms) + 1 and fit["train_accuracy"] > 90
    assert fit["gain"] > 0 and fit["folds"] == 5 and 0 <= fit["out_of_fold_accuracy"] <= 100
    kernel, bias = model.sparse_classifier.get_weights()
    np.testing.assert_allclose(model.tfidf_scale * features @ kernel + bias,
                               fit["gain"] * svm.decision_function(features),
                               atol=2e-3 * fit["gain"])  # liblinear stops at its tolerance; float32 features

    assert main(["train", *_argv(data, dev, tmp_path / "moved", "--epochs", "2", "--tfidf", "--tfidf-terms",
                                 "--tfidf-init", "svm")]) == 0
    moved = keras.models.load_model(tmp_path / "moved" / "model.keras").sparse_classifier.get_weights()[0]
    assert np.abs(moved - kernel).max() > 1e-3  # trained on from the same start
    for extra, message in ((["--tfidf-init", "svm"], "--tfidf-init is a setting of the tf-idf branch: add --tfidf"),
                           (["--tfidf", "--freeze-tfidf"], "a frozen random branch would add noise"),
                           (["--tfidf", "--tfidf-folds", "3"], "--tfidf-folds is a setting of --tfidf-init svm"),
                           (["--tfidf", "--tfidf-init", "svm", "--tfidf-folds", "1"], "must be >= 2, got 1")):
        assert main(["train", *_argv(data, dev, tmp_path / "bad"), *extra]) != 0
        assert message in capsys.readouterr().err, extra


def test_out_of_fold_logits_come_from_svms_that_did_not_fit_the_post_and_stand_for_the_branch():
    """Stacking: each train post's branch logits come from the LinearSVC fitted on the other
    folds; given as inputs["branch_logits"], they replace the branch's own in the model's logits."""
    import random

    import numpy as np
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    from captioner.models.document_classifier import DocumentClassifier
    from captioner.training.tfidf_branch import branch_features, out_of_fold_svm_logits, train_terms

    rng = random.Random(3)
    topics = sorted(han.TOPICS)
    texts = [han.make_text(g, rng) for g in topics * 6]
    labels = np.array([topics.index(g) for g in topics * 6])
    terms = train_terms([type("D", (), {"text": t}) for t in texts])
    model = DocumentClassifier.of(han.tiny_classifier().vocabulary, topics, embedding_dim=8, word_units=6,
                               sentence_units=6, attention_units=8, dropout=0.0, max_sentences=6, max_words=9,
                               tfidf=True, tfidf_terms=terms)
    x = {"document": np.zeros((len(texts), 6, 9), np.int32), **model.encode_terms(texts)}
    model.fit_idf(x)
    features = branch_features(model, x)
    oof = out_of_fold_svm_logits(features, labels, len(topics), folds=3, seed=7)
    for fit_idx, held_idx in StratifiedKFold(3, shuffle=True, random_state=7).split(texts, labels):
        svm = LinearSVC(random_state=0).fit(features[fit_idx], labels[fit_idx])
        np.testing.assert_allclose(oof[held_idx], svm.decision_function(features[held_idx]), atol=1e-5)
    in_sample = LinearSVC(random_state=0).fit(features, labels).decision_function(features)
    assert np.abs(oof - in_sample).max() > 1e-2  # not what an SVM that fitted them says
    given = np.asarray(model({**x, "branch_logits": oof}))
    no_terms = np.asarray(model({"document": x["document"], **model.encode_terms([""] * len(texts))}))
    np.testing.assert_allclose(given - no_terms, oof - model.sparse_classifier.get_weights()[1], atol=1e-4)


def test_the_logit_gain_is_the_temperature_that_minimizes_cross_entropy():
    import numpy as np

    from captioner.training.tfidf_branch import logit_gain

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(400, 4))
    labels = np.array([rng.choice(4, p=np.exp(3 * r) / np.exp(3 * r).sum()) for r in logits])  # drawn at gain 3
    assert abs(logit_gain(logits, labels) - 3) < 0.6
    assert logit_gain(logits, labels) == logit_gain(logits, labels) and logit_gain(-logits, labels) < 0.1


def test_svm_logits_cover_every_label_for_a_binary_svm_and_a_missing_label():
    import numpy as np
    from sklearn.svm import LinearSVC

    from captioner.training.tfidf_branch import svm_logits

    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    svm = LinearSVC(random_state=0).fit(x, [0, 0, 2, 2])  # labels 0 and 2 of three: label 1 never fitted
    logits = svm_logits(svm, x, 3)
    d = svm.decision_function(x)
    np.testing.assert_allclose(logits, np.stack([-d / 2, -np.ones(4), d / 2], 1))
    assert list(logits.argmax(1)) == [0, 0, 2, 2]
