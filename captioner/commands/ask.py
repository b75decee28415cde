"""`captioner ask`: answer questions about images with a saved VQA model.

    captioner ask --image photo.jpg --question "what color is the dog?"
    captioner ask --model easy-vqa --image shape.png --question "what shape is this?"
    captioner ask --input questions.jsonl --output answers.jsonl --attention-dir att/

Models: the default, "photo" (assets/models/photo_vqa.keras), answers questions about
photos (trained on questions made from Flickr8k and web captions: object, number, colour,
location, yes/no, "how many people" with "none" where there is no one, and "nobody" to a question
about a person ("what is the man doing?") of a photo without one; its probabilities
temperature-scaled on dev); "easy-vqa" (assets/models/easy_vqa.keras) knows only easy-VQA's coloured shapes;
or a path to any saved VQAModel. When the model's "don't know" rule fires (a kind of
question it was not trained on, or a confidence below the threshold chosen on dev photos)
it says so and shows its best guess; answer rows then have "known": false and a "reason".
Asked what a photo shows ("what is this?", "what animal is that?") or whether an animal is in it ("is
there a dog?", "are there any birds?"), a model whose backbone has an ImageNet head answers from it on
a photo unlike its training photos, where the head is sure (--no-objects: the classifier alone): the
row then has "from_tag": true and the classifier's own "model_answer" (and, for what a photo shows,
the "objects" (tags) it chose from).

Batch rows are `{"image": PATH, "question": TEXT}` (any other keys, e.g. an id, are copied
to the answer row). Answer rows: `{"image", "question", "answer", "probability", "top_k":
[{"answer", "probability"}, ...], "unknown_words"}`, or `{"image", "question", "error"}` for a
row whose image cannot be read or whose question is empty; the other rows go on and the exit
status is 1. Rows are written as they are answered to OUTPUT.partial, renamed to OUTPUT at
the end: a rerun after a kill keeps the rows already answered and goes on from there, and a
second run on the same OUTPUT is refused while the first is writing.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

from captioner.bundled import BY_KEY, default_path

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS = {  # named choices of --model; the models and the default come from the one registry
    "photo": BY_KEY["vqa"].path,
    "easy-vqa": BY_KEY["vqa_easy"].path,
    "flickr8k": BY_KEY["vqa"].path,  # the photo model's name before it also learned web questions
}
DEFAULT_MODEL = Path(default_path("ask"))


def register(subparsers):
    p = subparsers.add_parser(
        "ask", help="answer a question about an image (visual question answering)",
        description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", "-m", default=None,
                   help=f"photo or easy-vqa (default: photo, {os.path.relpath(DEFAULT_MODEL, REPO_ROOT)}: "
                        "questions about photos; easy-vqa: coloured shapes only) or a saved VQAModel .keras file")
    p.add_argument("--image", "-i", help="image file (single question mode)")
    p.add_argument("--question", "-q", help="the question (single question mode)")
    p.add_argument("--input", help="JSONL of {\"image\", \"question\"} rows (batch mode)")
    p.add_argument("--output", "-o", help="batch mode: JSONL answers (default: stdout)")
    p.add_argument("--top-k", "-k", type=int, default=5, help="answers listed with their probabilities")
    p.add_argument("--attention-dir", help="write one PNG per answered question: the image and each hop's map")
    p.add_argument("--batch-size", "-b", type=int, default=32, help="questions per model call")
    p.add_argument("--json", action="store_true", help="single mode: print the answer row as JSON")
    p.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                   help="answer 'what is this?' and 'is there a dog?' from the backbone's ImageNet head on "
                        "unfamiliar photos, where it is sure (default: on)")
    p.set_defaults(func=run)


def load_model(path=None):
    """Load a saved VQAModel (safe mode); a missing or wrong file gives an InputError."""
    from captioner.models.loading import load_model_file
    from captioner.models.vqa_model import VQAModel

    path = MODELS.get(str(path), Path(path)) if path else DEFAULT_MODEL
    hint = " (the bundled models are made by `captioner train vqa ...`, see their cards)" \
        if path in MODELS.values() else ""
    return load_model_file(path, VQAModel, "a VQA model", hint=hint)


def _slug(text, limit=40):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit] or "question"


def save_attention(directory, name, pixels, result):
    """Write the image and one overlay per attention hop, titled with question and answer."""
    from captioner.visualize.attention_overlay import save_caption_attention_png

    if result.attention is None:
        return None
    hops = result.attention.shape[0]
    title = f"Q: {result.question}  A: {result.answer} ({result.probability:.2f})"
    path = os.path.join(directory, name + ".png")
    os.makedirs(directory, exist_ok=True)
    return save_caption_attention_png(path, pixels, [f"hop {k + 1}" for k in range(hops)], result.attention,
                                      title=title, columns=hops + 1)


def run(args):
    from captioner.errors import InputError

    for name in ("batch_size", "top_k"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.input:
        if args.image or args.question:
            raise InputError("give either --image and --question, or --input, not both")
        return run_batch(args)
    if not (args.image and args.question is not None):
        raise InputError("give --image IMG --question TEXT, or --input Q.jsonl")
    model = load_model(args.model)
    pixels = model.load_pixels(args.image)
    result = model.answer_batch([pixels], [args.question], top_k=args.top_k, objects=args.objects)[0]
    if args.attention_dir and result.attention is not None:
        name = f"{Path(args.image).stem}_{_slug(args.question)}"
        print(f"attention: {save_attention(args.attention_dir, name, pixels, result)}", file=sys.stderr)
    if args.json:
        print(json.dumps({"image": args.image, **result.to_json()}, ensure_ascii=False))
        return 0
    print(f"{result.answer}\t{result.probability:.4f}" if result.known else
          f"don't know\t({result.reason}; best guess: {result.answer} {result.probability:.4f})")
    if result.from_tag:
        print(f"  (from the backbone's ImageNet head; the VQA classifier's answers follow, its own: {result.model_answer})")
    for answer, prob in result.top_k[1:]:
        print(f"  {answer}\t{prob:.4f}")
    if result.unknown_words:
        print(f"(unknown words, read as <unk>: {' '.join(result.unknown_words)})", file=sys.stderr)
    return 0


def _read_rows(path):
    """(line number, row dict or None, error or None) for each non-blank line of a JSONL file."""
    from captioner.data.json_file import json_rows
    from captioner.io import numbered_lines

    for line_no, row, error in json_rows(numbered_lines(path)):
        if error is None and ("image" not in row or "question" not in row):
            row, error = None, "expected an object with 'image' and 'question'"
        yield line_no, row, error and f"{path}:{line_no}: {error}"


def _resolve(image, base):
    """An image path as given, else relative to the input file's folder."""
    if isinstance(image, str) and not os.path.isabs(image) and not os.path.exists(image):
        candidate = os.path.join(base, image)
        if os.path.exists(candidate):
            return candidate
    return image


