"""Dev ROUGE-1/2/L F1 (rouge-score) of a headline model on BBC News and News Category dev under
several decoding settings (decoding only: the baselines are in scripts/experiments/summarize_baselines.py).

    PYTHONPATH=. python scripts/headline_decoding_sweep.py --model assets/models/bbc_headlines.keras \\
        --settings '[{}, {"beam_size": 1}, {"no_repeat_ngram": 0}, {"copy_distinct": false}]'

Each setting is a dict of `Seq2Seq.translate` keyword arguments ({} = the model's defaults).
``--dev-limit K``: the first K dev pairs of each dataset only (the part a model trained with
``--dev-limit K`` was selected on, so that a setting chosen here leaves the rest unseen);
``--bbc ''`` or ``--news-category ''`` skips that dataset.
"""

from __future__ import annotations

import argparse
import json
import time

DATASETS = "../shared/datasets"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--settings", default="[{}]", help="JSON list of translate() keyword dicts")
    parser.add_argument("--bbc", default=f"{DATASETS}/bbc-news/bbc")
    parser.add_argument("--news-category", default=f"{DATASETS}/news-category/News_Category_Dataset_v3.json")
    parser.add_argument("--dev-limit", type=int, default=None, metavar="K", help="the first K dev pairs of each")
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.dev_limit is not None and args.dev_limit < 1:
        parser.error("--dev-limit must be >= 1")

    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.data.news_category import load_news_category, split_news_category
    from captioner.io import write_json
    from captioner.metrics.rouge_f1 import corpus_rouge_f1
    from captioner.models.seq2seq import load_translator

    model = load_translator(args.model)
    sets = {}
    if args.bbc:
        sets["bbc"] = split_bbc_headlines(load_bbc_headlines(args.bbc).pairs)[1][: args.dev_limit]
    if args.news_category:
        sets["news-category"] = split_news_category(load_news_category(args.news_category).pairs)[1][: args.dev_limit]
    rows = []
    for name, dev in sets.items():
        for setting in json.loads(args.settings):
            started = time.perf_counter()
            headlines = [o.text for o in model.translate([p.source for p in dev], **setting)]
            scores = {k: round(v, 2) for k, v in corpus_rouge_f1([p.target for p in dev], headlines).scores.items()}
            rows.append({"dataset": name, "dev_pairs": len(dev), "setting": setting or "model defaults", **scores})
            print(f"{name:<14} {json.dumps(setting):<40} R-1 {scores['rouge1']:6.2f}  R-2 {scores['rouge2']:6.2f}  "
                  f"R-L {scores['rougeL']:6.2f}  ({time.perf_counter() - started:.0f} s)", flush=True)
    if args.output:
        write_json(args.output, {"model": args.model, "split": "dev" if args.dev_limit is None else
                                 f"the first {args.dev_limit} dev pairs", "rows": rows})
    return rows


if __name__ == "__main__":
    main()
