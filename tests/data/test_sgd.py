"""The SGD reader: published JSON, plain alternating dialogues, examples, errors naming the file."""

import json

import pytest

from captioner.data.sgd import load_sgd, read_plain_dialogue, read_sgd_file, response_examples
from captioner.errors import InputError


def _file(tmp_path, data, name="dialogues_001.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


DIALOGUE = {"dialogue_id": "1_00000", "services": ["Restaurants_1"], "turns": [
    {"speaker": "USER", "utterance": "Find me a place to eat.", "frames": []},
    {"speaker": "SYSTEM", "utterance": "Which city?", "frames": []},
    {"speaker": "USER", "utterance": "San Jose.", "frames": []},
    {"speaker": "SYSTEM", "utterance": "What cuisine?", "frames": []},
    {"speaker": "USER", "utterance": "Thai.", "frames": []},
    {"speaker": "SYSTEM", "utterance": "I found 3 places.", "frames": []}]}


def test_examples_are_system_turns_with_their_last_turns(tmp_path):
    [d] = read_sgd_file(_file(tmp_path, [DIALOGUE]))
    assert d.dialogue_id == "1_00000" and len(d.turns) == 6
    examples = response_examples([d], context_turns=2)
    assert [e.turn for e in examples] == [1, 3, 5]
    assert examples[0].context == (("USER", "Find me a place to eat."),)
    assert examples[2].context == (("SYSTEM", "What cuisine?"), ("USER", "Thai.")) and examples[2].response == "I found 3 places."
    with pytest.raises(InputError, match="context_turns 0"):
        response_examples([d], 0)


@pytest.mark.parametrize("data,message", [
    ("[{", "dialogues_001.json:1: not JSON"),
    ({"turns": []}, "expected a JSON list of dialogues"),
    ([{"dialogue_id": "x"}], "dialogue 1: expected an object with a 'turns' list"),
    ([{"dialogue_id": "x", "turns": [{"speaker": "BOT", "utterance": "hi"}]}], r"dialogue 1 \(x\), turn 0"),
])
def test_malformed_files_name_the_file_and_the_dialogue(tmp_path, data, message):
    with pytest.raises(InputError, match=message):
        read_sgd_file(_file(tmp_path, data))


def test_a_folder_and_its_errors(tmp_path):
    _file(tmp_path, [DIALOGUE])
    _file(tmp_path, [DIALOGUE, DIALOGUE], "dialogues_002.json")
    (tmp_path / "schema.json").write_text("[]")
    assert len(load_sgd(tmp_path)) == 3 and len(load_sgd(tmp_path, limit_files=1)) == 1
    with pytest.raises(InputError, match="no dialogues_"):
        load_sgd(_empty(tmp_path))
    with pytest.raises(InputError, match="no such folder"):
        load_sgd(tmp_path / "missing")


def _empty(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_plain_text_dialogues(tmp_path):
    path = _file(tmp_path, "I need a flight.\n\nSYSTEM: Where to?\nuser: Paris\n", "chat.txt")
    d = read_plain_dialogue(path)
    assert d.turns == (("USER", "I need a flight."), ("SYSTEM", "Where to?"), ("USER", "Paris"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Un caf\xe9 pr\xe8s d'ici ?\n".encode("latin-1"))
    assert read_plain_dialogue(latin).turns == (("USER", "Un café près d'ici ?"),)
    with pytest.raises(InputError, match="chat2.txt:2: a USER turn where the alternation expects SYSTEM"):
        read_plain_dialogue(_file(tmp_path, "Hi\nUSER: again\n", "chat2.txt"))
    with pytest.raises(InputError, match="no turns"):
        read_plain_dialogue(_file(tmp_path, "\n\n", "chat3.txt"))
