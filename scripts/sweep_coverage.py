#!/usr/bin/env python
"""Choose a translator's coverage penalty (GNMT's beta, Wu et al. 2016), and with it the length
penalty alpha, on its dev split; report every (alpha, beta) on the held-out split, which plays
no part in the choice.

    python scripts/sweep_coverage.py --model assets/models/anki_fr_en.keras \
        --format anki --data ../shared/datasets/anki-fra-eng/fra.txt --reverse --output sweep.json
    python scripts/sweep_coverage.py --model assets/models/multi30k_en_de.keras \
        --format multi30k --data ../shared/datasets/multi30k --source en --target de

The splits are rebuilt exactly as `captioner train translate` made them (same options, same
defaults). The beam width is the model's unless given; --alphas defaults to the model's alpha.
Beta 0 is the plain beam search; the choice is the pair with the highest dev BLEU (on a tie, the
smaller beta, then the alpha listed first).
"""

import argparse
import sys



def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a translation .keras file (attention kind)")
    p.add_argument("--format", choices=("anki", "multi30k"), required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--reverse", action="store_true", help="anki: translate the second column into the first")
    p.add_argument("--source", default="en")
    p.add_argument("--target", default="de")
    p.add_argument("--dev-fraction", type=float, default=0.03)
    p.add_argument("--test-fraction", type=float, default=0.05)
    p.add_argument("--dev-size", type=int, default=1000, help="multi30k: the last N train lines are dev")
    p.add_argument("--betas", default="0,0.1,0.2,0.3,0.5")
    p.add_argument("--beam-size", type=int)
    p.add_argument("--alphas", help="comma-separated length-penalty exponents (default: the model's alpha)")
    p.add_argument("--output", help="JSON with every beta's dev and held-out BLEU")
    args = p.parse_args(argv)

    from tqdm import tqdm

    from captioner.models.seq2seq import load_translator
    from captioner.io import write_json
    from captioner.training.translation_data import evaluate_bleu, grouped_references, load_translation_data

    betas = [float(b) for b in args.betas.split(",")]
    model = load_translator(args.model)
    if model.kind != "attention":
        raise SystemExit(f"{args.model}: a {model.kind} model has no attention to cover")
    beam = args.beam_size or model.beam_size
    alphas = [float(a) for a in args.alphas.split(",")] if args.alphas else [model.alpha]
    _, dev, evals, eval_name, desc, _ = load_translation_data(args)
    dev_refs, eval_refs = grouped_references(dev), grouped_references(evals)
    rows = []
    grid = [(a, b) for a in alphas for b in betas]
    for order, (alpha, beta) in enumerate(tqdm(grid, desc="alpha, beta", unit="setting")):
        d, _ = evaluate_bleu(model, dev_refs, beam, alpha, coverage_penalty=beta)
        e, _ = evaluate_bleu(model, eval_refs, beam, alpha, coverage_penalty=beta)
        rows.append({"alpha": alpha, "beta": beta, "dev_BLEU": d["BLEU"], f"{eval_name}_BLEU": e["BLEU"],
                     "_order": order})
        tqdm.write(f"alpha {alpha:g} beta {beta:g}: dev BLEU {d['BLEU']:.2f}  {eval_name} BLEU {e['BLEU']:.2f}")
    best = max(rows, key=lambda r: (r["dev_BLEU"], -r["beta"], -r["_order"]))
    for r in rows:
        del r["_order"]
    print(f"chosen on dev: alpha {best['alpha']:g} beta {best['beta']:g}: {eval_name} BLEU "
          f"{best[f'{eval_name}_BLEU']:.2f}")
    if args.output:
        write_json(args.output, {"model": args.model, "beam_size": beam, "data": desc,
                                 "dev_sentences": len(dev_refs), f"{eval_name}_sentences": len(eval_refs),
                                 "rows": rows, "chosen": {"alpha": best["alpha"], "beta": best["beta"]},
                                 "rule": "highest dev BLEU; on a tie the smaller beta, then the alpha listed first"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
