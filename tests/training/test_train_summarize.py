"""`captioner train summarize` on generated BBC-style articles and News Category rows: the
copy positions, a few training steps, save, reload in a fresh process, same headlines."""

import json

import keras
import pytest

import captioner  # noqa: F401
from captioner.cli import main
from captioner.training.translation_data import shared_word_positions
from support import fresh_python

NAMES = ["smith", "jones", "brown", "taylor", "wilson", "davies", "evans", "thomas", "roberts", "walker"]
TOPICS = {"business": "profits", "sport": "match", "politics": "election"}


def make_corpora(tmp_path, n=24):
    """A BBC folder (topic/NNN.txt: headline line, blank line, article) and a News Category file."""
    bbc = tmp_path / "bbc"
    rows = []
    for t, (topic, word) in enumerate(TOPICS.items()):
        (bbc / topic).mkdir(parents=True)
        for k in range(n):
            name, year = NAMES[(k + t) % len(NAMES)], 1990 + k
            head = f"{name.title()} wins {word} in {year}"
            body = (f"{name.title()} has won the {word} of {year}, officials said on Monday.\n\n"
                    f"The {word} was close, and {name.title()} thanked the fans. More news follows.")
            (bbc / topic / f"{k + 1:03d}.txt").write_text(head + "\n\n" + body + "\n", encoding="utf-8")
            rows.append({"link": f"https://example.com/{topic}/{k}", "headline": f"{name.title()} Talks {word.title()}",
                         "category": topic.upper(), "short_description": f"{name.title()} spoke about the {word}.",
                         "authors": "", "date": "2022-01-01"})
    news = tmp_path / "news.json"
    news.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(bbc), str(news)


def test_shared_word_positions_list_every_source_occurrence():
    src = [["smith", "said", "smith", "won", "in", "1999"], ["a", "b"]]
    tgt = [["smith", "wins", "in", "1999"], ["b", "b"]]
    assert shared_word_positions(src, tgt, {"smith", "1999", "b"}) == [[([0, 2], 0), ([5], 3)], []]


@pytest.mark.slow
@pytest.mark.parametrize("pointer", [False, True])
def test_train_summarize_save_reload_same_headlines(tmp_path, pointer):
    bbc, news = make_corpora(tmp_path)
    out = tmp_path / "run"
    assert main(["train", "summarize", "--data", "both", "--bbc", bbc, "--news-category", news,
                 "--output-dir", str(out), "--embedding-dim", "8", "--units", "8", "--attention-units", "8",
                 "--epochs", "2", "--batch-size", "16", "--max-source-length", "20", "--max-target-length", "8",
                 "--min-count", "1", "--copy-max-count", "5", "--no-repeat-ngram", "3", "--beam-size", "2",
                 "--seed", "3"] + (["--pointer"] if pointer else [])) == 0
    card = json.loads((out / "model.json").read_text())
    assert card["task"] == "summarize" and card["metrics"]["split"] == "dev"
    for name in ("bbc", "news-category"):
        scores = card["metrics"][f"{name}_dev_beam2"]
        assert 0 <= scores["rougeL"] <= 100 and scores["pairs"] >= 1
    history = json.loads((out / "history.json").read_text()) if (out / "history.json").exists() else None
    assert history is None or len(history) >= 1
    model = keras.models.load_model(out / "model.keras")
    assert model.no_repeat_ngram == 3 and model.max_source_length == 20 and model.pointer == pointer
    docs = ["Smith has won the match of 1994, officials said on Monday.", "Jones spoke about the election."]
    here = [t.text for t in model.translate(docs)]
    code = ("import json, sys, keras, captioner; m = keras.models.load_model(sys.argv[1]); "
            "print(json.dumps([t.text for t in m.translate(json.loads(sys.argv[2]))]))")
    assert json.loads(fresh_python.last_line(code, out / "model.keras", json.dumps(docs), timeout=300)) == here


def test_train_summarize_refuses_bad_options(tmp_path, capsys):
    bbc, _ = make_corpora(tmp_path, n=2)
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(tmp_path / "r"),
                 "--bbc-repeat", "0"]) != 0
    assert "--bbc-repeat 0: must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before the run directory is made
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(tmp_path / "r"),
                 "--pointer", "--kind", "fixed"]) != 0
    assert "--pointer copies through the attention" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_train_summarize_extractive_points_at_the_article_in_order(tmp_path, capsys):
    """--extractive: the targets are the headline's aligned source positions; the saved model's
    headlines are the article's own words, in order, as written."""
    bbc, _ = make_corpora(tmp_path, n=12)
    out = tmp_path / "run"
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(out), "--extractive",
                 "--embedding-dim", "8", "--units", "8", "--attention-units", "8", "--epochs", "2",
                 "--batch-size", "8", "--max-source-length", "16", "--min-count", "1", "--beam-size", "2",
                 "--seed", "3", "--align-verb-forms", "--whole-numbers", "--insert-verbs", "4"]) == 0
    card = json.loads((out / "model.json").read_text())
    assert card["config"]["align_verb_forms"] and card["config"]["insert_verbs"] == 4
    assert card["config"]["source_tokenizer"] == {"numbers": True}
    assert card["config"]["train_pairs"] >= 20 and card["config"]["target_vocab"] == 4 + 16  # specials, 16 positions
    model = keras.models.load_model(out / "model.keras")
    assert model.extractive and model.pointer
    assert model.source_tokenizer["numbers"] and model.source_tokens("It cost $1.5bn.")[2:4] == ["$", "1.5bn"]
    sources = ["Evans has won the match of 1999, officials said on Monday.", "Walker spoke."]
    for source, got in zip(sources, model.translate(sources)):
        it = iter(source.replace(",", " ,").replace(".", " .").split())  # the words as written, in order
        assert got.tokens and all(any(w == s for s in it) for w in got.tokens), got.tokens
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(tmp_path / "r"),
                 "--extractive", "--min-aligned", "1.5"]) != 0
    assert "--min-aligned 1.5: must be in [0, 1]" in capsys.readouterr().err
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(tmp_path / "r"),
                 "--align-verb-forms"]) != 0
    assert "--align-verb-forms is a setting of --extractive: add it" in capsys.readouterr().err
    assert main(["train", "summarize", "--data", "bbc", "--bbc", bbc, "--output-dir", str(tmp_path / "r"),
                 "--extractive", "--insert-verbs", "-1"]) != 0
    assert "--insert-verbs -1: must be >= 0" in capsys.readouterr().err
