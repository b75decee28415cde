"""`captioner generate --model M [--prompt TEXT] [--temperature T] [--top-k K] [--length N] [--seed S]`

Continues a prompt with a language model (`captioner train lm`; the bundled ones are
assets/models/shakespeare_char_lm.keras and assets/models/flickr8k_word_lm.keras) through the
one decoding module: sampling with a temperature (T > 1 flatter, T < 1 sharper, 0 = greedy) from
the K most probable tokens (0: all), or beam search (--beam-size with --temperature 0). The same
--seed gives the same text. Prints the prompt and its continuation; with --num-samples N > 1,
the samples are separated by a line of dashes (--json: one JSON object per sample instead).
A character model's prompt must use characters it knows (the error names the first that it
does not); a word model reads unknown words as <unk> and says which.
"""

import argparse
import json
import sys

from captioner.bundled import default_path


def register(subparsers):
    p = subparsers.add_parser("generate", help="generate text with a language model (sampling or beam search)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=default_path("generate"), help="a .keras language model")
    p.add_argument("--prompt", default="", help="text to continue (default: a character model starts after a "
                                                "newline, a word model at the start of a sentence)")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature; 0: greedy / beam search")
    p.add_argument("--top-k", type=int, default=0, help="sample from the K most probable tokens only (0: all)")
    p.add_argument("--length", type=int, default=None,
                   help="tokens to generate (default: 300 characters / 30 words; a word model stops at "
                        "the sentence end)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the sampling")
    p.add_argument("--num-samples", type=int, default=1)
    p.add_argument("--beam-size", type=int, default=1, help="with --temperature 0: beam width")
    p.add_argument("--json", action="store_true", help="one JSON object per sample")
    p.set_defaults(func=run)


def check_args(args):
    from captioner.errors import InputError
    from captioner.models.language_model import check_generation

    check_generation({k: getattr(args, k) for k in ("temperature", "top_k", "length", "num_samples", "beam_size",
                                                    "seed")}, name=lambda k: "--" + k.replace("_", "-"))
    if any("\udc80" <= ch <= "\udcff" for ch in args.prompt):
        raise InputError("--prompt: not valid UTF-8 text")
    if len(args.prompt) > 100_000:
        raise InputError(f"--prompt: {len(args.prompt):,} characters; at most 100,000")


def run(args):
    from captioner.errors import check_search_options

    check_args(args)
    check_search_options(args)  # --num-samples 1..1000, --length 1..100,000, --beam-size 1..64
    from captioner.models.language_model import load_language_model
    from captioner.text import tokenize

    model = load_language_model(args.model)
    if model.level == "word":
        unknown = [w for w in tokenize(args.prompt) if w not in model.vocabulary]
        if unknown:
            print(f"captioner generate: warning: --prompt: words the model does not know, read as <unk>: "
                  f"{', '.join(unknown[:10])}", file=sys.stderr)
    length = args.length or (300 if model.level == "char" else 30)
    texts = model.generate(args.prompt, length=length, temperature=args.temperature, top_k=args.top_k,
                           seed=args.seed, num_samples=args.num_samples, beam_size=args.beam_size)
    join = "" if model.level == "char" else " "
    for i, text in enumerate(texts):
        full = args.prompt + (join if args.prompt and text and join else "") + text
        if args.json:
            print(json.dumps({"sample": i, "prompt": args.prompt, "continuation": text, "text": full,
                              "temperature": args.temperature, "top_k": args.top_k, "seed": args.seed},
                             ensure_ascii=False))
        else:
            if i:
                print("-" * 40)
            print(full)
    return 0
