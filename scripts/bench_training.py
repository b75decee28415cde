"""Training-step benchmark: the captioner's train step against the TF tutorial's loop.

    python scripts/bench_training.py [--batch-size 64] [--steps 10]

Same model size (the bundled model's defaults: projection 512, embedding 256, LSTM 512,
attention 256, vocabulary 2,540, and the 9x9 = 81 regions of 1280 channels of its
EfficientNet-Lite2 grid; `--regions 49` for a Lite0 7x7 grid), same batch, same weights:

* captioner: `CaptionDecoderModel.train_on_batch`: only the attention + LSTM recurrence is
  in the loop (`tf.scan`); embeddings, their input projection, the attention keys, the deep
  output and the vocabulary projection run once over all time steps;
* reference: the TensorFlow image-captioning tutorial's way: a Python loop over time steps
  inside `tf.function`, each step projecting the annotations for attention, running the
  cell and the output layer, and adding that step's loss.

Variants of the captioner step: float32, XLA (`jit_compile=True`), mixed bfloat16; the
reference runs in float32 (the target's baseline) and in mixed bfloat16 (same precision as
ours). The variants alternate `--repeats` times; the best rate and the least CPU time per step
of each count. Reports steps/s and the ratio to the float32 reference (target >= 2x).
"""

import argparse
import time

import numpy as np

# python puts the script's own folder on sys.path, so the sibling module imports
from bench_common import load_average, report


def build(policy="float32", jit=False, args=None):
    import keras

    from captioner.models.caption_decoder_model import CaptionDecoderModel, masked_sparse_ce

    keras.mixed_precision.set_global_policy(policy)
    keras.utils.set_random_seed(0)
    model = CaptionDecoderModel.of(args.vocab, 1280, projection_dim=512, embedding_dim=256, units=512,
                                attention_units=256, dropout=0.5)
    model.compile(optimizer=keras.optimizers.Adam(4e-4, clipnorm=5.0), loss=masked_sparse_ce, jit_compile=jit)
    keras.mixed_precision.set_global_policy("float32")
    return model


def reference_step_fn(model):
    """The tutorial's training step: Python loop over time inside tf.function."""
    import tensorflow as tf

    dec = model.decoder
    optimizer = model.optimizer

    @tf.function
    def step(annotations, tokens_in, targets):
        with tf.GradientTape() as tape:
            projected = model.project(annotations, training=True)
            memory, state = dec.prepare(projected)
            loss = 0.0
            steps = tokens_in.shape[1]
            for t in range(steps):  # unrolled in the graph, as in the tutorial
                memory["keys"] = dec.attention.project_keys(memory["annotations"])  # W1(features) each step
                emb = dec.embedding(tokens_in[:, t])
                state, context, _ = dec._recurrent_step(tf.matmul(emb, dec._cast(dec.kernel_e)), state, memory)
                logits = dec._output_logits(emb, state["h"], context, training=True)
                ce = tf.nn.sparse_softmax_cross_entropy_with_logits(targets[:, t], logits)
                mask = tf.cast(targets[:, t] != 0, ce.dtype)
                loss += tf.reduce_sum(ce * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)
            loss /= steps
        variables = model.trainable_variables
        grads = tape.gradient(loss, variables)
        grads, _ = tf.clip_by_global_norm(grads, 5.0)
        optimizer.apply(grads, variables)
        return loss

    return step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--length", type=int, default=16, help="caption tokens per example (Flickr8k mean is ~12)")
    parser.add_argument("--vocab", type=int, default=2540)
    parser.add_argument("--regions", type=int, default=81, help="annotation vectors per image (Lite2: 9x9)")
    parser.add_argument("--steps", type=int, default=8, help="train steps per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="alternating timed runs of each variant")
    parser.add_argument("--output", default="bench_training.json")
    args = parser.parse_args(argv)

    import tensorflow as tf

    rng = np.random.default_rng(0)
    feats = rng.normal(size=(args.batch_size, args.regions, 1280)).astype("float32")
    tokens = rng.integers(4, args.vocab, size=(args.batch_size, args.length + 1)).astype("int32")
    x = {"annotations": feats, "tokens": tokens[:, :-1]}
    y = tokens[:, 1:]

    variants = {}
    for label, policy, jit in (("captioner float32", "float32", False),
                               ("captioner float32 + XLA", "float32", True),
                               ("captioner mixed_bfloat16", "mixed_bfloat16", False)):
        model = build(policy, jit, args)
        variants[label] = (lambda m: lambda: m.train_on_batch(x, y))(model)
    xs = (tf.constant(feats), tf.constant(tokens[:, :-1]), tf.constant(y))
    for label, policy in (("reference (tutorial loop)", "float32"),
                          ("reference (tutorial loop) mixed_bfloat16", "mixed_bfloat16")):
        ref_model = build(policy, False, args)
        ref_model.optimizer.build(ref_model.trainable_variables)
        variants[label] = (lambda f: lambda: f(*xs).numpy())(reference_step_fn(ref_model))

    failed = {}
    for label, fn in list(variants.items()):  # warm up: traces / compiles
        try:
            fn()
            fn()
        except Exception as exc:  # noqa: BLE001 - report, don't hide, a variant that fails
            failed[label] = f"{type(exc).__name__}: {str(exc)[:300]}"
            print(f"{label}: failed ({failed[label]})")
            del variants[label]
    # alternate the variants, best of --repeats each: other processes on the machine slow
    # whichever runs while they are busy; CPU time (all threads of this process) is far
    # less sensitive to them than wall time
    wall, cpu, loads = {k: [] for k in variants}, {k: [] for k in variants}, [load_average()]
    for _ in range(args.repeats):
        for label, fn in variants.items():
            t, c = time.perf_counter(), time.process_time()
            for _ in range(args.steps):
                fn()
            wall[label].append(args.steps / (time.perf_counter() - t))
            cpu[label].append(1e3 * (time.process_time() - c) / args.steps)
        loads.append(load_average())
    rates = {k: max(v) for k, v in wall.items()}
    cpu_ms = {k: min(v) for k, v in cpu.items()}
    rows = []
    for label in variants:
        rows.append((f"{label} (batch {args.batch_size})", rates[label], "steps/s"))
    ref = "reference (tutorial loop)"
    for label in variants:
        if label.startswith("captioner"):
            rows.append((f"{label} / reference (target >= 2)", rates[label] / rates[ref], "x"))
    for label in variants:
        rows.append((f"{label}, CPU time per step", cpu_ms[label], "ms"))
    for label in variants:
        if label.startswith("captioner"):
            rows.append((f"{label} / reference, by CPU time", cpu_ms[ref] / cpu_ms[label], "x"))
    if "reference (tutorial loop) mixed_bfloat16" in variants and "captioner mixed_bfloat16" in variants:
        rows.append(("captioner mixed_bfloat16 / reference mixed_bfloat16",
                     rates["captioner mixed_bfloat16"] / rates["reference (tutorial loop) mixed_bfloat16"], "x"))
    extra = {"shape": {"batch": args.batch_size, "tokens": args.length, "regions": args.regions, "vocabulary": args.vocab},
             "failed": failed, "repeats": {"steps_per_s": wall, "cpu_ms_per_step": cpu}, "load_average_1min": loads}
    report("training step", rows, extra=extra, out=args.output)


if __name__ == "__main__":
    main()
