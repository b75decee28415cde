"""Batch-captioning benchmark: end-to-end captioning against backbone-only throughput.

    python scripts/bench_caption.py [--model assets/models/flickr8k_attention.keras] [--images 256]

Side by side in one run, on the same real Flickr8k JPEGs and batch size:

* backbone only: the captioner's own backbone, `predict` on the images already decoded;
* end to end: `captioner.inference.batch.caption_images` (read + decode in a thread pool +
  backbone + beam search + JSONL write) at the model's default beam.

Target: end to end >= 0.75x backbone only (decoder overhead at most 25%).
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import DEFAULT_MODEL, FLICKR_IMAGES, report  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--images-dir", default=FLICKR_IMAGES)
    parser.add_argument("--images", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=None, help="default: the model's")
    parser.add_argument("--output", default="bench_caption.json")
    args = parser.parse_args(argv)

    import keras
    import tensorflow as tf

    import captioner  # noqa: F401
    from captioner.features.images import list_images, load_image
    from captioner.inference.batch import caption_images

    model = keras.models.load_model(args.model)
    paths = list_images([args.images_dir])[: args.images]
    pixels = np.stack([load_image(p, size=model.input_size) for p in paths])
    backbone = tf.function(lambda x: model.backbone(x, training=False)["grid"], reduce_retracing=True)

    def backbone_only():
        for i in range(0, len(pixels), args.batch_size):
            backbone(tf.constant(pixels[i:i + args.batch_size])).numpy()

    backbone_only()  # warm up (traces)
    t = time.perf_counter()
    backbone_only()
    bare = len(paths) / (time.perf_counter() - t)
    with tempfile.TemporaryDirectory() as tmp:
        caption_images(paths[: args.batch_size], model, beam_size=args.beam_size, batch_size=args.batch_size,
                       output=os.path.join(tmp, "warm.jsonl"), progress=False)
        t = time.perf_counter()
        r = caption_images(paths, model, beam_size=args.beam_size, batch_size=args.batch_size,
                           output=os.path.join(tmp, "out.jsonl"), progress=False)
        e2e = r.captioned / (time.perf_counter() - t)
    beam = args.beam_size or model.beam_size
    rows = [
        (f"backbone only, decoded arrays ({len(paths)} images)", bare, "img/s"),
        (f"batch captioning end to end (beam {beam})", e2e, "img/s"),
        ("end to end / backbone only (target >= 0.75)", e2e / bare, "x"),
    ]
    report("batch captioning", rows, out=args.output)


if __name__ == "__main__":
    main()
