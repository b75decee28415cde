"""`captioner model ensemble|set-defaults|store-lean|fit-tagger`: two captioners (or two Seq2Seq models) become one
.keras file that loads in safe mode and decodes its members together; members that cannot be
joined are refused by name; a model's decoding defaults are rewritten in place, weights and
outputs otherwise unchanged; each card records the command."""

import json
import os
import warnings

import keras
import numpy as np
import pytest
from support.backbones import tiny_backbone
from support.tiny_captioner import build_tiny_captioner, save_tiny_captioner

from captioner.cli import main


@pytest.fixture()
def members(tmp_path):
    paths = [str(save_tiny_captioner(tmp_path / f"s{seed}.keras", seed=seed)) for seed in (0, 1)]
    card = {"model": "s0.keras", "task": "caption", "command": ["captioner extract x", "captioner train caption --seed 0"],
            "seed": 0, "data": {"train_images": 6}}
    (tmp_path / "s0.json").write_text(json.dumps(card))  # s1 has no card
    return paths


def test_two_captioners_become_one_file(members, tmp_path):
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble

    out = tmp_path / "ensemble.keras"
    assert main(["model", "ensemble", *members, "--output", str(out), "--alpha", "0.7"]) == 0
    model = keras.models.load_model(out)
    assert isinstance(model.decoder, CaptionDecoderEnsemble) and model.decoder.combine == "product"
    first = keras.models.load_model(members[0])
    assert (model.beam_size, model.alpha, model.max_length) == (first.beam_size, 0.7, first.max_length)
    assert model.training_config["ensemble_of"] == ["s0.keras", "s1.keras"]
    for x, y in zip(first.decoder.get_weights(), model.decoder.members[0].get_weights()):  # stored float16
        np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    pixels = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    assert model.generate(pixels)["tokens"].shape[:2] == (2, first.beam_size)
    card = json.loads((tmp_path / "ensemble.json").read_text())  # the members' commands, then the join
    assert card["command"][:2] == ["captioner extract x", "captioner train caption --seed 0"]
    assert card["command"][-1].startswith("captioner model ensemble ") and "--alpha 0.7" in card["command"][-1]
    assert card["config"]["members"] == ["s0.keras", "s1.keras"] and card["config"]["alpha"] == 0.7
    assert card["extra"]["members"]["s0.keras"]["seed"] == 0 and card["extra"]["members_without_card"] == ["s1.keras"]
    assert card["data"] == {"train_images": 6} and card["task"] == "caption"


def test_members_that_cannot_be_joined_are_refused(members, tmp_path, capsys):
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary

    other = build_tiny_captioner(seed=2)
    words = Vocabulary(SPECIAL_TOKENS + tuple(f"w{i}" for i in range(len(other.vocabulary) - len(SPECIAL_TOKENS))))
    renamed = ImageCaptioner(tiny_backbone(), other.decoder, words, beam_size=2, max_length=6)
    path = tmp_path / "other_vocab.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        renamed.save(path)
    assert main(["model", "ensemble", members[0], str(path), "--output", str(tmp_path / "x.keras")]) == 2
    assert "other_vocab.keras: its vocabulary differs" in capsys.readouterr().err
    joined = tmp_path / "joined.keras"
    assert main(["model", "ensemble", *members, "--output", str(joined)]) == 0
    assert main(["model", "ensemble", members[0], str(joined), "--output", str(tmp_path / "y.keras")]) == 2
    assert "joined.keras: is an ensemble already" in capsys.readouterr().err
    assert main(["model", "ensemble", members[0], "--output", str(tmp_path / "z.keras")]) == 2  # one member
    assert "two or more members" in capsys.readouterr().err
    assert main(["model", "ensemble", *members, "--output", str(tmp_path / "w.h5")]) == 2
    assert not any((tmp_path / n).exists() for n in ("x.keras", "y.keras", "z.keras", "w.h5"))


