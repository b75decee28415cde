"""`captioner train TASK` options, generated from the recipes' config dataclasses: every option
of before the recipes keeps its name, default, type, choices and meaning; every training
command recorded in the bundled model cards and the README parses into the config it meant;
`-h` imports no TensorFlow."""

import argparse
import dataclasses
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from captioner.commands import train
from captioner.training.config import TrainConfig, add_arguments, from_args, option

ROOT = Path(__file__).resolve().parents[2]
BEFORE = json.loads((Path(__file__).parent / "train_options_before_recipes.json").read_text())


def _parser():
    root = argparse.ArgumentParser(prog="captioner")
    train.register(root.add_subparsers(dest="command"))
    return root


def _task_parsers():
    root = argparse.ArgumentParser()
    sub = root.add_subparsers()
    for module in train.recipe_modules().values():
        train.add_recipe_parser(sub, module)
    return sub.choices


def test_every_task_of_before_is_there():
    assert set(BEFORE) == {"caption", "translate", "entail", "vqa", "video-caption", "video-classify"}
    assert set(BEFORE) <= set(train.recipe_modules())  # new tasks (transliterate, ...) come on top


@pytest.mark.parametrize("task", sorted(BEFORE))
def test_options_keep_their_names_defaults_types_and_choices(task):
    now = {a.option_strings[0]: a for a in _task_parsers()[task]._actions if a.dest != "help"}
    for flag, old in BEFORE[task].items():
        assert flag in now, f"{task} {flag} is gone"
        new = now[flag]
        assert new.dest == old["dest"], flag
        assert new.default == old["default"], (flag, new.default, old["default"])
        # choices keep their order; new ones may only be added at the end (vqa: qa-jsonl, blind)
        choices = list(new.choices) if new.choices else None
        assert (choices[: len(old["choices"])] if choices and old["choices"] else choices) == old["choices"], flag
        # issue 67: --data-dir is no longer required where --corpus names the data instead (the recipe
        # refuses a run with neither); every command that gave it still runs as it did
        relaxed = task == "caption" and flag == "--data-dir"
        assert new.required == old["required"] or (relaxed and not new.required), flag
        assert new.nargs == old["nargs"], flag
        assert (new.type.__name__ if new.type else None) == (old["type"] if old["type"] != "str" else "str") or \
            (old["type"] is None and new.type is str), (flag, new.type, old["type"])
        assert type(new).__name__ == old["action"], flag
    # options added since (the Trainer's, for every task) change nothing when not given
    # translate's subword/cased options (issue 21): their defaults are the word-level, lower-cased
    # models of before (--subword-vocab only applies with --subword)
    neutral = {"--subword": "none", "--subword-vocab": 8000, "--cased": False} if task == "translate" else {}
    # self-critical training (issue 20; video captions: issue 38): its options only apply with --scst
    # (baseline and temperature: defaults changed to what raised dev CIDEr; the recorded SCST
    # commands name both, or predate --scst-temperature and sampled at T = 1)
    scst = {"--scst": False, "--init-model": None, "--scst-samples": 5, "--scst-baseline": "mean",
            "--scst-learning-rate": 5e-5, "--scst-temperature": 0.5, "--scst-xe-weight": 0.0,
            "--scst-bleu-weight": 0.0}
    if task == "caption":
        neutral = {**scst,
                   # issue 38: the DCC protocol (images whose captions name these words left out)
                   "--hold-out-words": None,
                   # issue 67: several corpora (--corpus replaces --data-dir/--format) and their default style
                   "--corpus": [], "--default-style": None,
                   "--no-style-tokens": False}  # this comparison row: <start> for every corpus
    if task == "video-caption":
        neutral = scst
    if task == "classify":  # issue 42: the HAN's sparse tf-idf branch, off by default
        neutral = {"--tfidf": False, "--tfidf-l2": 0.0, "--tfidf-scale": 10.0}
    if task in ("translate", "entail"):  # issue 16: the pointer-generator decoder, off by default
        neutral["--pointer"] = False
    if task == "video-classify":  # issue 18: a clip_id,label CSV instead of the UCF101 layout, off by default
        neutral = {"--labels": None, "--class-weight": "none", "--select": "accuracy"}  # weighting: off by default
    for flag in set(now) - set(BEFORE[task]):
        if flag in neutral:
            assert now[flag].default == neutral[flag], flag
            continue
        assert flag in ("--lr-decay", "--time-budget"), flag
        assert now[flag].default in (None, 1.0), flag


