"""Feature-extraction benchmark: end to end against the backbone's bare predict, and memory.

    python scripts/bench_extract.py [--images 512] [--memory 500,5000]

* end to end: `extract_features` (read + decode + resize + backbone + HDF5 write, decoding
  in a thread pool overlapped with inference) over N Flickr8k JPEGs into a new store;
* bare: `model.predict` on the same images already decoded into one array (not timed);
  target: end to end >= 0.9x bare.
* memory: peak RSS of a fresh process extracting 500 and 5,000 images (target: within 10%;
  the store streams, so memory must not grow with the number of images).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# python puts the script's own folder on sys.path, so the sibling module imports
from bench_common import FLICKR_IMAGES, load_average, report

_CHILD = """
import json, resource, sys, time
from captioner.features.extract import extract_features
from captioner.features.images import list_images
paths = list_images([sys.argv[1]])[: int(sys.argv[2])]
t = time.perf_counter()
r = extract_features(paths, sys.argv[3], batch_size=int(sys.argv[4]), progress=False)
print(json.dumps({"stored": r.stored, "seconds": time.perf_counter() - t,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child_extract(images_dir, n, out, batch_size):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, images_dir, str(n), out, str(batch_size)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images-dir", default=FLICKR_IMAGES)
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="alternating speed runs of each; the best counts")
    parser.add_argument("--memory", default="500,5000", help="image counts of the peak-memory runs ('' to skip)")
    parser.add_argument("--output", default="bench_extract.json")
    args = parser.parse_args(argv)

    from captioner.backbones import get_backbone
    from captioner.features.extract import extract_features
    from captioner.features.images import list_images, load_image

    paths = list_images([args.images_dir])[: args.images]
    backbone = get_backbone()
    pixels = np.stack([load_image(p, size=backbone.input_size) for p in paths])
    backbone.model.predict(pixels[: args.batch_size], batch_size=args.batch_size, verbose=0)  # warm up

    def measure(fn):
        """(images/s wall, CPU ms per image) of one run of fn."""
        t, c = time.perf_counter(), time.process_time()
        n = fn()
        return n / (time.perf_counter() - t), 1e3 * (time.process_time() - c) / n

    def bare_run():
        backbone.model.predict(pixels, batch_size=args.batch_size, verbose=0)
        return len(paths)

    loads = [load_average()]
    with tempfile.TemporaryDirectory() as tmp:
        extract_features(paths[: args.batch_size], os.path.join(tmp, "warm.h5"), backbone=backbone,
                         batch_size=args.batch_size, progress=False)
        counter = [0]

        def e2e_run():
            counter[0] += 1
            return extract_features(paths, os.path.join(tmp, f"f{counter[0]}.h5"), backbone=backbone,
                                    batch_size=args.batch_size, progress=False).stored

        # alternate the two, best of --repeats each (other processes slow whichever runs
        # while they are busy); CPU time per image is reported too
        bare_runs, e2e_runs = [], []
        for _ in range(args.repeats):
            bare_runs.append(measure(bare_run))
            e2e_runs.append(measure(e2e_run))
            loads.append(load_average())
        bare, e2e = max(r for r, _ in bare_runs), max(r for r, _ in e2e_runs)
        bare_cpu, e2e_cpu = min(c for _, c in bare_runs), min(c for _, c in e2e_runs)
        rows = [
            (f"bare predict on decoded arrays ({len(paths)} images)", bare, "img/s"),
            ("extract end to end (decode + backbone + HDF5)", e2e, "img/s"),
            ("end to end / bare (target >= 0.9)", e2e / bare, "x"),
            ("bare predict, CPU time per image", bare_cpu, "ms"),
            ("extract end to end, CPU time per image", e2e_cpu, "ms"),
            ("CPU-time ratio bare / end to end", bare_cpu / e2e_cpu, "x"),
        ]
        memory = {}
        for n in [int(v) for v in args.memory.split(",") if v]:
            res = child_extract(args.images_dir, n, os.path.join(tmp, f"m{n}.h5"), args.batch_size)
            memory[n] = res
            rows.append((f"peak RSS, {res['stored']} images", res["peak_rss_mb"], "MB"))
        if len(memory) == 2:
            a, b = (memory[k]["peak_rss_mb"] for k in sorted(memory))
            rows.append(("peak RSS ratio large / small (target <= 1.1)", b / a, "x"))
    report("feature extraction", rows, extra={"memory_runs": memory, "load_average_1min": loads,
                                              "repeats": {"bare": bare_runs, "end_to_end": e2e_runs}},
           out=args.output)


if __name__ == "__main__":
    main()