def test_two_seq2seq_models_become_one_file_and_kinds_do_not_mix(members, tmp_path, capsys):
    from captioner.models.seq2seq import Seq2Seq
    from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
    from captioner.text import Vocabulary

    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", "a", "dog", "runs", "ein", "hund", "läuft"))
    paths = [tmp_path / f"t{i}.keras" for i in range(2)]
    for i, p in enumerate(paths):
        keras.utils.set_random_seed(i)
        Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=2,
                max_length=6).save(p)
    out = tmp_path / "t.keras"
    assert main(["model", "ensemble", *map(str, paths), "--output", str(out), "--combine", "mixture"]) == 0
    loaded = keras.models.load_model(out)
    assert isinstance(loaded, Seq2SeqEnsemble) and len(loaded.members) == 2 and loaded.combine == "mixture"
    card = json.loads((tmp_path / "t.json").read_text())
    assert card["task"] == "translate" and card["command"][-1].startswith("captioner model ensemble ")
    assert main(["model", "ensemble", members[0], str(paths[0]), "--output", str(tmp_path / "mixed.keras")]) == 2
    assert "members must be of one kind" in capsys.readouterr().err


@pytest.fixture()
def captioner_file(tmp_path):
    path = tmp_path / "tiny.keras"
    save_tiny_captioner(path)
    (tmp_path / "tiny.json").write_text(json.dumps({"model": "tiny.keras", "task": "caption",
                                                    "command": ["captioner train caption --x 1"]}))
    return path


def test_set_defaults_changes_an_image_captioners_beam_and_alpha_and_nothing_else(captioner_file):
    before = keras.models.load_model(captioner_file)
    assert (before.beam_size, before.alpha) == (2, 0.0)
    assert main(["model", "set-defaults", "--model", str(captioner_file), "--beam-size", "3", "--alpha", "1"]) == 0
    after = keras.models.load_model(captioner_file)
    assert (after.beam_size, after.alpha, after.max_length) == (3, 1.0, before.max_length)
    for x, y in zip(before.get_weights(), after.get_weights()):  # the same weights, stored float16
        np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    before.set_weights(after.get_weights())
    pixels = np.random.default_rng(0).integers(0, 255, size=(2, 32, 32, 3)).astype(np.float32)
    a, b = before.generate(pixels, beam_size=3, alpha=1.0), after.generate(pixels)  # its new defaults
    np.testing.assert_array_equal(a["tokens"], b["tokens"])
    card = json.loads(captioner_file.with_suffix(".json").read_text())
    assert card["command"][-1].startswith("captioner model set-defaults --model")
    assert card["extra"]["decoding_defaults"] == {"before": {"beam_size": 2, "alpha": 0.0},
                                                  "after": {"beam_size": 3, "alpha": 1.0}}


def test_store_lean_keeps_the_captions_and_records_itself(captioner_file):
    before = keras.models.load_model(captioner_file)
    assert main(["model", "store-lean", "--model", str(captioner_file)]) == 0
    after = keras.models.load_model(captioner_file)
    for x, y in zip(before.get_weights(), after.get_weights()):
        np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    card = json.loads(captioner_file.with_suffix(".json").read_text())
    # a card names no absolute path: relative to where the command ran (ModelCard.save)
    assert card["command"][-1] == f"captioner model store-lean --model {os.path.relpath(captioner_file)}"
    assert card["extra"]["storage"]["bytes_before"] > 0 and "float16" in json.dumps(card["extra"]["storage"])
    assert main(["model", "store-lean", "--model", str(captioner_file.with_name("missing.keras"))]) != 0


def test_fit_tagger_copies_a_captioners_settings_and_refuses_a_model_without_a_head(captioner_file, tmp_path, capsys):
    """--from-model copies the tagger settings (the tiny backbone has no ImageNet head: refused by name)."""
    assert main(["model", "fit-tagger", "--model", str(captioner_file), "--from-model", str(captioner_file)]) != 0
    assert "has no ImageNet head to tag with" in capsys.readouterr().err
    assert main(["model", "fit-tagger", "--model", str(captioner_file)]) != 0


def test_set_defaults_refuses_seq2seq_only_settings_for_a_captioner(captioner_file, capsys):
    assert main(["model", "set-defaults", "--model", str(captioner_file), "--no-repeat-ngram", "3"]) == 2
    assert "no n-gram blocking" in capsys.readouterr().err
    assert keras.models.load_model(captioner_file).beam_size == 2  # untouched


