"""`captioner train translate`: the copy-word <unk> augmentation and a tiny end-to-end run on a
generated Anki file."""

import json

import keras
import numpy as np
import pytest

import captioner  # noqa: F401
from captioner.cli import main
from captioner.text.vocabulary import UNK_ID
from captioner.training.translation_data import BucketedBatches, copyable_positions


def test_copy_words_are_those_translated_as_themselves():
    src = [["tom", "a", "faim", "."], ["tom", "mange", "."], ["il", "a", "un", "chat", "."], ["paris", "!"]]
    tgt = [["tom", "is", "hungry", "."], ["tom", "eats", "."], ["he", "has", "a", "cat", "."], ["paris", "!"]]
    pos = copyable_positions(src, tgt)
    # "a" is in both sides of pair 1 only by accident (French "has", English article): not a copy word;
    # "." and "!" are not words
    assert pos == [[(0, 0)], [(0, 0)], [], [(0, 0)]]
    # a word twice on one side is ambiguous: not replaced there
    assert copyable_positions([["tom", "et", "tom"], ["tom"]], [["tom", "and", "tom"], ["tom"]]) == [[], [(0, 0)]]


def test_batches_replace_copy_words_by_unk_on_both_sides():
    sources = [[10, 11, 12]] * 64
    targets = [[1, 20, 21, 22, 2]] * 64  # <start> w w w <end>
    positions = [[(0, 1)]] * 64  # source word 0 is target word 1
    plain = BucketedBatches(sources, targets, 8, copy_positions=positions, copy_unk_rate=0.0)
    assert not any((x["source"] == UNK_ID).any() for x, _ in plain.batches())
    b = BucketedBatches(sources, targets, 8, seed=3, copy_positions=positions, copy_unk_rate=0.5)
    hit = 0
    for x, y in b.batches():
        unk_src = x["source"][:, 0] == UNK_ID
        np.testing.assert_array_equal(unk_src, x["tokens"][:, 2] == UNK_ID)  # decoder input: <start> w0 w1 ...
        np.testing.assert_array_equal(unk_src, y[:, 1] == UNK_ID)            # the word it must predict
        assert (x["source"][:, 1:] != UNK_ID).all() and (y[:, [0, 2]] != UNK_ID).all()
        hit += unk_src.sum()
    assert 16 <= hit <= 48  # about half of 64
    again = [x["source"].copy() for x, _ in BucketedBatches(sources, targets, 8, seed=3, copy_positions=positions,
                                                            copy_unk_rate=0.5).batches()]
    assert all((a == x["source"]).all() for a, (x, _) in zip(again, b.__class__(
        sources, targets, 8, seed=3, copy_positions=positions, copy_unk_rate=0.5).batches()))  # seeded


NAMES = ["tom", "mary", "paris", "tokyo", "boston", "london"]
PAIRS = [("{} is here.", "{} est ici."), ("I see {}.", "Je vois {}."), ("{} is big.", "{} est grand.")]


def _anki(tmp_path):
    lines = [f"{e.format(n.title())}\t{f.format(n.title())}" for k in range(12) for n in NAMES
             for e, f in PAIRS if k == 0 or n != "london"] + [f"I see {k} cats.\tJe vois {k} chats." for k in range(40)]
    f = tmp_path / "fra.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(f)


def test_train_translate_end_to_end_with_copy_unk(tmp_path):
    out = tmp_path / "run"
    assert main(["train", "translate", "--format", "anki", "--data", _anki(tmp_path), "--reverse",
                 "--output-dir", str(out), "--copy-unk-rate", "0.3", "--embedding-dim", "8", "--units", "8",
                 "--attention-units", "8", "--epochs", "2", "--batch-size", "16", "--dev-fraction", "0.2",
                 "--test-fraction", "0.2", "--seed", "2"]) == 0
    model = keras.models.load_model(out / "model.keras")
    assert model.translate(["Tom est ici."])[0].source_tokens == ["tom", "est", "ici", "."]
    card = json.loads((out / "model.json").read_text())
    assert card["config"]["copy_unk_rate"] == 0.3
    assert 0 <= card["metrics"]["test_beam5"]["BLEU"] <= 100

    # `captioner sweep translate` rebuilds the same splits: its beta-0 row at the model's alpha is
    # the test BLEU the training run reported
    report = tmp_path / "sweep.json"
    assert main(["sweep", "translate", "--model", str(out / "model.keras"), "--format", "anki", "--data",
                 _anki(tmp_path), "--reverse", "--dev-fraction", "0.2", "--test-fraction", "0.2",
                 "--grid", "coverage_penalty=0,0.2", "--output", str(report)]) == 0
    rows = json.loads(report.read_text())["rows"]
    assert [r["setting"] for r in rows] == [{"coverage_penalty": 0.0}, {"coverage_penalty": 0.2}]
    assert rows[0]["test"]["BLEU"] == card["metrics"]["test_beam5"]["BLEU"]


