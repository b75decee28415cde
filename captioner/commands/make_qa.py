"""`captioner make-qa --captions Flickr8k.token.txt --images LIST.txt --output qa.jsonl`

Turns each listed image's captions into question/answer pairs by the COCO-QA rules of Ren et
al. 2015 (object, number, color, location) plus balanced yes/no questions; the rules are
documented in `captioner/data/coco_qa/__init__.py`. One JSON object a line:

    {"image": "1000268201_693b08cb0e.jpg", "question": "what color is the dog?",
     "answer": "black", "type": "color"}

Answers seen fewer than --min-answer-count times within their type are dropped (COCO-QA drops
rare answers too); --answers-from TRAIN.jsonl instead keeps only answers that file has (so a
dev set shares the train answers). Images of the list with no captions are reported on stderr
and skipped. The yes/no negatives are drawn with --seed. --stats writes per-type counts and
top answers as JSON. Outputs are written atomically.
"""

import argparse
import json
import sys


def register(subparsers):
    p = subparsers.add_parser(
        "make-qa", help="make question/answer pairs (COCO-QA method) from image captions",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--captions", help="caption file in the Flickr8k.token.txt format")
    p.add_argument("--images", help="image list, one file name a line (e.g. Flickr_8k.trainImages.txt)")
    p.add_argument("--corpus", action="append", metavar="FORMAT:DIR[:train=..][:dev=..]",
                   help="instead of --captions/--images: a caption corpus as `captioner train caption --corpus` takes "
                        "it (repeat; e.g. img2dataset web photos); its --split photos, named by file name (the key "
                        "of a `captioner extract` store)")
    p.add_argument("--split", default="train", choices=("train", "dev"), help="with --corpus: which split")
    p.add_argument("--absent-people", action="store_true",
                   help="also ask 'how many people are there?' (answer 'none') of photos none of whose captions "
                        "names a person (WordNet's kinds of person)")
    p.add_argument("--false-premise", type=float, default=0.0, metavar="SHARE",
                   help="also ask one of the questions other photos raised about a person ('what is the man "
                        "doing?') of photos none of whose captions names one, answer 'nobody': SHARE times as many "
                        "as those person questions (e.g. 0.33; default 0: none)")
    p.add_argument("--output", "-o", required=True, help="JSON-lines output; written atomically")
    p.add_argument("--seed", type=int, default=0, help="seed of the yes/no negatives (default 0)")
    p.add_argument("--min-answer-count", type=int, default=5,
                   help="drop answers seen fewer times than this within their type (default 5)")
    p.add_argument("--answers-from", help="a make-qa output (e.g. of the train list): keep only its answers")
    p.add_argument("--yesno-per-image", type=int, default=2, help="yes questions per image, as many no (default 2)")
    p.add_argument("--stats", help="write counts per type and top answers here (JSON)")
    p.set_defaults(func=run)


def _answers_of(path):
    from captioner.data.json_file import json_objects
    from captioner.errors import InputError

    answers, expected = {}, "a make-qa JSON row with 'type' and 'answer'"
    for where, row in json_objects(path, expected):
        try:
            answers.setdefault(row["type"], set()).add(row["answer"])
        except (KeyError, TypeError):
            raise InputError(f"{where}: expected {expected}") from None
    return answers


def run(args):
    from tqdm.auto import tqdm

    from captioner.data.coco_qa import generate_qa, read_image_list
    from captioner.data.flickr8k import read_flickr8k_captions
    from captioner.errors import InputError
    from captioner.io import atomic_path, check_output_not_input, check_writable, write_json

    if args.min_answer_count < 0 or args.yesno_per_image < 0:
        raise InputError("--min-answer-count and --yesno-per-image must be >= 0")
    inputs = [args.captions, args.images, args.answers_from, *(spec.split(":")[1] for spec in args.corpus or () if ":" in spec)]
    check_output_not_input(args.output, inputs)
    check_writable(args.output)
    if args.stats:
        check_writable(args.stats, "--stats")
    check_output_not_input(args.stats, inputs + [args.output], flag="--stats")
    if args.corpus and (args.captions or args.images):
        raise InputError("give --captions and --images, or --corpus, not both")
    if args.corpus:
        from captioner.data.caption_corpora import corpus_photos

        _, captions = corpus_photos(args.corpus, args.split)
        names = list(captions)
    elif not (args.captions and args.images):
        raise InputError("give --captions and --images (Flickr8k files), or one or more --corpus")
    else:
        captions = read_flickr8k_captions(args.captions)
        names = read_image_list(args.images)
    missing = [n for n in names if n not in captions]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        print(f"captioner make-qa: warning: {len(missing)} image(s) of {args.images} have no captions in "
              f"{args.captions}, skipped: {shown}", file=sys.stderr)
    images = [n for n in names if n in captions]
    if not images:
        raise InputError(f"{args.images}: none of its images has captions in {args.captions}")
    answers_from = _answers_of(args.answers_from) if args.answers_from else None
    stats = {}
    pairs = generate_qa(captions, images, seed=args.seed, min_answer_count=args.min_answer_count,
                        answers_from=answers_from, yesno_per_image=args.yesno_per_image, stats=stats,
                        absent_people=args.absent_people, false_premise=args.false_premise,
                        progress=lambda it: tqdm(it, unit="image", desc="make-qa", dynamic_ncols=True))
    stats["skipped_no_captions"] = len(missing)
    with atomic_path(args.output, ".jsonl") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in pairs)
    if args.stats:
        write_json(args.stats, stats)
    per_type = ", ".join(f"{t} {n}" for t, n in stats["per_type"].items())
    print(f"captioner make-qa: {len(pairs)} pairs for {len(images)} images ({per_type}); "
          f"{stats['dropped_rare_total']} dropped as rare answers -> {args.output}", file=sys.stderr)
    return 0
