"""`captioner sweep caption|translate|transliterate|summarize`: one grid, one choice rule, one JSON,
on tiny models and generated data; the translate sweep is checked against the training run in
tests/training/test_train_translate.py."""

import json

import keras
import pytest

from captioner.cli import main
from captioner.commands.sweep import choose, expand, parse_grid
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary

SPECIALS = ("<pad>", "<start>", "<end>", "<unk>")


def test_the_grid_is_every_combination_in_order_with_greedy_once():
    grid = parse_grid("caption", ["beam_size=1,2", "alpha=0,0.5"])
    assert grid == [("beam_size", [1, 2]), ("alpha", [0.0, 0.5])]
    assert expand(grid) == [{"beam_size": 1, "alpha": 0.0}, {"beam_size": 2, "alpha": 0.0},
                            {"beam_size": 2, "alpha": 0.5}]
    assert expand(parse_grid("summarize", ["copy-distinct=true,false"])) == [{"copy_distinct": True},
                                                                              {"copy_distinct": False}]
    for bad, message in ((["coverage_penalty=0.1"], "caption settings are"), (["beam_size=0"], ">= 1"),
                         (["alpha=x"], "not a valid alpha"), (["alpha=1", "alpha=2"], "given twice"),
                         (["alpha="], "no values")):
        with pytest.raises(ValueError, match=message):
            parse_grid("caption", bad)
    from captioner.commands.sweep import parse_settings

    assert parse_settings("summarize", '[{}, {"beam_size": 1}, {"copy_distinct": false}]') == \
        [{}, {"beam_size": 1}, {"copy_distinct": False}]
    for bad in ('{"beam_size": 1}', "[]", "[1]", '[{"beam": 1}]', "not json"):
        with pytest.raises(ValueError, match="--settings|--grid"):
            parse_settings("summarize", bad)
    rows = [{"setting": {"a": 1}, "dev": {"BLEU": 3.0}}, {"setting": {"a": 2}, "dev": {"BLEU": 3.0}},
            {"setting": {"a": 3}, "dev": {"BLEU": 2.0}}]
    assert choose(rows, "dev", "BLEU")["setting"] == {"a": 1}  # a tie goes to the first listed
    assert choose([{"dev": {"CER": 9.0}}, {"dev": {"CER": 4.0}}], "dev", "CER") == {"dev": {"CER": 4.0}}


@pytest.mark.parametrize("item", ["beam_size=100000", "beam_size=65", "alpha=nan", "alpha=inf", "alpha=-1",
                                  "coverage_penalty=nan"])
def test_the_grid_is_held_to_the_commands_bounds(item):
    """Issue 66 item 6: a beam of 100000 (4 GB, then a traceback) or alpha nan (IndexError) is refused up front."""
    with pytest.raises(ValueError, match="--grid"):
        parse_grid("translate", [item])


def test_a_bad_grid_is_exit_2_before_anything_loads(tmp_path, capsys):
    assert main(["sweep", "transliterate", "--model", str(tmp_path / "missing.keras"), "--grid", "beam=3"]) == 2
    assert "transliterate settings are beam_size, alpha" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tiny_captioner(tmp_path_factory):
    from support.training import train_caption, write_shapes_flickr8k

    data = write_shapes_flickr8k(tmp_path_factory.mktemp("shapes8k"))
    out = tmp_path_factory.mktemp("xe")
    assert train_caption(data, out, "--epochs", "1", "--final-eval-beams", "") == 0
    return data, out / "features.h5", out / "run" / "model.keras"


