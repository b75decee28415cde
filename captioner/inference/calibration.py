"""Fitting a classifier's temperature on dev (what `captioner model calibrate` runs).

`dev_set` gives, for a model and its dev data (`vqa_dev`, `entailment_dev`, `documents_dev`,
`videos_dev`), the probabilities the model's own batch path gives (`VQAModel.answer_probabilities`,
`entail`, `classify`) and each example's gold class
(-1: a gold answer outside the model's answer list, never right). `calibrate` fits one temperature
on them (`captioner.metrics.confidence.fit_temperature`, on the examples with a class), sets it on
the model (composed with any it had), re-chooses a VQA model's "don't know" threshold on the
tempered probabilities, and returns the figures before and after: accuracy (unchanged: the argmax
does not move), negative log-likelihood, ECE (15 bins) and the reliability bins.

Dev data per kind of model:

* VQA: `captioner make-qa` rows (``image``, ``question``, ``answer``; JSON lines) and the folders
  that hold their photos (an image is looked up by its path, else its file name in the folders);
  or easy-VQA's dev images of a training seed (`easy_vqa_dev`);
* entailment: the SICK file (its dev part: the share of TRAIN the recipe held out by md5 of
  pair_ID) or an SNLI dev jsonl;
* document classifier: the corpus folder (its dev list, as `captioner train classify` splits it);
* activity classifier (clips): a clip_id,label CSV with dev.txt beside it and the clips' folder
  (as `captioner train video-classify --labels` splits them).
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from captioner.errors import InputError


@dataclasses.dataclass
class DevSet:
    probabilities: np.ndarray  # (N, K) at the model's current temperature
    labels: np.ndarray         # (N,) gold class index, -1 where the gold is none of the model's classes
    description: dict
    groups: list | None = None  # per example, its kind (a VQA row's question type), for figures per kind
    gold: list | None = None    # per example, its gold answer as text (VQA), for the per-type prior
    inputs: tuple | None = None  # VQA: (photo paths, questions), to ask again as `captioner ask` does


def _find_images(names, folders):
    """{name: path}: a name that is a path stays; else its file name in one of `folders` (searched
    recursively once). InputError naming the first photo found nowhere."""
    from captioner.features.images import list_images

    for folder in folders or []:
        if not os.path.isdir(folder):
            raise InputError(f"--images {folder}: not a folder")
    index = {}
    for path in list_images(list(folders or [])):  # the photos of the folders, recursed
        index.setdefault(os.path.basename(path), path)
    out = {}
    for name in names:
        path = name if os.path.isfile(name) else index.get(os.path.basename(name))
        if path is None:
            raise InputError(f"photo {name!r} is in none of the --images folders {list(folders or [])}")
        out[name] = path
    return out


def vqa_dev(model, questions_path, image_folders, batch_size=32, progress=False):
    """`captioner make-qa` rows (JSON lines) and the folders holding their photos."""
    from captioner.data.qa_jsonl import read_qa_jsonl

    dataset = read_qa_jsonl(questions_path)
    paths = _find_images({q.image_path for q in dataset.questions}, image_folders)
    return _vqa_rows(model, dataset.questions, paths, os.path.basename(questions_path), batch_size, progress)


def easy_vqa_dev(model, seed, dev_fraction=0.1, data_dir=None, batch_size=32, progress=False):
    """easy-VQA's dev questions as `captioner train vqa --dataset easy-vqa --seed SEED` held them out."""
    from captioner.data.easy_vqa import easy_vqa_splits

    _, dev = easy_vqa_splits(seed, dev_fraction, data_dir)
    paths = {q.image_path: q.image_path for q in dev.questions}
    return _vqa_rows(model, dev.questions, paths, f"easy-VQA train, {dev_fraction:g} of its images by seed {seed}",
                     batch_size, progress)


