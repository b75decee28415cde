#!/usr/bin/env python
"""Decode a transliteration model's dev lexicon at several beam widths and length penalties
and print top-1 / top-5 / CER of each (the figures the model card reports, and what the beam
and alpha are worth).

    python scripts/sweep_transliteration.py --model assets/models/dakshina_hi_translit.keras \
        --dev ../shared/datasets/dakshina-hi/hi.translit.sampled.dev.tsv --beams 1,5,10 --alphas 0,0.5,1

Dev only: the test split is held back. --limit N scores the first N romanizations (quick looks).
"""

import argparse
import json
import sys



def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--dev", default="../shared/datasets/dakshina-hi/hi.translit.sampled.dev.tsv")
    p.add_argument("--beams", default="1,5,10")
    p.add_argument("--alphas", default=None, help="comma-separated (default: the model's alpha)")
    p.add_argument("--limit", type=int)
    p.add_argument("--output", help="JSON with every row")
    args = p.parse_args(argv)

    from tqdm import tqdm

    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration
    from captioner.io import write_json
    from captioner.models.seq2seq import load_translator

    model = load_translator(args.model)
    lexicon = romanized_lexicon(load_dakshina(args.dev))
    alphas = [float(a) for a in args.alphas.split(",")] if args.alphas else [model.alpha]
    settings = [(int(b), a) for b in args.beams.split(",") for a in (alphas if int(b) > 1 else alphas[:1])]
    rows = []
    for beam, alpha in tqdm(settings, desc="settings", file=sys.stderr):
        scores, _ = evaluate_transliteration(model, lexicon, beam, alpha, limit=args.limit)
        rows.append({"beam_size": beam, "alpha": alpha, **scores})
        print(json.dumps(rows[-1]), flush=True)
    if args.output:
        write_json(args.output, {"model": args.model, "dev": args.dev, "split": "dev", "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