def test_caption_chooses_on_the_tune_half_and_reports_the_other(tiny_captioner, tmp_path):
    data, features, model = tiny_captioner
    out = tmp_path / "sweep.json"
    assert main(["sweep", "caption", "--model", str(model), "--features", str(features), "--data-dir", str(data),
                 "--grid", "beam_size=1,2", "alpha=0,1", "--select", "CIDEr", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert [r["setting"] for r in rows] == [{"beam_size": 1, "alpha": 0.0}, {"beam_size": 2, "alpha": 0.0},
                                            {"beam_size": 2, "alpha": 1.0}]
    best = max(rows, key=lambda r: (r["tune"]["CIDEr"], -rows.index(r)))
    assert result["chosen"] == best["setting"] and result["selected_by"] == "tune CIDEr"
    assert result["tune_images"] + result["report_images"] == 6
    assert result["command"].startswith("captioner sweep caption --model")
    for r in rows:
        assert 1 <= r["dev"]["distinct_captions"] <= 6 and r["dev"]["caption_length"] > 0
        assert set(r) == {"setting", "tune", "report", "dev"}
    assert main(["sweep", "caption", "--model", str(model), "--features", str(features), "--data-dir", str(data),
                 "--grid", "beam_size=1", "--select", "BLEU-9"]) == 2  # names the figures there are


def test_summarize_scores_the_first_k_dev_pairs_of_the_corpora_given(tmp_path):
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    bbc = tmp_path / "bbc"
    for i in range(60):
        path = bbc / ("business", "tech")[i % 2] / f"{i:03d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"k{i % 5} m{i % 3} q\n\nk{i % 5} m{i % 3} q z y x common words here.\n")
    words = sorted({f"k{i}" for i in range(5)} | {f"m{i}" for i in range(3)} | set("qzyx") | {"common", "words", "here"})
    keras.utils.set_random_seed(0)
    vocab = Vocabulary((*SPECIALS, *words))
    model = Seq2Seq.of(vocab, vocab, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=4)
    model.save(tmp_path / "tiny.keras")
    out = tmp_path / "sweep.json"
    assert main(["sweep", "summarize", "--model", str(tmp_path / "tiny.keras"), "--bbc", str(bbc),
                 "--news-category", "", "--dev-limit", "2", "--settings", '[{}, {"beam_size": 1}]', "--output",
                 str(out)]) == 0
    result = json.loads(out.read_text())
    assert [(r["setting"], r["bbc"]["pairs"]) for r in result["rows"]] == [({}, 2), ({"beam_size": 1}, 2)]
    dev = split_bbc_headlines(load_bbc_headlines(bbc).pairs)[1][:2]
    greedy = [t.text for t in model.translate([p.source for p in dev], beam_size=1)]
    assert result["rows"][1]["bbc"]["rougeL"] == pytest.approx(
        round(corpus_rouge_f1([p.target for p in dev], greedy)["rougeL"], 2))
    assert result["split"] == "the first 2 dev pairs" and result["selected_by"] == "bbc rougeL"
    # `captioner evaluate summarize`: the same scores as the sweep's row of the model's own settings
    assert main(["evaluate", "summarize", "--model", str(tmp_path / "tiny.keras"), "--bbc", str(bbc),
                 "--news-category", "", "--dev-limit", "2", "--output", str(tmp_path / "eval.json")]) == 0
    report = json.loads((tmp_path / "eval.json").read_text())
    assert {k: report["bbc"][k] for k in ("rouge1", "rouge2", "rougeL", "pairs")} == result["rows"][0]["bbc"]
    assert report["bbc"]["beam_size"] == 2 and report["task"] == "summarize"
    assert main(["sweep", "summarize", "--model", str(tmp_path / "tiny.keras"), "--bbc", "", "--news-category", "",
                 "--grid", "beam_size=1"]) == 2


def test_transliterate_scores_the_dev_lexicon(tmp_path):
    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration
    from support.translit import SYLLABLES, write_dakshina

    write_dakshina(tmp_path / "data", n_train=10, n_dev=12)
    keras.utils.set_random_seed(0)
    native = sorted({c for v in SYLLABLES.values() for c in v})
    model = Seq2Seq.of(Vocabulary(SPECIALS + tuple("abcdefghijklmnopqrstuvwxyz")), Vocabulary(SPECIALS + tuple(native)),
                    embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=8,
                    source_tokenizer={"chars": True, "lower": True}, target_tokenizer={"chars": True, "lower": False},
                    replace_unk=False)
    model.save(tmp_path / "m.keras")
    dev = tmp_path / "data" / "hi.translit.sampled.dev.tsv"
    out = tmp_path / "sweep.json"
    assert main(["sweep", "transliterate", "--model", str(tmp_path / "m.keras"), "--dev", str(dev),
                 "--grid", "beam_size=1,3", "alpha=0.5,1", "--select", "CER", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [r["setting"] for r in result["rows"]] == [{"beam_size": 1, "alpha": 0.5}, {"beam_size": 3, "alpha": 0.5},
                                                      {"beam_size": 3, "alpha": 1.0}]
    expected, _ = evaluate_transliteration(model, romanized_lexicon(load_dakshina(dev)), 3, 1.0)
    assert result["rows"][2]["dev"] == json.loads(json.dumps(expected))
    assert result["chosen"] == min(result["rows"], key=lambda r: (r["dev"]["CER"], result["rows"].index(r)))["setting"]
