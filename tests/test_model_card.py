"""captioner/model_card.py: every bundled card reads as a ModelCard; old cards map onto the schema."""

import json
from pathlib import Path

import pytest

from captioner.errors import InputError
from captioner.model_card import TASKS, ModelCard, card_path

MODELS = Path(__file__).resolve().parents[1] / "assets" / "models"
BUNDLED = ["flickr8k_web_attention", "flickr8k_attention", "multi30k_en_de", "anki_fr_en", "sick_entailment",
           "easy_vqa", "photo_vqa",
           "shapes_video_caption", "shapes_video_classify", "flickr8k_video_caption",
           "flickr8k_video_activity", "dakshina_hi_translit", "bbc_headlines", "news_headlines",
           "shakespeare_char_lm", "flickr8k_word_lm", "newsgroups_han", "sgd_dialogue"]


def test_every_card_beside_a_bundled_model_is_listed():
    assert sorted(p.stem for p in MODELS.glob("*.keras")) == sorted(BUNDLED)


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_card_is_a_model_card(name):
    path = MODELS / f"{name}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    card = ModelCard.load(MODELS / f"{name}.keras")
    assert card.to_dict() == raw  # written in the schema: nothing is mapped on reading
    assert card.model == f"{name}.keras" and card.task in TASKS and card.schema == 1
    assert card.training_command.startswith("captioner train ")
    assert card.training_command in card.commands
    assert isinstance(card.seed, int)
    assert isinstance(card.split, str) and card.split
    assert len(card.metrics) > 1  # figures, not only the split


def test_legacy_card_maps_onto_the_schema_and_keeps_everything(tmp_path):
    old = {"model": "m.keras", "task": "3-way entailment (SICK labels)", "command": "captioner train entail --x 1",
           "commands": ["python prepare.py", "captioner train entail --x 1"],
           "dev_metrics": {"split": "SICK TRIAL", "accuracy": 80.0}, "machine": "2 cores", "seed": 3}
    card = ModelCard.from_dict(old)
    assert card.task == "entail" and card.extra == {"task_as_written": "3-way entailment (SICK labels)",
                                                   "machine": "2 cores"}
    assert card.command == ["python prepare.py", "captioner train entail --x 1"]
    assert card.metrics == {"split": "SICK TRIAL", "accuracy": 80.0} and card.split == "SICK TRIAL"
    saved = card.save(tmp_path / "m.keras")
    assert saved == str(tmp_path / "m.json") == card_path(tmp_path / "m.keras")
    again = ModelCard.find(tmp_path / "m.keras")
    assert again == card and again.to_dict() == ModelCard.from_dict(again.to_dict()).to_dict()


def test_training_command_is_the_last_training_step():
    card = ModelCard(model="m.keras", task="caption",
                     command=["captioner extract imgs --output f.h5", "captioner train caption --features f.h5",
                              "captioner sweep caption --model m.keras --features f.h5 --grid beam_size=1,2"])
    assert card.training_command == "captioner train caption --features f.h5"
    assert card.commands[0].startswith("captioner extract")
    assert ModelCard(model="m.keras", task="vqa", command="python x.py").training_command == "python x.py"
    assert ModelCard(model="m.keras", task="vqa").training_command is None
    assert ModelCard(model="m.keras", task="vqa").commands == []


@pytest.mark.parametrize("bad,message", [
    ({"task": "caption"}, "needs 'model'"),
    ({"model": "m.keras", "task": "poetry"}, "task must be one of"),
    ({"model": "m.keras", "task": "caption", "command": 3}, "command must be"),
    ({"model": "m.keras", "task": "caption", "command": ["ok", ""]}, "command must be"),
    ({"model": "m.keras", "task": "caption", "metrics": [1]}, "metrics must be"),
    ({"model": "m.keras", "task": "caption", "metrics": {"split": 1}}, "must name a split"),
    ({"model": "m.keras", "task": "caption", "seed": "1"}, "seed must be"),
    ({"model": "m.keras", "task": "caption", "schema": 99}, "newer than this code"),
    ({"model": "m.keras", "task": "caption", "x": 1, "extra": {"x": 2}}, "both a top-level key and in 'extra'"),
    ([], "a JSON object"),
])
def test_malformed_cards_are_input_errors(bad, message):
    with pytest.raises(InputError, match=message):
        ModelCard.from_dict(bad, source="card.json")


def test_load_names_the_file(tmp_path):
    (tmp_path / "bad.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: not valid JSON"):
        ModelCard.load(tmp_path / "bad.json")
    with pytest.raises(InputError, match="file not found"):
        ModelCard.load(tmp_path / "nope.keras")
    assert ModelCard.find(tmp_path / "nope.keras") is None


