"""Batch-captioning benchmark: end-to-end captioning against backbone-only throughput.

    python scripts/bench_caption.py [--model assets/models/flickr8k_attention.keras] [--images 256]

Side by side in one run, on the same real Flickr8k JPEGs and batch size:

* backbone only: the captioner's own backbone, `predict` on the images already decoded;
* end to end: `captioner.inference.batch.caption_images` (read + decode in a thread pool +
  backbone + beam search + JSONL write) at the model's default beam, with the object tags (the
  default of `captioner caption`: the ImageNet head, the familiar-photo test, the constraints);
* the same without the tags (`--no-objects`): issue 38's target, tags within 5% of it;
* with ``--learned-scale PX``: the same with tags on a copy of the model given one learned word
  that also reads each photo at PX x PX (`captioner model learn-words --scales`; its classifier
  says no to every photo, so the search is the same and only the extra backbone pass is timed).

Target: end to end >= 0.75x backbone only (decoder overhead at most 25%). The two alternate
`--repeats` times and the best rate of each counts; CPU time per image (this process, all
threads) is reported too, as it is far less sensitive to other processes on the machine.
"""

import argparse
import os
import tempfile
import time

import numpy as np

# python puts the script's own folder on sys.path, so the sibling module imports
from bench_common import DEFAULT_MODEL, FLICKR_IMAGES, load_average, report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--images-dir", default=FLICKR_IMAGES)
    parser.add_argument("--images", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=None, help="default: the model's")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs of each; the best counts")
    parser.add_argument("--learned-scale", type=int, default=0, metavar="PX",
                        help="also time tagging with a learned word read at this input side (0: not)")
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

    counter = [0]
    scaled = None
    if args.learned_scale:
        from captioner.tagging.learned_words import encode_weights, feature_count

        scaled = keras.models.load_model(args.model)
        never = np.zeros((feature_count(scaled.object_tagger().kernel, [args.learned_scale]) + 1, 1), np.float32)
        never[-1] = -50.0  # the word's probability is ~0 on every photo
        scaled.set_tagger(learned_words=[scaled.vocabulary.tokens[-1]], learned_weights=encode_weights(never),
                          learned_scales=[args.learned_scale])

    def end_to_end(tmp, objects=True, other=None):
        counter[0] += 1
        return caption_images(paths, other or model, beam_size=args.beam_size, batch_size=args.batch_size,
                              output=os.path.join(tmp, f"out{counter[0]}.jsonl"), progress=False,
                              objects=objects).captioned

    def measure(fn):
        """(images/s wall, CPU ms per image) of one run of fn."""
        t, c = time.perf_counter(), time.process_time()
        n = fn() or len(paths)
        return n / (time.perf_counter() - t), 1e3 * (time.process_time() - c) / n

    loads = [load_average()]
    with tempfile.TemporaryDirectory() as tmp:
        backbone_only()  # warm up (traces)
        caption_images(paths[: args.batch_size], model, beam_size=args.beam_size, batch_size=args.batch_size,
                       output=os.path.join(tmp, "warm.jsonl"), progress=False)
        # alternate the two, best of --repeats each: other processes on the machine slow
        # whichever runs while they are busy, and alternating exposes both to the same load
        if scaled is not None:
            end_to_end(tmp, other=scaled)  # warm up its backbone copy
        bare, e2e, plain, learned = [], [], [], []
        for _ in range(args.repeats):
            bare.append(measure(backbone_only))
            e2e.append(measure(lambda: end_to_end(tmp)))
            plain.append(measure(lambda: end_to_end(tmp, objects=False)))
            if scaled is not None:
                learned.append(measure(lambda: end_to_end(tmp, other=scaled)))
            loads.append(load_average())
    bare_rate, bare_cpu = max(r for r, _ in bare), min(c for _, c in bare)
    e2e_rate, e2e_cpu = max(r for r, _ in e2e), min(c for _, c in e2e)
    plain_rate, plain_cpu = max(r for r, _ in plain), min(c for _, c in plain)
    beam = args.beam_size or model.beam_size
    rows = [
        (f"backbone only, decoded arrays ({len(paths)} images, batch {args.batch_size})", bare_rate, "img/s"),
        (f"batch captioning end to end (beam {beam})", e2e_rate, "img/s"),
        ("end to end / backbone only (target >= 0.75)", e2e_rate / bare_rate, "x"),
        ("backbone only, CPU time per image", bare_cpu, "ms"),
        ("end to end, CPU time per image", e2e_cpu, "ms"),
        ("CPU-time ratio backbone / end to end", bare_cpu / e2e_cpu, "x"),
        ("batch captioning end to end without object tags", plain_rate, "img/s"),
        ("with tags / without tags (target >= 0.95)", e2e_rate / plain_rate, "x"),
        ("CPU-time ratio without / with tags", plain_cpu / e2e_cpu, "x"),
    ]
    if learned:
        learned_rate, learned_cpu = max(r for r, _ in learned), min(c for _, c in learned)
        rows += [(f"end to end with a learned word read at {args.learned_scale} px", learned_rate, "img/s"),
                 ("with that learned word / with tags", learned_rate / e2e_rate, "x"),
                 ("CPU-time ratio with tags / with that learned word", e2e_cpu / learned_cpu, "x")]
    extra = {"repeats": {"backbone_only": bare, "end_to_end": e2e, "end_to_end_without_tags": plain,
                         **({"end_to_end_learned_scale": learned} if learned else {})},
             "load_average_1min": loads}
    report("batch captioning", rows, extra=extra, out=args.output)


if __name__ == "__main__":
    main()
