"""The app's first caption: a fresh process imports captioner, loads a captioner file and captions
one photo; load time, first-caption time and peak memory, two model files side by side.

    git show d05f99d:assets/models/flickr8k_attention.keras > /tmp/float32.keras   # before issue 39
    python scripts/bench_first_caption.py --model /tmp/float32.keras --model assets/models/flickr8k_attention.keras

Each round starts one fresh Python process per model file, alternating (a process's first
caption is what a user of the app or the CLI waits for: nothing is warm). The median of
`--rounds` counts; the ratios are of the second file to the first. `--objects` captions with the
tagger on (the app's default: it also reads the ImageNet head from the backbone's pip package).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

# python puts the script's own folder on sys.path, so the sibling module imports
from bench_common import ROOT, report

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import keras
import captioner  # noqa: F401
t1 = time.perf_counter()
model = keras.models.load_model(sys.argv[1])
t2 = time.perf_counter()
caption = model.caption([sys.argv[2]], objects=sys.argv[3] == "1")[0]
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "first_caption_s": t3 - t2, "total_s": t3 - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "caption": caption.text}))
"""


def one_run(model, image, objects):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", CHILD, model, image, "1" if objects else "0"], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"{model}: the fresh process failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="a captioner .keras file; give two")
    parser.add_argument("--image", default=os.path.join(ROOT, "assets", "samples", "cat.jpg"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--objects", action="store_true", help="caption with the object tagger (the app's default)")
    parser.add_argument("--output", default="bench_first_caption.json")
    args = parser.parse_args(argv)
    if len(args.model) != 2:
        parser.error("give --model twice: the file before and the file after")

    runs = {m: [] for m in args.model}
    for _ in range(args.rounds):
        for m in args.model:
            runs[m].append(one_run(m, args.image, args.objects))
    medians = {m: {k: statistics.median(r[k] for r in rs) for k in ("import_s", "load_s", "first_caption_s",
                                                                     "total_s", "peak_rss_mb")}
               for m, rs in runs.items()}
    first, second = args.model
    rows = []
    for i, m in enumerate(args.model, 1):
        rows += [(f"[{i}] {key} ({os.path.basename(m)}, {os.path.getsize(m) / 1e6:.1f} MB)", value,
                  "MB" if key == "peak_rss_mb" else "s") for key, value in medians[m].items()]
    rows += [(f"[2]/[1] {key}", medians[second][key] / medians[first][key], "x")
             for key in ("load_s", "total_s", "peak_rss_mb")]
    report("first caption in a fresh process", rows,
           extra={"models": args.model, "objects": args.objects, "rounds": args.rounds,
                  "captions": {m: rs[0]["caption"] for m, rs in runs.items()}, "runs": runs},
           out=args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
