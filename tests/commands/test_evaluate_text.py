"""`captioner evaluate translate|transliterate`: the scores of the path `captioner translate` /
`transliterate` runs, the same as the evaluation functions the recipes select models by."""

import json

import pytest

import captioner  # noqa: F401
from captioner.cli import main
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from support.translit import tiny_transliterator

WORDS = ("a", "dog", "cat", "runs", "sits", "ein", "hund", "katze", "läuft", "sitzt", "Hund")


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluate_text")
    translit = root / "translit.keras"
    tiny_transliterator(beam_size=5).save(translit)
    v = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + WORDS)
    words = root / "words.keras"
    Seq2Seq.of(v, v, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=6,
               target_tokenizer={"lower": False}).save(words)
    lexicon = root / "dev.tsv"
    lexicon.write_text("नमक\tnamak\t3\nनमक\tnamakh\t1\nराम\traam\t2\nराम\tram\t1\nसीता\tsita\t2\n", encoding="utf-8")
    (root / "dev.en").write_text("a dog runs\na cat sits\na dog sits\n", encoding="utf-8")
    (root / "dev.de").write_text("ein Hund läuft\neine katze sitzt\nein hund sitzt\n", encoding="utf-8")
    return root


def test_transliterate_scores_what_the_evaluation_function_scores(paths, tmp_path, capsys):
    import keras

    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration

    out = tmp_path / "report.json"
    assert main(["evaluate", "transliterate", "--model", str(paths / "translit.keras"), "--data",
                 str(paths / "dev.tsv"), "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    model = keras.models.load_model(paths / "translit.keras")
    want, _ = evaluate_transliteration(model, romanized_lexicon(load_dakshina(str(paths / "dev.tsv"))), 5, model.alpha)
    report = json.loads(out.read_text())
    assert {k: printed[k] for k in want} == want and report["words"] == 5  # five romanizations
    assert report["task"] == "transliterate" and report["command"].startswith("captioner evaluate transliterate")
    assert main(["evaluate", "transliterate", "--model", str(paths / "translit.keras"), "--data",
                 str(paths / "dev.tsv"), "--beam-size", "1", "--limit", "2"]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert one["beam_size"] == 1 and one["words"] == 2 and "top-5" not in one


def test_translate_scores_cased_bleu_of_a_model_that_writes_case(paths, capsys):
    import keras

    from captioner.training.translation_data import corpus_bleu

    args = ["evaluate", "translate", "--model", str(paths / "words.keras"), "--format", "parallel",
            "--data", f"{paths / 'dev.en'},{paths / 'dev.de'}", "--eval", f"{paths / 'dev.en'},{paths / 'dev.de'}"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    model = keras.models.load_model(paths / "words.keras")
    hyps = [o.text for o in model.translate(["a dog runs", "a cat sits", "a dog sits"], beam_size=2)]
    refs = [["ein Hund läuft"], ["eine katze sitzt"], ["ein hund sitzt"]]
    assert printed["cased"] is True and printed["sentences"] == 3 and printed["beam_size"] == 2
    assert printed["BLEU"] == pytest.approx(round(corpus_bleu(hyps, refs, lowercase=False)[0], 2))
    assert printed["BLEU_lc"] == pytest.approx(round(corpus_bleu(hyps, refs, lowercase=True)[0], 2))


def test_bad_input_is_one_line(paths, capsys):
    assert main(["evaluate", "translate", "--model", str(paths / "words.keras"), "--format", "parallel",
                 "--data", "x,y"]) == 2
    assert "--eval SRC,TGT" in capsys.readouterr().err
    assert main(["evaluate", "transliterate", "--model", str(paths / "words.keras"), "--data",
                 str(paths / "dev.tsv")]) == 2
    assert "not a transliteration model" in capsys.readouterr().err
    assert main(["evaluate", "transliterate", "--model", str(paths / "translit.keras"), "--data",
                 str(paths / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err
