"""`captioner respond --model M --input DIALOGUES [--output OUT.jsonl] [--nbest K]`

The next SYSTEM turn of dialogues, by a hierarchical dialogue model (`captioner train respond`).

* An SGD file (`dialogues_NNN.json`, the published format: a JSON list of dialogues with
  `turns`): for every SYSTEM turn of every dialogue (one that has a turn before it), the
  model's response from the turns before it. One row each, in file order::

      {"dialogue_id": "1_00000", "turn": 1, "response": "what time would you like?",
       "nbest": [["what time would you like?", -0.21], ...], "reference": "...",
       "turn_attention": [0.12, 0.88]}     # mean attention over the turns read, oldest first

* A text file (anything that is not a JSON list), one dialogue of alternating USER / SYSTEM
  lines (see `captioner.data.sgd.read_plain_dialogue`): one row, the SYSTEM turn that follows
  its last line (`turn` = the number of lines read).

* A JSON-lines file (its first character `{`): one dialogue, one
  `{"speaker": "USER"|"SYSTEM", "utterance": "..."}` object a line, oldest first
  (`captioner.data.sgd.read_jsonl_dialogue`): one row, as for text.

The output file is written atomically: a run that fails part-way leaves an earlier output
whole.

A malformed file is an error naming the file (and the dialogue or line).
"""

import argparse
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser("respond", help="write the next SYSTEM turn of dialogues (SGD JSON, JSON lines or text)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=default_path("respond"),
                   help="a .keras dialogue model (e.g. assets/models/sgd_dialogue.keras)")
    p.add_argument("--input", "-i", required=True,
                   help="an SGD dialogues_NNN.json, a JSON-lines dialogue ({speaker, utterance} a line), or a "
                        "text file of alternating turns")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--nbest", type=int, default=None, help="hypotheses kept per response (default: the beam size)")
    p.add_argument("--beam-size", type=int, default=None, help="beam width (default: the model's)")
    p.add_argument("--batch-size", type=int, default=64)
    p.set_defaults(func=run)


def read_dialogues(path):
    """(dialogues, is_sgd): an SGD JSON file's dialogues, or the one JSON-lines or plain-text dialogue."""
    from captioner.data.sgd import read_jsonl_dialogue, read_plain_dialogue, read_sgd_file

    with open(path, "rb") as f:
        head = f.read(64).lstrip()
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()  # a UTF-8 byte-order mark
    if head.startswith(b"["):
        return read_sgd_file(path), True
    if head.startswith(b"{"):
        return [read_jsonl_dialogue(path)], False
    return [read_plain_dialogue(path)], False


def run(args):
    import os

    from tqdm import tqdm

    from captioner.data.sgd import ResponseExample, response_examples
    from captioner.errors import InputError, check_search_options
    from captioner.io import check_output_not_input
    from captioner.models.dialogue_responder import load_dialogue_responder
    from captioner.resumable import batch_output

    for flag, value in (("--batch-size", args.batch_size), ("--nbest", args.nbest), ("--beam-size", args.beam_size)):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be >= 1, got {value}")
    check_search_options(args)
    if not os.path.isfile(args.input):
        raise InputError(f"{args.input}: file not found")
    check_output_not_input(args.output, [args.input])
    dialogues, is_sgd = read_dialogues(args.input)
    model = load_dialogue_responder(args.model)
    if is_sgd:
        examples = response_examples(dialogues, model.context_turns)
    else:
        d = dialogues[0]
        examples = [ResponseExample(d.dialogue_id, len(d.turns), d.turns, "")]
    with batch_output(args.output, examples, what=args.input,
                      same=lambda row, e: (row.get("dialogue_id"), row.get("turn")) == (e.dialogue_id, e.turn)) as out:
        todo = out.todo
        bar = tqdm(total=len(todo), unit="turn", desc="respond", file=sys.stderr, disable=None)
        for start in range(0, len(todo), args.batch_size):
            chunk = todo[start:start + args.batch_size]
            for e, r in zip(chunk, model.respond([e.context for e in chunk], beam_size=args.beam_size)):
                row = {"dialogue_id": e.dialogue_id, "turn": e.turn, "response": r.text,
                       "nbest": [[t, round(s, 4)] for t, s in r.hypotheses[: args.nbest]],
                       "turn_attention": [round(float(a), 4) for a in r.turn_attention.mean(0)]}
                if is_sgd:
                    row["reference"] = e.response
                out.write(row)
            out.flush()
            bar.update(len(chunk))
        bar.close()
    return 0
