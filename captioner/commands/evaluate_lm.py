"""`captioner evaluate-lm --model M --input text.txt`: the perplexity of a language model on a text.

A character model reads the file as one stream of characters (newlines included): every
character after the first is predicted from all before it, in windows of --window characters
with the state carried from one window to the next (exact, not an approximation); a Transformer
model reads windows of its context sliding by --stride characters (default half the context: each
character is predicted from at least that many before it; --stride equal to the context gives
non-overlapping blocks, nanoGPT's validation protocol). A word model
reads one sentence per non-empty line, <start> w1 ... wn <end>, and predicts every word and the
sentence end; words it does not know are <unk> (their share is reported as oov_rate).

Lines that are not UTF-8, and (character model) lines holding a character the model does not
know, are skipped with a warning naming the line; the rest is evaluated. A progress bar runs on
stderr; the last line of stdout is JSON: perplexity (per character for a character model, per
word for a word model), bits_per_char (character model), tokens, skipped_lines.
"""

import argparse
import json
import sys

from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser("evaluate-lm", help="perplexity of a language model on a text file",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=default_path("generate"), help="a .keras language model")
    p.add_argument("--input", "-i", required=True, help="a UTF-8 text file")
    p.add_argument("--window", type=int, default=None, help="recurrent model: tokens per window (default: the model's)")
    p.add_argument("--stride", type=int, default=None, help="Transformer model: tokens its context window slides by "
                   "(1 .. its context; default: half the context)")
    p.add_argument("--batch-size", type=int, default=64, help="word model: sentences per batch")
    p.set_defaults(func=run)


def warn(message):
    print(f"captioner evaluate-lm: warning: {message}", file=sys.stderr, flush=True)


def read_lines(path):
    """[(line number, text or None if not UTF-8, with its newline)] of the file."""
    from captioner.errors import InputError

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    from captioner.io import user_text_bytes

    raw = user_text_bytes(raw, path)  # the one reading of a user's text: UTF-16 with a BOM, CRLF, NUL bytes
    if not raw.strip():
        raise InputError(f"{path}: empty, nothing to evaluate")
    out = []
    for i, line in enumerate(raw.splitlines(keepends=True), start=1):
        try:
            out.append((i, line.decode("utf-8")))
        except UnicodeDecodeError as e:
            out.append((i, None))
            warn(f"{path}: line {i}: not UTF-8 (byte {line[e.start]:#04x} at column {e.start + 1}); skipped")
    return out


def run(args):
    from tqdm import tqdm

    from captioner.errors import InputError
    from captioner.models.language_model import load_language_model

    if args.window is not None and args.window < 1:
        raise InputError(f"--window {args.window}: must be >= 1")
    lines = read_lines(args.input)
    model = load_language_model(args.model)
    if args.stride is not None and (model.arch != "transformer" or not 1 <= args.stride <= model.context):
        raise InputError(f"--stride {args.stride}: " + (f"must be in 1 .. {model.context} (the model's context)"
                                                          if model.arch == "transformer" else
                                                          "a Transformer model's option (this one is recurrent: "
                                                          "--window)"))
    kept, skipped = [], sum(text is None for _, text in lines)
    for n, text in lines:
        if text is None:
            continue
        if model.level == "char":
            bad = [(col, ch) for col, ch in enumerate(text, start=1) if ch not in model.vocabulary]
            if bad:
                col, ch = bad[0]
                warn(f"{args.input}: line {n}, column {col}: character {ch!r} is not in the model's vocabulary; "
                     "line skipped")
                skipped += 1
                continue
        kept.append(text)
    text = "".join(kept)
    streams = model.streams_of(text, args.input)
    bar = tqdm(total=model.windows_needed(streams, args.batch_size, args.window, args.stride), unit="window",
               desc="evaluate-lm", file=sys.stderr, disable=None)
    try:
        result = model.evaluate_text(text, args.input, batch_size=args.batch_size, window=args.window,
                                     progress=bar.update, stride=args.stride)
    finally:
        bar.close()
    result = {"model": args.model, "input": args.input, **result, "skipped_lines": skipped,
              **({"stride": model.window_stride(args.stride)} if model.arch == "transformer" else {})}
    unit = "character" if model.level == "char" else "word"
    extra = f", {result['bits_per_char']:.4f} bits per character" if "bits_per_char" in result else ""
    print(f"perplexity {result['perplexity']:.4f} per {unit}{extra}, over {result['tokens']:,} predicted tokens")
    print(json.dumps(result, ensure_ascii=False))
    return 0
