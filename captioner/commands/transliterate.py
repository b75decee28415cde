"""`captioner transliterate --model M [--input FILE] [--output FILE] [--n-best K]`

Romanized text -> native script with a character-level transliteration model (e.g.
assets/models/dakshina_hi_translit.keras: Hindi, Latin -> Devanagari). Each input line is one
word or running text: every run of Latin letters is transliterated, everything else (spaces,
punctuation, digits, words already in the native script) is copied as it is.

Exactly one output line per input line, in order. A line that is empty, not UTF-8, longer than
5,000 characters, or has no Latin word, and a word in another script (Cyrillic, Greek, ...),
is reported on stderr with its line number; the line is written as it is (empty for the
first three), and the rest goes on.

`--n-best K` writes JSON lines instead: {"line", "input", "output", "candidates": [{"text",
"score"}] (K best, score = log-probability / length ** alpha), "words": [{"source",
"candidates"}], "warnings"}. For a one-word line the candidates are that word's K best; for
running text candidate k puts each word's k-th best in place. A model with an n-best rescorer
(e.g. the bundled Hindi model: a training word list and a character LM) ranks by the rescorer's
combined score: "score" is that, and each candidate also has "model_score", the model's own.
"""

import argparse
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser(
        "transliterate", help="romanized words or text -> native script (e.g. Hindi in Devanagari)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=default_path("transliterate"), help="a .keras transliteration model "
                   "(e.g. assets/models/dakshina_hi_translit.keras)")
    p.add_argument("--input", "-i", help="text file, one word or line of text per line (default: stdin)")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--n-best", type=int, default=None, metavar="K",
                   help="write JSON lines with the K best candidates and their scores")
    p.add_argument("--beam-size", type=int, default=None, help="beam width (default: the model's, at least K)")
    p.add_argument("--alpha", type=float, default=None, help="length normalization exponent (default: the model's)")
    p.add_argument("--batch-size", type=int, default=200, help="lines read per batch")
    p.set_defaults(func=run)


def warn(message):
    print(f"captioner transliterate: warning: {message}", file=sys.stderr, flush=True)


def _candidates(scored, model_scores=None):
    """[{"text", "score"}] (+ "model_score" of a re-ranking model) of [(text, score)]."""
    rows = [{"text": t, "score": round(s, 4)} for t, s in scored]
    if model_scores is not None:
        for row, m in zip(rows, model_scores):
            row["model_score"] = round(m, 4)
    return rows


def run(args):
    from tqdm import tqdm

    from captioner.commands.translate import read_lines
    from captioner.errors import InputError, check_search_options
    from captioner.inference.transliteration import transliterate_text
    from captioner.io import check_output_not_input
    from captioner.models.seq2seq import check_transliterator, load_translator
    from captioner.resumable import batch_output

    for name in ("n_best", "beam_size", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    check_search_options(args)
    check_output_not_input(args.output, [args.input])
    model = load_translator(args.model)
    check_transliterator(model, args.model)
    lines = read_lines(args)
    where = args.input or "<stdin>"
    cache = {}
    json_rows = bool(args.n_best)
    with batch_output(args.output, lines, text=not json_rows, what=where,
                      same=(lambda row, item: row.get("line") == item[0]) if json_rows else None) as out:
        todo = out.todo
        bar = tqdm(total=len(todo), unit="line", desc="transliterate", file=sys.stderr, disable=None)
        for start in range(0, len(todo), args.batch_size):
            chunk = todo[start:start + args.batch_size]
            results = transliterate_text(model, [text for _, text in chunk], n_best=args.n_best or 1,
                                         beam_size=args.beam_size, alpha=args.alpha, cache=cache)
            for (n, text), result in zip(chunk, results):
                for w in result.warnings:
                    warn(f"{where}:{n}: {w}")
                if args.n_best:
                    row = {"line": n, "input": text, "output": result.text,
                           "candidates": _candidates(result.candidates, result.candidate_model_scores),
                           "words": [{"source": w, "candidates": _candidates(
                               hyps[:args.n_best], result.word_model_scores[i] if result.word_model_scores else None)}
                                     for i, (w, hyps) in enumerate(result.words)],
                           "warnings": result.warnings}
                    out.write(row)
                else:
                    out.write(result.text)
            out.flush()
            bar.update(len(chunk))
        bar.close()
    return 0
