"""`captioner train lm`: a language model, the project's decoder with no encoder.

    captioner train lm --level char --data ../shared/datasets/tinyshakespeare/input.train.txt \\
        --output-dir runs/shakespeare --model-out assets/models/shakespeare_char_lm.keras

    captioner train lm --level word --data ../shared/datasets/flickr8k \\
        --output-dir runs/flickr8k_lm --model-out assets/models/flickr8k_word_lm.keras

    captioner train lm --arch transformer --units 128 --num-layers 6 --num-heads 4 \\
        --data ../shared/datasets/tinyshakespeare/input.train.txt --output-dir runs/shakespeare_gpt

--arch rnn (default) is the AttentionDecoder with no context (--cell, --units, --embedding-dim);
--arch transformer a causal Transformer decoder (--num-layers pre-norm blocks of --num-heads heads,
--units wide, its context --seq-length tokens (a word model: --seq-length + 1), input and output
embeddings tied, trained with AdamW, weight decay --weight-decay on its matrices).

Data (--data):
* char: one or more text files, read as they are (concatenated). The dev split is carved
  from the end, once: the text after the first blank line at or after the first
  (1 - --dev-fraction) of the characters (a speech boundary in Tiny Shakespeare; 0.1 there
  gives 903,977 train and 99,880 dev characters). Training reads windows of --seq-length
  characters from a zero state (a fresh random offset each pass); dev perplexity reads the
  dev text as one stream, in windows with the state carried across.
* word: a Flickr8k folder (train = the train images' captions, dev = the dev images'), or
  text files with one sentence per line (dev: the last --dev-fraction of the lines).
  Each sentence is <start> w1 ... wn <end>; the vocabulary is the train words seen
  --min-count times (others <unk>).
--dev FILE... takes the dev text from files instead. The model is selected on dev
log-likelihood; the metrics add the dev perplexity (and bits per character), samples at two
temperatures and, side by side on the same tokens, count baselines (interpolated
Kneser-Ney n-grams, add-one unigram).
"""

import dataclasses
import logging

from captioner.training.config import TrainConfig, option
from captioner.training.trainer import Recipe

NAME = "lm"
HELP = "train a character- or word-level language model (the decoder with no encoder)"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    level: str = option("char", choices=("char", "word"))
    data: list[str] = option(nargs="+", help="char: text file(s); word: a Flickr8k folder or sentence-per-line files")
    dev: list[str] | None = option(None, nargs="+", help="dev text file(s) (default: carved from --data, see above)")
    dev_fraction: float = option(0.1, help="the end of --data held out as dev (char: from a blank line on)")
    seq_length: int = option(128, help="char: characters per training window; word: most words per sentence")
    embedding_dim: int = option(64)
    units: int = option(512)
    arch: str = option("rnn", choices=("rnn", "transformer"))
    cell: str = option("lstm", choices=("lstm", "gru"))
    num_layers: int = option(4, help="transformer: blocks")
    num_heads: int = option(4, help="transformer: attention heads (a divisor of --units)")
    weight_decay: float = option(0.1, help="transformer: AdamW's decoupled weight decay of the matrices")
    dropout: float = option(0.2)
    min_count: int = option(2, help="word: vocabulary minimum count")
    max_vocab: int = option(10000, help="word: most ids (specials included)")
    steps_per_epoch: int | None = option(None, help="evaluate/checkpoint every N steps")
    eval_window: int = option(256, help="tokens per evaluation window (state carried across windows); the "
                              "per-epoch dev figure of a char model reads the dev text as 16 parts side by side, "
                              "the final one as one stream")
    mixed_precision: bool = option(False, help="train in mixed_bfloat16 (float32 weights, bfloat16 math); the saved "
                                   "model computes in float32")
    batch_size: int = 64
    learning_rate: float = 2e-3
    lr_decay: float = 0.5
    epochs: int = 10