def test_two_document_classifiers_become_one_file_that_captioner_classify_reads(tmp_path, capsys):
    from support.han import tiny_classifier

    from captioner.models.document_classifier import DocumentEnsemble

    paths = []
    for seed in (0, 1):
        paths.append(str(tmp_path / f"h{seed}.keras"))
        tiny_classifier(seed=seed).save(paths[-1])
    (tmp_path / "h0.json").write_text(json.dumps({"model": "h0.keras", "task": "classify",
                                                  "command": ["captioner train classify --seed 0"]}))
    out = tmp_path / "han.keras"
    assert main(["model", "ensemble", *paths, "--output", str(out)]) == 0
    assert "2 members (mixture), " in capsys.readouterr().out
    loaded = keras.models.load_model(out)
    assert isinstance(loaded, DocumentEnsemble) and loaded.combine == "mixture"
    card = json.loads((tmp_path / "han.json").read_text())
    assert card["task"] == "classify" and card["config"] == {"members": ["h0.keras", "h1.keras"], "combine": "mixture"}
    rel = os.path.relpath
    assert card["command"] == ["captioner train classify --seed 0", f"captioner model ensemble {rel(paths[0])} "
                               f"{rel(paths[1])} --output {rel(out)}"]
    post = tmp_path / "post.txt"
    post.write_text("Subject: launch\n\nThe rocket reached orbit. Nasa said so.\n", encoding="utf-8")
    rows = tmp_path / "rows.jsonl"
    assert main(["classify", "--model", str(out), str(post), "--output", str(rows)]) == 0
    [row] = [json.loads(line) for line in rows.read_text().splitlines()]
    assert row["label"] in loaded.labels and abs(sum(row["probabilities"].values()) - 1) < 1e-4
    assert main(["model", "ensemble", paths[0], str(out), "--output", str(tmp_path / "x.keras")]) == 2
    assert "han.keras: is an ensemble already" in capsys.readouterr().err
    assert main(["model", "ensemble", *paths, "--output", str(tmp_path / "y.keras"), "--beam-size", "3"]) == 2
    assert "document classifiers have none" in capsys.readouterr().err
    assert not (tmp_path / "x.keras").exists() and not (tmp_path / "y.keras").exists()


def test_a_second_tool_on_a_model_being_changed_is_refused_and_the_file_kept(captioner_file, capsys):
    """Issue 66 item 1: every in-place tool holds the model's writer lock for its read-modify-write."""
    from captioner.io import exclusive_writer

    with exclusive_writer([captioner_file]):  # another process's set-defaults, say, mid-write
        for argv in (["set-defaults", "--model", str(captioner_file), "--beam-size", "3"],
                     ["store-lean", "--model", str(captioner_file)],
                     ["fit-tagger", "--model", str(captioner_file), "--from-model", str(captioner_file)]):
            assert main(["model", *argv]) == 2
            err = capsys.readouterr().err
            assert "another captioner process is changing this file" in err and "Traceback" not in err
    assert keras.models.load_model(captioner_file).beam_size == 2  # untouched
    assert main(["model", "set-defaults", "--model", str(captioner_file), "--beam-size", "3"]) == 0  # released


@pytest.mark.slow
def test_two_set_defaults_at_once_keep_both_changes_or_refuse_one(captioner_file):
    """Issue 66 item 1: two processes at once; never both 'done' with one change lost."""
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-m", "captioner", "model", "set-defaults", "--model",
                              str(captioner_file), *change], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for change in (["--beam-size", "3"], ["--alpha", "0.9"])]
    results = [(r.wait(timeout=300), r.stderr.read()) for r in runs]
    model = keras.models.load_model(captioner_file)
    card = json.loads(captioner_file.with_suffix(".json").read_text())
    done = [rc == 0 for rc, _ in results]
    assert any(done)
    if all(done):
        assert (model.beam_size, model.alpha) == (3, 0.9)
    else:
        refused = results[done.index(False)]
        assert refused[0] == 2 and "another captioner process is changing this file" in refused[1]
        assert (model.beam_size, model.alpha) in ((3, 0.0), (2, 0.9))
    assert sum("set-defaults" in c for c in card["command"]) == sum(done)


def test_an_ensemble_over_one_of_its_members_is_refused(members, tmp_path, capsys):
    """Issue 66 item 2: --output naming a member would replace that member (and its card)."""
    before = [open(p, "rb").read() for p in members]
    card = (tmp_path / "s0.json").read_text()
    assert main(["model", "ensemble", *members, "--output", members[0]]) == 2
    assert "is the input" in capsys.readouterr().err
    assert [open(p, "rb").read() for p in members] == before and (tmp_path / "s0.json").read_text() == card