def _vqa_rows(model, rows, paths, what, batch_size, progress):
    from tqdm.auto import tqdm

    answer_index = {a: i for i, a in enumerate(model.answers)}
    parts = []
    with tqdm(total=len(rows), unit="q", desc="dev questions", disable=not progress, dynamic_ncols=True) as bar:
        for start in range(0, len(rows), 512):
            part = rows[start:start + 512]
            parts.append(model.answer_probabilities([paths[q.image_path] for q in part], [q.question for q in part],
                                                    batch_size=batch_size))
            bar.update(len(part))
    labels = np.array([answer_index.get(q.answer, -1) for q in rows], np.int64)
    return DevSet(np.concatenate(parts), labels,
                  {"questions": len(rows), "photos": len(set(paths.values())), "file": what,
                   "gold_outside_answers": int((labels < 0).sum())},
                  groups=[q.answer_type for q in rows] if any(q.answer_type for q in rows) else None,
                  gold=[q.answer for q in rows], inputs=([paths[q.image_path] for q in rows], [q.question for q in rows]))


def asked_figures(model, dev: DevSet, batch_size=32):
    """A VQA model's accuracy on the answers `captioner ask` gives (the backbone's ImageNet head on): the
    rows whose question the head may answer (`head_may_answer`) asked again through
    `answer_batch(objects=True)`, the others as the classifier's top answer. Overall, per type, and how
    many answers came from the head."""
    from captioner.models.vqa_model import head_may_answer

    answers = [model.answers[k] for k in dev.probabilities.argmax(-1)]
    paths, questions = dev.inputs
    again = [i for i, q in enumerate(questions) if head_may_answer(q)]
    from_tag = 0
    if again and model.can_tag_objects:
        for start in range(0, len(again), 512):
            part = again[start:start + 512]
            results = model.answer_batch([paths[i] for i in part], [questions[i] for i in part],
                                         batch_size=batch_size, objects=True)
            for i, result in zip(part, results):
                answers[i] = result.answer
                from_tag += result.from_tag
    return {**_exact_match(answers, dev), "from_tag": from_tag, "asked_again": len(again)}


def _exact_match(answers, dev: DevSet):
    """{"accuracy", and "by_type" where the rows have types}: `answers` (text) against the dev gold, in %."""
    right = np.array([a == g for a, g in zip(answers, dev.gold)])
    out = {"accuracy": round(100.0 * float(right.mean()), 2)}
    if dev.groups:
        out["by_type"] = {kind: round(100.0 * float(right[np.array([g == kind for g in dev.groups])].mean()), 2)
                          for kind in sorted({g for g in dev.groups if g})}
    return out


def prior_figures(dev: DevSet, train_questions):
    """The question-type prior beside a VQA model: each dev question answered with its type's most common
    answer in the training rows `train_questions` (`captioner make-qa` JSON lines): accuracy overall and per
    type, exact match as the model is scored. A model that does not beat it is not reading its input."""
    from captioner.data.qa_jsonl import read_qa_jsonl
    from captioner.metrics.qa_scores import most_common_per_type, predict_most_common

    if dev.gold is None or dev.groups is None:
        raise InputError("--train-questions: the prior needs dev rows with answer types (make-qa rows)")
    train = read_qa_jsonl(train_questions)
    table = most_common_per_type([q.answer_type for q in train.questions], [q.answer for q in train.questions])
    return {"train_questions": len(train.questions), "answers": {k: v for k, v in table.items() if k != "*"},
            **_exact_match(predict_most_common(table, dev.groups), dev)}


def entailment_dev(model, data, snli=False, dev_fraction=0.1, batch_size=64):
    from captioner.data.entailment import sick_split
    from captioner.data.sick import LABELS
    from captioner.data.snli import load_snli

    if snli:
        pairs, what = load_snli(data, "dev"), "the SNLI dev file"
    else:  # the dev part `captioner train entail --format sick` held out of TRAIN
        pairs = sick_split(data, "TRAIN", dev_fraction)["dev"]
        what = f"{dev_fraction:g} of SICK TRAIN by md5 of pair_ID"
    results = model.entail([p.premise for p in pairs], [p.hypothesis for p in pairs], batch_size=batch_size)
    probs = np.array([[r.probabilities[lab] for lab in LABELS] for r in results], np.float64)
    labels = np.array([LABELS.index(p.label) for p in pairs], np.int64)
    return DevSet(probs, labels, {"pairs": len(pairs), "split": what})


