"""`captioner evaluate caption --model M --corpus SPEC [--corpus SPEC ...] [--output report.json]`

Scores an image captioner on the dev split of each corpus through the path `captioner caption`
runs: the photos are read, resized and encoded by the model's backbone, tagged (unless
--no-objects), decoded at the model's beam and length penalty (or --beam-size, --alpha) and in
its style (or --style), one JSON row each; then coco-caption's BLEU-1..4, METEOR, ROUGE-L and CIDEr
(the Java tools where Java is installed, else the Python ones: the report says which) against
the corpus's references, with the captions' mean length and distinct share and CHAIR (object words
no reference names, `captioner.metrics.hallucination`).

A corpus is a --corpus SPEC as `captioner train caption` takes it (FORMAT:DIR[:dev=...]): e.g.
`flickr8k:../shared/datasets/flickr8k` or `img2dataset:work/cc3m:train=00000:dev=00003`.
--captions-dir keeps each corpus's rows (`<style>.jsonl`): a rerun resumes, and the captions can
be read beside the references. Broken photos are reported and left out of the scores.
"""

import argparse
import json
import os
import sys

CLASSIFIER_DOC = """`captioner evaluate vqa|entail|classify|video-classify --model M (dev data)`: a classifier on its dev
data through its batch path (`VQAModel.answer_probabilities`, `entail`, `classify`): accuracy (overall and per
question type), negative log-likelihood, expected calibration error (15 bins), the reliability bins
and a VQA model's "don't know" share, at the model's saved temperature (`captioner model
calibrate` fits it). The dev data: --questions and --images (VQA rows of `captioner make-qa`),
--data (the SICK file, or an SNLI dev jsonl with --snli; a document corpus folder with --dataset; the
clips' folder with --labels, a clip_id,label CSV with dev.txt beside it, for an activity classifier)."""

NAME = "evaluate"


