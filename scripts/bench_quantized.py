"""The TFLite captioner in float32 against its dynamic-range quantised (int8 weights) twin, side by
side on this CPU, on Flickr8k dev photos (issue 68 item 4: measured, not assumed).

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_quantized.py [--model M] [--images 200] [--repeats 2]

Converts (in a temporary folder) the whole captioner (backbone + the one beam search, Flex ops) and
the backbone alone, each in float32 and with `captioner export --quantize dynamic`'s setting, then on
the same photos (batch 1, the TFLite shape): ms per photo of each (median of --repeats passes), the
share of captions identical to float32's, and coco-caption BLEU-4 / CIDEr of each against the
Flickr8k references. The TFLite captioner decodes at the model's saved settings and default style,
without the object tagger (Python), so its figures are not those of `captioner caption`.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="an image captioner .keras (default: the bundled one)")
    p.add_argument("--images", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--output", default=None, help="the figures as JSON")
    args = p.parse_args(argv)

    from tqdm import tqdm

    from bench_export import timed
    from bench_serve import dev_images
    from captioner.bundled import default_path
    from captioner.data import load_flickr8k
    from captioner.decoding.generator import hypothesis_words
    from captioner.export import tflite
    from captioner.inference.batch import load_captioner
    from captioner.io import write_json
    from captioner.metrics import evaluate_captions
    from captioner.text.tokenizer import detokenize

    path = args.model or default_path("caption")
    model = load_captioner(path)
    paths = dev_images(args.images)
    refs = load_flickr8k(str(REPO.parent / "shared" / "datasets" / "flickr8k"), split="dev").captions
    pixels = [model.load_pixels(q)[None] for q in tqdm(paths, desc="decode", unit="img")]
    out = {"model": os.path.basename(path), "photos": len(paths), "threads": args.threads, "rows": {}}
    captions = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("backbone", "captioner"):
            for quantize in (None, "dynamic"):
                name = f"{kind} {'int8 dynamic' if quantize else 'float32'}"
                target = os.path.join(tmp, f"{kind}_{quantize or 'f32'}.tflite")
                size = tflite.write_tflite(model, target, kind, quantize)
                runner = tflite.Runner(target, kind, num_threads=args.threads)
                row = {"mb": round(size / 1e6, 2)}
                if kind == "captioner":
                    texts = []
                    for px in tqdm(pixels, desc=name, unit="img"):
                        tokens = runner(px)["tokens"][0, 0]
                        words, _ = hypothesis_words(model.vocabulary, tokens)
                        texts.append(detokenize(words))
                    captions[quantize] = texts
                    scores = evaluate_captions({q: refs[q] for q in paths}, dict(zip(paths, texts)), meteor=False)
                    row.update({"BLEU-4": round(scores["BLEU-4"], 2), "CIDEr": round(scores["CIDEr"], 2),
                                "tool": scores.get("tool")})
                row["ms_per_photo"] = round(1000 * timed(runner, pixels[: min(len(pixels), 50)], args.repeats), 1)
                out["rows"][name] = row
                print(name, json.dumps(row), flush=True)
    same = sum(a == b for a, b in zip(captions[None], captions["dynamic"]))
    out["identical_captions"] = f"{same} of {len(paths)}"
    for kind in ("backbone", "captioner"):
        f32, q8 = out["rows"][f"{kind} float32"], out["rows"][f"{kind} int8 dynamic"]
        out[f"{kind} speed-up int8 / float32"] = round(f32["ms_per_photo"] / q8["ms_per_photo"], 3)
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}))
    if args.output:
        write_json(args.output, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
