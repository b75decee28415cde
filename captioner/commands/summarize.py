"""`captioner summarize --model M --input docs.jsonl --output out.jsonl` (or text files as arguments)

Writes a headline (a one-line summary) for each document. Input: JSON lines, one object per
line with a ``text`` field (stdin by default); output: JSON lines, exactly one per input row,
in order: ``{"summary": ...}`` plus the row's ``id`` when it has one, and ``"truncated": true``
when the model read only the first words of the text (its source length, e.g. 100 words: a
headline model reads the lead of an article). Text files given as arguments are one document
each; their rows carry ``"file"``.

A bad row (not valid JSON, not an object, no ``text``, a ``text`` that is not a string or is
empty, bytes that are not UTF-8) is reported on stderr with its line number and gets the row
``{"summary": null, "error": "..."}``; the others go on. A very long text (100k characters)
is cut to the model's source length, and the warning says so.
"""

import argparse
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path

DEFAULT_MODEL = default_path("summarize")  # the one registry: captioner.bundled
LONG_TEXT = 100_000  # characters: such a row is cut (a warning names it)


def register(subparsers):
    p = subparsers.add_parser(
        "summarize", help="write a headline for each document (JSON lines with 'text', or text files)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="*", help="text files, one document each (instead of --input)")
    p.add_argument("--model", default=DEFAULT_MODEL, help=(
        "a .keras headline model (default: the bundled bbc_headlines.keras, for news articles; "
        "assets/models/news_headlines.keras: for a one- or two-sentence description)"))
    p.add_argument("--input", "-i", help="JSON lines with a 'text' field (default: stdin, unless files are given)")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--beam-size", type=int, default=None, help="beam width (default: the model's)")
    p.add_argument("--alpha", type=float, default=None, help="length penalty exponent (default: the model's)")
    p.add_argument("--no-repeat-ngram", type=int, default=None, metavar="N",
                   help="never repeat an N-gram in a headline (0 off; default: the model's)")
    p.add_argument("--max-length", type=int, default=None, help="most generated words (default: the model's)")
    p.add_argument("--batch-size", type=int, default=32)
    p.set_defaults(func=run)


def warn(message):
    print(f"captioner summarize: warning: {message}", file=sys.stderr, flush=True)


def read_rows(args):
    """[(where, row dict or None, error or None)]: one entry per input row / file."""
    from captioner.commands.translate import read_lines
    from captioner.data.json_file import json_rows
    from captioner.errors import InputError
    from captioner.io import user_text_bytes

    if args.files and args.input:
        raise InputError("give text files or --input, not both")
    rows = []
    if args.files:
        for path in args.files:
            try:
                with open(path, "rb") as f:
                    raw = f.read()
            except OSError as e:
                rows.append((path, {"file": path}, f"cannot be read ({e.strerror})"))
                continue
            try:
                text = user_text_bytes(raw, path).decode("utf-8")
            except InputError as e:
                rows.append((path, {"file": path}, str(e).removeprefix(f"{path}: ")))
                continue
            except UnicodeDecodeError as e:
                line = raw[: e.start].count(b"\n") + 1
                rows.append((path, {"file": path}, f"line {line}: not UTF-8 text"))
                continue
            rows.append((path, {"file": path, "text": text}, None if text.strip() else "empty text"))
        return rows
    name = args.input or "<stdin>"
    for n, obj, error in json_rows(read_lines(args), blank_error="empty line (expected a JSON object with 'text')"):
        where = f"{name}:{n}"
        if error:
            rows.append((where, None, error))
        elif "text" not in obj:
            rows.append((where, obj, "no 'text' field"))
        elif not isinstance(obj["text"], str):
            rows.append((where, obj, f"'text' is {type(obj['text']).__name__}, expected a string"))
        elif not obj["text"].strip():
            rows.append((where, obj, "empty 'text'"))
        else:
            rows.append((where, obj, None))
    return rows


def out_row(row, **fields):
    """The output row: the input's id / file, then ``fields``."""
    keep = {k: row[k] for k in ("id", "file") if isinstance(row, dict) and k in row}
    return {**keep, **fields}


def summarize_rows(model, rows, args, write, flush=lambda: None):
    """Summarize [(where, row, error)], calling write(dict) once per row, in order, and flush() after each
    batch. Returns how many rows could not be summarized (written with "summary": null and their error)."""
    from tqdm import tqdm

    options = dict(beam_size=args.beam_size, alpha=args.alpha, max_length=args.max_length,
                   no_repeat_ngram=args.no_repeat_ngram)
    cut = model.max_source_length * 50  # characters enough for the words the model reads
    bar = tqdm(total=len(rows), unit="doc", desc="summarize", file=sys.stderr, disable=None)
    failed = 0
    for start in range(0, len(rows), args.batch_size):
        chunk = rows[start:start + args.batch_size]
        texts = []
        for where, row, error in chunk:
            text = "" if error else row["text"]
            if len(text) >= LONG_TEXT:
                warn(f"{where}: {len(text):,} characters; summarized the first {model.max_source_length} words only")
            texts.append(text[:cut])
        todo = [i for i, (_, _, error) in enumerate(chunk) if not error]
        try:
            results = dict(zip(todo, model.translate([texts[i] for i in todo], batch_size=args.batch_size,
                                                     **options)))
        except Exception:  # noqa: BLE001 - one bad row must not take its batch down: retry one by one
            results = {}
            for i in todo:
                try:
                    results[i] = model.translate([texts[i]], **options)[0]
                except Exception as e:  # noqa: BLE001 - reported, the row says so
                    chunk[i] = (chunk[i][0], chunk[i][1], f"cannot be summarized ({type(e).__name__}: {e})")
        for i, (where, row, error) in enumerate(chunk):
            result = results.get(i)
            if error is None and result is not None and not result.source_tokens:
                error = "no words to summarize"
            if error is not None or result is None:
                warn(f"{where}: {error}; wrote a row with \"summary\": null")
                write(out_row(row, summary=None, error=f"{where}: {error}"))
                failed += 1
                continue
            truncated = result.truncated or len(row["text"]) > cut
            fields = {"summary": result.text}
            if truncated:
                fields["truncated"] = True
            write(out_row(row, **fields))
        flush()
        bar.update(len(chunk))
    bar.close()
    return failed


def run(args):
    from captioner.errors import InputError, check_search_options
    from captioner.io import check_output_not_input
    from captioner.models.seq2seq import load_translator
    from captioner.resumable import batch_output

    if args.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    if args.no_repeat_ngram is not None and args.no_repeat_ngram < 0:
        raise InputError(f"--no-repeat-ngram must be >= 0, got {args.no_repeat_ngram}")
    check_search_options(args)
    check_output_not_input(args.output, [args.input, *args.files])
    rows = read_rows(args)  # before the model: a missing input fails fast
    model = load_translator(args.model)
    if model.kind != "attention":
        raise InputError(f"{args.model}: a {model.kind} model; headlines need an attention model (the copy)")
    with batch_output(args.output, rows, what=args.input or " ".join(args.files) or "<stdin>",
                      same=lambda done, item: all(done.get(k) == v for k, v in out_row(item[1]).items())) as out:
        failed = sum(row.get("summary") is None for row in out.done)
        failed += summarize_rows(model, out.todo, args, out.write, out.flush)
    # like caption, classify, video and pipeline: every row written, exit status 1 when any failed
    return 1 if failed else 0
