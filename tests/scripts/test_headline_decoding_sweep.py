"""scripts/headline_decoding_sweep.py on a tiny model and tiny corpora: --dev-limit and a skipped dataset."""

import json

import keras
import pytest
from script_support import load_script



@pytest.fixture(scope="module")
def sweep():
    return load_script("headline_decoding_sweep")


def test_sweep_scores_the_first_k_dev_pairs_of_the_datasets_given(sweep, tmp_path):
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.metrics.rouge_f1 import corpus_rouge_f1
    from captioner.models.seq2seq import Seq2Seq
    from captioner.text import Vocabulary

    bbc = tmp_path / "bbc"
    for i in range(60):
        path = bbc / ("business", "tech")[i % 2] / f"{i:03d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"k{i % 5} m{i % 3} q\n\nk{i % 5} m{i % 3} q z y x common words here.\n")
    words = sorted({f"k{i}" for i in range(5)} | {f"m{i}" for i in range(3)} | set("qzyx") | {"common", "words", "here"})
    keras.utils.set_random_seed(0)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", *words))
    model = Seq2Seq(vocab, vocab, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=4)
    model.save(tmp_path / "tiny.keras")
    out = tmp_path / "sweep.json"
    rows = sweep.main(["--model", str(tmp_path / "tiny.keras"), "--bbc", str(bbc), "--news-category", "",
                       "--dev-limit", "2", "--settings", '[{}, {"beam_size": 1}]', "--output", str(out)])
    dev = split_bbc_headlines(load_bbc_headlines(bbc).pairs)[1][:2]
    assert [(r["dataset"], r["dev_pairs"], r["setting"]) for r in rows] == [
        ("bbc", 2, "model defaults"), ("bbc", 2, {"beam_size": 1})]
    greedy = [t.text for t in model.translate([p.source for p in dev], beam_size=1)]
    assert rows[1]["rougeL"] == pytest.approx(round(corpus_rouge_f1([p.target for p in dev], greedy)["rougeL"], 2))
    assert json.loads(out.read_text())["split"] == "the first 2 dev pairs"