def documents_dev(model, data_dir, dataset="newsgroups", dev_list=None, batch_size=64):
    from captioner.data.document_reading import load_documents

    docs = load_documents(dataset, data_dir, "dev", dev_list)
    if not docs:
        raise InputError(f"{data_dir}: no dev documents")
    unknown = sorted({d.label for d in docs} - set(model.labels))
    if unknown:
        raise InputError(f"{data_dir}: dev labels {unknown[:5]} are not the model's labels {model.labels[:5]}...")
    results = model.classify([d.text for d in docs], batch_size=batch_size)
    probs = np.array([[r.probabilities[lab] for lab in model.labels] for r in results], np.float64)
    labels = np.array([model.labels.index(d.label) for d in docs], np.int64)
    return DevSet(probs, labels, {"documents": len(docs), "split": "the dev list of " + dataset})


def videos_dev(model, labels_csv, videos_dir, batch_size=8, progress=False):
    """The dev clips of a clip_id,label CSV (dev.txt beside it, as `captioner train video-classify
    --labels` splits them), through the classifier's own clip path (`VideoClassifier.classify`)."""
    from tqdm.auto import tqdm

    from captioner.data.caption_activities import load_clip_labels

    split_file = os.path.join(os.path.dirname(os.path.abspath(labels_csv)), "dev.txt")
    if not os.path.isfile(split_file):
        raise InputError(f"--labels {labels_csv}: no dev.txt beside it (the dev clip list)")
    clips = load_clip_labels(labels_csv, videos_dir, split_file, model.class_names, split="dev")
    if not clips.video_paths:
        raise InputError(f"{split_file}: no dev clips")
    parts = []
    with tqdm(total=len(clips.video_paths), unit="clip", desc="dev clips", disable=not progress) as bar:
        for start in range(0, len(clips.video_paths), 64):
            chunk = clips.video_paths[start:start + 64]
            results = model.classify(chunk, batch_size=batch_size)
            parts.append([[r.probabilities[c] for c in model.class_names] for r in results])
            bar.update(len(chunk))
    return DevSet(np.concatenate([np.array(p, np.float64) for p in parts]), np.array(clips.labels, np.int64),
                  {"clips": len(clips.video_paths), "split": "dev.txt beside " + os.path.basename(labels_csv)})


def dev_set(model, args):
    """The dev data of `model` from command-line options (--questions/--images, --data [--snli],
    --dataset/--dev-list), as `captioner model calibrate` and `captioner evaluate` take them."""
    from captioner.models.vqa_model import VQAModel

    if isinstance(model, VQAModel):
        if args.easy_vqa_seed is not None:
            return easy_vqa_dev(model, args.easy_vqa_seed, progress=True)
        if not args.questions or not args.images:
            raise InputError("a VQA model's dev data is --questions DEV.jsonl and --images FOLDER "
                             "(or --easy-vqa-seed S: easy-VQA's dev images of a training seed)")
        return vqa_dev(model, args.questions, args.images, progress=True)
    if hasattr(model, "class_names") and hasattr(model, "classify"):  # an activity classifier of clips
        if not args.labels or not args.data:
            raise InputError("an activity classifier's dev data is --labels CLIP_LABELS.csv (dev.txt beside it) "
                             "and --data VIDEOS_FOLDER")
        return videos_dev(model, args.labels, args.data, progress=True)
    if not args.data:
        raise InputError("give the model's dev data with --data")
    if hasattr(model, "entail"):
        return entailment_dev(model, args.data, snli=args.snli)
    if hasattr(model, "labels") and hasattr(model, "classify"):
        return documents_dev(model, args.data, args.dataset, args.dev_list)
    raise InputError(f"a {type(model).__name__}'s dev data is not read here (VQA, entailment and document models are)")


