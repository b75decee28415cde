"""`captioner translate --model M [--input FILE] [--output FILE] [--attention-dir DIR]`

Reads one source sentence per line (stdin by default) and writes exactly one translation per
line, in the same order. A line that is empty, is not UTF-8, or cannot be translated gives an
empty output line and a warning on stderr naming its line number, never a shifted file.
Sentences are translated in batches; `--attention-dir` writes one alignment heat map PNG per
translated line (lineNNNNN.png: source words across, generated words down).
"""

import argparse
import os
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser(
        "translate", help="translate sentences (one per line) with a trained translation model",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=default_path("translate"),
                   help="a .keras translation model (default: the bundled multi30k_en_de.keras; "
                   "assets/models/anki_fr_en.keras: French -> English)")
    p.add_argument("--input", "-i", help="text file, one sentence per line (default: stdin)")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--beam-size", type=int, default=None, help="beam width (default: the model's)")
    p.add_argument("--alpha", type=float, default=None,
                   help="length normalization exponent: 0 none, 1 average log-prob (default: the model's)")
    p.add_argument("--max-length", type=int, default=None, help="most generated tokens (default: the model's)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--attention-dir", help="write alignment heat maps (PNG) of each translation here")
    p.add_argument("--coverage-penalty", type=float, default=None, metavar="BETA",
                   help="re-rank the beam by GNMT's coverage penalty of this weight, so a hypothesis that "
                        "leaves source words unattended loses (0 off; default: the model's)")
    p.add_argument("--no-unk-replace", action="store_true",
                   help="keep <unk> in the output instead of copying the most-attended source word")
    p.set_defaults(func=run)


def warn(message):
    print(f"captioner translate: warning: {message}", file=sys.stderr, flush=True)


def read_lines(args):
    """[(line number, text or None)] of the input (--input, else standard input); None for a line
    that is not UTF-8 (`captioner.io.numbered_lines`)."""
    from captioner.io import numbered_lines

    return numbered_lines(args.input)


def translate_lines(model, lines, args, write, flush=lambda: None):
    """Translate [(line number, text or None)], calling write(text) once per line, in order, and flush()
    after each batch."""
    from tqdm import tqdm

    from captioner.errors import InputError
    from captioner.visualize import save_alignment_heatmap

    options = dict(beam_size=args.beam_size, alpha=args.alpha, max_length=args.max_length,
                   replace_unk=False if args.no_unk_replace else None, coverage_penalty=args.coverage_penalty)
    heatmaps = bool(args.attention_dir)
    if heatmaps and model.kind != "attention":
        warn(f"{args.model} is a fixed-context ({model.kind}) model: it has no alignment, no heat maps written")
        heatmaps = False
    if heatmaps:
        os.makedirs(args.attention_dir, exist_ok=True)
    bar = tqdm(total=len(lines), unit="line", desc="translate", file=sys.stderr, disable=None)
    for start in range(0, len(lines), args.batch_size):
        chunk = lines[start:start + args.batch_size]
        texts = []
        for n, text in chunk:
            if text is None:
                warn(f"line {n}: not UTF-8 text; wrote an empty line")
            elif not text.strip():
                warn(f"line {n}: empty; wrote an empty line")
            texts.append(text if text and text.strip() else "")
        try:
            results = model.translate(texts, batch_size=args.batch_size, **options)
        except Exception:  # noqa: BLE001 - one bad line must not take its batch down: retry one by one
            results = []
            for (n, _), text in zip(chunk, texts):
                try:
                    results.append(model.translate([text], **options)[0])
                except Exception as e1:  # noqa: BLE001 - reported, the line stays empty
                    warn(f"line {n}: cannot be translated ({type(e1).__name__}: {e1}); wrote an empty line")
                    results.append(None)
        for (n, _original), text, result in zip(chunk, texts, results):
            if result is None:
                write("")
                continue
            if text and not result.source_tokens:
                warn(f"line {n}: no words to translate; wrote an empty line")
            if result.truncated:
                warn(f"line {n}: longer than the model's {model.max_source_length} source words; "
                     "translated the first ones only")
            if text and result.source_tokens and not result.tokens:
                warn(f"line {n}: the model produced no words; wrote an empty line")
            write(result.text)
            if heatmaps and result.attention is not None and result.source_tokens and result.attention.size:
                try:
                    save_alignment_heatmap(os.path.join(args.attention_dir, f"line{n:05d}.png"),
                                           result.source_tokens, result.attention_labels, result.attention,
                                           title=result.text)
                except (InputError, OSError) as e:  # the translation is written all the same
                    warn(f"line {n}: no heat map ({e})")
        flush()
        bar.update(len(chunk))
    bar.close()


def run(args):
    from captioner.models.seq2seq import load_translator

    from captioner.errors import InputError, check_non_negative, check_search_options
    from captioner.io import check_output_not_input
    from captioner.resumable import batch_output

    if args.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {args.batch_size}")

    check_non_negative("--coverage-penalty", args.coverage_penalty)  # before anything is read or written
    check_search_options(args)
    check_output_not_input(args.output, [args.input])
    model = load_translator(args.model)
    lines = read_lines(args)
    with batch_output(args.output, lines, text=True, what=args.input or "<stdin>") as out:
        translate_lines(model, out.todo, args, out.write, out.flush)
    return 0