def _recorded_commands():
    """Every `captioner train ...` command written in the cards of assets/models and the README."""
    found = []

    def walk(node, where):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "command" and isinstance(value, (str, list)):
                    for c in [value] if isinstance(value, str) else value:
                        found.extend((where, part) for part in str(c).split("&&"))
                else:
                    walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for card in sorted((ROOT / "assets" / "models").glob("*.json")):
        walk(json.loads(card.read_text()), card.name)
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:  # the README and its guides
        text = doc.read_text().replace("\\\n", " ")
        found += [(doc.name, m) for m in re.findall(r"captioner train [^\n`]*", text)]
    out = []
    for where, text in found:
        text = re.sub(r"\(.*\)\s*$", "", text.strip()).strip()  # "(member 3 of the ensemble run below)"
        text = re.sub(r"^\.venv/bin/", "", text)
        # (a few card notes name a member run without its --output-dir: never a whole command)
        if text.startswith("captioner train ") and "--output-dir" in text:
            out.append((where, text))
    return out


COMMANDS = _recorded_commands()


def test_the_cards_record_training_commands():
    tasks = {shlex.split(c)[2] for _, c in COMMANDS}
    assert {"caption", "translate", "entail", "vqa", "video-caption", "video-classify"} <= tasks


@pytest.mark.parametrize("where,command", COMMANDS, ids=[f"{w}:{i}" for i, (w, _) in enumerate(COMMANDS)])
def test_recorded_commands_parse_into_the_config_they_meant(where, command):
    argv = shlex.split(command)[1:]
    args = _parser().parse_args(argv)
    task = argv[1]  # not args.task: `train entail --task` shares the name (as before the recipes)
    cfg = from_args(train.recipe_modules()[task].Config, args)
    # every option given on the command line has its value in the config, under its own name
    given = _task_parsers()[task]
    by_flag = {s: a for a in given._actions for s in a.option_strings}
    words = argv[2:]
    for i, word in enumerate(words):
        if word in by_flag:
            action = by_flag[word]
            value = getattr(cfg, action.dest)
            if isinstance(action, argparse._StoreTrueAction):
                assert value is True, word
            elif action.nargs is None:
                assert value == action.type(words[i + 1]) if action.type else words[i + 1], word


def test_option_generation_from_fields():
    @dataclasses.dataclass(kw_only=True)
    class Base(TrainConfig):
        size: int = option(4, help="how big")
        mode: str = option("a", choices=("a", "b"))
        no_thing: bool = option(False, help="turn it off")
        pairs: list = option(nargs=2, action="append", metavar=("X", "Y"))  # noqa: RUF009

    @dataclasses.dataclass(kw_only=True)
    class Child(Base):
        size: int = 9  # a new default; the help stays the base's
        epochs: int = 30

    p = add_arguments(argparse.ArgumentParser(), Child)
    actions = {a.dest: a for a in p._actions}
    assert actions["size"].default == 9 and actions["size"].help == "how big" and actions["size"].type is int
    assert actions["epochs"].default == 30 and actions["epochs"].help is None
    assert actions["no_thing"].option_strings == ["--no-thing"] and isinstance(actions["no_thing"],
                                                                                argparse._StoreTrueAction)
    assert actions["output_dir"].required and actions["pairs"].required
    assert actions["model_out"].default is None and actions["model_out"].type is str
    assert actions["time_budget"].type is float
    cfg = from_args(Child, p.parse_args(["--output-dir", "o", "--pairs", "1", "2", "--pairs", "3", "4",
                                         "--mode", "b", "--no-thing"]))
    assert cfg == Child(output_dir="o", pairs=[["1", "2"], ["3", "4"]], mode="b", no_thing=True)
    with pytest.raises(SystemExit):
        p.parse_args(["--output-dir", "o", "--pairs", "1", "2", "--mode", "c"])


def test_help_imports_no_tensorflow():
    """The train command's modules (parser, configs, recipes, Trainer) import no TensorFlow or
    Keras: `captioner` itself is stubbed, so what the package __init__ imports does not count."""
    script = f"""
import sys, types, argparse
pkg = types.ModuleType("captioner"); pkg.__path__ = [{str(ROOT / 'captioner')!r}]
sys.modules["captioner"] = pkg
from captioner.commands import train
root = argparse.ArgumentParser(); train.register(root.add_subparsers())
for name in train.recipe_modules():
    try:
        root.parse_args(["train", name, "-h"])
    except SystemExit:
        pass
import captioner.training.trainer  # noqa
print("TF", sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras"))[:3])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("TF []"), out.stdout[-500:]
