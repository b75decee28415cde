"""Decoding benchmark: the batched beam search against a per-image Python-loop beam search.

    python scripts/bench_decoding.py [--model assets/models/flickr8k_attention.keras]

Both searches use the same trained decoder and the same compiled one-step function; the
reference loops over images and time steps in Python and ranks hypotheses with numpy, the
way a first implementation does. Reported side by side in one run: batched beam-5 over 32
images vs the reference (target >= 10x), and beam-5 vs greedy time (target <= 3x; the two alternate
--repeats times, best of each, and the JSON keeps every pair's ratio).

``--baseline REF`` also times the Generator and search of git commit REF (its captioner/decoding
modules, loaded from `git show` into a package of their own) on the same decoder and features,
alternating with today's: the ratio says what a change to the search cost (issue 70: the
composable search against the one-function search it replaced, target within 5%), and whether
the two give the same tokens.
"""

import argparse
import os

import numpy as np

# python puts the script's own folder on sys.path, so the sibling module imports
from bench_common import DEFAULT_MODEL, report, timed


def reference_beam_search(decoder_model, annotations, beam_size, max_length, step_fn):
    """Straightforward beam search: one image at a time, Python loop over steps."""
    import tensorflow as tf

    from captioner.text.vocabulary import END_ID, START_ID

    results = []
    for b in range(annotations.shape[0]):
        projected = decoder_model.project(annotations[b:b + 1])
        memory, state = decoder_model.decoder.prepare(projected)
        beams = [([START_ID], 0.0, state)]
        finished = []
        for _ in range(max_length):
            candidates = []
            for tokens, score, st in beams:
                log_probs, new_state, _ = step_fn(tf.constant([tokens[-1]], tf.int32), st, memory)
                lp = log_probs.numpy()[0]
                for tok in np.argsort(-lp)[:beam_size]:
                    candidates.append((tokens + [int(tok)], score + float(lp[tok]), new_state))
            candidates.sort(key=lambda c: -c[1])
            beams = []
            for cand in candidates:
                (finished if cand[0][-1] == END_ID else beams).append(cand)
                if len(beams) == beam_size:
                    break
            if not beams or len(finished) >= beam_size:
                break
        best = max(finished + beams, key=lambda c: c[1])
        results.append(best[0][1:])
    return results


def baseline_generator(ref, generator):
    """A Generator of commit `ref`'s captioner/decoding on `generator`'s decoder, encode and banned ids."""
    import importlib
    import subprocess
    import sys
    import tempfile

    from bench_common import ROOT

    package = tempfile.mkdtemp(prefix="baseline_decoding_")
    os.makedirs(os.path.join(package, "baseline_decoding"))
    names = subprocess.run(["git", "-C", ROOT, "ls-tree", "--name-only", ref, "captioner/decoding/"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        text = subprocess.run(["git", "-C", ROOT, "show", f"{ref}:{name}"], check=True, capture_output=True,
                              text=True).stdout.replace("captioner.decoding", "baseline_decoding")
        with open(os.path.join(package, "baseline_decoding", os.path.basename(name)), "w") as f:
            f.write(text)
    sys.path.insert(0, package)
    module = importlib.import_module("baseline_decoding.generator")
    return module.Generator(generator.decoder, generator.encode, banned_ids=generator.banned_ids)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--images", type=int, default=32)
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--max-length", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5,
                        help="alternating timed runs of beam and greedy; the best of each counts")
    parser.add_argument("--baseline", metavar="REF", help="also time the search of this git commit, alternating")
    parser.add_argument("--output", default="bench_decoding.json")
    args = parser.parse_args(argv)

    import keras
    import tensorflow as tf

    import captioner  # noqa: F401

    from captioner.models.keras_archive import check_keras_archive

    check_keras_archive(args.model)  # the zip's declared sizes, before Keras inflates anything
    model = keras.models.load_model(args.model)
    decoder_model = model.decoder
    rng = np.random.default_rng(0)
    # real backbone features of real photos when available, else random features of the right shape
    from bench_common import FLICKR_IMAGES
    if os.path.isdir(FLICKR_IMAGES):
        from captioner.features.images import list_images, load_image

        paths = list_images([FLICKR_IMAGES])[: args.images]
        pixels = np.stack([load_image(p, size=model.input_size) for p in paths])
        feats = model.features(tf.constant(pixels)).numpy()
    else:
        feats = rng.normal(size=(args.images, 49, decoder_model.annotation_dim)).astype("float32")

    step_fn = tf.function(lambda tok, st, mem: decoder_model.decoder.step(tok, st, mem), reduce_retracing=True)

    def beam():
        return decoder_model.generate(feats, beam_size=args.beam_size, max_length=args.max_length)["tokens"].numpy()

    def greedy_run():
        return decoder_model.generate(feats, beam_size=1, max_length=args.max_length)["tokens"].numpy()

    # alternate the two, best of --repeats each: this machine's speed drifts between runs, and
    # alternating exposes both searches to the same drift; the per-pair ratios are kept too
    beam(), greedy_run()  # compile both
    pairs = [(timed(beam, repeats=1, warmup=0), timed(greedy_run, repeats=1, warmup=0)) for _ in range(args.repeats)]
    batched, greedy = min(b for b, _ in pairs), min(g for _, g in pairs)
    reference = timed(lambda: reference_beam_search(decoder_model, feats, args.beam_size, args.max_length, step_fn),
                      repeats=1, warmup=1)
    n = len(feats)
    rows = [
        (f"batched beam-{args.beam_size} ({n} images)", n / batched, "img/s"),
        (f"reference per-image loop beam-{args.beam_size}", n / reference, "img/s"),
        ("batched greedy", n / greedy, "img/s"),
        ("speed-up batched / reference (target >= 10)", reference / batched, "x"),
        (f"beam-{args.beam_size} time / greedy time (target <= 3)", batched / greedy, "x"),
    ]
    ratios = sorted(b / g for b, g in pairs)
    extra = {"beam_over_greedy_per_pair": [round(r, 3) for r in ratios],
             "beam_over_greedy_median_pair": round(ratios[len(ratios) // 2], 3), "repeats": args.repeats}
    if args.baseline:
        old = baseline_generator(args.baseline, decoder_model.generator)

        def old_beam():
            return old(feats, beam_size=args.beam_size, alpha=0.0, max_length=args.max_length)["tokens"].numpy()

        same = bool((old_beam() == beam()).all())  # also compiles the baseline's function
        versus = [(timed(beam, repeats=1, warmup=0), timed(old_beam, repeats=1, warmup=0))
                  for _ in range(args.repeats)]
        now, then = min(a for a, _ in versus), min(b for _, b in versus)
        rows += [(f"baseline {args.baseline} beam-{args.beam_size}", n / then, "img/s"),
                 (f"this search / baseline {args.baseline} time (target <= 1.05)", now / then, "x")]
        per_pair = sorted(a / b for a, b in versus)
        extra.update(baseline=args.baseline, same_tokens_as_baseline=same,
                     over_baseline_per_pair=[round(r, 3) for r in per_pair],
                     over_baseline_median_pair=round(per_pair[len(per_pair) // 2], 3))
    report("decoding", rows, out=args.output, extra=extra)


if __name__ == "__main__":
    main()
