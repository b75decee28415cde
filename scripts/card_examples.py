"""Run every bundled model on real input it never saw and write what it said into its card.

    python scripts/card_examples.py            # all bundled models (a few minutes on 2 cores)
    python scripts/card_examples.py --only caption translate_en_de

The inputs are the files of ``assets/samples/``: real photos (none from Flickr8k), real clips,
generated shape clips for the toy models, and short texts written for this project
(``assets/samples/text/``). Each model runs through its own ``captioner`` command, exactly as a
user would type it (the command is recorded); the card JSON gets
``extra.examples_on_real_input = {"command", "rows": [[input, output], ...]}``, which
``scripts/write_model_cards.py`` renders as the Markdown card's "Examples on real input". The
outputs are recorded as they come, good or bad: they are what a user will see.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
S = "assets/samples"
PHOTOS = [f"{S}/cat.jpg", f"{S}/coffee.jpg", f"{S}/eileen_collins.jpg", f"{S}/grace_hopper.jpg"]
CLIPS = [f"{S}/video/arm_wrestling.webm", f"{S}/video/cleaning_a_pool.webm"]
SHAPES = [f"{S}/video/shapes/a_blue_square_grows.webm", f"{S}/video/shapes/a_red_circle_moves_to_the_left.webm",
          f"{S}/video/shapes/a_yellow_triangle_bounces.webm"]
PHOTO_QUESTIONS = [(f"{S}/grace_hopper.jpg", "what color is the hat?"), (f"{S}/cat.jpg", "what animal is this?"),
                   (f"{S}/eileen_collins.jpg", "what is the woman wearing?"), (f"{S}/coffee.jpg", "is there a dog?")]
SHAPE_QUESTIONS = [(f"{S}/easy_vqa/easy_vqa_test_2.png", "what is the blue shape?"),
                   (f"{S}/easy_vqa/easy_vqa_test_3.png", "what color is the circle?"),
                   (f"{S}/easy_vqa/easy_vqa_test_11.png", "is there a yellow shape?")]


def lines(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def name(path):
    return os.path.basename(path)


# model key -> (argument lists, one command each; how the rows come out: (out folder, [stdout]) -> [[input, output]])
def specs(out):
    def each(args_list, parse):
        return args_list, parse

    return {
        "caption": each([["caption", *PHOTOS, "--output", f"{out}/caption.jsonl", "--no-progress"]],
                        lambda o, _: [[name(r["image"]), r["caption"]] for r in jsonl(f"{o}/caption.jsonl")]),
        "vqa": each([["ask", "--image", p, "--question", q, "--json"] for p, q in PHOTO_QUESTIONS],
                    lambda o, std: [[f"{name(r['image'])}: {r['question']}",
                                     f"{r['answer']} ({r['probability']:.2f})"] for r in map(json.loads, std)]),
        "vqa_easy": each([["ask", "--model", "assets/models/easy_vqa.keras", "--image", p, "--question", q, "--json"]
                          for p, q in SHAPE_QUESTIONS],
                         lambda o, std: [[f"{name(r['image'])}: {r['question']}",
                                          f"{r['answer']} ({r['probability']:.2f})"] for r in map(json.loads, std)]),
        "translate_en_de": each([["translate", "--input", f"{S}/text/english.txt", "--output", f"{out}/de.txt"]],
                                lambda o, _: [list(p) for p in zip(lines(f"{S}/text/english.txt"), lines(f"{o}/de.txt"))]),
        "translate_fr_en": each([["translate", "--model", "assets/models/anki_fr_en.keras", "--input",
                                  f"{S}/text/french.txt", "--output", f"{out}/en.txt"]],
                                lambda o, _: [list(p) for p in zip(lines(f"{S}/text/french.txt"), lines(f"{o}/en.txt"))]),
        "transliterate": each([["transliterate", "--input", f"{S}/romanized_hindi.txt", "--output", f"{out}/hi.txt"]],
                              lambda o, _: [list(p) for p in zip(lines(f"{S}/romanized_hindi.txt"), lines(f"{o}/hi.txt"))]),
        "summarize": each([["summarize", "--input", f"{S}/text/articles.jsonl", "--output", f"{out}/bbc.jsonl"]],
                          lambda o, _: [[r["id"], r["summary"]] for r in jsonl(f"{o}/bbc.jsonl")]),
        "summarize_news": each([["summarize", "--model", "assets/models/news_headlines.keras", "--input",
                                 f"{S}/text/articles.jsonl", "--output", f"{out}/news.jsonl"]],
                               lambda o, _: [[r["id"], r["summary"]] for r in jsonl(f"{o}/news.jsonl")]),
        "entail": each([["entail", "--input", f"{S}/text/entail_pairs.tsv", "--output", f"{out}/entail.jsonl"]],
                       lambda o, _: [[f"{r['premise']} / {r['hypothesis']}", r["label"]]
                                     for r in jsonl(f"{o}/entail.jsonl")]),
        "classify": each([["classify", f"{S}/text/newsgroup_post.txt", "--output", f"{out}/topic.jsonl"]],
                         lambda o, _: [[name(r["source"]), f"{r['label']} ({r['probabilities'][r['label']]:.2f})"]
                                       for r in jsonl(f"{o}/topic.jsonl")]),
        "dialogue": each([["respond", "--input", f"{S}/text/dialogue.txt", "--output", f"{out}/respond.jsonl"]],
                         lambda o, _: [[" / ".join(lines(f"{S}/text/dialogue.txt")), r["response"]]
                                       for r in jsonl(f"{o}/respond.jsonl")]),
        "lm_char": each([["generate", "--prompt", "ROMEO:\n", "--length", "160", "--seed", "0"]],
                        lambda o, std: [["ROMEO:\\n (seed 0, 160 characters)", "\n".join(std).strip()]]),
        "lm_word": each([["generate", "--model", "assets/models/flickr8k_word_lm.keras", "--prompt", p, "--seed", "0"]
                         for p in ("a dog", "two children")],
                        lambda o, std: [[p, s] for p, s in zip(("a dog", "two children"), std)]),
        "video_caption": each([["video", *CLIPS, "--output", f"{out}/video.jsonl", "--no-progress"]],
                              lambda o, _: [[name(r["source"]), r["caption"]] for r in jsonl(f"{o}/video.jsonl")]),
        "video_classify": each([["video", *CLIPS, "--task", "classify", "--output", f"{out}/activity.jsonl",
                                 "--no-progress"]],
                               lambda o, _: [[name(r["source"]), f"{r['label']} ({r['probability']:.2f})"]
                                             for r in jsonl(f"{o}/activity.jsonl")]),
        "video_caption_shapes": each([["video", *SHAPES, "--model", "assets/models/shapes_video_caption.keras",
                                       "--output", f"{out}/shapes.jsonl", "--no-progress"]],
                                     lambda o, _: [[name(r["source"]), r["caption"]] for r in jsonl(f"{o}/shapes.jsonl")]),
        "video_classify_shapes": each([["video", *SHAPES, "--model", "assets/models/shapes_video_classify.keras",
                                        "--output", f"{out}/shapes_cls.jsonl", "--no-progress"]],
                                      lambda o, _: [[name(r["source"]), f"{r['label']} ({r['probability']:.2f})"]
                                                    for r in jsonl(f"{o}/shapes_cls.jsonl")]),
    }


def shown(args, out):
    """The command as a user types it: the temporary output folder shown as out/."""
    def quote(a):  # a line break as the shell's $'...' (one line per command)
        return "$'" + a.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'" if "\n" in a else shlex.quote(a)

    return "captioner " + " ".join(quote(a.replace(out, "out")) for a in args)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=None, help="model keys (captioner/bundled.py)")
    args = parser.parse_args(argv)

    from captioner.bundled import BY_KEY
    from captioner.io import write_json

    with tempfile.TemporaryDirectory() as out:
        table = specs(out)
        unknown = sorted(set(args.only or ()) - set(table))
        if unknown:
            parser.error(f"unknown model keys {unknown}; known: {', '.join(table)}")
        for key in args.only or table:
            commands, parse = table[key]
            stdout = []
            for cmd in commands:
                run = subprocess.run([sys.executable, "-m", "captioner", *cmd], cwd=ROOT, capture_output=True,
                                     text=True, timeout=900)
                if run.returncode != 0:
                    sys.exit(f"{key}: {shown(cmd, out)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
                text = run.stdout.strip()
                if key == "lm_char":
                    stdout.append(text)
                elif text:
                    stdout.extend(text.splitlines() if not key.startswith("lm_") else [text.splitlines()[0]])
            rows = parse(out, stdout)
            card_file = os.path.join(ROOT, "assets", "models", os.path.splitext(BY_KEY[key].file)[0] + ".json")
            with open(card_file, encoding="utf-8") as f:
                card = json.load(f)
            card.setdefault("extra", {})["examples_on_real_input"] = {
                "commands": [shown(c, out) for c in commands], "rows": rows}
            write_json(card_file, card)
            print(f"{key}: {len(rows)} examples -> {os.path.relpath(card_file, ROOT)}")
            for row in rows:
                print(f"    {row[0]!s:60.60} -> {row[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
