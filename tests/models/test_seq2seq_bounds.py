"""Issue 40 item 10: a crafted model config is refused at load, before any array is built."""

import pytest

from captioner.errors import InputError
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from captioner.text.vocabulary import MAX_VOCABULARY, SPECIAL_TOKENS


def test_a_vocabulary_over_the_bound_is_refused_before_anything_is_built():
    with pytest.raises(InputError, match="more than the 500,000"):
        Vocabulary(list(SPECIAL_TOKENS) + [f"w{i}" for i in range(MAX_VOCABULARY)])


@pytest.mark.parametrize("setting, value", [("beam_size", 100000), ("max_length", 10**8), ("alpha", float("nan")),
                                            ("beam_size", 0)])
def test_out_of_bound_decoding_settings_in_a_config_are_refused(setting, value):
    v = Vocabulary(tuple(SPECIAL_TOKENS) + ("a", "b"))
    with pytest.raises(InputError, match=f"Seq2Seq config {setting}"):
        Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4, **{setting: value})


def test_a_crafted_file_is_one_line_at_load(tmp_path, capsys):
    import json
    import zipfile

    from captioner.cli import main

    v = Vocabulary(tuple(SPECIAL_TOKENS) + ("a", "b"))
    good = tmp_path / "m.keras"
    Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4).save(good)
    crafted = tmp_path / "crafted.keras"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(crafted, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["beam_size"] = 100000
                data = json.dumps(config).encode()
            dst.writestr(item, data)
    (tmp_path / "in.txt").write_text("a b\n")
    assert main(["translate", "--model", str(crafted), "--input", str(tmp_path / "in.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert "beam_size 100000" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("spm", ["not base64 !!", "cmFuZG9tIGJ5dGVzIGhlcmU=", ""])
def test_a_broken_sentencepiece_model_is_refused_at_load(spm):
    """Issue 40 items 8 and 10: a translator whose SentencePiece model is bad base64 or random bytes
    loaded and then wrote empty lines (and `serve` printed a 42-line traceback at warm-up)."""
    v = Vocabulary(tuple(SPECIAL_TOKENS) + ("a", "b"))
    with pytest.raises(InputError, match="source_tokenizer: not a SentencePiece model"):
        Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4, source_tokenizer={"spm": spm or "AAAA"})


def test_negative_or_out_of_vocabulary_ids_from_python_are_refused():
    """Issue 66 item 9: Seq2Seq and LanguageModel called with id -1 (or V) answered with logits."""
    import keras
    import numpy as np
    import pytest

    from captioner.errors import InputError
    from captioner.models.language_model import LanguageModel
    from captioner.models.seq2seq import Seq2Seq
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(0)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "b"))
    model = Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4, dropout=0.0, max_length=4, max_source_length=4)
    good = {"source": np.array([[4, 5]]), "tokens": np.array([[1, 4]])}
    assert model(good).shape == (1, 2, 6)
    for bad in ({**good, "source": np.array([[4, -1]])}, {**good, "tokens": np.array([[1, 6]])}):
        with pytest.raises(InputError, match="ids must be 0..5"):
            model(bad)
    with pytest.raises(InputError, match="source ids"):
        model.generate(np.array([[-3, 4]]))
    lm = LanguageModel.of(["<pad>", "<start>", "<end>", "<unk>", "a"], level="word", embedding_dim=4, units=4)
    assert lm(np.array([[1, 4]])).shape == (1, 2, 5)
    with pytest.raises(InputError, match="token ids"):
        lm(np.array([[1, -1]]))


def test_known_words_says_how_much_of_a_text_is_in_the_models_language():
    """Issue 69 item 3: the Translate page tells French pasted into the English -> German model."""
    import keras

    from captioner.models.seq2seq import Seq2Seq
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(0)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "dog", "runs", "."))
    model = Seq2Seq.of(v, v, embedding_dim=4, units=4, attention_units=4, dropout=0.0, max_length=4, max_source_length=8)
    assert model.known_words("A dog runs.") == (4, 4)
    assert model.known_words("Nous sommes allés au marché.") == (1, 6)
    assert model.known_words("") == (0, 0)