@pytest.mark.parametrize("rate", ["1", "-0.1"])
def test_copy_unk_rate_out_of_range(tmp_path, rate, capsys):
    assert main(["train", "translate", "--format", "anki", "--data", _anki(tmp_path), "--output-dir",
                 str(tmp_path / "r"), "--copy-unk-rate", rate]) != 0
    assert "--copy-unk-rate" in capsys.readouterr().err


def test_attention_lambda_must_be_non_negative(tmp_path, capsys):
    assert main(["train", "translate", "--format", "anki", "--data", _anki(tmp_path), "--output-dir",
                 str(tmp_path / "r"), "--attention-lambda", "-1"]) != 0
    assert "--attention-lambda -1.0: must be a finite number >= 0" in capsys.readouterr().err


TRANSLATE_TINY = ["--format", "anki", "--reverse", "--copy-unk-rate", "0.3", "--embedding-dim", "8", "--units", "8",
                  "--attention-units", "8", "--batch-size", "16", "--dev-limit", "5", "--eval-limit", "5",
                  "--beam-size", "1", "--patience", "5"]


def test_resume_mid_pass_replays_the_same_batches(tmp_path, monkeypatch):
    """End to end, with --steps-per-epoch (epochs shorter than a pass): the resumed run goes on
    mid-pass (the Trainer's stream; one pass per epoch is test_train_caption.py's)."""
    from support.training import assert_resume_replays_batches

    data = _anki(tmp_path)
    assert_resume_replays_batches(
        lambda out, *more: main(["train", "translate", "--data", data, "--output-dir", str(out), *TRANSLATE_TINY,
                                 "--steps-per-epoch", "3", *more]),
        tmp_path, monkeypatch)


def test_batches_replay_on_resume(tmp_path):
    """The recipe's contract, with the <unk> copying (--copy-unk-rate) that hides source words."""
    from support.training import assert_recipe_batches_replay

    assert_recipe_batches_replay(["translate", "--data", _anki(tmp_path), "--output-dir", tmp_path / "run",
                                  *TRANSLATE_TINY])


