"""The HAN document classifier on generated documents: it learns which words decide the
topic and attends to them, reads text as the reader does, and survives save -> load in a
fresh process with the same outputs."""

import json
import random

import keras
import numpy as np
import pytest
from support.han import TOPICS, make_text, tiny_classifier

from captioner.errors import InputError
from captioner.models.document_classifier import DocumentClassifier, load_document_classifier
from support import fresh_python


@pytest.fixture(scope="module")
def trained():
    return tiny_classifier(seed=0, train_steps=25)


def test_it_learns_the_topics_and_attends_to_the_topic_sentence_and_word(trained):
    rng = random.Random(7)
    texts, gold = [], []
    for i in range(30):
        group = sorted(TOPICS)[i % 3]
        texts.append(make_text(group, rng))
        gold.append(group)
    results = trained.classify(texts)
    assert np.mean([r.label == g for r, g in zip(results, gold)]) >= 0.9
    hits = 0
    for r in results:
        topic_words = {w for ws in TOPICS.values() for w in ws}
        s = int(np.argmax(r.sentence_weights))
        w = int(np.argmax(r.word_weights[s]))
        hits += r.sentences[s][w].lower() in topic_words
    assert hits >= 20  # the most attended word of the most attended sentence is the topic word


def test_weights_sum_to_one_over_what_was_read(trained):
    [r] = trained.classify(["Orbit of the rocket. It was lunar, we think.\n\nAnd the nasa."])
    assert len(r.sentence_weights) == len(r.sentences) == len(r.word_weights) == 3
    assert abs(sum(r.sentence_weights) - 1) < 1e-5
    for words, weights in zip(r.sentences, r.word_weights):
        assert len(words) == len(weights) and abs(sum(weights) - 1) < 1e-5
    assert abs(sum(r.probabilities.values()) - 1) < 1e-5 and r.label == max(r.probabilities, key=r.probabilities.get)
    assert r.sentences[0] == ["Orbit", "of", "the", "rocket", "."]  # words as written, looked up lower-cased
    row = r.to_json()
    assert row["sentences"][0] == "Orbit of the rocket ." and not row["truncated"]


def test_long_texts_are_cut_and_say_so(trained):
    text = " ".join(f"The rocket {i}." for i in range(20))
    [r] = trained.classify([text])
    assert r.truncated and len(r.sentences) == trained.max_sentences
    long_sentence = " ".join(["orbit"] * 20)
    sentences, _ = trained.read(long_sentence)
    assert [len(s) for s in sentences] == [9, 9, 2]  # split_long: continued as further sentences


def test_a_text_without_words_is_refused(trained):
    with pytest.raises(InputError, match="document 2: no words"):
        trained.classify(["A rocket.", "   \n\n  "])
    with pytest.raises(TypeError):
        trained.classify("a string")


def test_labels_must_be_distinct():
    with pytest.raises(ValueError, match="distinct"):
        DocumentClassifier.of(["<pad>", "<start>", "<end>", "<unk>", "a"], ["x", "x"])


@pytest.mark.slow  # a fresh Python imports TensorFlow: ~15-30 s
def test_save_and_load_in_a_fresh_process_give_the_same_outputs(trained, tmp_path):
    path = tmp_path / "han.keras"
    trained.inference_copy().save(path)
    texts = [make_text(g, random.Random(3)) for g in sorted(TOPICS)]
    expected = [r.to_json(digits=6) for r in trained.classify(texts)]
    script = (
        "import json, sys, captioner\n"
        "from captioner.models.document_classifier import load_document_classifier\n"
        "m = load_document_classifier(sys.argv[1])\n"
        "print(json.dumps([r.to_json(digits=6) for r in m.classify(json.loads(sys.argv[2]))]))\n"
    )
    got = json.loads(fresh_python.last_line(script, path, json.dumps(texts), timeout=300))
    assert [g["label"] for g in got] == [e["label"] for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g["sentence_weights"], e["sentence_weights"], atol=2e-6)
        assert len(g["word_weights"]) == len(e["word_weights"])
        for gw, ew in zip(g["word_weights"], e["word_weights"]):
            np.testing.assert_allclose(gw, ew, atol=2e-6)
        np.testing.assert_allclose(list(g["probabilities"].values()), list(e["probabilities"].values()), atol=2e-6)
    loaded = keras.models.load_model(path)  # safe mode
    assert isinstance(loaded, DocumentClassifier) and loaded.labels == trained.labels
    assert loaded.vocabulary == trained.vocabulary and loaded.max_words == trained.max_words