def run_batch(args):
    from captioner.io import check_output_not_input

    check_output_not_input(args.output, [args.input])
    model = load_model(args.model)
    base = os.path.dirname(os.path.abspath(args.input))
    rows = list(_read_rows(args.input))
    from captioner.resumable import batch_output

    def same(row, item):
        line_no, source, _ = item
        return (row.get("line") == line_no if source is None else
                row.get("image") == source.get("image") and row.get("question") == source.get("question"))

    with batch_output(args.output, rows, what=args.input, same=same) as out:
        failed = sum("error" in r for r in out.done)

        def write(answers):
            for answer in answers:
                out.write(answer)
            out.flush()

        failed += _answer_rows(model, rows, base, args, write, start=len(out.done), progress=bool(args.output))
    if args.output:
        print(f"answered {len(rows) - failed} of {len(rows)} questions -> {args.output}"
              + (f"; {failed} failed (rows with 'error')" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


def _question_error(question, line_no):
    """Why `question` cannot be asked, or None."""
    if not isinstance(question, str):
        return f"line {line_no}: 'question' must be text, got {type(question).__name__} {question!r:.40}"
    if not question.strip():
        return f"line {line_no}: empty question"
    return None


def _answer_rows(model, rows, base, args, write, start, progress=False):
    """Answer rows[start:] batch by batch, calling `write([answer row, ...])` after each
    batch; returns how many of them failed."""
    import numpy as np
    from tqdm.auto import tqdm

    from captioner.errors import CaptionerError

    failed = 0
    bar = tqdm(total=len(rows), initial=start, unit="q", desc="ask", disable=not progress, dynamic_ncols=True)
    for first in range(start, len(rows), args.batch_size):
        chunk = rows[first:first + args.batch_size]
        answers = [None] * len(chunk)  # answer row or error row per input row
        good, pixels, index, encoded, cache = [], [], [], [], {}
        for k, (line_no, row, error) in enumerate(chunk):
            if error:
                answers[k] = {"line": line_no, "error": error}
                continue
            keep = {key: v for key, v in row.items() if key not in ("answer", "probability", "top_k")}
            try:
                question = row["question"]
                problem = _question_error(question, line_no)
                if problem:
                    raise CaptionerError(problem)
                enc = model.encode_question(question)
                image = _resolve(row["image"], base)
                if not isinstance(image, str):
                    raise CaptionerError(f"line {line_no}: 'image' must be a path, got {image!r}")
                if image not in cache:
                    cache[image] = len(pixels)
                    pixels.append(model.load_pixels(image))
            except CaptionerError as exc:
                answers[k] = {**keep, "error": str(exc)}
                continue
            good.append((k, keep, enc))
            index.append(cache[image])
            encoded.append(enc)
        if good:
            width = max(len(e[0]) for e in encoded)
            ids = np.zeros((len(encoded), width), np.int32)  # (B, T), 0 = <pad>
            for j, e in enumerate(encoded):
                ids[j, : len(e[0])] = e[0]
            pred = model.predict_ids(np.stack(pixels), ids, np.array(index))
            results = [model.make_answer(keep["question"], enc, pred["probabilities"][j], pred["attention"][j],
                                         top_k=args.top_k) for j, (k, keep, enc) in enumerate(good)]
            if args.objects:
                model.answer_objects(np.stack(pixels), index, results)
            for j, ((k, keep, _), result) in enumerate(zip(good, results)):
                row = {**keep, **result.to_json()}
                if args.attention_dir and result.attention is not None:
                    name = f"{first + k:05d}_{_slug(result.question)}"
                    row["attention_png"] = save_attention(args.attention_dir, name, pixels[index[j]], result)
                answers[k] = row
        failed += sum("error" in row for row in answers)
        write(answers)
        bar.update(len(chunk))
    bar.close()
    return failed
