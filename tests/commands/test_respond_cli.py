"""`captioner respond` on an SGD file and on plain text, and `captioner chat`, with a tiny model."""

import importlib.util
import json
from pathlib import Path

import pytest

from captioner.cli import main

_spec = importlib.util.spec_from_file_location("dialogue_support",
                                               Path(__file__).resolve().parents[1] / "models" / "dialogue_support.py")
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("dialogue") / "d.keras"
    ds.tiny_responder().inference_copy().save(path)
    return path


def test_sgd_file_one_row_per_system_turn(model_path, tmp_path):
    _, dev = ds.make_sgd(tmp_path / "sgd", train=4, dev=3)
    out = tmp_path / "out.jsonl"
    assert main(["respond", "--model", str(model_path), "--input", str(dev / "dialogues_001.json"),
                 "--output", str(out), "--nbest", "2"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    dialogues = json.loads((dev / "dialogues_001.json").read_text())
    assert [(r["dialogue_id"], r["turn"]) for r in rows] == [(d["dialogue_id"], t) for d in dialogues for t in (1, 3)]
    for r in rows:
        assert isinstance(r["response"], str) and len(r["nbest"]) == 2 and r["nbest"][0][0] == r["response"]
        assert abs(sum(r["turn_attention"]) - 1) < 1e-3 and r["reference"]
    assert len(rows[1]["turn_attention"]) == 3 and len(rows[0]["turn_attention"]) == 1


def test_plain_text_dialogue_and_broken_inputs(model_path, tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("USER: I need a flight to rome.\nSYSTEM: Which date do you fly?\nNext monday.\n")
    out = tmp_path / "out.jsonl"
    assert main(["respond", "--model", str(model_path), "--input", str(chat), "--output", str(out)]) == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["dialogue_id"] == "chat" and row["turn"] == 3 and "reference" not in row
    bad = tmp_path / "dialogues_009.json"
    bad.write_text('[{"dialogue_id": "x", "turns": [{"speaker": "BOT"}]}]')
    assert main(["respond", "--model", str(model_path), "--input", str(bad), "--output", str(out)]) == 2
    assert main(["respond", "--model", str(model_path), "--input", str(tmp_path / "none.json")]) == 2


def test_chat_loop(model_path):
    from captioner.commands.chat import chat
    from captioner.models.dialogue_responder import load_dialogue_responder

    model = load_dialogue_responder(model_path)
    shown = []
    turns = chat(model, ["I want a table in rome.\n", "/reset\n", "At seven please.\n", "\n", "never read\n"],
                 shown.append)
    text = "".join(shown)
    assert text.count("SYSTEM> ") == 2 and "(new dialogue)" in text and "attended most to" in text
    assert [s for s, _ in turns] == ["USER", "SYSTEM"] and turns[0][1] == "At seven please."
