"""`captioner train transliterate`: a tiny end-to-end run on generated Dakshina files, and the
attestation weights of the batches."""

import json

import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.cli import main
from captioner.training.translation_data import BucketedBatches
from support.translit import write_dakshina



def test_batches_carry_one_weight_per_pair_in_the_pairs_order():
    sources = [[4 + i % 5] * (1 + i % 4) for i in range(50)]
    targets = [[1, 4 + i % 7, 2] for i in range(50)]
    weights = np.arange(50, dtype=np.float32)
    seen = 0
    for x, y, w in BucketedBatches(sources, targets, 8, seed=1, weights=weights).batches():
        assert w.shape == (len(y), 1)
        for row, weight in zip(x["source"], w[:, 0]):
            i = int(weight)
            assert list(row[row > 0]) == sources[i]
        seen += len(y)
    assert seen == 50
    with pytest.raises(ValueError, match="3 weights for 50 pairs"):
        BucketedBatches(sources, targets, 8, weights=[1, 2, 3])


@pytest.mark.parametrize("weighting", ["count", "none"])
def test_train_transliterate_end_to_end(tmp_path, weighting):
    data = tmp_path / "dakshina"
    pairs = write_dakshina(data, n_train=200, n_dev=30)
    out = tmp_path / "run"
    assert main(["train", "transliterate", "--data", str(data), "--output-dir", str(out), "--embedding-dim", "8",
                 "--units", "16", "--attention-units", "8", "--epochs", "2", "--batch-size", "32",
                 "--beam-size", "5", "--weighting", weighting, "--seed", "3"]) == 0
    model = keras.models.load_model(out / "model.keras")
    assert model.source_tokenizer["chars"] and not model.replace_unk
    res = model.translate([pairs[-1][0]])[0]
    assert res.source_tokens == list(pairs[-1][0]) and len(res.hypotheses) == 5
    card = json.loads((out / "model.json").read_text())
    assert card["task"] == "transliterate" and card["metrics"]["split"] == "dev"
    m = card["metrics"]["dev_beam5"]
    assert m["words"] == 30 and 0 <= m["top-1"] <= m["top-5"] <= 100 and m["CER"] >= 0
    assert card["config"]["weighting"] == weighting and card["data"]["train_pairs"] == 200
    history = json.loads((out / "history.json").read_text()) if (out / "history.json").exists() else None
    assert history is None or len(history) == 2


def test_train_transliterate_refuses_a_pointer(tmp_path, capsys):
    data = tmp_path / "dakshina"
    write_dakshina(data, n_train=20, n_dev=5)
    assert main(["train", "transliterate", "--data", str(data), "--output-dir", str(tmp_path / "r"), "--pointer"]) != 0
    assert "--pointer: a transliterator writes another script" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
