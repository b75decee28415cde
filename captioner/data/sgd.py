"""Schema-Guided Dialogue (Rastogi et al. 2020, DSTC8), as published::

    train/dialogues_001.json ...   dev/dialogues_001.json ...   (and schema.json, not read)

Each file is a JSON list of dialogues ``{"dialogue_id", "services", "turns": [{"speaker":
"USER"|"SYSTEM", "utterance": "...", "frames": ...}, ...]}``; only the speakers and the
utterances are read. A single dialogue can also be plain text: one turn a line, alternating
USER and SYSTEM from a USER turn (a line may start with ``USER:`` / ``SYSTEM:``, which then
must agree with the alternation; blank lines are skipped), or JSON lines: one
``{"speaker": "USER"|"SYSTEM", "utterance": "..."}`` object a line, in order (blank lines
skipped; the speakers need not alternate).

:func:`response_examples` turns dialogues into what a response model learns from: for every
SYSTEM turn, the (at most) ``context_turns`` turns before it and the turn itself.
Errors name the file (and the dialogue or line) and what is wrong.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from captioner.data.json_file import json_objects
from captioner.errors import InputError

__all__ = ["SPEAKERS", "Dialogue", "ResponseExample", "load_sgd", "read_jsonl_dialogue", "read_plain_dialogue",
           "read_sgd_file", "response_examples", "sgd_files"]

SPEAKERS = ("USER", "SYSTEM")


@dataclasses.dataclass(frozen=True)
class Dialogue:
    dialogue_id: str
    turns: tuple  # ((speaker, utterance), ...)
    source: str = ""


@dataclasses.dataclass(frozen=True)
class ResponseExample:
    dialogue_id: str
    turn: int          # index of the SYSTEM turn in the dialogue's turns
    context: tuple     # ((speaker, utterance), ...): the turns before it, oldest first
    response: str      # the SYSTEM turn's utterance


def read_sgd_file(path) -> list[Dialogue]:
    """The dialogues of one ``dialogues_NNN.json``."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))  # a byte-order mark (Windows editors) is skipped
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of dialogues, found {type(data).__name__}")
    out = []
    for i, d in enumerate(data):
        where = f"{path}: dialogue {i + 1}"
        if not isinstance(d, dict) or not isinstance(d.get("turns"), list):
            raise InputError(f"{where}: expected an object with a 'turns' list")
        dialogue_id = str(d.get("dialogue_id", f"{path.stem}:{i + 1}"))
        turns = []
        for j, t in enumerate(d["turns"]):
            if not isinstance(t, dict) or t.get("speaker") not in SPEAKERS or not isinstance(t.get("utterance"), str):
                raise InputError(f"{where} ({dialogue_id}), turn {j}: expected {{'speaker': USER|SYSTEM, "
                                 f"'utterance': text}}")
            turns.append((t["speaker"], t["utterance"]))
        out.append(Dialogue(dialogue_id, tuple(turns), str(path)))
    return out


def sgd_files(folder) -> list[Path]:
    """``dialogues_*.json`` of a split folder, sorted; InputError when there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder (expected SGD dialogues_NNN.json files)")
    files = sorted(folder.glob("dialogues_*.json"))
    if not files:
        raise InputError(f"{folder}: no dialogues_*.json files")
    return files


def load_sgd(folder, limit_files: int | None = None) -> list[Dialogue]:
    """Every dialogue of a split folder (the first ``limit_files`` files only, if given)."""
    files = sgd_files(folder)[:limit_files] if limit_files else sgd_files(folder)
    return [d for f in files for d in read_sgd_file(f)]


def read_plain_dialogue(path) -> Dialogue:
    """One dialogue from a text file of alternating USER / SYSTEM lines (see the module doc)."""
    from captioner.data.documents import read_text_file

    text, _ = read_text_file(path)  # a binary file is refused, not read as a 1,500-turn dialogue
    turns = []
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        speaker = SPEAKERS[len(turns) % 2]
        head, sep, rest = line.partition(":")
        if sep and head.strip().upper() in SPEAKERS:
            if head.strip().upper() != speaker:
                raise InputError(f"{path}:{n}: a {head.strip().upper()} turn where the alternation expects "
                                 f"{speaker} (turns alternate USER, SYSTEM, USER, ...)")
            line = rest.strip()
            if not line:
                raise InputError(f"{path}:{n}: an empty {speaker} turn")
        turns.append((speaker, line))
    if not turns:
        raise InputError(f"{path}: no turns (expected alternating USER / SYSTEM lines)")
    return Dialogue(Path(path).stem, tuple(turns), str(path))


def read_jsonl_dialogue(path) -> Dialogue:
    """One dialogue from a JSON-lines file: one ``{"speaker": ..., "utterance": ...}`` object a
    line, oldest first (the speaker USER or SYSTEM, any case)."""
    from captioner.data.documents import read_text_file

    text, _ = read_text_file(path)  # a binary file is refused, not read as a 1,500-turn dialogue
    turns = []
    expected = '{"speaker": "USER"|"SYSTEM", "utterance": text}'
    for where, t in json_objects(path, expected, lines=text.split("\n")):
        speaker = t.get("speaker")
        if not isinstance(speaker, str) or speaker.upper() not in SPEAKERS or not isinstance(t.get("utterance"), str):
            raise InputError(f"{where}: expected {expected}")
        if not t["utterance"].strip():
            raise InputError(f"{where}: an empty {speaker.upper()} turn")
        turns.append((speaker.upper(), t["utterance"]))
    if not turns:
        raise InputError(f"{path}: no turns (expected one {{\"speaker\", \"utterance\"}} object a line)")
    return Dialogue(Path(path).stem, tuple(turns), str(path))


def response_examples(dialogues, context_turns: int = 3) -> list[ResponseExample]:
    """One example per SYSTEM turn that has a turn before it: its ``context_turns`` previous
    turns (fewer at the start of a dialogue) and its utterance."""
    if context_turns < 1:
        raise InputError(f"context_turns {context_turns}: must be >= 1")
    out = []
    for d in dialogues:
        for j, (speaker, utterance) in enumerate(d.turns):
            if speaker == "SYSTEM" and j > 0:
                out.append(ResponseExample(d.dialogue_id, j, tuple(d.turns[max(0, j - context_turns):j]), utterance))
    return out
