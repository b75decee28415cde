"""scripts/classify_baselines.py on hand-made corpora (tiny, fast)."""

import json
import random
from pathlib import Path

import pytest
from script_support import load_script
from support import han

cb = load_script("classify_baselines")

TOPIC_WORDS = {"rec.autos": ["engine", "brake", "tyre", "clutch", "gearbox", "dealer", "sedan"],
               "sci.space": ["orbit", "rocket", "launch", "shuttle", "lunar", "satellite", "nasa"]}
SHARED = ["the", "a", "of", "and", "to", "is", "it", "that", "for", "on", "with", "as", "was", "at", "by"]


def _corpus(root: Path, leaky: bool, n: int = 12, seed: int = 0):
    """n posts per group. leaky: bodies are the same shared words in both groups and only the
    Organization header tells them apart; otherwise bodies carry topic words."""
    rng = random.Random(seed)
    for group, words in TOPIC_WORDS.items():
        for i in range(n):
            vocab = SHARED if leaky else SHARED + words
            body = " ".join(rng.choice(vocab) for _ in range(30))
            org = f"{group.split('.')[1]}-lab.example.edu"
            path = root / "20news-bydate-train" / group / str(1000 + i)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"From: u{i}@{org}\nSubject: post {i}\nOrganization: {org}\n\n{body}.\n\n--\nu{i}\n")


def _dev_list(tmp_path, n=12):
    path = tmp_path / "dev.txt"
    path.write_text("".join(f"{g}/{1000 + i}\n" for g in TOPIC_WORDS for i in range(n - 3, n)))
    return path


def test_baselines_separate_topics_and_write_json(tmp_path):
    _corpus(tmp_path / "data", leaky=False)
    out = tmp_path / "out.json"
    assert cb.main(["--dataset", "newsgroups", "--data-dir", str(tmp_path / "data"),
                    "--dev-list", str(_dev_list(tmp_path)), "--output", str(out)]) == 0
    result = json.loads(out.read_text())["results"]["newsgroups"]
    assert result["n_train"] == 18 and result["n_dev"] == 6 and result["labels"] == sorted(TOPIC_WORDS)
    models = result["models"]
    assert set(models) == {"svm", "naive_bayes", "majority"}
    assert models["svm"]["accuracy"] == 1.0 and models["naive_bayes"]["accuracy"] == 1.0
    assert models["majority"]["accuracy"] == 0.5
    assert models["naive_bayes"]["alpha"] in cb.ALPHAS
    assert set(models["naive_bayes"]["alpha_slice_accuracy"]) == {str(a) for a in cb.ALPHAS}
    for m in ("svm", "naive_bayes"):
        assert models[m]["fit_s"] >= 0 and models[m]["predict_s"] >= 0 and 0 <= models[m]["macro_f1"] <= 1
    variants = [v["variant"] for v in result["svm_by_reader_keep"]]
    assert variants == [name for name, _ in cb.NEWSGROUPS_VARIANTS]


def test_header_leakage_is_measured(tmp_path):
    """Only the Organization header tells the groups apart: the raw post is classified
    perfectly, the reader's default text (no headers) is at chance."""
    _corpus(tmp_path, leaky=True, n=20)
    result = cb.run_dataset("newsgroups", tmp_path, dev_list=_dev_list(tmp_path, n=20))
    by_variant = {v["variant"]: v["accuracy"] for v in result["svm_by_reader_keep"]}
    assert by_variant[cb.NEWSGROUPS_VARIANTS[0][0]] == 1.0                # raw post, headers kept
    assert by_variant["subject, body (reader default)"] <= 0.75
    assert result["models"]["svm"]["accuracy"] == by_variant["subject, body (reader default)"]
    assert "raw post" in cb.format_table("newsgroups", result)


def test_bbc_and_argument_errors(tmp_path, capsys):
    rng = random.Random(1)
    topics = (("sport", ["goal", "match", "cup", "league", "striker"]), ("tech", ["chip", "phone", "software", "web"]))
    for topic, words in topics:
        for i in range(1, 11):
            f = tmp_path / "bbc" / topic / f"{i:03d}.txt"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(f"{topic} headline {i}\n\n" + " ".join(rng.choice(words + SHARED) for _ in range(25)) + ".\n")
    dev = tmp_path / "bbc_dev.txt"
    dev.write_text("sport/010.txt\ntech/010.txt\n")
    out = tmp_path / "bbc.json"
    assert cb.main(["--dataset", "bbc", "--data-dir", str(tmp_path), "--dev-list", str(dev), "--output", str(out)]) == 0
    result = json.loads(out.read_text())["results"]["bbc"]
    assert result["n_dev"] == 2 and result["models"]["svm"]["accuracy"] == 1.0
    assert [v["keep"] for v in result["svm_by_reader_keep"]] == [["headline", "body"], ["body"]]
    dev.write_text("sport/099.txt\n")
    assert cb.main(["--dataset", "bbc", "--data-dir", str(tmp_path), "--dev-list", str(dev), "--output", str(out)]) == 2
    assert "sport/099.txt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cb.main(["--data-dir", str(tmp_path)])        # --data-dir needs one --dataset


def test_a_han_model_is_scored_beside_the_baselines_on_the_same_dev_documents(tmp_path):
    data, dev = han.make_corpus(tmp_path / "corpus")
    model_path = tmp_path / "han.keras"
    han.tiny_classifier(seed=0, train_steps=20).inference_copy().save(model_path)
    out = tmp_path / "out.json"
    assert cb.main(["--dataset", "newsgroups", "--data-dir", str(data), "--dev-list", str(dev),
                    "--han-model", str(model_path), "--output", str(out)]) == 0
    models = json.loads(out.read_text())["results"]["newsgroups"]["models"]
    assert set(models) == {"svm", "naive_bayes", "majority", "han"}
    assert models["han"]["accuracy"] >= 0.5 and models["han"]["fit_s"] is None  # 12 dev posts, 3 topics
    assert models["han"]["config"]["max_words"] == 9 and models["han"]["predict_s"] > 0
    table = cb.format_table("newsgroups", json.loads(out.read_text())["results"]["newsgroups"])
    assert "HAN (hierarchical attention network)" in table


def test_han_model_needs_one_dataset(tmp_path):
    with pytest.raises(SystemExit):
        cb.main(["--han-model", str(tmp_path / "m.keras")])