def add_dev_options(parser):
    parser.add_argument("--questions", help="VQA: the dev rows (`captioner make-qa` JSON lines)")
    parser.add_argument("--images", action="append", help="VQA: a folder holding the rows' photos (repeatable)")
    parser.add_argument("--easy-vqa-seed", type=int, default=None, metavar="SEED",
                        help="VQA: easy-VQA's dev questions, as `captioner train vqa --dataset easy-vqa --seed SEED` "
                             "held them out (instead of --questions/--images)")
    parser.add_argument("--data", help="entailment: the SICK file (its dev part of TRAIN) or, with --snli, the SNLI "
                        "dev jsonl; document classifier: the corpus folder (its dev list)")
    parser.add_argument("--snli", action="store_true", help="entailment: --data is an SNLI dev jsonl")
    parser.add_argument("--labels", help="activity classifier: the clip_id,label CSV (its dev.txt beside it); "
                        "--data is then the clips' folder")
    parser.add_argument("--dataset", choices=["newsgroups", "bbc"], default="newsgroups",
                        help="document classifier: the corpus (default newsgroups)")
    parser.add_argument("--dev-list", help="document classifier: the dev list (default: the bundled one of --dataset)")


def figures(model, dev: DevSet):
    """What `captioner evaluate` reports of a classifier on its dev set: accuracy, NLL, ECE and the
    reliability bins; per kind of question where the rows have one; a VQA model's "don't know" share."""
    from captioner.metrics.confidence import answered_table

    out = {"dev": dev.description, "temperature": float(model.temperature), **_figures(dev.probabilities, dev.labels)}
    if dev.groups:
        kinds = sorted({g for g in dev.groups if g})
        out["by_type"] = {k: _figures(dev.probabilities[m], dev.labels[m]) for k in kinds
                          for m in [np.array([g == k for g in dev.groups])]}
        for v in out["by_type"].values():
            v.pop("reliability")
    if hasattr(model, "min_probability"):
        correct = (dev.probabilities.argmax(-1) == dev.labels) & (dev.labels >= 0)
        row = answered_table(dev.probabilities.max(-1), correct, [model.min_probability])[0]
        out["dont_know"] = {"min_probability": model.min_probability, "answered": round(row["answered"], 4),
                            "accuracy_answered": row["accuracy_answered"] and round(row["accuracy_answered"], 4)}
    return out


def _figures(probs, labels):
    from captioner.metrics.confidence import expected_calibration_error, negative_log_likelihood, reliability_bins

    known = labels >= 0
    correct = (probs.argmax(-1) == labels) & known
    ece = expected_calibration_error(probs, labels)
    return {"accuracy": round(100.0 * float(correct.mean()), 2), "ece": round(ece, 4),
            "nll": round(negative_log_likelihood(probs[known], labels[known]), 4),
            "mean_top_probability": round(float(probs.max(-1).mean()), 4),
            "reliability": [{"low": lo, "high": hi, "examples": n, "accuracy": None if a is None else round(a, 4)}
                            for lo, hi, n, a in reliability_bins(probs.max(-1), correct)]}


def calibrate(model, dev: DevSet):
    """Fit, set and report the temperature (see the module docstring). Returns the record the card keeps."""
    from captioner.metrics.confidence import answered_table, choose_min_probability, fit_temperature, temper

    known = dev.labels >= 0
    if known.sum() < 20:
        raise InputError(f"{int(known.sum())} dev examples with a class the model knows: too few to fit a temperature")
    fitted = fit_temperature(dev.probabilities[known], dev.labels[known])
    after = temper(dev.probabilities, fitted)
    before_t = float(model.temperature)
    record = {"dev": dev.description, "temperature": {"before": before_t, "fitted_factor": round(fitted, 4),
                                                      "after": round(before_t * fitted, 4)},
              "before": _figures(dev.probabilities, dev.labels), "after": _figures(after, dev.labels)}
    model.set_temperature(before_t * fitted)
    if hasattr(model, "min_probability"):  # a VQA model's "don't know" rule, re-chosen on the new probabilities
        correct = (after.argmax(-1) == dev.labels) & known
        threshold = choose_min_probability(after.max(-1), correct)
        row = answered_table(after.max(-1), correct, [threshold])[0]
        record["dont_know"] = {"min_probability": {"before": model.min_probability, "after": threshold},
                               "dev_answered": round(row["answered"], 4),
                               "dev_accuracy_answered": row["accuracy_answered"] and round(row["accuracy_answered"], 4)}
        model.min_probability = threshold
    return record
