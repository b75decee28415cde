"""`captioner entail --model M --input PAIRS.tsv [--output OUT.jsonl] [--attention-dir DIR]`

Each input line is `premise<TAB>hypothesis` (further columns, such as a gold label, are
ignored). Each output line is one JSON object, in input order:

    {"line": 3, "label": "ENTAILMENT",
     "probabilities": {"NEUTRAL": 0.1, "ENTAILMENT": 0.85, "CONTRADICTION": 0.05},
     "premise": "...", "hypothesis": "..."}

A model trained with --word-relations adds "word_relations": the WordNet relations it was
given, [[premise word, hypothesis word, relation, strength], ...]. `--attention-dir` writes one
heat map per classified pair (lineNNNNN.png: premise words across, hypothesis words down).

A malformed line (no tab, an empty side, not UTF-8, no words) gives
`{"line": N, "error": "..."}` and the work goes on; the exit status is 1 if any line failed.
"""

import argparse
import os
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser(
        "entail", help="classify premise/hypothesis pairs as NEUTRAL, ENTAILMENT or CONTRADICTION",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=default_path("entail"),
                   help="a .keras entailment model (e.g. assets/models/sick_entailment.keras)")
    p.add_argument("--input", "-i", help="TSV file of premise<TAB>hypothesis lines (default: stdin)")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--attention-dir", help="write the hypothesis-over-premise attention of each pair here (PNG)")
    p.set_defaults(func=run)


def parse_pairs(lines):
    """[(line number, premise, hypothesis, error or None)] from [(line number, text or None)]."""
    from captioner.models.entailment import entail_tokens

    rows = []
    for n, text in lines:
        if text is None:
            rows.append((n, None, None, "not UTF-8 text"))
            continue
        cols = text.split("\t")
        if len(cols) < 2:
            rows.append((n, None, None, "expected premise<TAB>hypothesis, found no tab"))
            continue
        premise, hypothesis = cols[0].strip(), cols[1].strip()
        if not premise or not hypothesis:
            rows.append((n, None, None, f"empty {'premise' if not premise else 'hypothesis'}"))
        elif not entail_tokens(premise) or not entail_tokens(hypothesis):
            rows.append((n, None, None, f"the {'premise' if not entail_tokens(premise) else 'hypothesis'} has no words"))
        else:
            rows.append((n, premise, hypothesis, None))
    return rows


def run(args):
    from tqdm import tqdm

    from captioner.commands.translate import read_lines
    from captioner.errors import InputError
    from captioner.io import check_output_not_input
    from captioner.models.entailment import load_entailment
    from captioner.resumable import batch_output

    if args.batch_size < 1:  # before anything is read or written
        raise InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    check_output_not_input(args.output, [args.input])
    model = load_entailment(args.model)
    rows = parse_pairs(read_lines(args))
    if args.attention_dir:
        from captioner.visualize import save_alignment_heatmap

        os.makedirs(args.attention_dir, exist_ok=True)
    failed = 0
    with batch_output(args.output, rows, what=args.input or "<stdin>",
                      same=lambda row, item: row.get("line") == item[0]) as out:
        failed = sum("error" in row for row in out.done)
        todo = out.todo
        bar = tqdm(total=len(todo), unit="pair", desc="entail", file=sys.stderr, disable=None)
        for start in range(0, len(todo), args.batch_size):
            chunk = todo[start:start + args.batch_size]
            good = [r for r in chunk if r[3] is None]
            results = {}
            if good:
                for r, res in zip(good, model.entail([r[1] for r in good], [r[2] for r in good])):
                    results[r[0]] = res
            for n, premise, hypothesis, error in chunk:
                if error:
                    failed += 1
                    print(f"captioner entail: warning: line {n}: {error}", file=sys.stderr)
                    obj = {"line": n, "error": error}
                else:
                    res = results[n]
                    obj = {"line": n, "label": res.label,
                           "probabilities": {k: round(v, 6) for k, v in res.probabilities.items()},
                           "premise": premise, "hypothesis": hypothesis}
                    if model.word_relations is not None:
                        obj["word_relations"] = [[p, h, r, round(s, 3)] for p, h, r, s in model.word_relations
                                                 .named_pairs(res.premise_tokens, res.hypothesis_tokens)]
                    if args.attention_dir and res.attention is not None and res.attention.size:
                        save_alignment_heatmap(os.path.join(args.attention_dir, f"line{n:05d}.png"),
                                               res.premise_tokens, res.hypothesis_tokens, res.attention,
                                               title=f"{res.label} ({res.probabilities[res.label]:.0%})",
                                               xlabel="premise", ylabel="hypothesis")
                out.write(obj)
            out.flush()
            bar.update(len(chunk))
        bar.close()
    return 1 if failed else 0
