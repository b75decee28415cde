"""`captioner sweep TASK --model M --grid NAME=V1,V2 [NAME=...] [--select FIGURE] [--output sweep.json]`
`captioner sweep TASK --model M --settings '[{}, {"beam_size": 1}, {"alpha": 0.5}]' ...`

Decodes a model's dev data under every combination of decoding settings, scores each, chooses one
on the split meant for choosing, and reports every setting on the split that played no part in
the choice (the figures a card may quote). Dev only: the test splits are kept back.

Tasks (the model file must be of the kind named):

  caption        an image captioner on Flickr8k dev, from cached backbone features (--features, a
                 `captioner extract` store of the model's backbone). Dev is cut in two halves by a
                 seeded shuffle: the tune half chooses, the report half reports; coco-caption
                 BLEU-4 / METEOR / CIDEr, and what the captions look like over all of dev.
                 Settings: beam_size, alpha. Default figure: BLEU-4.
  translate      a translator on the dev and held-out splits `captioner train translate` made (the
                 same options rebuild them); sacreBLEU; dev chooses. Settings: beam_size, alpha,
                 coverage_penalty (GNMT's beta). Default figure: BLEU.
  transliterate  a transliteration model on a Dakshina dev lexicon: top-1, top-5, CER. Settings:
                 beam_size, alpha. Default figure: top-1.
  summarize      a headline model on BBC News and/or News Category dev (--dev-limit K: the first K
                 pairs of each, the part a model trained with --dev-limit K was selected on; an
                 empty path skips a corpus): ROUGE-1/2/L (rouge-score). Settings: beam_size, alpha,
                 no_repeat_ngram, copy_distinct. Default figure: rougeL of the first corpus.

The grid is the product of the values given, in the order given (--settings instead: a JSON list of
settings, each a change from the model's defaults, {} being the defaults themselves); a setting not in the grid is the
model's own default; for beam_size 1 only the first alpha is decoded (alpha only ranks finished
beams, and greedy search has one). The choice: the best --select figure on the choosing split (the
highest; the lowest for CER), a tie going to the setting listed first (list the plainer values first: beta 0, no blocking).
`captioner model set-defaults` saves the choice in the model.
"""

from __future__ import annotations

import itertools
import json
import os
import sys

NAME = "sweep"
SETTINGS = {
    "caption": {"beam_size": int, "alpha": float},
    "translate": {"beam_size": int, "alpha": float, "coverage_penalty": float},
    "transliterate": {"beam_size": int, "alpha": float},
    "summarize": {"beam_size": int, "alpha": float, "no_repeat_ngram": int,
                  "copy_distinct": lambda v: {"true": True, "false": False}[v.lower()]},
}
DEFAULT_FIGURE = {"caption": "BLEU-4", "translate": "BLEU", "transliterate": "top-1", "summarize": "rougeL"}
LOWER_IS_BETTER = ("CER",)
DATASETS = os.path.join("..", "shared", "datasets")


