"""scripts/experiments/make_seq2seq_ensemble.py on tiny character models and a hand-made Dakshina lexicon."""

import json

import keras

from captioner.models.seq2seq import Seq2Seq
from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
from captioner.text import Vocabulary
from script_support import load_script

mse = load_script("make_seq2seq_ensemble")


def _char_model(seed, path):
    keras.utils.set_random_seed(seed)
    src = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple("abcdeikmnrst"))
    tgt = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + tuple("कमनरसत"))
    Seq2Seq.of(src, tgt, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=2, max_length=8,
            source_tokenizer={"chars": True, "lower": True}, target_tokenizer={"chars": True, "lower": False},
            replace_unk=False).save(path)


def test_joins_members_writes_atomically_and_scores(tmp_path):
    paths = [tmp_path / f"m{i}.keras" for i in range(2)]
    for i, p in enumerate(paths):
        _char_model(i, p)
    dev = tmp_path / "dev.tsv"
    dev.write_text("कमल\tkamal\t3\nनमक\tnamak\t1\nरस\tras\t2\n", encoding="utf-8")
    out = tmp_path / "ens.keras"
    assert mse.main([str(p) for p in paths] + ["--output", str(out), "--beam-size", "3", "--dakshina-dev", str(dev),
                                               "--json", str(tmp_path / "scores.json")]) == 0
    assert not list(tmp_path.glob("*.partial*"))
    loaded = keras.models.load_model(out)
    assert isinstance(loaded, Seq2SeqEnsemble) and len(loaded.members) == 2 and loaded.beam_size == 3
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert set(scores["scores"]) == {str(paths[0]), str(paths[1]), "ensemble"}
    assert all(0 <= row["top-1"] <= 100 for row in scores["scores"].values())


def test_scores_members_and_ensemble_on_a_multi30k_val_split(tmp_path):
    import gzip

    words = ("ein", "hund", "läuft", "zwei", "männer", "a", "dog", "runs", "two", "men", ".")
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + words)
    paths = [tmp_path / f"w{i}.keras" for i in range(2)]
    for i, p in enumerate(paths):
        keras.utils.set_random_seed(i)
        Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=2,
                max_length=6).save(p)
    data = tmp_path / "m30k"
    data.mkdir()
    for lang, lines in (("en", ["A dog runs.", "Two men."]), ("de", ["Ein Hund läuft.", "Zwei Männer."])):
        with gzip.open(data / f"val.{lang}.gz", "wt", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    out = tmp_path / "ens.keras"
    assert mse.main([str(p) for p in paths] + ["--output", str(out), "--multi30k", str(data), "--cased",
                                               "--json", str(tmp_path / "scores.json")]) == 0
    scores = json.loads((tmp_path / "scores.json").read_text())["scores"]
    assert set(scores) == {str(paths[0]), str(paths[1]), "ensemble"}
    for row in scores.values():
        assert row["sentences"] == 2 and row["cased"] and 0 <= row["BLEU"] <= row["BLEU_lc"] + 1e-9
