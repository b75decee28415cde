#!/usr/bin/env python
"""Train the NumPy RNN (or LSTM) of `captioner.reference` as a character model on first names,
then sample new ones.

    python scripts/numpy_char_rnn.py                      # the 50 names below, RNN, seed 0
    python scripts/numpy_char_rnn.py --cell lstm
    python scripts/numpy_char_rnn.py --names my_names.txt --iterations 20000

Each iteration takes one name (the list is reshuffled every pass), runs the model over its
characters from a zero state, and takes one Adagrad step on the gradients of
`rnn_loss_gradients` / `lstm_loss_gradients`, clipped elementwise to [-clip, clip]. The loss
printed is the mean over the last --print-every iterations, in nats, per name and per
character (the end mark counts as one); uniform guessing would cost log(vocabulary) per
character, log(26) = 3.26 for the built-in names. With 50 names most samples are training
names (marked *): the model has nearly memorised them; the others are its inventions.
"""

import argparse
import time

import numpy as np


NAMES = [  # 50 common first names, lower case
    "ada", "alice", "amelia", "anna", "arthur", "ben", "bella", "carl", "clara", "daniel",
    "david", "edith", "elena", "emil", "emma", "felix", "frida", "george", "grace", "hannah",
    "harry", "henry", "ida", "isaac", "jack", "james", "julia", "karl", "lena", "leo", "lily",
    "lucas", "margaret", "maria", "martha", "max", "mia", "nora", "oliver", "oscar", "paul",
    "rosa", "ruth", "sam", "sofia", "thomas", "victor", "walter", "william", "zoe",
]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--names", help="a text file, one name per line (default: the 50 names in this script)")
    p.add_argument("--cell", choices=("rnn", "lstm"), default="rnn")
    p.add_argument("--hidden", type=int, default=50, help="n_a, the size of the hidden state")
    p.add_argument("--iterations", type=int, default=4000)
    p.add_argument("--learning-rate", type=float, default=0.1, help="Adagrad's")
    p.add_argument("--clip", type=float, default=5.0)
    p.add_argument("--print-every", type=int, default=500)
    p.add_argument("--samples", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    from captioner.reference import (
        adagrad_update,
        clip_gradients,
        encode_word,
        initialize_lstm_parameters,
        initialize_rnn_parameters,
        lstm_loss_gradients,
        rnn_loss_gradients,
        sample,
    )
    from captioner.reference.char_rnn import END

    if args.names:
        with open(args.names, encoding="utf-8") as f:
            names = [line.strip().lower() for line in f if line.strip()]
    else:
        names = NAMES
    chars = sorted(set("".join(names)) | {END})
    char_to_ix = {ch: i for i, ch in enumerate(chars)}
    vocab = len(chars)
    print(f"{len(names)} names, {vocab} characters (with the end mark), {args.cell}, n_a={args.hidden}")

    if args.cell == "rnn":
        parameters = initialize_rnn_parameters(vocab, args.hidden, vocab, seed=args.seed)
        loss_gradients = rnn_loss_gradients
    else:
        parameters = initialize_lstm_parameters(vocab, args.hidden, vocab, seed=args.seed)
        loss_gradients = lstm_loss_gradients
    a0 = np.zeros((args.hidden, 1))
    rng = np.random.default_rng(args.seed)
    memory = {}

    order, losses, chars_seen = [], [], []
    start = time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        if not order:
            order = list(rng.permutation(len(names)))  # a new pass over the names
        x, labels = encode_word(names[order.pop()], char_to_ix)  # (vocab, 1, T_x), (1, T_x)
        loss, gradients, _ = loss_gradients(x, labels, a0, parameters)
        gradients = clip_gradients({"d" + k: gradients["d" + k] for k in parameters}, args.clip)
        adagrad_update(parameters, gradients, memory, args.learning_rate)
        losses.append(loss)
        chars_seen.append(labels.shape[1])
        if iteration % args.print_every == 0:
            per_name = np.mean(losses[-args.print_every:])
            per_char = np.sum(losses[-args.print_every:]) / np.sum(chars_seen[-args.print_every:])
            print(f"iteration {iteration:5d}  loss {per_name:6.3f} per name, {per_char:.3f} per character")
    print(f"trained in {time.perf_counter() - start:.1f} s")

    sample_rng = np.random.default_rng(args.seed)
    known = set(names)
    print(f"{args.samples} samples (* = a training name):")
    for _ in range(args.samples):
        indices = sample(parameters, char_to_ix[END], sample_rng, max_length=20)
        word = "".join(chars[i] for i in indices).rstrip(END)
        print(f"  {word}{' *' if word in known else ''}")


if __name__ == "__main__":
    main()
