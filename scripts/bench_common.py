"""Shared helpers of the benchmarks: timing, peak memory, a results table and JSON."""

import os
import platform
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "assets", "models", "flickr8k_attention.keras")
FLICKR_IMAGES = os.path.join(os.path.dirname(ROOT), "shared", "datasets", "flickr8k", "Images")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average():
    """1-minute load average (other processes compete for the cores when it exceeds nproc)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def machine():
    return (f"{platform.machine()}, {os.cpu_count()} cores ({cpu_model()}), "
            f"{platform.python_implementation()} {platform.python_version()}")


def timed(fn, repeats=3, warmup=1):
    """Best wall time of `repeats` runs after `warmup` runs (seconds)."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def report(name, rows, extra=None, out=None):
    """Print a table of (label, value, unit) rows and write them as JSON."""
    width = max(len(r[0]) for r in rows)
    print(f"\n{name}  ({machine()}; load average {load_average()})")
    for label, value, unit in rows:
        print(f"  {label:<{width}}  {value:>10.3f}  {unit}")
    data = {"benchmark": name, "machine": machine(), "load_average_1min_at_end": load_average(), "argv": sys.argv,
            "results": {label: {"value": value, "unit": unit} for label, value, unit in rows}, **(extra or {})}
    if out:
        from captioner.io import write_json

        write_json(out, data)
        print(f"  -> {out}")
    return data