def _multi30k(tmp_path):
    """A Multi30k-format folder (train/val .en/.de, gzipped as in the real one), cased German."""
    import gzip

    subjects = [("A man", "Ein Mann"), ("A woman", "Eine Frau"), ("Two dogs", "Zwei Hunde"), ("A child", "Ein Kind")]
    verbs = [("runs over the street.", "läuft über die Straße."), ("plays in the snow.", "spielt im Schnee."),
             ("eats an apple.", "isst einen Äpfel.")]
    pairs = [(f"{e} {v}", f"{d} {w}") for e, d in subjects for v, w in verbs]
    folder = tmp_path / "multi30k"
    folder.mkdir()
    for split, rows in (("train", pairs * 6), ("val", pairs[:5])):
        for lang, col in (("en", 0), ("de", 1)):
            with gzip.open(folder / f"{split}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.write("".join(r[col] + "\n" for r in rows))
    return str(folder)


@pytest.mark.parametrize("subword", ["spm-unigram", "spm-bpe"])
def test_train_translate_subword_cased_multi30k(tmp_path, subword):
    out = tmp_path / "run"
    assert main(["train", "translate", "--format", "multi30k", "--data", _multi30k(tmp_path), "--dev-size", "12",
                 "--output-dir", str(out), "--subword", subword, "--subword-vocab", "60", "--cased",
                 "--embedding-dim", "8", "--units", "8", "--attention-units", "8", "--epochs", "1",
                 "--batch-size", "16", "--beam-size", "2", "--seed", "2"]) == 0
    model = keras.models.load_model(out / "model.keras", safe_mode=True)
    spm = model.target_tokenizer["spm"]
    assert model.source_tokenizer["lower"] is False and model.target_tokenizer["lower"] is False
    assert json.loads((out / "target_sentencepiece.json").read_text())["spm"] == spm  # one model, in the config
    from captioner.text.subword import encode_pieces

    assert "Ä" in "".join(model.target_vocabulary.tokens) and "▁Ein" in encode_pieces("Ein Kind", spm)
    t = model.translate(["A woman plays in the Snow."])[0]
    assert t.source_tokens == ["A", "woman", "plays", "in", "the", "Snow."]
    assert "\u2581" not in t.text and t.attention.shape[1] == 6
    card = json.loads((out / "model.json").read_text())
    assert card["config"]["subword"] == subword and card["config"]["cased"] is True
    metrics = card["metrics"]["val_beam2"]
    assert metrics["cased"] is True and "-lc" not in metrics["sacrebleu"] and ":lc" not in metrics["sacrebleu"]
    assert "BLEU_lc" in metrics and metrics["sacrebleu_lc"] != metrics["sacrebleu"]
    assert not list(out.glob("*_vocabulary.json"))  # the vocabularies are the pieces


def test_copyable_spans_hide_a_whole_word_behind_one_unk():
    from captioner.text.vocabulary import UNK_ID
    from captioner.training.translation_data import BucketedBatches, copyable_spans, hide_spans

    src = [["▁Jane", "▁vis", "ite", "▁l", "'", "Af", "rique", "."], ["▁Tom", "▁est", "▁là", "."],
           ["▁(", "Tom", ")", "▁dort"], ["▁Le", "▁chat", "."]]
    tgt = [["▁Jane", "▁visit", "s", "▁Africa", "."], ["▁Tom", "▁is", "▁here", "."], ["▁Tom", "▁sleeps"],
           ["▁The", "▁cat", "."]]
    spans = copyable_spans(src, tgt)
    # "Jane" and "Tom" are written alike on both sides; "(Tom)" keeps its brackets out of the span
    assert spans == [[((0, 1), (0, 1))], [((0, 1), (0, 1))], [((1, 2), (0, 1))], []]
    assert hide_spans([7, 8, 9, 10], [(1, 3)]) == [7, UNK_ID, 10]
    assert hide_spans([1, 7, 8, 9, 2], [(0, 2)], start=1) == [1, UNK_ID, 9, 2]  # after <start>
    ids = {p: i + 4 for i, p in enumerate(sorted({p for seq in src + tgt for p in seq}))}
    sources = [[ids[p] for p in seq] for seq in src]
    targets = [[1] + [ids[p] for p in seq] + [2] for seq in tgt]
    always = BucketedBatches(sources, targets, 4, copy_unk_rate=0.999999, copy_spans=spans)
    (inputs, labels), = list(always.batches())
    rows = {tuple(r[r > 0]) for r in inputs["source"]}
    assert (UNK_ID, ids["▁vis"], ids["ite"], ids["▁l"], ids["'"], ids["Af"], ids["rique"], ids["."]) in rows
    assert (ids["▁("], UNK_ID, ids[")"], ids["▁dort"]) in rows
    assert UNK_ID in labels[:, 0]  # the target's first word hidden too
    never = BucketedBatches(sources, targets, 4, copy_unk_rate=0.0, copy_spans=spans)
    (inputs, _), = list(never.batches())
    assert not (inputs["source"] == UNK_ID).any()


def test_subword_copy_unk_rate_trains_and_copies_the_core_of_a_name(tmp_path):
    out = tmp_path / "run"
    assert main(["train", "translate", "--format", "anki", "--data", _anki(tmp_path), "--output-dir", str(out),
                 "--subword", "spm-bpe", "--subword-vocab", "60", "--cased", "--copy-unk-rate", "0.3",
                 "--embedding-dim", "8", "--units", "8", "--attention-units", "8", "--epochs", "1",
                 "--batch-size", "16", "--beam-size", "2"]) == 0
    model = keras.models.load_model(out / "model.keras", safe_mode=True)
    assert json.loads((out / "model.json").read_text())["config"]["copy_unk_rate"] == 0.3
    # an <unk> output copies the source word without its punctuation
    config = model.get_config()
    kernel, bias = model.decoder.vocab_dense.get_weights()
    bias[3] += 50.0  # <unk> first
    model.decoder.vocab_dense.set_weights([kernel, bias])
    t = model.translate(["Montréal."], max_length=1)[0]
    assert t.replaced_unk == 1 and t.text == "Montréal", (t.text, config["target_tokenizer"].keys())


def test_train_translate_cased_words(tmp_path):
    out = tmp_path / "run"
    assert main(["train", "translate", "--format", "multi30k", "--data", _multi30k(tmp_path), "--dev-size", "12",
                 "--output-dir", str(out), "--cased", "--min-count", "1", "--embedding-dim", "8", "--units", "8",
                 "--attention-units", "8", "--epochs", "1", "--batch-size", "16", "--beam-size", "2"]) == 0
    model = keras.models.load_model(out / "model.keras", safe_mode=True)
    assert model.source_tokenizer["lower"] is False and model.target_tokenizer["lower"] is False
    assert "Ein" in model.target_vocabulary and "ein" not in model.target_vocabulary
    assert model.translate(["A Woman plays."])[0].source_tokens == ["A", "Woman", "plays", "."]


def test_the_train_step_is_traced_once(tmp_path, monkeypatch):
    """The Trainer builds the optimizer's variables before fit: made inside the first trace of the
    train step, they make TensorFlow trace it a second time (about half of a short run's time)."""
    from keras.src.backend.tensorflow import trainer as keras_trainer

    traces = []
    step = keras_trainer.TensorFlowTrainer.train_step
    monkeypatch.setattr(keras_trainer.TensorFlowTrainer, "train_step",
                        lambda self, data: traces.append(len(self.optimizer.variables)) or step(self, data))
    assert main(["train", "translate", "--data", _anki(tmp_path), "--output-dir", str(tmp_path / "run"),
                 *TRANSLATE_TINY, "--steps-per-epoch", "3", "--epochs", "2"]) == 0
    assert len(traces) == 1 and traces[0] > 2, traces  # one trace, the Adam slots already there
