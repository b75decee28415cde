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
        Seq2Seq(v, v, embedding_dim=4, units=4, attention_units=4, **{setting: value})


def test_a_crafted_file_is_one_line_at_load(tmp_path, capsys):
    import json
    import zipfile

    from captioner.cli import main

    v = Vocabulary(tuple(SPECIAL_TOKENS) + ("a", "b"))
    good = tmp_path / "m.keras"
    Seq2Seq(v, v, embedding_dim=4, units=4, attention_units=4).save(good)
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
        Seq2Seq(v, v, embedding_dim=4, units=4, attention_units=4, source_tokenizer={"spm": spm or "AAAA"})