def test_loading_names_the_file(tmp_path):
    with pytest.raises(InputError, match="missing.keras: model file not found"):
        load_document_classifier(tmp_path / "missing.keras")


def test_tfidf_branch_reads_what_scikit_learns_vectorizer_reads(tmp_path):
    """tfidf=True: the in-graph features equal TfidfVectorizer(sublinear_tf=True) over the same
    word ids (specials and <unk> left out), the idf survives save -> load, and the branch's
    logits are added to the HAN's."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from captioner.data.documents import to_hierarchy

    vocab = tiny_classifier().vocabulary
    model = DocumentClassifier.of(vocab, sorted(TOPICS), embedding_dim=8, word_units=6, sentence_units=6,
                               attention_units=8, dropout=0.0, max_sentences=6, max_words=9, tfidf=True)
    rng = random.Random(1)
    texts = [make_text(g, rng) for g in sorted(TOPICS) * 4] + ["Zyzzyva the the orbit."]  # an unknown word
    ids = model.encode([to_hierarchy(t, 6, 9) for t in texts])
    model.fit_idf(ids[:8])
    docs = [[str(i) for i in row[row > 3]] for row in ids.reshape(len(ids), -1)]
    vectorizer = TfidfVectorizer(sublinear_tf=True, analyzer=lambda d: d, vocabulary=[str(i) for i in range(4, len(vocab))])
    vectorizer.fit(docs[:8])
    expected = np.zeros((len(ids), len(vocab)), np.float32)
    expected[:, 4:] = vectorizer.transform(docs).toarray()
    np.testing.assert_allclose(model.tfidf_features(ids).numpy(), expected, atol=1e-5)
    wide_keys = ("tfidf", "tfidf_l2", "tfidf_scale")
    han_only = DocumentClassifier.from_config({k: v for k, v in model.get_config().items() if k not in wide_keys})
    han_only.set_weights([w.numpy() for w in model.weights if "tfidf" not in w.path and w.name != "idf"])
    kernel, bias = model.sparse_classifier.get_weights()
    np.testing.assert_allclose(model(ids).numpy(), han_only(ids).numpy() + 10.0 * expected @ kernel + bias, atol=1e-4)
    model.save(tmp_path / "wide.keras")
    loaded = keras.models.load_model(tmp_path / "wide.keras")
    assert loaded.tfidf and loaded.get_config() == model.get_config()
    np.testing.assert_allclose(loaded.idf.numpy(), model.idf.numpy())
    np.testing.assert_allclose(loaded(ids).numpy(), model(ids).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="tfidf=True"):
        han_only.fit_idf(ids)


def test_term_branch_reads_the_whole_text_as_scikit_learns_default_analyzer(tmp_path):
    """tfidf_terms: the branch's features equal TfidfVectorizer(sublinear_tf=True) with its
    default analyzer over the whole text (past the sentences the HAN reads), its logits are a
    Dense over those features, and the model saves, loads and classifies raw text."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from captioner.data.documents import to_hierarchy
    from captioner.models.document_classifier import text_terms
    from captioner.training.tfidf_branch import train_terms

    rng = random.Random(2)
    texts = [make_text(g, rng) for g in sorted(TOPICS) * 3]
    texts[0] += " Later: " + " ".join(["Rocket-launch"] * 40) + ". Café é 1999 x."  # past the HAN's 6 x 9 words
    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2).fit(texts[:6])
    terms = train_terms([type("D", (), {"text": t}) for t in texts[:6]])
    assert terms == sorted(vectorizer.vocabulary_)  # the vocabulary scikit-learn keeps at min_df=2
    assert text_terms("Don't Café x 1999") == ["don", "café", "1999"]
    vocab = tiny_classifier().vocabulary
    model = DocumentClassifier.of(vocab, sorted(TOPICS), embedding_dim=8, word_units=6, sentence_units=6,
                               attention_units=8, dropout=0.0, max_sentences=6, max_words=9, tfidf=True,
                               tfidf_terms=terms)
    x = model.inputs_of(texts, [to_hierarchy(t, 6, 9) for t in texts])
    assert set(x) == {"document", "terms", "term_counts"} and x["document"].shape == (len(texts), 6, 9)
    model.fit_idf({k: v[:6] for k, v in x.items()})
    expected = vectorizer.transform(texts).toarray()  # columns: terms in sorted order, as the model's 1..
    np.testing.assert_allclose(model.tfidf_features(x).numpy()[:, 1:], expected, atol=1e-5)
    kernel, bias = model.sparse_classifier.get_weights()
    han_only = DocumentClassifier.of(vocab, sorted(TOPICS), embedding_dim=8, word_units=6, sentence_units=6,
                                  attention_units=8, dropout=0.0, max_sentences=6, max_words=9)
    han_only.set_weights([w.numpy() for w in model.weights if "tfidf" not in w.path and w.name != "idf"])
    np.testing.assert_allclose(model(x).numpy(), han_only(x["document"]).numpy() + 10.0 * expected @ kernel[1:] + bias,
                               atol=1e-4)
    capped = DocumentClassifier.from_config({**model.get_config(), "tfidf_max_terms": 2}).encode_terms(texts[:1])
    assert capped["terms"].shape == (1, 2)  # a text's first distinct terms
    model.save(tmp_path / "terms.keras")
    loaded = keras.models.load_model(tmp_path / "terms.keras")
    assert loaded.tfidf_terms == model.tfidf_terms and loaded.get_config() == model.get_config()
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), atol=1e-5)
    want = model.classify(texts)
    assert [r.label for r in loaded.classify(texts)] == [r.label for r in want]
    with pytest.raises(ValueError, match="reads {'document', 'terms', 'term_counts'}"):
        model(x["document"])
    with pytest.raises(ValueError, match="needs tfidf=True"):
        DocumentClassifier.of(vocab, sorted(TOPICS), tfidf_terms=terms)


