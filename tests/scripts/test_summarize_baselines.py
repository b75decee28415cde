"""scripts/summarize_baselines.py on tiny hand-made corpora."""

import json

import pytest

from captioner.data.headlines import HeadlinePair
from captioner.errors import InputError
from captioner.metrics.rouge_f1 import RougeF1
from script_support import load_script



@pytest.fixture(scope="module")
def sb():
    return load_script("summarize_baselines")


def _lead3_corpus(n=12):
    # the headline is the first three words of every source: lead-3 scores F1 = 1
    # (lead-2: P 1, R 2/3 -> 0.8; lead-4: P 3/4, R 1 -> 0.857)
    return [HeadlinePair(f"k{i} m{i} q{i} z{i} y{i} x{i} w{i}", f"k{i} m{i} q{i}", f"d/{i}") for i in range(n)]


def test_lead_words(sb):
    assert sb.lead_words("  one two\nthree  four ", 3) == "one two three"
    assert sb.lead_words("one two", 5) == "one two"


def test_lead_n_picks_the_right_n(sb):
    curve, per_doc = sb.lead_n_curve(_lead3_corpus(), range(1, 8), RougeF1())
    assert sb.choose_n(curve) == 3
    assert curve[3]["rougeL"] == pytest.approx(100.0)
    assert curve[2]["rouge1"] == pytest.approx(80.0) and curve[4]["rouge1"] == pytest.approx(600 / 7)
    assert per_doc[0][3] == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}
    # a tie goes to the smaller N
    assert sb.choose_n({1: {"rougeL": 5.0}, 2: {"rougeL": 7.0}, 3: {"rougeL": 7.0}}) == 2


def test_oracle_picks_each_documents_best_n(sb):
    pairs = [HeadlinePair("aa bb cc dd", "aa", "1"), HeadlinePair("aa bb cc dd", "aa bb cc", "2")]
    _, per_doc = sb.lead_n_curve(pairs, range(1, 5), RougeF1())
    picks, scores = sb.oracle_lead(per_doc)
    assert picks == [1, 3] and scores["rougeL"] == pytest.approx(100.0)


def test_retrieval_returns_the_neighbours_headline(sb):
    train = [HeadlinePair("apple banana orchard harvest fruit", "Fruit crop is large", "t/1"),
             HeadlinePair("rocket launch orbit satellite space", "Rocket reaches orbit", "t/2"),
             HeadlinePair("parliament vote minister election", "Minister wins vote", "t/3")]
    dev = [HeadlinePair("the satellite went into orbit", "?", "d/1"),
           HeadlinePair("an orchard full of apple trees", "?", "d/2")]
    headlines, ids, sims = sb.retrieve_headlines(train, dev)
    assert headlines == ["Rocket reaches orbit", "Fruit crop is large"] and ids == ["t/2", "t/1"]
    assert all(0 < s <= 1 for s in sims)


def test_dev_copies_in_train(sb):
    train = [HeadlinePair("Some text", "Head", "1")]
    dev = [HeadlinePair("some   TEXT", "other", "2"), HeadlinePair("new", "head", "3"), HeadlinePair("x", "y", "4")]
    assert sb.dev_copies_in_train(train, dev) == 2


def _tiny_datasets(tmp_path, n=60):
    bbc = tmp_path / "bbc"
    for i in range(n):
        topic = ("business", "tech")[i % 2]
        path = bbc / topic / f"{i:03d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"k{i} m{i} q{i}\n\nk{i} m{i} q{i} z{i} y{i} x{i} w{i} common words here.\n")
    news = tmp_path / "news.json"
    news.write_text("\n".join(json.dumps({"link": f"https://x/{i}", "headline": f"k{i} m{i} q{i} z{i}",
                                          "short_description": f"k{i} m{i} q{i} z{i} y{i} x{i}",
                                          "category": "C", "authors": "", "date": ""}) for i in range(n)) + "\n")
    return bbc, news


def test_main_end_to_end(sb, tmp_path, capsys):
    bbc, news = _tiny_datasets(tmp_path)
    out = tmp_path / "report.json"
    sb.main(["--bbc", str(bbc), "--news-category", str(news), "--max-n", "6", "--output", str(out)])
    report = json.loads(out.read_text())
    assert "rouge-score" in report["metric"]
    bbc_report, news_report = report["datasets"]["bbc-news"], report["datasets"]["news-category"]
    assert bbc_report["lead_n"]["n"] == 3 and news_report["lead_n"]["n"] == 4
    assert bbc_report["train"] + bbc_report["dev"] == 60 and bbc_report["dev"] > 0
    assert bbc_report["dev_rouge_f1"]["lead-3 (N chosen on train)"]["rougeL"] == pytest.approx(100.0)
    assert sorted(bbc_report["lead_n"]["train_curve"]) == [str(n) for n in range(1, 7)]
    assert any(row.startswith("ORACLE") for row in news_report["dev_rouge_f1"])
    assert "lead-3 (N chosen on train)" in capsys.readouterr().out


def test_saved_dev_list(sb, tmp_path):
    bbc, _ = _tiny_datasets(tmp_path, 20)
    listing = tmp_path / "dev.txt"
    listing.write_text("# dev\nbusiness/000\ntech/001.txt\n")
    report = sb.main(["--bbc", str(bbc), "--news-category", "", "--max-n", "4", "--bbc-dev-list", str(listing)])
    assert report["datasets"]["bbc-news"]["dev"] == 2
    listing.write_text("tech/999.txt\n")
    with pytest.raises(InputError, match="not in the corpus"):
        sb.main(["--bbc", str(bbc), "--news-category", "", "--bbc-dev-list", str(listing)])


def test_model_rows_beside_the_baselines(sb, tmp_path):
    import keras

    from captioner.models.seq2seq import Seq2Seq
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(0)
    words = sorted({w for p in _lead3_corpus() for w in (p.source + " " + p.target).split()})
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", *words))
    model = Seq2Seq.of(v, v, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=5,
                    no_repeat_ngram=2)
    path = tmp_path / "tiny.keras"
    model.save(path)
    pairs = _lead3_corpus()
    report = sb.run_dataset("toy", pairs[:8], pairs[8:], 5, models=[str(path)], decoding={"beam_size": 1})
    rows = report["dev_rouge_f1"]
    assert "model tiny.keras (beam 1, alpha 1, no-repeat-2-gram)" in rows and "lead-3 (N chosen on train)" in rows
    headlines = [o.text for o in model.translate([p.source for p in pairs[8:]], beam_size=1)]
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    expected = corpus_rouge_f1([p.target for p in pairs[8:]], headlines).scores
    assert rows["model tiny.keras (beam 1, alpha 1, no-repeat-2-gram)"] == pytest.approx(expected)
    # --dev-from K: every row again on the dev pairs a model selected on the first K did not read
    tail = sb.run_dataset("toy", pairs[:8], pairs[8:], 5, models=[str(path)], decoding={"beam_size": 1},
                          dev_from=1)["dev_rouge_f1_from_1"]
    assert tail["pairs"] == len(pairs) - 9
    assert tail["rows"]["model tiny.keras (beam 1, alpha 1, no-repeat-2-gram)"] == pytest.approx(
        corpus_rouge_f1([p.target for p in pairs[9:]], headlines[1:]).scores)
    assert set(tail["rows"]) == set(rows) - {r for r in rows if r.startswith("ORACLE")}
    with pytest.raises(InputError, match="leaves no dev pair"):
        sb.run_dataset("toy", pairs[:8], pairs[8:], 5, dev_from=len(pairs) - 8)
    assert report["examples"][0]["tiny.keras"] == headlines[0]
