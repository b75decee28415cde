"""The unigram truecaser (captioner.text.truecase), worked by hand, and inside a translator."""

from captioner.text.truecase import apply_truecase, capitalize_first, learn_truecase


def test_learn_counts_forms_away_from_the_start_of_a_sentence():
    sentences = [["Der", "Mann", "sieht", "den", "Hund", "."],
                 ["Ein", "Hund", "und", "ein", "Mann", "."],
                 ["Essen", "ist", "gut", "."],          # sentence-initial: says nothing about "essen"
                 ["Sie", "essen", "und", "Essen", "essen", "."],  # 2 lower vs 1 capital -> lower, left out
                 ["Wir", "sehen", "das", "iPhone", "und", "Berlin", "."],
                 ["In", "Berlin", "ist", "es", "BERLIN", "."]]  # 2 "Berlin" vs 1 "BERLIN"
    table = learn_truecase(sentences)
    assert table == {"mann": "Mann", "hund": "Hund", "iphone": "iPhone", "berlin": "Berlin"}
    assert "der" not in table and "ein" not in table and "essen" not in table
    assert learn_truecase(sentences, keep={"mann"}) == {"mann": "Mann"}
    assert learn_truecase([["A", "b"], ["C", "B"]]) == {}  # a tie keeps the form seen first ("b")


def test_apply_uses_the_table_then_the_source_then_capitalizes_the_first_word():
    table = {"mann": "Mann", "hund": "Hund", "september": "September"}
    words = ["ein", "mann", "und", "jane", "sehen", "den", "hund", "im", "september", "."]
    assert apply_truecase(words, table) == ["Ein", "Mann", "und", "jane", "sehen", "den", "Hund", "im",
                                            "September", "."]
    source = ["A", "man", "and", "Jane", "see", "the", "dog", "in", "September", "."]
    assert apply_truecase(words, table, source)[3] == "Jane"  # not in the table: the source's form
    # the source's first word is capitalized by position: it lends its form to nothing
    assert apply_truecase(["sie", "sieht", "jane"], {}, ["Jane", "sees", "her"]) == ["Sie", "sieht", "jane"]
    assert apply_truecase([], table) == []
    assert capitalize_first("über") == "Über" and capitalize_first("\"") == "\"" and capitalize_first("") == ""


def test_a_truecased_translator_writes_capitals_and_keeps_them_through_save_and_load(tmp_path):
    import warnings

    import keras

    import captioner  # noqa: F401
    from captioner.models.seq2seq import Seq2Seq
    from captioner.text.vocabulary import Vocabulary

    keras.utils.set_random_seed(0)
    words = ("ein", "hund", "läuft", ".", "a", "dog", "runs")
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + words)
    plain = Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=2, max_length=6)
    config = plain.get_config()
    config["target_tokenizer"] = {**config["target_tokenizer"], "truecase": {"hund": "Hund", "dog": "Dog"}}
    cased = Seq2Seq.from_config(config)
    cased.set_weights(plain.get_weights())
    sentences = ["a dog runs .", "Jane and Tom run", "ein hund läuft ."]
    for lower, true in zip(plain.translate(sentences), cased.translate(sentences)):
        assert true.text.lower() == lower.text.lower()
        expected = apply_truecase(lower.tokens, {"hund": "Hund", "dog": "Dog"})
        assert true.tokens[0] == expected[0] and true.tokens[0][:1] == true.tokens[0][:1].upper()
        assert all(w in ("Hund", "Dog") for w in true.tokens if w.lower() in ("hund", "dog"))
    path = tmp_path / "m.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cased.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.target_tokenizer["truecase"] == {"hund": "Hund", "dog": "Dog"}
    assert [t.text for t in loaded.translate(sentences)] == [t.text for t in cased.translate(sentences)]
