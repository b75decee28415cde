"""Exported forms of the bundled captioner against the Keras model, side by side on this CPU.

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_export.py [--images 16] [--repeats 3]

Converts (in a temporary folder) the TFLite backbone, the TFLite whole captioner (Flex ops)
and the SavedModel, then times on the same Flickr8k dev images (batch 1, the TFLite shape):

* backbone: Keras `model.encode` vs the TFLite backbone (features compared: max |diff|);
* whole captioner: Keras `model.generate` vs TFLite captioner vs SavedModel `caption_pixels`
  (captions compared), and the SavedModel from encoded bytes at batch 16 against
  `model.caption` at batch 16.

Prints sizes, ms per image (median of --repeats passes), the ratios, and what converted.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(fn, items, repeats):
    """Median over passes of the mean seconds per item of fn(item)."""
    fn(items[0])  # warm-up (tracing)
    passes = []
    for _ in range(repeats):
        started = time.perf_counter()
        for item in items:
            fn(item)
        passes.append((time.perf_counter() - started) / len(items))
    return statistics.median(passes)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=str(REPO / "assets" / "models" / "flickr8k_attention.keras"))
    p.add_argument("--images", type=int, default=16)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2, help="TFLite interpreter threads (default 2, this machine's cores)")
    args = p.parse_args(argv)

    import numpy as np
    import tensorflow as tf

    from captioner.export import tflite
    from captioner.export.saved_model import export_saved_model
    from captioner.inference.batch import load_captioner

    from bench_serve import dev_images

    model = load_captioner(args.model)
    paths = dev_images(args.images)
    pixels = [model.load_pixels(p)[None] for p in paths]  # (1, h, w, 3) uint8 each
    keras_mb = os.path.getsize(args.model) / 1e6
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # -- backbone
        started = time.perf_counter()
        size = tflite.write_tflite(model, os.path.join(tmp, "backbone.tflite"), "backbone")
        print(f"TFLite backbone: converted in {time.perf_counter() - started:.0f} s, {size / 1e6:.1f} MB "
              f"(the .keras file: {keras_mb:.1f} MB)", flush=True)
        backbone = tflite.Runner(os.path.join(tmp, "backbone.tflite"), "backbone", num_threads=args.threads)
        diff = max(float(np.abs(backbone(x)["grid"] - model.backbone(x.astype("float32"))["grid"].numpy()).max())
                   for x in pixels[:4])
        k = timed(lambda x: model.encode(x).numpy(), pixels, args.repeats)
        t = timed(lambda x: backbone(x), pixels, args.repeats)
        rows.append(("backbone, batch 1", k, t, "TFLite", f"max |feature diff| {diff:.2e}"))

        # -- whole captioner (TFLite, Flex)
        try:
            started = time.perf_counter()
            size = tflite.write_tflite(model, os.path.join(tmp, "captioner.tflite"), "captioner")
            print(f"TFLite whole captioner (Flex ops): converted in {time.perf_counter() - started:.0f} s, "
                  f"{size / 1e6:.1f} MB", flush=True)
            whole = tflite.Runner(os.path.join(tmp, "captioner.tflite"), "captioner", num_threads=args.threads)
            same = sum(model.beams(whole(x), 0)[0].text == model.decode_outputs(model.generate(x))[0].text for x in pixels)
            k = timed(lambda x: model.generate(x), pixels, args.repeats)
            t = timed(lambda x: whole(x), pixels, args.repeats)
            rows.append(("whole captioner, batch 1", k, t, "TFLite", f"captions equal {same}/{len(pixels)}"))
        except Exception as exc:  # report what does not convert
            print(f"TFLite whole captioner: does not convert ({type(exc).__name__}: {str(exc)[:300]})")

        # -- SavedModel
        started = time.perf_counter()
        export_saved_model(model, os.path.join(tmp, "saved"))
        saved_mb = sum(f.stat().st_size for f in Path(tmp, "saved").rglob("*") if f.is_file()) / 1e6
        print(f"SavedModel: exported in {time.perf_counter() - started:.0f} s, {saved_mb:.1f} MB", flush=True)
        loaded = tf.saved_model.load(os.path.join(tmp, "saved"))
        settings = [tf.constant(model.beam_size), tf.constant(model.alpha, tf.float32), tf.constant(model.max_length)]
        same = sum(loaded.caption_pixels(tf.constant(x), *settings)["caption"].numpy()[0].decode()
                   == model.decode_outputs(model.generate(x))[0].text for x in pixels)
        k = timed(lambda x: model.generate(x), pixels, args.repeats)
        t = timed(lambda x: loaded.caption_pixels(tf.constant(x), *settings), pixels, args.repeats)
        rows.append(("whole captioner, batch 1", k, t, "SavedModel (pixels)", f"captions equal {same}/{len(pixels)}"))
        data = [open(p, "rb").read() for p in paths]
        batches = [data[i:i + 16] for i in range(0, len(data), 16)]
        batch_paths = [paths[i:i + 16] for i in range(0, len(paths), 16)]
        same = sum(a.decode() == b.text for ds, ps in zip(batches, batch_paths)
                   for a, b in zip(loaded.caption(tf.constant(ds))["caption"].numpy(), model.caption(ps)))
        k = timed(lambda ps: model.caption(ps, batch_size=16), batch_paths, args.repeats) / 16
        t = timed(lambda ds: loaded.caption(tf.constant(ds)), batches, args.repeats) / 16
        rows.append(("bytes -> caption, batch 16", k, t, "SavedModel (bytes)", f"captions equal {same}/{len(paths)}"))

    print(f"\n{len(paths)} Flickr8k dev images, {args.repeats} passes (median), ms per image:")
    print(f"{'what':28} {'Keras':>9} {'exported':>9} {'ratio':>7}  form / check")
    for what, k, t, form, note in rows:
        print(f"{what:28} {1000 * k:9.1f} {1000 * t:9.1f} {k / t:6.2f}x  {form}; {note}")
    print("(ratio = Keras time / exported time: above 1, the exported form is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
