"""`captioner model tune-rescorer` on a tiny character model and generated Dakshina lexicons:
the n-best is cached, the weights fitted on one half, the model saved with its rescorer, and
the figures it writes are those the saved model decodes to."""

import json

import keras

from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from captioner.cli import main
from captioner.inference import rescorer_tuning
from support.translit import SYLLABLES, write_dakshina



def test_tunes_on_one_half_saves_the_model_with_its_rescorer(tmp_path):
    write_dakshina(tmp_path / "data", n_train=60, n_dev=24)
    keras.utils.set_random_seed(0)
    specials = ("<pad>", "<start>", "<end>", "<unk>")
    native = sorted({c for v in SYLLABLES.values() for c in v})
    model = Seq2Seq.of(Vocabulary(specials + tuple("abcdefghijklmnopqrstuvwxyz")), Vocabulary(specials + tuple(native)),
                    embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=8,
                    source_tokenizer={"chars": True, "lower": True}, target_tokenizer={"chars": True, "lower": False},
                    replace_unk=False)
    path = tmp_path / "m.keras"
    model.save(path)
    from captioner.model_card import ModelCard

    ModelCard(model="m.keras", task="transliterate", command=["captioner train transliterate --seed 0"]).save(path)
    out, report, cache = tmp_path / "rescored.keras", tmp_path / "figures.json", tmp_path / "cache"
    args = ["model", "tune-rescorer", "--model", str(path),
            "--train", str(tmp_path / "data" / "hi.translit.sampled.train.tsv"),
            "--dev", str(tmp_path / "data" / "hi.translit.sampled.dev.tsv"), "--settings", "3:1.0,4:0.5",
            "--lm-orders", "2,3", "--cache-dir", str(cache), "--json", str(report), "--output", str(out)]
    assert main(args) == 0
    assert sorted(p.name for p in cache.iterdir()) == ["nbest_b3_a1.0.json", "nbest_b4_a0.5.json"]
    figures = json.loads(report.read_text())
    chosen = figures["chosen"]
    assert figures["training_words"] == 60 and figures["dev_romanizations"] == 24
    assert {r["words"] for r in figures["with_rescorer"].values()} == {12, 24}
    assert len(figures["every_setting"]) == 2 * 2 * 2  # LM orders x types/counts x settings
    loaded = keras.models.load_model(out)
    assert loaded.rescorer.lm_order == chosen["lm_order"] and loaded.beam_size == chosen["beam"]
    assert loaded.rescorer.weights == chosen["weights"] and len(loaded.rescorer.counts) == 60
    # the tuned figures are what the saved model decodes to through translate
    decoded = figures["saved_model"]["dev_decoded"]
    assert decoded["top-1"] == figures["with_rescorer"]["dev"]["top-1"]
    assert decoded["CER"] == figures["with_rescorer"]["dev"]["CER"]
    # a second run re-tunes from the cache (same figures)
    assert main(args[:-2] + ["--json", str(tmp_path / "again.json")]) == 0
    assert json.loads((tmp_path / "again.json").read_text())["with_rescorer"] == figures["with_rescorer"]
    # the saved model's card: the model's card followed it, with this command and the choice
    card = json.loads((tmp_path / "rescored.json").read_text())
    assert card["command"][0] == "captioner train transliterate --seed 0"
    assert card["command"][-1].startswith("captioner model tune-rescorer --model")
    assert card["extra"]["rescorer"]["chosen"] == chosen


def test_the_maxent_fit_finds_a_feature_that_picks_the_right_candidate():
    import numpy as np

    from captioner.decoding.rescoring import FEATURES

    rng = np.random.default_rng(0)
    n, k = 200, 4
    table = rescorer_tuning.Table.__new__(rescorer_tuning.Table)
    table.feats = np.zeros((n, k, len(FEATURES)))
    right = rng.integers(0, k, n)
    table.correct = np.zeros((n, k), bool)
    table.correct[np.arange(n), right] = True
    table.feats[:, :, FEATURES.index("model")] = table.correct * 0.5 + rng.normal(size=(n, k))  # the model: weak
    table.feats[:, :, FEATURES.index("lm")] = table.correct * 3.0 + rng.normal(scale=0.1, size=(n, k))
    table.feats[:, :, FEATURES.index("lm_sum")] = rng.normal(size=(n, k))
    table.valid = np.ones((n, k), bool)
    table.edits, table.ref_len = (~table.correct).astype(float), np.ones((n, k))
    w = rescorer_tuning.fit_maxent(table, np.arange(0, n, 2))
    assert w[FEATURES.index("model")] == 1.0 and w[FEATURES.index("lm")] > 5 * abs(w[FEATURES.index("lm_sum")])
    assert table.evaluate(w, np.arange(1, n, 2))["top-1"] == 100.0  # the other half
    assert table.evaluate(np.eye(len(FEATURES))[0], np.arange(1, n, 2))["top-1"] < 60  # the model alone