def test_term_branch_with_word_pairs_reads_what_an_ngram_vectorizer_reads():
    """tfidf_ngrams=2: the vocabulary and the features are TfidfVectorizer(ngram_range=(1, 2))'s,
    the setting survives a save, and it is refused without tfidf_terms."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from captioner.data.documents import to_hierarchy
    from captioner.models.document_classifier import text_terms
    from captioner.training.tfidf_branch import train_terms

    rng = random.Random(3)
    texts = [make_text(g, rng) for g in sorted(TOPICS) * 3]
    assert text_terms("The red, red rose", 2) == ["the", "red", "red", "rose", "the red", "red red", "red rose"]
    for min_df in (2, 3):
        vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=min_df, ngram_range=(1, 2)).fit(texts[:6])
        terms = train_terms([type("D", (), {"text": t}) for t in texts[:6]], min_df=min_df, ngrams=2)
        assert terms == sorted(vectorizer.vocabulary_) and any(" " in t for t in terms)
    model = DocumentClassifier.of(tiny_classifier().vocabulary, sorted(TOPICS), embedding_dim=8, word_units=6,
                               sentence_units=6, attention_units=8, dropout=0.0, max_sentences=6, max_words=9,
                               tfidf=True, tfidf_terms=terms, tfidf_ngrams=2, tfidf_max_terms=4096)
    x = model.inputs_of(texts, [to_hierarchy(t, 6, 9) for t in texts])
    model.fit_idf({k: v[:6] for k, v in x.items()})
    np.testing.assert_allclose(model.tfidf_features(x).numpy()[:, 1:], vectorizer.transform(texts).toarray(), atol=1e-5)
    assert DocumentClassifier.from_config(model.get_config()).tfidf_ngrams == 2
    with pytest.raises(ValueError, match="only with tfidf_terms"):
        DocumentClassifier.of(model.vocabulary, sorted(TOPICS), tfidf=True, tfidf_ngrams=2)


def test_term_dropout_acts_only_in_training_and_keeps_the_features_unit_norm():
    from captioner.data.documents import to_hierarchy
    from captioner.training.tfidf_branch import train_terms

    rng = random.Random(4)
    texts = [make_text(g, rng) for g in sorted(TOPICS) * 3]
    terms = train_terms([type("D", (), {"text": t}) for t in texts])
    model = DocumentClassifier.of(tiny_classifier().vocabulary, sorted(TOPICS), embedding_dim=8, word_units=6,
                               sentence_units=6, attention_units=8, dropout=0.0, max_sentences=6, max_words=9,
                               tfidf=True, tfidf_terms=terms, tfidf_dropout=0.5)
    x = model.inputs_of(texts, [to_hierarchy(t, 6, 9) for t in texts])
    _, kept = model.term_weights(x)
    _, dropped = model.term_weights(x, training=True)
    assert np.count_nonzero(dropped.numpy()) < 0.8 * np.count_nonzero(kept.numpy())
    np.testing.assert_allclose(np.linalg.norm(dropped.numpy(), axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(model(x).numpy(), model(x).numpy())  # inference: no dropout
    assert DocumentClassifier.from_config(model.get_config()).tfidf_dropout == 0.5
    with pytest.raises(ValueError, match="needs tfidf_terms"):
        DocumentClassifier.of(model.vocabulary, sorted(TOPICS), tfidf=True, tfidf_dropout=0.5)


def term_classifier(seed, texts, train_steps=0, **overrides):
    """A tiny HAN with a term branch over `texts`' terms (idf fitted on them), trained a few steps."""
    from captioner.data.documents import to_hierarchy
    from captioner.training.tfidf_branch import train_terms

    keras.utils.set_random_seed(seed)
    terms = train_terms([type("D", (), {"text": t}) for t in texts])
    settings = {"embedding_dim": 8, "word_units": 6, "sentence_units": 6, "attention_units": 8, "dropout": 0.0,
                "max_sentences": 6, "max_words": 9, "tfidf": True, "tfidf_terms": terms, **overrides}
    model = DocumentClassifier.of(tiny_classifier().vocabulary, sorted(TOPICS), **settings)
    x = model.inputs_of(texts, [to_hierarchy(t, 6, 9) for t in texts])
    model.fit_idf(x)
    if train_steps:
        from captioner.training.trainer import classifier_compile_args

        y = np.array([i % len(TOPICS) for i in range(len(texts))])
        model.compile(optimizer=keras.optimizers.Adam(0.02), **classifier_compile_args())
        model.fit(x, y, batch_size=16, epochs=train_steps, verbose=0)
    return model


