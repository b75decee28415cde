"""Character language models side by side on one dev text (issue 42 item 3): the recurrent model
and the causal Transformer of about its parameter count, trained for the same minutes.

    python scripts/experiments/compare_char_lms.py \\
        --data ../shared/datasets/tinyshakespeare/input.train.txt \\
        --run lstm runs/shakespeare_lstm --run transformer runs/shakespeare_gpt \\
        --output assets/benchmarks/char_lm_lstm_vs_transformer.json

Each --run is a label and a `captioner train lm` run directory (its history.json, and the model its
config.json names as --model-out, else its model.keras).
The dev text is the recipe's (the end of --data from a blank line after 90% on). Scored two ways:

* each model's own reading: the LSTM's state carried over the whole dev text, the Transformer's
  context window sliding by half of it;
* one protocol for both, nanoGPT's validation loss: non-overlapping blocks of `--block` characters,
  each read from nothing (block k is characters [k B, k B + B + 1): its first given, B predicted).

Writes the JSON (per model: parameters, minutes, steps, epochs, the two dev figures in nats and
perplexity) and a PNG beside it: dev perplexity against training minutes.
"""

import argparse
import json
import math
import os

import numpy as np


def block_streams(ids, block):
    return [ids[k:k + block + 1] for k in range(0, len(ids) - 1, block)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the training text the runs carved their dev text from")
    parser.add_argument("--dev-fraction", type=float, default=0.1)
    parser.add_argument("--run", nargs=2, action="append", metavar=("LABEL", "RUN_DIR"), required=True)
    parser.add_argument("--block", type=int, default=128, help="characters per block of the common protocol")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)

    import keras

    import captioner  # noqa: F401
    from captioner.io import write_json
    from captioner.data.lm_text import carve_char_dev, read_text

    _, dev, dev_desc = carve_char_dev(read_text(args.data), args.dev_fraction)
    rows = {}
    for label, run in args.run:
        history = json.load(open(os.path.join(run, "history.json"), encoding="utf-8"))
        config = json.load(open(os.path.join(run, "config.json"), encoding="utf-8"))
        model = keras.models.load_model(config.get("model_out") or os.path.join(run, "model.keras"))
        if model.arch == "transformer" and args.block > model.context:
            parser.error(f"--block {args.block}: longer than {label}'s context ({model.context})")
        own = model.evaluate_text(dev, "dev")
        ids = model.text_ids(dev, "dev")
        blocks = block_streams(ids, args.block)
        nll, counts = model.log_likelihood(blocks, stride=args.block) if model.arch == "transformer" else \
            model.log_likelihood(blocks, window=args.block)
        block_nats = float(nll.sum() / counts.sum())
        minutes = np.cumsum([h.get("train_seconds", 0.0) for h in history]) / 60
        windows = (config["train_characters"] - 1) // config["seq_length"] - 1  # as the recipe counts them
        steps_per_epoch = config.get("steps_per_epoch") or -(-windows // config["batch_size"])
        rows[label] = {
            "run": run, "arch": model.arch, "parameters": int(model.count_params()),
            "config": {k: config.get(k) for k in ("units", "embedding_dim", "cell", "num_layers", "num_heads",
                                                 "seq_length", "batch_size", "learning_rate", "dropout",
                                                 "weight_decay", "mixed_precision", "time_budget", "seed")
                       if k in config},
            "epochs": len(history), "train_minutes": round(float(minutes[-1]), 1),
            "steps_per_epoch": steps_per_epoch, "steps": steps_per_epoch * len(history),
            "own_reading": {"nats": own["nll_nats"] / own["tokens"], "perplexity": own["perplexity"],
                            "tokens": own["tokens"]},
            f"blocks_of_{args.block}": {"nats": block_nats, "perplexity": math.exp(block_nats),
                                        "tokens": int(counts.sum())},
            "curve": [{"minutes": round(float(m), 2), "dev_perplexity": h["dev_perplexity"]}
                      for m, h in zip(minutes, history)],
        }
        print(f"{label}: {rows[label]['parameters']:,} parameters, {len(history)} epochs in "
              f"{rows[label]['train_minutes']} min; dev own reading {own['nll_nats'] / own['tokens']:.4f} nats "
              f"(ppl {own['perplexity']:.3f}); blocks of {args.block}: {block_nats:.4f} nats "
              f"(ppl {math.exp(block_nats):.3f})")
    write_json(args.output, {"dev": dev_desc, "dev_characters": len(dev), "block": args.block,
                             "anchors": {"nanoGPT shakespeare_char (6 x 384, 10.7M, GPU), val loss": 1.4697,
                                         "nanoGPT CPU recipe (4 x 128, 2,000 iterations), val loss about": 1.88},
                             "models": rows})
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, row in rows.items():
        ax.plot([c["minutes"] for c in row["curve"]], [c["dev_perplexity"] for c in row["curve"]], marker="o",
                ms=3, label=f"{label} ({row['parameters'] / 1e6:.2f}M parameters)")
    ax.set_xlabel("training minutes (2 CPU cores)")
    ax.set_ylabel("dev perplexity per character (per-epoch reading)")
    ax.set_ylim(top=min(ax.get_ylim()[1], 8))
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Tiny Shakespeare, character LMs of one size and one time budget")
    fig.tight_layout()
    png = os.path.splitext(args.output)[0] + ".png"
    fig.savefig(png + ".tmp.png", dpi=110)
    os.replace(png + ".tmp.png", png)
    print("wrote", args.output, png)


if __name__ == "__main__":
    main()
