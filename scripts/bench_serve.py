"""Load test of `captioner serve` against the batch CLI, on the same images, in one run.

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_serve.py [--images 64] [--requests 192] [--clients 16]

1. `captioner caption IMAGES --output tmp.jsonl` (the batch CLI, batch 32): its images/s (the
   figure it prints, model loading excluded).
2. The batch CLI's engine warm, in this process (a second pass: no tracing in the figure).
3. `captioner serve --models caption` on 127.0.0.1 (loopback only, a free port), then `--clients`
   threads post the same images (multipart) until `--requests` answers or `--time-limit`
   seconds: throughput (answers/s over the wall time of the load), p50 / p99 latency, failures.
   The server is stopped at the end (only the process this script started).
4. The same with `captioner serve --no-pipeline` (backbone and beam search one after the other
   in each model call), unless --no-compare.

Prints the figures and their ratio, and writes them as JSON with --json.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dev_images(count):
    root = REPO.parent / "shared" / "datasets" / "flickr8k"
    names = (root / "Flickr_8k.devImages.txt").read_text().split()
    paths = [str(root / "Images" / n) for n in names if (root / "Images" / n).is_file()]
    return paths[:count]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env():
    return dict(os.environ, PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="3")


def batch_cli(paths, model, batch_size):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "captioner", "caption", *paths, "--output", os.path.join(tmp, "out.jsonl"),
               "--no-progress", "--batch-size", str(batch_size)] + (["--model", model] if model else [])
        started = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, env=env(), cwd=REPO, timeout=1200)
        wall = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(f"the batch CLI failed:\n{result.stderr[-2000:]}")
        match = re.search(r"captioned (\d+) images \(([\d.]+) img/s\)", result.stderr)
        captions = {}
        with open(os.path.join(tmp, "out.jsonl"), encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                captions[row["image"]] = row.get("caption")
    return {"images": int(match.group(1)), "images_per_second": float(match.group(2)), "wall_seconds": wall,
            "captions": captions}


def batch_engine_warm(paths, model_path, batch_size):
    """The batch CLI's engine (`caption_images`) in this process, a second time after a first pass
    traced its functions: the steady-state images/s (the CLI's own figure includes tracing)."""
    from captioner.commands.caption import resolve_model
    from captioner.inference.batch import caption_images, load_captioner

    model = load_captioner(resolve_model(model_path))
    rates = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(2):
            report = caption_images(paths, model, batch_size=batch_size, output=os.path.join(tmp, f"{i}.jsonl"),
                                    progress=False)
            rates.append(report.images_per_second)
    return rates[-1]


def load(port, paths, requests, clients, time_limit):
    import httpx

    files = [open(p, "rb").read() for p in paths]
    lock = threading.Lock()
    state = {"next": 0}
    latencies, failures, answers = [], [], {}
    deadline = time.perf_counter() + time_limit

    def client():
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            while True:
                with lock:
                    i = state["next"]
                    if i >= requests or time.perf_counter() > deadline:
                        return
                    state["next"] += 1
                started = time.perf_counter()
                try:
                    r = http.post("/v1/caption", files={"image": (Path(paths[i % len(paths)]).name,
                                                                  files[i % len(files)], "image/jpeg")})
                    ok = r.status_code == 200
                    body = r.json()
                except Exception as exc:  # a failed request is counted, not fatal
                    ok, body = False, {"error": f"{type(exc).__name__}: {exc}"}
                elapsed = time.perf_counter() - started
                with lock:
                    if ok:
                        latencies.append(elapsed)
                        answers[paths[i % len(paths)]] = body["caption"]
                    else:
                        failures.append(body)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    latencies.sort()

    def pct(q):
        return latencies[min(len(latencies) - 1, int(round(q * (len(latencies) - 1))))] if latencies else float("nan")

    return {"answered": len(latencies), "failed": len(failures), "wall_seconds": wall,
            "requests_per_second": len(latencies) / wall, "p50_ms": 1000 * pct(0.50), "p99_ms": 1000 * pct(0.99),
            "failures": failures[:5], "captions": answers}


def serve_and_load(args, paths, pipeline):
    """Start `captioner serve` (loopback, a free port), warm it with one request per client, run
    the load, stop it: (load figures, its /healthz batch counts)."""
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "captioner", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--max-batch", str(args.max_batch), "--max-wait-ms", str(args.max_wait_ms),
           "--models", "caption" + (f"={args.model}" if args.model else "")] + ([] if pipeline else ["--no-pipeline"])
    server = subprocess.Popen(cmd, env=env(), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready = time.perf_counter() + 300
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the server exited:\n{server.stderr.read()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.perf_counter() > ready:
                raise SystemExit("the server did not start within 300 s")
            time.sleep(1)
        print(f"server{'' if pipeline else ' --no-pipeline'} up on 127.0.0.1:{port}; {args.clients} clients, "
              f"{args.requests} requests ...", flush=True)
        load(port, paths[:args.clients], args.clients, args.clients, 60)  # warm-up: every batch size up to 16
        served = load(port, paths, args.requests, args.clients, args.time_limit)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).json()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    return served, health["batches"]["caption"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", type=int, default=64, help="Flickr8k dev images used (default 64)")
    p.add_argument("--requests", type=int, default=192, help="requests in the load test (default 192)")
    p.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    p.add_argument("--time-limit", type=float, default=300, help="stop sending after this many seconds")
    p.add_argument("--model", default=None, help="captioner .keras (default: the bundled one)")
    p.add_argument("--batch-size", type=int, default=32, help="the batch CLI's batch size (default 32)")
    p.add_argument("--max-batch", type=int, default=32, help="the server's --max-batch (default 32)")
    p.add_argument("--max-wait-ms", type=float, default=5.0, help="the server's --max-wait-ms (default 5)")
    p.add_argument("--json", default=None, help="write the figures here")
    p.add_argument("--no-compare", dest="compare_no_pipeline", action="store_false",
                   help="skip the second server started with --no-pipeline (by default both run, side by side)")
    args = p.parse_args(argv)

    paths = dev_images(args.images)
    print(f"{len(paths)} Flickr8k dev images; batch CLI (batch {args.batch_size}) ...", flush=True)
    cli = batch_cli(paths, args.model, args.batch_size)
    print(f"  batch CLI: {cli['images']} images, {cli['images_per_second']:.2f} images/s "
          f"(wall {cli['wall_seconds']:.1f} s with model loading)", flush=True)

    warm = batch_engine_warm(paths, args.model, args.batch_size)
    print(f"  batch engine, warm (second pass in one process): {warm:.2f} images/s", flush=True)

    served, calls = serve_and_load(args, paths, pipeline=True)
    print(f"  server: {served['answered']} answered, {served['failed']} failed in {served['wall_seconds']:.1f} s: "
          f"{served['requests_per_second']:.2f} requests/s; latency p50 {served['p50_ms']:.0f} ms, "
          f"p99 {served['p99_ms']:.0f} ms; {calls['calls']} model calls for {calls['requests']} requests "
          f"(mean batch {calls['requests'] / max(calls['calls'], 1):.1f}, warm-up included); seconds in each stage "
          f"(backbone, search): {calls.get('stage_seconds')}")
    serial = None
    if args.compare_no_pipeline:
        serial, serial_calls = serve_and_load(args, paths, pipeline=False)
        print(f"  server --no-pipeline: {serial['answered']} answered, {serial['failed']} failed: "
              f"{serial['requests_per_second']:.2f} requests/s; p50 {serial['p50_ms']:.0f} ms, "
              f"p99 {serial['p99_ms']:.0f} ms (mean batch {serial_calls['requests'] / max(serial_calls['calls'], 1):.1f})")
    same = sum(served["captions"].get(k) == v for k, v in cli["captions"].items() if k in served["captions"])
    ratio = served["requests_per_second"] / cli["images_per_second"]
    print(f"  throughput ratio server / batch CLI: {ratio:.2f}x (target >= 0.8x); server / warm batch engine: "
          f"{served['requests_per_second'] / warm:.2f}x"
          + (f"; --no-pipeline / warm batch engine: {serial['requests_per_second'] / warm:.2f}x" if serial else ""))
    print(f"  captions equal to the batch CLI's: {same} of {len(served['captions'])} images")
    figures = {"images": len(paths), "clients": args.clients, "batch_cli": {k: v for k, v in cli.items() if k != "captions"},
               "server": {k: v for k, v in served.items() if k != "captions"}, "model_calls": calls,
               "batch_engine_warm_images_per_second": warm, "ratio_vs_warm": served["requests_per_second"] / warm,
               "ratio": ratio, "captions_equal": same, "captions_compared": len(served["captions"])}
    if serial is not None:
        figures["server_no_pipeline"] = {k: v for k, v in serial.items() if k != "captions"}
        figures["ratio_vs_warm_no_pipeline"] = serial["requests_per_second"] / warm
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if served["failed"] == 0 and (serial is None or serial["failed"] == 0) else 1


if __name__ == "__main__":
    sys.exit(main())