def test_an_ensemble_of_hans_reads_once_mixes_probabilities_averages_attention_and_saves_shared_parts_once(tmp_path):
    from captioner.models.document_classifier import DocumentEnsemble

    rng = random.Random(3)
    texts = [make_text(g, rng) for g in sorted(TOPICS) * 12]
    members = [term_classifier(seed, texts) for seed in (0, 1)]  # untrained: the rule, not the topics, is tested
    ensemble = DocumentEnsemble(members)
    assert ensemble.combine == "mixture" and ensemble.labels == members[0].labels
    probe = texts[:5] + ["Subject: orbit\n\nThe rocket left the lunar orbit. The nasa clinic was closed."]
    results = [m.classify(probe) for m in members]
    mixed = ensemble.classify(probe)
    for i, r in enumerate(mixed):
        want = np.mean([[res[i].probabilities[k] for k in ensemble.labels] for res in results], axis=0)
        np.testing.assert_allclose([r.probabilities[k] for k in ensemble.labels], want, atol=1e-5)
        assert r.label == ensemble.labels[int(np.argmax(want))]
        np.testing.assert_allclose(r.sentence_weights, np.mean([res[i].sentence_weights for res in results], 0),
                                   atol=1e-5)
        assert r.sentences == results[0][i].sentences
    product = DocumentEnsemble(members, combine="product").classify(probe[:1])[0].probabilities
    geometric = np.exp(np.mean([np.log([res[0].probabilities[k] for k in ensemble.labels]) for res in results], 0))
    np.testing.assert_allclose([product[k] for k in ensemble.labels], geometric / geometric.sum(), atol=1e-5)

    path = tmp_path / "ensemble.keras"
    ensemble.save(path)
    config = json.loads(__import__("zipfile").ZipFile(path).read("config.json"))["config"]
    assert set(config["shared"]) == {"vocabulary", "labels", "tfidf_terms"}  # saved once, not per member
    assert not any(k in m["config"] for m in config["members"] for k in config["shared"])
    loaded = load_document_classifier(path)
    assert isinstance(loaded, DocumentEnsemble) and loaded.combine == "mixture"
    again = loaded.classify(probe)
    np.testing.assert_allclose([r.probabilities[k] for r in again for k in loaded.labels],
                               [r.probabilities[k] for r in mixed for k in loaded.labels], atol=1e-5)
    assert [r.label for r in again] == [r.label for r in mixed]

    with pytest.raises(ValueError, match="at least two members"):
        DocumentEnsemble(members[:1])
    with pytest.raises(ValueError, match="member 2 reads its input differently from member 1: its reading"):
        DocumentEnsemble([members[0], term_classifier(2, texts, max_sentences=5)])
    with pytest.raises(ValueError, match="member 2 is a DocumentEnsemble"):
        DocumentEnsemble([members[0], ensemble])
    with pytest.raises(NotImplementedError, match="trained member by member"):
        ensemble(ensemble.inputs_of(probe[:1], [ensemble.read(probe[0])[0]]))
