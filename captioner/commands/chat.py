"""`captioner chat --model M`: talk to a dialogue model (`captioner train respond`).

Type a USER turn and press Enter; the model answers as SYSTEM from the last turns (as many as
it was trained to read), and shows which of them it attended to most. An empty line or
end of input (Ctrl-D) ends the chat; `/reset` starts a new dialogue.
"""

import argparse
import sys

from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser("chat", help="talk to a dialogue model in the terminal",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=default_path("respond"),
                   help="a .keras dialogue model (e.g. assets/models/sgd_dialogue.keras)")
    p.add_argument("--beam-size", type=int, default=None, help="beam width (default: the model's)")
    p.set_defaults(func=run)


def chat(model, lines, write, beam_size=None):
    """The loop, on an iterable of input lines and a write(text) function (tests drive it)."""
    turns = []
    write("USER> ")
    for line in lines:
        text = line.strip()
        if not text:
            break
        if text == "/reset":
            turns = []
            write("(new dialogue)\nUSER> ")
            continue
        turns.append(("USER", text))
        r = model.respond([turns], beam_size=beam_size)[0]
        turns.append(("SYSTEM", r.text))
        weights = r.turn_attention.mean(0)
        focus = r.turns[int(weights.argmax())][1] if len(weights) else ""
        write(f"SYSTEM> {r.text}\n        (attended most to: \"{focus[:60]}\", {weights.max():.0%})\nUSER> ")
    write("\n")
    return turns


def run(args):
    from captioner.errors import check_search_options
    from captioner.models.dialogue_responder import load_dialogue_responder

    check_search_options(args)  # --beam-size -1 was a traceback

    model = load_dialogue_responder(args.model)

    def write(text):
        sys.stdout.write(text)
        sys.stdout.flush()

    chat(model, sys.stdin, write, args.beam_size)
    return 0