class LanguageModelRecipe(Recipe):
    task = "language-model"
    metric = "dev_log_prob"

    def check(self):
        from captioner.errors import InputError

        if not 0.0 < self.cfg.dev_fraction < 1.0:
            raise InputError(f"--dev-fraction {self.cfg.dev_fraction}: must be in (0, 1)")
        if self.cfg.seq_length < 2:
            raise InputError(f"--seq-length {self.cfg.seq_length}: must be >= 2")
        if self.cfg.arch == "transformer":
            if self.cfg.num_layers < 1 or self.cfg.num_heads < 1 or self.cfg.units % self.cfg.num_heads:
                raise InputError(f"--num-layers {self.cfg.num_layers} --num-heads {self.cfg.num_heads} --units "
                                 f"{self.cfg.units}: need at least one block and head, and --units a multiple of "
                                 "--num-heads")
            if not 0.0 <= self.cfg.weight_decay < 1.0:
                raise InputError(f"--weight-decay {self.cfg.weight_decay}: must be in [0, 1)")

    def prepare(self, trainer):
        from captioner.text import Vocabulary, tokenize

        c = self.cfg
        from captioner.data.lm_text import char_data, word_data

        if c.level == "char":
            train, dev, dev_desc = char_data(c.data, c.dev, c.dev_fraction)
            # every character of the data (the dev text's too: none is out of vocabulary)
            self.vocab = trainer.cached("vocabulary.json", lambda: Vocabulary(
                ["<pad>", "<start>", "<end>", "<unk>"] + sorted(set(train) | set(dev))))
            train = train[: c.limit] if c.limit else train
            ids = {t: i for i, t in enumerate(self.vocab.tokens)}
            import numpy as np

            self.train_ids = np.asarray([ids[ch] for ch in train], np.int32)
            self.dev_text = dev
            self.baseline_train, self.baseline_dev = [list(train)], [list(dev)]
            counts = {"train_characters": len(train), "dev_characters": len(dev)}
        else:
            train, dev, dev_desc = word_data(c.data, c.dev, c.dev_fraction)
            train = train[: c.limit] if c.limit else train
            tokens = [tokenize(s)[: c.seq_length] for s in train]
            tokens = [t for t in tokens if t]
            self.vocab = trainer.cached("vocabulary.json", lambda: Vocabulary.build(
                tokens, min_count=c.min_count, max_size=c.max_vocab))
            self.train_sentences = [self.vocab.encode(t) for t in tokens]
            self.dev_text = "\n".join(dev)
            known = set(self.vocab.tokens)
            unk = lambda ts: [w if w in known else "<unk>" for w in ts]  # noqa: E731 - the same <unk> as the LSTM
            self.baseline_train = [unk(t) for t in tokens]
            self.baseline_dev = [unk(tokenize(s)) for s in dev if tokenize(s)]
            counts = {"train_sentences": len(tokens), "dev_sentences": len(self.baseline_dev)}
        self.desc = {"level": c.level, "data": c.data, "dev": dev_desc, **counts}
        transformer = c.arch == "transformer"
        self.selection = ("dev log-likelihood per token (perplexity, " + (
            "windows of the context sliding by half of it)" if transformer else "state carried across windows)"))
        self.notes = (f"{c.level}-level language model: "
                      + (f"a causal Transformer decoder ({c.num_layers} blocks, {c.num_heads} heads, {c.units} units)"
                         if transformer else "the AttentionDecoder with context='none'") + f". Dev: {dev_desc}. "
                      + ("Perplexity per character: the dev text as one stream, every character after the first "
                         + ("predicted from at least half a context before it (windows sliding by half the context)."
                            if transformer else
                            "predicted from all before it (windows of the model's `window`, state carried).")
                         if c.level == "char" else
                         "Perplexity per word: each sentence <start> w1 .. wn <end>, every word and <end> predicted, "
                         "<unk> like any word.")
                      + " Baselines: count models on exactly the same tokens (captioner/text/ngram_lm.py).")
        log.info("%s; vocabulary %d", self.desc, len(self.vocab))
        return {"vocab_size": len(self.vocab), "data": self.desc, **counts}

    def build_model(self, seed):
        from captioner.models.language_model import LanguageModel, LMNetwork

        c = self.cfg
        transformer = {"arch": "transformer", "num_layers": c.num_layers, "num_heads": c.num_heads,
                       "context": c.seq_length + (c.level == "word")} if c.arch == "transformer" else {}
        network = LMNetwork(embedding_dim=c.embedding_dim, units=c.units, cell=c.cell, dropout=c.dropout, **transformer)
        return LanguageModel(self.vocab, c.level, network, window=c.eval_window,
                             training_config={"task": "lm", "seed": c.seed, "data": self.desc})

    def optimizer(self):
        if self.cfg.arch != "transformer":
            return super().optimizer()
        import keras

        # nanoGPT's AdamW: beta2 0.99, decay on the matrices and embeddings only, gradients clipped at 1
        opt = keras.optimizers.AdamW(self.cfg.learning_rate, weight_decay=self.cfg.weight_decay, beta_2=0.99,
                                     clipnorm=1.0)
        opt.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
        return opt

    def steps_per_pass(self):
        c = self.cfg
        if c.level == "char":
            self.windows = (len(self.train_ids) - 1) // c.seq_length - 1  # the same count whatever the offset
            return -(-self.windows // c.batch_size)
        return -(-len(self.train_sentences) // c.batch_size)

    def batches(self, epoch, seed):
        import numpy as np

        c = self.cfg
        rng = np.random.default_rng([seed, epoch])
        if c.level == "char":
            self.steps_per_pass()
            starts = rng.integers(c.seq_length) + c.seq_length * rng.permutation(self.windows)  # (W,)
            for k in range(0, len(starts), c.batch_size):
                rows = starts[k:k + c.batch_size, None] + np.arange(c.seq_length + 1)  # (B, T + 1)
                ids = self.train_ids[rows]
                yield {"tokens": ids[:, :-1]}, ids[:, 1:]
            return
        order = rng.permutation(len(self.train_sentences))
        for k in range(0, len(order), c.batch_size):
            rows = [self.train_sentences[i] for i in order[k:k + c.batch_size]]
            ids = np.zeros((len(rows), max(map(len, rows))), np.int32)  # (B, T + 1), <pad> = 0
            for b, r in enumerate(rows):
                ids[b, :len(r)] = r
            yield {"tokens": ids[:, :-1]}, ids[:, 1:]

    # -- evaluation ------------------------------------------------------------------
    def evaluate_dev(self, model):
        import math

        r = model.evaluate_text(self.dev_text, "dev", streams=16)  # per epoch: 16 parts side by side
        return {"dev_log_prob": -r["nll_nats"] / r["tokens"], "dev_perplexity": r["perplexity"],
                **({"dev_bits_per_char": r["bits_per_char"]} if "bits_per_char" in r else {}),
                "dev_bits": math.log2(r["perplexity"])}

    def evaluate(self, model, trainer):
        import time

        from captioner.io import write_json
        from captioner.text.ngram_lm import compare_baselines

        c = self.cfg
        model = model.inference_copy()  # float32, as saved
        t = time.perf_counter()
        r = model.evaluate_text(self.dev_text, "dev")
        metrics = {"split": f"dev ({self.desc['dev']})", "dev_perplexity": r["perplexity"], "dev_tokens": r["tokens"],
                   "eval_seconds": round(time.perf_counter() - t, 1)}
        if c.level == "char":
            metrics["dev_bits_per_char"] = r["bits_per_char"]
        else:
            metrics["dev_oov_rate"] = r["oov_rate"]
        metrics["baselines"] = compare_baselines(self.baseline_train, self.baseline_dev,
                                                 orders=(3, 5, 7) if c.level == "char" else (2, 3, 4),
                                                 sentences=c.level == "word")
        prompt = "ROMEO:\n" if c.level == "char" and all(ch in model.vocabulary for ch in "ROMEO:") else ""
        self.samples = {"prompt": prompt, "seed": c.seed, "top_k": 0}
        for temp in (0.5, 1.0):
            self.samples[f"temperature {temp}"] = model.generate(
                prompt, length=300 if c.level == "char" else 30, temperature=temp, top_k=0, seed=c.seed, num_samples=3)
        write_json(trainer.run_dir.path("samples.json"), self.samples)
        return metrics

    def card_data(self, trainer):
        return self.desc

    def card_extra(self):
        return {"samples": self.samples,
                "load": "import captioner, keras; lm = keras.models.load_model(PATH); "
                        "lm.generate('ROMEO:', temperature=0.8, top_k=20, seed=1)"}


RECIPE = LanguageModelRecipe
