#!/usr/bin/env python
"""BLEU by source-sentence length for several translators on the same held-out set (the figure of
Bahdanau et al. 2015: RNNsearch against the fixed-length-context RNNencdec).

    python scripts/plot_bleu_by_length.py --format multi30k \
        --data ../shared/datasets/multi30k --source en --target de \
        --model assets/models/multi30k_en_de.keras --label "attention (RNNsearch)" \
        --model runs/multi30k_en_de_sutskever/model.keras --label "fixed context (Sutskever)" \
        --bins 6,8,10,12,14,16,18,20,25,50 --output assets/models/multi30k_en_de_bleu_by_length.png

The held-out set is rebuilt with the training recipe's own split (same arguments as
`captioner train translate`, so the same sentences), decoded with each model's beam search
(or read from --hypotheses files, one line per held-out source in the recipe's order), and
scored per length bin with sacrebleu (lower-cased, detokenized). Writes the PNG and a JSON of
the numbers beside it.
"""

import argparse
import os
import sys


def parse_args(argv=None):
    from captioner.commands.train import add_recipe_parser
    from captioner.training.recipes import translate

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", required=True, help=".keras translator (repeat)")
    p.add_argument("--label", action="append", help="legend label of each --model (repeat, same order)")
    p.add_argument("--hypotheses", action="append",
                   help="file of translations of the held-out sources per --model ('-' to decode)")
    p.add_argument("--output", required=True, help="PNG path; the numbers go to the same name .json")
    p.add_argument("--split", default=None, help="which held-out split: dev or the reported one (default)")
    p.add_argument("--bins", default="1,2,3,4,5,6,7,8,9,10,12,15,20,30,50",
                   help="upper edges (inclusive) of the source-length bins, in words")
    p.add_argument("--min-bin", type=int, default=20, help="merge bins with fewer sentences into the next")
    # the data arguments of `captioner train translate`
    sub = argparse.ArgumentParser().add_subparsers()
    add_recipe_parser(sub, translate)
    recipe = sub.choices["translate"]
    for action in recipe._actions:
        if action.dest in ("format", "data", "reverse", "source", "target", "eval", "dev", "dev_size",
                           "dev_fraction", "test_fraction", "beam_size", "alpha"):
            kwargs = {"default": action.default, "help": action.help}
            if action.choices:
                kwargs["choices"] = action.choices
            if isinstance(action, argparse._StoreTrueAction):
                kwargs = {"action": "store_true", "help": action.help}
            elif action.type:
                kwargs["type"] = action.type
            p.add_argument(*action.option_strings, required=action.dest in ("format", "data"), **kwargs)
    args = p.parse_args(argv)
    labels = args.label or [os.path.basename(m) for m in args.model]
    if len(labels) != len(args.model):
        p.error("give one --label per --model")
    args.label = labels
    if args.hypotheses and len(args.hypotheses) != len(args.model):
        p.error("give one --hypotheses per --model ('-' to decode that one)")
    return args


def length_bins(lengths, edges, min_count):
    """Assign each length to a bin (lo, hi); bins with fewer than min_count items merge upward."""
    edges = sorted(set(edges))
    if max(lengths) > edges[-1]:
        edges.append(max(lengths))
    counts = [0] * len(edges)
    for n in lengths:
        counts[next(i for i, e in enumerate(edges) if n <= e)] += 1
    merged, acc, lo = [], 0, 1
    for i, e in enumerate(edges):
        acc += counts[i]
        if acc >= min_count or i == len(edges) - 1:
            if acc:
                merged.append((lo, e))
            elif merged:  # an empty tail joins the last bin
                merged[-1] = (merged[-1][0], e)
            lo, acc = e + 1, 0
    last_lo, last_hi = merged[-1]
    if len(merged) > 1 and sum(last_lo <= n <= last_hi for n in lengths) < min_count:
        merged[-2:] = [(merged[-2][0], last_hi)]  # a small last bin joins the one before
    return merged


def main(argv=None):
    args = parse_args(argv)
    import keras  # noqa: F401  (registers nothing itself; captioner's classes register on import)

    import captioner.models.seq2seq  # noqa: F401
    from captioner.models.seq2seq import load_translator
    from captioner.text import tokenize
    from captioner.io import atomic_path, write_json
    from captioner.training.translation_data import corpus_bleu, grouped_references, load_translation_data

    args.split_elisions = "auto"
    train, dev, evals, eval_name, desc, _ = load_translation_data(args)
    split_name = args.split or eval_name
    refs = grouped_references(dev if split_name == "dev" else evals)
    sources = [s for s, _ in refs]
    lengths = [max(len(tokenize(s)), 1) for s in sources]  # words, punctuation not counted
    bins = length_bins(lengths, [int(b) for b in args.bins.split(",")], args.min_bin)
    results = {"split": split_name, "sources": len(sources), "data": desc, "bins": [list(b) for b in bins],
               "bin_sizes": [sum(lo <= n <= hi for n in lengths) for lo, hi in bins], "models": []}
    for k, (path, label) in enumerate(zip(args.model, args.label)):
        hyp_file = args.hypotheses[k] if args.hypotheses else "-"
        if hyp_file != "-":
            with open(hyp_file, encoding="utf-8") as f:
                hyps = f.read().split("\n")[: len(sources)]
            if len(hyps) != len(sources):
                sys.exit(f"{hyp_file}: {len(hyps)} lines for {len(sources)} held-out sources")
            how = f"read from {hyp_file}"
        else:
            model = load_translator(path)
            hyps = [t.text for t in model.translate(sources, beam_size=args.beam_size, alpha=args.alpha)]
            how = f"decoded, beam {args.beam_size}, alpha {args.alpha}"
        overall, signature = corpus_bleu(hyps, [r for _, r in refs])
        per_bin = []
        for lo, hi in bins:
            idx = [i for i, n in enumerate(lengths) if lo <= n <= hi]
            per_bin.append(round(corpus_bleu([hyps[i] for i in idx], [refs[i][1] for i in idx])[0], 2))
        results["models"].append({"model": path, "label": label, "hypotheses": how, "BLEU": round(overall, 2),
                                  "BLEU_by_bin": per_bin})
        results["sacrebleu"] = signature
        print(f"{label}: BLEU {overall:.2f}; by length {dict(zip([f'{lo}-{hi}' for lo, hi in bins], per_bin))}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = list(range(len(bins)))
    for m, style in zip(results["models"], ("-o", "--s", ":^", "-.v")):
        ax.plot(xs, m["BLEU_by_bin"], style, label=f"{m['label']} (all: {m['BLEU']:.1f})")
    ax.set_xticks(xs, [f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in bins])
    ax2 = ax.twiny()
    ax2.set_xlim(ax.get_xlim())
    ax2.set_xticks(xs, [f"n={n}" for n in results["bin_sizes"]], fontsize=7)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU (sacrebleu, lower-cased)")
    ax.set_title(f"BLEU by source length, {split_name} split", pad=22)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(args.output, ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    write_json(os.path.splitext(args.output)[0] + ".json", results)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
