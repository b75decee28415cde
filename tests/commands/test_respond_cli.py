"""`captioner respond` on an SGD file and on plain text, and `captioner chat`, with a tiny model."""

import json

import pytest

from captioner.cli import main
from support import dialogue as ds



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


def test_sgd_file_with_a_byte_order_mark(model_path, tmp_path):
    _, dev = ds.make_sgd(tmp_path / "sgd", train=4, dev=3)
    plain, bom = tmp_path / "plain.jsonl", tmp_path / "bom.jsonl"
    marked = tmp_path / "dialogues_bom.json"
    marked.write_bytes(b"\xef\xbb\xbf" + (dev / "dialogues_001.json").read_bytes())
    assert main(["respond", "--model", str(model_path), "--input", str(dev / "dialogues_001.json"),
                 "--output", str(plain)]) == 0
    assert main(["respond", "--model", str(model_path), "--input", str(marked), "--output", str(bom)]) == 0
    strip = ("response", "dialogue_id", "turn")
    assert [{k: json.loads(x)[k] for k in strip} for x in bom.read_text().splitlines()] == \
        [{k: json.loads(x)[k] for k in strip} for x in plain.read_text().splitlines()]


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


def test_json_lines_dialogue(model_path, tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"speaker": "USER", "utterance": "I need a flight to rome."}\n'
                    '{"speaker": "SYSTEM", "utterance": "Which date do you fly?"}\n\n'
                    '{"speaker": "user", "utterance": "Next monday."}\n')
    out = tmp_path / "out.jsonl"
    assert main(["respond", "--model", str(model_path), "--input", str(chat), "--output", str(out)]) == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["dialogue_id"] == "chat" and row["turn"] == 3 and len(row["turn_attention"]) == 3
    from captioner.commands.respond import read_dialogues

    [d], is_sgd = read_dialogues(chat)
    assert not is_sgd and d.turns == (("USER", "I need a flight to rome."), ("SYSTEM", "Which date do you fly?"),
                                      ("USER", "Next monday."))
    for text, message in (('{"speaker": "USER", "utterance": "hi"}\n{"speaker": "BOT", "utterance": "x"}\n', ":2: "),
                          ('{"speaker": "USER", "utterance": "hi"}\n{"speaker": \n', ":2: not valid JSON"),
                          ('{"speaker": "USER"}\n', ":1: expected")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text)
        from captioner.data.sgd import read_jsonl_dialogue
        from captioner.errors import InputError

        with pytest.raises(InputError, match=message):
            read_jsonl_dialogue(bad)
        assert main(["respond", "--model", str(model_path), "--input", str(bad), "--output", str(out)]) == 2
    assert json.loads(out.read_text())["turn"] == 3  # the failed runs left the earlier output whole


def test_a_crash_part_way_leaves_the_old_output_whole_and_a_rerun_goes_on_from_the_last_batch(model_path, tmp_path,
                                                                                              monkeypatch):
    from captioner.models.dialogue_responder import DialogueResponder

    _, dev = ds.make_sgd(tmp_path / "sgd", train=4, dev=3)
    out = tmp_path / "out.jsonl"
    out.write_text("old output\n")
    calls = []
    real = DialogueResponder.respond

    def respond_then_crash(self, contexts, **kw):
        calls.append(len(contexts))
        if len(calls) == 2:
            raise RuntimeError("crash after the first batch")
        return real(self, contexts, **kw)

    monkeypatch.setattr(DialogueResponder, "respond", respond_then_crash)
    argv = ["respond", "--model", str(model_path), "--input", str(dev / "dialogues_001.json"), "--output", str(out),
            "--batch-size", "2"]
    with pytest.raises(RuntimeError, match="crash"):
        main(argv)
    assert len(calls) == 2 and out.read_text() == "old output\n"
    partial = tmp_path / "out.jsonl.partial"
    assert len(partial.read_text().splitlines()) == 2  # the first batch, kept for the rerun
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(calls[2:]) == len(rows) - 2 and not partial.exists()  # only the turns not done before
    straight = tmp_path / "straight.jsonl"
    assert main(argv[:-4] + ["--output", str(straight)]) == 0  # the same turns, in the same order, as one run gives
    assert [(r["dialogue_id"], r["turn"]) for r in map(json.loads, straight.read_text().splitlines())] == \
        [(r["dialogue_id"], r["turn"]) for r in rows]


def test_a_binary_file_is_refused_not_read_as_a_dialogue(model_path, tmp_path, capsys):
    """Issue 40 item 15: a binary file was taken as a 1528-turn dialogue and raw bytes echoed."""
    binary = tmp_path / "photo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    assert main(["respond", "--model", str(model_path), "--input", str(binary)]) == 2
    err = capsys.readouterr().err.strip()
    assert "binary file" in err and len(err.splitlines()) == 1