def register(subparsers):
    p = subparsers.add_parser(NAME, help="score a model on a corpus's dev split (the path users run)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tasks = p.add_subparsers(dest="task", metavar="TASK")
    c = tasks.add_parser("caption", help="an image captioner on the dev split of one or more caption corpora",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--model", default=None, help="an image captioner .keras (default: the bundled one)")
    c.add_argument("--corpus", action="append", required=True, metavar="FORMAT:DIR[:dev=...]",
                   help="a caption corpus (repeat); its dev split is scored")
    c.add_argument("--split", default="dev", choices=("dev", "train"), help="which of the corpus's splits")
    c.add_argument("--style", default=None, help="a several-corpora captioner's style (default: each corpus's own "
                   "where the model has it, else the model's default)")
    c.add_argument("--beam-size", type=int, default=None)
    c.add_argument("--alpha", type=float, default=None)
    c.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                   help="the object tags `captioner caption` uses by default (--no-objects: the captioner alone)")
    c.add_argument("--limit", type=int, default=None, help="the first N photos of each corpus")
    c.add_argument("--karpathy-json", default=None, help="COCO corpora: the Karpathy split json")
    c.add_argument("--captions-dir", default=None, help="keep each corpus's caption rows here (resumable)")
    c.add_argument("--batch-size", type=int, default=32)
    c.add_argument("--output", default=None, help="the report as JSON (written atomically)")
    c.set_defaults(func=run_caption)
    from captioner.inference.calibration import add_dev_options

    for task, what, registry in (("vqa", "a VQA model on dev question rows", "ask"),
                                 ("entail", "an entailment model on its dev pairs", "entail"),
                                 ("classify", "a document classifier on its dev documents", "classify"),
                                 ("video-classify", "an activity classifier on its dev clips", "video-classify")):
        t = tasks.add_parser(task, help=what + ": accuracy, NLL, expected calibration error",
                             description=CLASSIFIER_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
        t.add_argument("--model", default=None, help=f"the model (default: the bundled one of `captioner {registry}`)")
        add_dev_options(t)
        if task == "vqa":
            t.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                           help="also score the answers `captioner ask` gives, where the backbone's ImageNet head "
                           "answers what a photo shows and whether an animal is there (--no-objects: the classifier)")
            t.add_argument("--train-questions", metavar="TRAIN.jsonl", help="the training rows: the report then holds "
                           "the question-type prior (each type's most common training answer) beside the model")
        t.add_argument("--output", default=None, help="the report as JSON (written atomically)")
        t.set_defaults(func=run_classifier, registry=registry)
    add_text_tasks(tasks)
    p.set_defaults(func=lambda args: p.print_help() or 2)


TEXT_DOC = """`captioner evaluate translate|summarize|transliterate --model M ...`: a Seq2Seq model (or an
ensemble) through `Translator.translate`, the path `captioner translate` / `summarize` / `transliterate`
runs, at the model's beam and length penalty (or --beam-size, --alpha).

translate: sacreBLEU (13a) against every reference of each source, cased (no -lc) for a model that
writes case, with the lower-cased BLEU beside it, on the split the training reports (--split eval:
Multi30k val, the anki test bucket, parallel --eval files) or the one that selected the model
(--split dev: the last --dev-size Multi30k train lines, the anki dev bucket, parallel --dev files).
summarize: ROUGE-1/2/L F1 (rouge-score) on the dev split `train summarize` holds out of each corpus
(the scores `captioner sweep summarize` prints). transliterate: top-1 / top-5 accuracy and character
error rate on a Dakshina lexicon (a romanization may have several right native spellings)."""


def add_text_tasks(tasks):
    def common(t, registry):
        t.add_argument("--model", default=None, help=f"the model (default: the bundled one of `captioner {registry}`)")
        t.add_argument("--beam-size", type=int, default=None, help="default: the model's")
        t.add_argument("--alpha", type=float, default=None, help="default: the model's")
        t.add_argument("--limit", type=int, default=None, help="the first N sources")
        t.add_argument("--output", default=None, help="the report as JSON (written atomically)")

    t = tasks.add_parser("translate", help="a translator on a parallel corpus's held-out split: sacreBLEU",
                         description=TEXT_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--format", required=True, choices=("multi30k", "anki", "parallel"),
                   help="as `captioner train translate --format`")
    t.add_argument("--data", required=True, help="multi30k: the folder; anki: the TSV file; parallel: SRC,TGT "
                   "training files (not read for the scores)")
    t.add_argument("--source", default="en", help="multi30k source language")
    t.add_argument("--target", default="de", help="multi30k target language")
    t.add_argument("--reverse", action="store_true", help="anki: column 2 -> column 1")
    t.add_argument("--eval", default=None, help="parallel: SRC,TGT files of the held-out set")
    t.add_argument("--dev", default=None, help="parallel: SRC,TGT files of the dev set (default: --eval)")
    t.add_argument("--dev-size", type=int, default=1000, help="multi30k: train lines the training held out as dev")
    t.add_argument("--split", default="eval", choices=("eval", "dev"))
    common(t, "translate")
    t.set_defaults(func=run_translate)
    t = tasks.add_parser("summarize", help="a headline model on BBC News and/or News Category dev: ROUGE-1/2/L F1",
                         description=TEXT_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    datasets = os.path.join("..", "shared", "datasets")
    t.add_argument("--bbc", default=os.path.join(datasets, "bbc-news", "bbc"), help="BBC News folder ('' skips it)")
    t.add_argument("--news-category", default=os.path.join(datasets, "news-category", "News_Category_Dataset_v3.json"),
                   help="News Category JSON lines ('' skips it)")
    t.add_argument("--dev-limit", type=int, metavar="K", help="the first K dev pairs of each corpus")
    common(t, "summarize")
    t.set_defaults(func=run_summarize)
    t = tasks.add_parser("transliterate", help="a transliteration model on a Dakshina lexicon: top-1/top-5, CER",
                         description=TEXT_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--data", required=True, help="a Dakshina lexicon TSV (native, romanized, count)")
    common(t, "transliterate")
    t.set_defaults(func=run_transliterate)


def _text_model(args, registry, check=None):
    from captioner.bundled import default_path
    from captioner.errors import check_search_options
    from captioner.models.seq2seq import load_translator

    check_search_options(args)
    path = args.model or default_path(registry)
    model = load_translator(path)
    if check:
        check(model, path)
    beam = args.beam_size or model.beam_size
    alpha = model.alpha if args.alpha is None else args.alpha
    return path, model, beam, alpha


def _report(args, task, path, scores):
    from captioner.io import write_json

    report = {"task": task, "model": path, **scores,
              "command": "captioner " + " ".join(getattr(args, "argv", None) or sys.argv[1:])}
    print(json.dumps(scores, ensure_ascii=False))
    if args.output:
        write_json(args.output, report)
    return 0


def run_translate(args):
    from captioner.errors import InputError
    from captioner.training.translation_data import evaluate_bleu, grouped_references, load_translation_data

    path, model, beam, alpha = _text_model(args, "translate")
    if args.format == "parallel" and not args.eval:
        raise InputError("--format parallel needs --eval SRC,TGT (and --data SRC,TGT as training took it)")
    from captioner.training.recipes.translate import Config

    fields = Config.__dataclass_fields__  # the anki split's fractions as `train translate` drew them
    data = argparse.Namespace(**vars(args), dev_fraction=fields["dev_fraction"].default,
                              test_fraction=fields["test_fraction"].default)
    if args.format == "parallel":
        data.data = args.eval  # the training files are not read: only the held-out ones score
    _, dev, held_out, split, _, _ = load_translation_data(data)
    pairs = dev if args.split == "dev" else held_out
    tokenizer = model.target_tokenizer
    cased = not tokenizer.get("lower", True) or bool(tokenizer.get("truecase"))  # the model writes case
    scores, _ = evaluate_bleu(model, grouped_references(pairs), beam, alpha, limit=args.limit, cased=cased)
    return _report(args, "translate", path, {"split": split if args.split == "eval" else "dev", **scores})


def run_summarize(args):
    from captioner.training.headline_data import evaluate_rouge, headline_dev_sets

    path, model, beam, alpha = _text_model(args, "summarize")
    results = {}
    for name, pairs in headline_dev_sets(args.bbc, args.news_category, args.dev_limit).items():
        results[name], _ = evaluate_rouge(model, pairs, beam, alpha, limit=args.limit)
    return _report(args, "summarize", path, results)


def run_transliterate(args):
    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.inference.transliteration import evaluate_transliteration
    from captioner.models.seq2seq import check_transliterator

    path, model, beam, alpha = _text_model(args, "transliterate", check_transliterator)
    scores, _ = evaluate_transliteration(model, romanized_lexicon(load_dakshina(args.data)), beam, alpha,
                                         limit=args.limit)
    return _report(args, "transliterate", path, {"data": os.path.basename(args.data), "alpha": alpha, **scores})


def evaluate_caption(model, corpus, *, split="dev", style=None, beam_size=None, alpha=None, objects=True,
                     limit=None, karpathy_json=None, captions_file=None, batch_size=32):
    """{"corpus", "style", "images", "failed", coco-caption scores, "caption_length", "distinct"} and
    {path: caption} of `model` (an ImageCaptioner) on `corpus`'s `split` (a Corpus)."""
    import tempfile

    from captioner.inference.batch import caption_images, read_output
    from captioner.metrics import evaluate_captions
    from captioner.metrics.distinct import caption_statistics
    from captioner.metrics.hallucination import chair

    data = corpus.load(split, karpathy_json)
    paths = data.image_paths[:limit] if limit else data.image_paths
    if style is None and corpus.style in model.styles:
        style = corpus.style  # a several-corpora captioner writes each corpus in its own style
    previous = model.style
    if style is not None:
        model.set_style(style)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            output = captions_file or os.path.join(tmp, "captions.jsonl")
            report = caption_images(paths, model, beam_size=beam_size, alpha=alpha, batch_size=batch_size,
                                    output=output, objects=objects, progress=True)
            rows = read_output(output, "jsonl")
    finally:
        model.style = previous
    hyps = {r["image"]: r["caption"] for r in rows if "caption" in r and r["image"] in data.captions}
    scores = evaluate_captions({p: data.captions[p] for p in hyps}, hyps, tool="auto")
    stats = caption_statistics(hyps.values())
    hallucination = chair({p: data.captions[p] for p in hyps}, hyps)
    return {"corpus": f"{corpus.format}:{corpus.data_dir} {split} ({corpus.dev if split == 'dev' else corpus.train})",
            "style": style, "images": len(hyps), "failed": len(report.failed),
            **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in scores.items()},
            "caption_length": round(stats["dev_caption_length"], 2),
            "distinct": round(stats["dev_distinct_captions"] / max(len(hyps), 1), 4),
            "CHAIR_i": hallucination["CHAIR_i"], "CHAIR_s": hallucination["CHAIR_s"]}, hyps


def run_caption(args):
    from captioner.bundled import default_path
    from captioner.errors import InputError, check_search_options
    from captioner.inference.batch import load_captioner
    from captioner.io import write_json
    from captioner.metrics import meteor_session
    from captioner.data.caption_corpora import parse_corpus

    check_search_options(args)
    corpora = [parse_corpus(spec) for spec in args.corpus]
    model = load_captioner(args.model or default_path("caption"))
    if args.style is not None:
        model.set_style(args.style)  # checked before any work
    results = []
    with meteor_session():
        for corpus in corpora:
            captions = None
            if args.captions_dir:
                os.makedirs(args.captions_dir, exist_ok=True)
                captions = os.path.join(args.captions_dir, f"{corpus.style}.jsonl")
            try:
                result, _ = evaluate_caption(model, corpus, split=args.split, style=args.style,
                                             beam_size=args.beam_size, alpha=args.alpha, objects=args.objects,
                                             limit=args.limit, karpathy_json=args.karpathy_json,
                                             captions_file=captions, batch_size=args.batch_size)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            results.append(result)
            print(json.dumps(result, ensure_ascii=False), flush=True)
    report = {"task": "caption", "model": args.model or default_path("caption"), "objects": args.objects,
              "beam_size": args.beam_size or model.beam_size, "alpha": model.alpha if args.alpha is None else args.alpha,
              "results": results, "command": "captioner " + " ".join(getattr(args, "argv", None) or sys.argv[1:])}
    if args.output:
        write_json(args.output, report)
    return 0


def run_classifier(args):
    from captioner.bundled import default_path
    from captioner.errors import InputError
    from captioner.inference.calibration import asked_figures, dev_set, figures, prior_figures
    from captioner.io import write_json
    from captioner.models.calibration import Calibrated
    from captioner.models.loading import load_model_file

    path = args.model or default_path(args.registry)
    model = load_model_file(path, Calibrated, "a VQA model, an entailment model, a document or an activity classifier")
    try:
        dev = dev_set(model, args)
        report = figures(model, dev)
        if getattr(args, "objects", False) and dev.inputs is not None:
            report["as_asked"] = asked_figures(model, dev)
        if getattr(args, "train_questions", None):
            report["prior"] = prior_figures(dev, args.train_questions)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    report = {"task": args.task, "model": path, **report,
              "command": "captioner " + " ".join(getattr(args, "argv", None) or sys.argv[1:])}
    brief = {k: report[k] for k in ("accuracy", "nll", "ece", "temperature")}
    if "by_type" in report:
        brief["by_type"] = {k: v["accuracy"] for k, v in report["by_type"].items()}
    if "dont_know" in report:
        brief["dont_know"] = report["dont_know"]
    if "as_asked" in report:
        brief["as_asked"] = {k: report["as_asked"][k] for k in ("accuracy", "by_type", "from_tag") if k in report["as_asked"]}
    if "prior" in report:
        brief["prior"] = {"accuracy": report["prior"]["accuracy"], "by_type": report["prior"]["by_type"]}
    print(json.dumps(brief))
    if args.output:
        write_json(args.output, report)
    return 0