def register(subparsers):
    import argparse

    p = subparsers.add_parser(NAME, help="choose decoding settings on dev: every combination of a grid, scored",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tasks = p.add_subparsers(dest="task", metavar="TASK")
    for task, help_text in (("caption", "an image captioner on Flickr8k dev (cached features)"),
                            ("translate", "a translator on its dev and held-out splits"),
                            ("transliterate", "a transliteration model on a Dakshina dev lexicon"),
                            ("summarize", "a headline model on BBC News / News Category dev")):
        t = tasks.add_parser(task, help=help_text, description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        t.add_argument("--model", required=True, help="the .keras file")
        which = t.add_mutually_exclusive_group(required=True)
        which.add_argument("--grid", nargs="+", metavar="NAME=V1,V2",
                           help=f"settings and their values: {', '.join(SETTINGS[task])}")
        which.add_argument("--settings", metavar="JSON", help="a JSON list of settings (dicts) instead of a grid")
        t.add_argument("--select", default=DEFAULT_FIGURE[task],
                       help=f"the figure that chooses (default {DEFAULT_FIGURE[task]})")
        t.add_argument("--output", help="JSON with every setting's figures and the choice (written atomically)")
        t.set_defaults(func=run)
        if task == "caption":
            t.add_argument("--features", required=True, help="a `captioner extract` store holding the dev photos")
            t.add_argument("--data-dir", default=os.path.join(DATASETS, "flickr8k"), help="the Flickr8k folder")
            t.add_argument("--seed", type=int, default=0, help="the shuffle that cuts dev in two halves")
        elif task == "translate":
            from captioner.training.translation_data import add_split_arguments

            add_split_arguments(t)
        elif task == "transliterate":
            t.add_argument("--dev", default=os.path.join(DATASETS, "dakshina-hi", "hi.translit.sampled.dev.tsv"))
            t.add_argument("--limit", type=int, help="the first N romanizations only (a quick look)")
        else:
            t.add_argument("--bbc", default=os.path.join(DATASETS, "bbc-news", "bbc"), help="'' skips it")
            t.add_argument("--news-category", default=os.path.join(DATASETS, "news-category",
                                                                   "News_Category_Dataset_v3.json"),
                           help="'' skips it")
            t.add_argument("--dev-limit", type=int, metavar="K", help="the first K dev pairs of each corpus")
    p.set_defaults(func=lambda args: p.print_help() or 2)


def parse_grid(task, items):
    """["beam_size=1,3", "alpha=0,1"] -> [(name, [values])] in the order given; ValueError names the bad item,
    or a value outside the commands' bounds (`captioner.errors.check_search_options`)."""
    import math
    import types

    from captioner.errors import InputError, check_search_options

    grid, kinds = [], SETTINGS[task]
    for item in items:
        name, _, values = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in kinds:
            raise ValueError(f"--grid {item!r}: {task} settings are {', '.join(kinds)}")
        if name in dict(grid):
            raise ValueError(f"--grid {item!r}: {name} given twice")
        try:
            parsed = [kinds[name](v.strip()) for v in values.split(",") if v.strip()]
        except (ValueError, KeyError):
            raise ValueError(f"--grid {item!r}: a value is not a valid {name}") from None
        if not parsed:
            raise ValueError(f"--grid {item!r}: no values (NAME=V1,V2,...)")
        for value in parsed:  # the commands' own bounds (a beam of 100000 or alpha nan is refused up front)
            try:
                check_search_options(types.SimpleNamespace(**{name: value}))
            except InputError as exc:
                raise ValueError(f"--grid {item!r}: {exc}") from None
            if isinstance(value, float) and not math.isfinite(value) or \
                    name in ("no_repeat_ngram", "coverage_penalty") and value < 0:
                raise ValueError(f"--grid {item!r}: {name} must be a finite number >= 0")
        grid.append((name, parsed))
    return grid


def parse_settings(task, text):
    """A JSON list of setting dicts -> the same list, each name and value checked as `parse_grid` checks them."""
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--settings: not JSON ({exc})") from None
    if not isinstance(settings, list) or not settings or not all(isinstance(s, dict) for s in settings):
        raise ValueError("--settings: expected a non-empty JSON list of objects, e.g. '[{}, {\"beam_size\": 1}]'")
    out = []
    for setting in settings:
        items = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in setting.items()]
        out.append({name: values[0] for name, values in parse_grid(task, items)})
    return out


def expand(grid):
    """Every combination, in order; with beam_size 1 only the first alpha (greedy has one finished beam)."""
    names = [n for n, _ in grid]
    first_alpha = dict(grid).get("alpha", [None])[0]
    settings = []
    for values in itertools.product(*(v for _, v in grid)):
        setting = dict(zip(names, values))
        if setting.get("beam_size") == 1 and "alpha" in setting and setting["alpha"] != first_alpha:
            continue
        settings.append(setting)
    return settings


def choose(rows, split, figure):
    """The row with the best `figure` on `split` (the highest; the lowest for an error rate); the first
    listed on a tie."""
    sign = -1 if figure in LOWER_IS_BETTER else 1
    return max(rows, key=lambda r: (sign * r[split][figure], -rows.index(r)))


# --- the tasks: (args, an ExitStack for what must be closed) -> (evaluate(setting) -> {split: {figure: value}},
# [the splits, the choosing one first], what the JSON says of the data)


def _caption_task(args, stack):
    import numpy as np

    from captioner.data.flickr8k import load_flickr8k
    from captioner.errors import InputError
    from captioner.features.store import FeatureStore
    from captioner.inference.batch import load_captioner
    from captioner.metrics import evaluate_captions, meteor_session
    from captioner.metrics.distinct import caption_statistics
    from captioner.training.caption_data import decode_captions

    model = load_captioner(args.model)
    dev = load_flickr8k(args.data_dir, "dev")
    paths = list(dev.image_paths)
    with FeatureStore(args.features) as store:
        if store.grid_shape != model.grid_shape:
            raise InputError(f"{args.features}: holds {store.backbone} grids of {store.grid_shape}, the model attends "
                             f"over {model.grid_shape}: extract with the model's backbone")
        features = store.load([os.path.basename(q) for q in paths], grid=True, pooled=False)["grid"]
    order = np.random.default_rng(args.seed).permutation(len(paths))
    halves = {"tune": sorted(order[:len(paths) // 2].tolist()), "report": sorted(order[len(paths) // 2:].tolist())}
    halves["dev"] = sorted(halves["tune"] + halves["report"])
    stack.enter_context(meteor_session())  # one METEOR process for every score of the sweep

    def evaluate(setting):
        style = "flickr8k" if "flickr8k" in model.styles else None  # a several-corpora captioner: its Flickr8k style
        hyps = decode_captions(model.decoder, features, paths, model.vocabulary, style=style,
                               beam_size=setting.get("beam_size", model.beam_size),
                               alpha=setting.get("alpha", model.alpha), max_length=model.max_length)
        out = {}
        for split, rows in halves.items():
            keys = [paths[i] for i in rows]
            scores = evaluate_captions({k: dev.captions[k] for k in keys}, {k: hyps[k] for k in keys}, tool="auto",
                                       meteor=True)
            out[split] = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in scores.items()}
        out["dev"].update({k.replace("dev_", ""): round(v, 2) for k, v in caption_statistics(hyps.values()).items()})
        return out

    return evaluate, ["tune", "report", "dev"], {"seed": args.seed, "tune_images": len(halves["tune"]),
                                                 "report_images": len(halves["report"])}


def _translate_task(args, stack):
    from captioner.models.seq2seq import load_translator
    from captioner.training.translation_data import evaluate_bleu, grouped_references, load_translation_data

    model = load_translator(args.model)
    _, dev, evals, eval_name, description, _ = load_translation_data(args)
    refs = {"dev": grouped_references(dev), eval_name: grouped_references(evals)}

    def evaluate(setting):
        out = {}
        for split, split_refs in refs.items():
            scores, _ = evaluate_bleu(model, split_refs, setting.get("beam_size", model.beam_size),
                                      setting.get("alpha", model.alpha),
                                      coverage_penalty=setting.get("coverage_penalty", 0.0))
            out[split] = {k: v for k, v in scores.items() if isinstance(v, (int, float, str))}
        return out

    return evaluate, ["dev", eval_name], {"data": description, "dev_sentences": len(refs["dev"]),
                                                 f"{eval_name}_sentences": len(refs[eval_name])}


def _transliterate_task(args, stack):
    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration
    from captioner.models.seq2seq import load_translator

    model = load_translator(args.model)
    lexicon = romanized_lexicon(load_dakshina(args.dev))

    def evaluate(setting):
        scores, _ = evaluate_transliteration(model, lexicon, setting.get("beam_size", model.beam_size),
                                             setting.get("alpha", model.alpha), limit=args.limit)
        return {"dev": scores}

    return evaluate, ["dev"], {"dev": args.dev, "limit": args.limit}


def _summarize_task(args, stack):
    from captioner.models.seq2seq import load_translator
    from captioner.training.headline_data import evaluate_rouge, headline_dev_sets

    sets = headline_dev_sets(args.bbc, args.news_category, args.dev_limit)
    model = load_translator(args.model)

    def evaluate(setting):
        out = {}
        for name, pairs in sets.items():
            scores, _ = evaluate_rouge(model, pairs, **setting)  # `captioner evaluate summarize`'s scores
            out[name] = {k: scores[k] for k in ("rouge1", "rouge2", "rougeL", "pairs")}
        return out

    split = "dev" if args.dev_limit is None else f"the first {args.dev_limit} dev pairs"
    return evaluate, list(sets), {"split": split}


TASKS = {"caption": _caption_task, "translate": _translate_task, "transliterate": _transliterate_task,
         "summarize": _summarize_task}


def run(args):
    import contextlib

    from tqdm.auto import tqdm

    import captioner  # noqa: F401  registers the Keras classes
    from captioner.errors import InputError
    from captioner.io import write_json

    try:
        if args.settings is not None:
            grid, settings = None, parse_settings(args.task, args.settings)
        else:
            grid = parse_grid(args.task, args.grid)
            settings = expand(grid)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.output:  # before any decoding: an output over an input, or one that cannot be written, is refused
        from captioner.io import check_output_not_input, check_writable

        check_output_not_input(args.output, [args.model, *(getattr(args, name, None) for name in (
            "features", "data", "dev", "bbc", "news_category"))])
        check_writable(args.output)
    rows = []
    with contextlib.ExitStack() as stack:
        evaluate, splits, info = TASKS[args.task](args, stack)
        for setting in tqdm(settings, desc=f"sweep {args.task}", unit="setting", file=sys.stderr):
            rows.append({"setting": setting, **evaluate(setting)})
            figures = rows[-1][splits[0]]
            if not isinstance(figures.get(args.select), (int, float)):
                raise InputError(f"--select {args.select}: the {args.task} figures are "
                                 f"{', '.join(k for k, v in figures.items() if isinstance(v, (int, float)))}")
            tqdm.write(f"{json.dumps(setting)}: {args.select} "
                       + "  ".join(f"{s} {rows[-1][s][args.select]:.2f}" for s in splits), file=sys.stderr)
    best = choose(rows, splits[0], args.select)
    for row in rows:
        mark = "   <- chosen on " + splits[0] if row is best else ""
        print(f"{json.dumps(row['setting']):<48} " + "  ".join(f"{s} {row[s][args.select]:7.2f}" for s in splits)
              + mark)
    if args.output:
        write_json(args.output, {"task": args.task, "model": args.model,
                                 **({"grid": dict(grid)} if grid else {"settings": settings}),
                                 "selected_by": f"{splits[0]} {args.select}", "chosen": best["setting"],
                                 "rule": "the highest figure on the choosing split; a tie goes to the setting "
                                         "listed first", **info, "rows": rows,
                                 "command": "captioner " + " ".join(getattr(args, "argv", None) or sys.argv[1:])})
    return 0