def test_every_bundled_model_has_its_markdown_card_up_to_date():
    """NAME.md beside every bundled model is generated from NAME.json (scripts/write_model_cards.py)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("write_model_cards", root / "scripts" / "write_model_cards.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    pages = script.pages()
    assert len(pages) == 18
    for path, text in pages.items():
        assert Path(path).read_text(encoding="utf-8") == text, f"{path} is stale: python scripts/write_model_cards.py"
        for section in ("## Intended use", "## How to use", "## Held-out results", "## Training"):
            assert section in text
    assert script.main(["--check"]) == 0


def test_examples_on_real_input_render_as_a_table_with_their_commands():
    """extra.examples_on_real_input (scripts/card_examples.py) becomes the card's examples section;
    a '|' or a line break in an output stays inside its cell."""
    from captioner.model_card import to_markdown

    card = ModelCard(task="caption", model="m.keras", seed=1, command="captioner train caption",
                     extra={"examples_on_real_input": {"commands": ["captioner caption cat.jpg"],
                                                       "rows": [["cat.jpg", "a cat | a dog\non a bench"]]}})
    text = to_markdown(card, "A captioner", "caption", True)
    section = text.split("## Examples on real input", 1)[1]
    assert "captioner caption cat.jpg" in section
    assert "| cat.jpg | a cat \\| a dog<br>on a bench |" in section
    assert "## Examples on real input" not in to_markdown(ModelCard(task="caption", model="m.keras"), "A", "caption", True)


def test_no_bundled_card_names_a_path_of_the_machine_it_was_made_on():
    """Issue 70 item 5: a card's commands rerun from a clone; no absolute path of any machine."""
    import glob
    import os
    import re

    absolute = re.compile(r"""(^|[\s=("'])/(?!/)[^\s"')]+""")

    def strings(obj):
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, dict):
            for v in obj.values():
                yield from strings(v)
        elif isinstance(obj, list):
            for v in obj:
                yield from strings(v)

    cards = glob.glob(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "*.json"))
    assert cards
    for path in cards:
        with open(path, encoding="utf-8") as f:
            found = [m.group(0).strip() for text in strings(json.load(f)) for m in absolute.finditer(text)]
        assert not found, f"{os.path.basename(path)}: absolute paths {found[:3]}"


def test_a_saved_card_makes_absolute_paths_relative(tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    card = ModelCard(model="m.keras", task="caption",
                     command=[f"captioner train caption --features {tmp_path}/work/f.h5 --data-dir=/data/flickr8k"],
                     data={"data_dir": str(tmp_path / "data"), "url": "https://example.org/x"},
                     config={"output_dir": f"{tmp_path}/runs/a"})
    saved = ModelCard.load(card.save(tmp_path / "m.keras"))
    assert saved.command == ["captioner train caption --features work/f.h5 --data-dir="
                             + os.path.relpath("/data/flickr8k", tmp_path)]
    assert saved.data == {"data_dir": "data", "url": "https://example.org/x"}
    assert saved.config["output_dir"] == "runs/a"


def _card_build_commands():
    import glob
    import os

    for model in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "*.keras"))):
        path = model[: -len(".keras")] + ".json"  # the card beside each bundled model
        with open(path, encoding="utf-8") as f:
            for line in json.load(f).get("command") or []:
                yield os.path.basename(path), line


def test_every_card_build_command_is_a_product_command_that_parses():
    """Issue 70 item 5: the build commands a card lists rerun from a clone: each `captioner ...` step
    parses with the CLI's own parser, and none runs a script of scripts/experiments/ (the product
    commands do what they did: `captioner model ensemble`, `captioner evaluate`)."""
    import re
    import shlex

    from captioner.cli import build_parser

    parser = build_parser()
    seen = 0
    for card, line in _card_build_commands():
        assert "scripts/experiments/" not in line, f"{card}: {line[:120]}"
        if line.startswith("#"):  # a comment line: what a step could not record
            continue
        for step in re.split(r"\s*(?:&&|;|\|)\s*", line.split("  #")[0]):
            words = shlex.split(step)
            if words[:1] == ["captioner"] and words[1:2] != ["train"]:  # train: tests/training/test_train_options.py
                try:
                    parser.parse_args(words[1:])
                except SystemExit:
                    raise AssertionError(f"{card}: `{step}` does not parse") from None
                seen += 1
    assert seen >= 20


def test_no_card_cites_an_experiment_script_and_every_step_starts_with_a_command():
    """Issue 70 item 5: nothing in a card (build commands, extras, notes, previous models' cards)
    sends a user to scripts/experiments/ (one-off comparisons); each build step is a command a
    shell runs or a comment, not a stray fragment."""
    import glob
    import os

    leading = {"captioner", "python", "cp", "mkdir", "for", "#"}
    for model in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "*.keras"))):
        path = model[: -len(".keras")] + ".json"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "scripts/experiments/" not in text, os.path.basename(path)
        for line in json.loads(text).get("command") or []:
            assert line.split()[0] in leading, f"{os.path.basename(path)}: {line[:80]!r}"
