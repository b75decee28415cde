"""A language model: the project's decoder with no encoder.

DESIGN.md's last row: the `AttentionDecoder` with ``context="none"`` (no annotations, no
attention) and its state given (zeros, or carried over from the previous window of a long
text). Nothing here is a second decoder, loop or search:

* training: teacher forcing through ``AttentionDecoder.call`` (next-token cross-entropy);
* text generation: the one :class:`~captioner.decoding.Generator`; the model's ``encode`` reads
  the prompt through the decoder (all but its last token, whose state the search starts from)
  and returns the prompt's last token as the search's first input. Beam search, greedy, or
  sampling with a temperature and top-k (:mod:`captioner.decoding.sampling`);
* perplexity: ``AttentionDecoder.call(..., return_state=True)`` over windows of the text with
  the state carried from one window to the next, so every token is predicted from all that
  precedes it in its stream (exact, not a sliding-window approximation).

Two architectures (``arch``), one class:

* ``"rnn"``: the ``AttentionDecoder`` above (an LSTM or GRU; ``units``, ``embedding_dim``, ``cell``);
* ``"transformer"``: a causal Transformer decoder
  (:class:`~captioner.layers.causal_transformer.CausalTransformer`: ``num_layers`` pre-norm blocks of
  ``num_heads``-head self-attention, ``units`` wide, learned positions over ``context`` tokens, input
  and output embeddings tied). Same Generator (its state is the visible context); perplexity
  reads the text in windows of ``context`` tokens that slide by ``stride`` (default half the
  context): every token after the first window is predicted from at least ``context - stride``
  tokens before it (the first window's tokens from all before them), the usual sliding-window
  evaluation of a model with a fixed context; ``stride = context`` gives the non-overlapping
  blocks nanoGPT's validation loss averages over.

Two levels, one class:

* ``"char"``: tokens are the Unicode code points of the raw text (newlines and spaces
  included, nothing normalized); a text is one stream, its first character is read, never
  predicted. No token ends a generation (``<end>`` is never generated); it runs ``length``
  characters.
* ``"word"``: one sentence per line, words as :func:`captioner.text.tokenize` makes them
  (lower case, punctuation dropped); each sentence is ``<start> w1 ... wn <end>`` and every
  token after ``<start>`` is predicted, ``<end>`` included (so the perplexity is per word with
  the sentence end counted as one, as the field reports it). Unknown words are ``<unk>``.

A saved model holds its vocabulary and level in its config::

    import captioner, keras
    lm = keras.models.load_model("assets/models/shakespeare_char_lm.keras")
    lm.generate("ROMEO:", length=200, temperature=0.8, top_k=20, seed=1)
    lm.evaluate_text(open("text.txt").read())   # {"perplexity": ..., "bits_per_char": ...}
"""

from __future__ import annotations

import dataclasses
import math

import keras
import numpy as np
import tensorflow as tf

from captioner.decoding import Generator
from captioner.errors import InputError
from captioner.layers.attention_decoder import AttentionDecoder, DecoderDesign
from captioner.layers.causal_transformer import CausalTransformer
from captioner.models.text_model import TextTaskModel, check_token_ids
from captioner.text.tokenizer import detokenize, tokenize
from captioner.text.vocabulary import END_ID, PAD_ID, START_ID, UNK_ID, Vocabulary
from captioner.models.compiled import compiled_method

LEVELS = ("char", "word")
ARCHS = ("rnn", "transformer")


# (low, high) of each sampling setting of `LanguageModel.generate` (None: no upper bound); the server
# narrows them (`captioner.serving.app`), `captioner generate` takes them as they are
GENERATION_BOUNDS = {"temperature": (0, None), "top_k": (0, None), "length": (1, 100_000), "num_samples": (1, 1000),
                     "beam_size": (1, 64), "seed": (0, 2**31 - 1)}


def check_generation(values, bounds=None, name=lambda setting: setting):
    """InputError naming the first of `values` ({setting: value, None for the model's default})
    outside its bound in `bounds` (default GENERATION_BOUNDS); `name` spells a setting for the
    message (the CLI's flags: "--top-k")."""
    for setting, value in values.items():
        low, high = (bounds or GENERATION_BOUNDS)[setting]
        if value is None:
            continue
        if setting == "temperature" and not math.isfinite(value):
            raise InputError(f"{name(setting)} {value}: must be a finite number >= 0")
        if value < low:
            raise InputError(f"{name(setting)} {value}: must be "
                             f"{'a finite number ' if setting == 'temperature' else ''}>= {low}")
        if high is not None and value > high:
            raise InputError(f"{name(setting)} {value}: must be at most {high}")


def perplexity(nll_sum, count):
    """exp(mean negative log-likelihood in nats) over `count` predicted tokens."""
    if count <= 0:
        raise ValueError("perplexity of no tokens")
    return math.exp(nll_sum / count)


def bits_per_token(nll_sum, count):
    """Mean negative log2-likelihood: log2(perplexity)."""
    if count <= 0:
        raise ValueError("bits per token of no tokens")
    return nll_sum / count / math.log(2)


@dataclasses.dataclass(frozen=True)
class LMNetwork:
    """The shape of a language model: ``arch`` "rnn" (embeddings, one recurrent ``cell`` of
    ``units``) or "transformer" (GPT-style: ``num_layers`` blocks of ``num_heads`` heads, width
    ``units``, a ``context`` of tokens; embeddings tied to the width), and dropout."""

    arch: str = "rnn"
    embedding_dim: int = 64
    units: int = 512
    cell: str = "lstm"
    dropout: float = 0.0
    num_layers: int = 4
    num_heads: int = 4
    context: int = 128


@keras.saving.register_keras_serializable(package="captioner")
class LanguageModel(TextTaskModel, keras.Model):
    """Training: {"tokens": (B, T)} -> next-token logits (B, T, V).
    Inference: :meth:`generate` (text), :meth:`evaluate_text` / :meth:`log_likelihood` (perplexity)."""

    model_kind = "a language model"
    train_hint = " (make one with `captioner train lm`)"

    GROUPS = {"network": LMNetwork}  # `LanguageModel.of(vocabulary, level="word", units=8, ...)`: flat settings

    def __init__(self, vocabulary, level="char", network: LMNetwork | None = None, window=256, training_config=None,
                 **kwargs):
        super().__init__(**kwargs)
        net = network or LMNetwork()
        arch, embedding_dim, units, cell, dropout = net.arch, net.embedding_dim, net.units, net.cell, net.dropout
        num_layers, num_heads, context = net.num_layers, net.num_heads, net.context
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        if arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}, got {arch!r}")
        self.arch = arch
        self.num_layers, self.num_heads, self.context = int(num_layers), int(num_heads), int(context)
        self.vocabulary = Vocabulary.coerce(vocabulary)
        self.level = level
        self.embedding_dim = int(embedding_dim)
        self.units = int(units)
        self.cell = cell
        self.dropout = float(dropout)
        self.window = int(window)  # tokens per evaluation window (the state is carried across)
        self.training_config = training_config or {}
        if arch == "transformer":
            self.decoder = CausalTransformer(len(self.vocabulary), units=units, num_layers=num_layers, num_heads=num_heads,
                                             context=context, dropout=dropout, name="decoder")
        else:
            self.decoder = AttentionDecoder(
                len(self.vocabulary), embedding_dim=embedding_dim, units=units, attention_units=1, annotation_dim=1,
                design=DecoderDesign(cell, "none", "given", gate=False, deep_output=False), dropout=dropout,
                name="decoder")
        self.decoder.build((None, None, 1))  # a (B, 1, 1) dummy annotation: no encoder
        self.built = True
        banned = (PAD_ID, START_ID, UNK_ID) + ((END_ID,) if level == "char" else ())
        self.generator = Generator(self.decoder, self.encode, banned_ids=banned,
                                   end_id=None if level == "char" else END_ID)
        self._ids = {t: i for i, t in enumerate(self.vocabulary.tokens)}

    # -- the network -----------------------------------------------------------------
    @property
    def state_dtype(self):
        return self.decoder.compute_dtype  # the decoder's (a mixed_bfloat16 run: bfloat16)

    def zero_state(self, batch):
        if self.arch == "transformer":
            return self.decoder.empty_state(batch)  # an empty context
        zeros = tf.zeros((batch, self.units), self.state_dtype)  # (B, H)
        return {"h": zeros, "c": zeros}

    def _no_annotations(self, batch):
        return tf.zeros((batch, 1, 1), self.state_dtype)  # (B, R=1, D=1), never looked at

    def call(self, inputs, training=False, initial_state=None, return_state=False):
        tokens = inputs["tokens"] if isinstance(inputs, dict) else inputs  # (B, T)
        check_token_ids(tokens, len(self.vocabulary), "token ids")
        batch = tf.shape(tokens)[0]
        state = None if self.arch == "transformer" else initial_state or self.zero_state(batch)
        out = self.decoder(tokens, self._no_annotations(batch), initial_state=state, training=training,
                           return_state=return_state)
        return (out[0], out[2]) if return_state else out[0]  # logits (B, T, V) [, state]

    def encode(self, prompt):
        """prompt ids (B, P), P >= 1 (static) -> the Generator's (annotations, mask, state, first
        tokens): the state after reading prompt[:, :-1]; the search starts from prompt[:, -1]."""
        batch = tf.shape(prompt)[0]
        if self.arch == "transformer":
            return self._no_annotations(batch), None, self.decoder.context_state(prompt[:, :-1]), prompt[:, -1]
        state = self.zero_state(batch)
        if prompt.shape[1] is None or prompt.shape[1] > 1:
            _, _, state = self.decoder(prompt[:, :-1], self._no_annotations(batch), initial_state=state,
                                       return_state=True)
        return self._no_annotations(batch), None, state, prompt[:, -1]

    # -- text <-> ids ----------------------------------------------------------------
    def text_ids(self, text, source="text"):
        """A character model's ids of `text`; InputError naming line and column of the first
        character the vocabulary lacks."""
        ids = [self._ids.get(ch, -1) for ch in text]
        if -1 in ids:
            at = ids.index(-1)
            line = text.count("\n", 0, at) + 1
            column = at - (text.rfind("\n", 0, at) + 1) + 1
            missing = sorted({ch for ch in text if ch not in self._ids})
            shown = ", ".join(repr(ch) for ch in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise InputError(f"{source}: line {line}, column {column}: character {text[at]!r} is not in the "
                             f"model's vocabulary ({len(missing)} such characters: {shown})")
        return np.asarray(ids, np.int32)

    def sentence_ids(self, sentence):
        """A word model's ids of one sentence: <start> w1 ... wn <end> (unknown words: <unk>)."""
        return np.asarray(self.vocabulary.encode(tokenize(sentence)), np.int32)

    def prompt_ids(self, prompt, source="prompt"):
        """The prompt the generation continues, as ids (P >= 1): a character model's characters
        ("" -> a newline, the start of a speech), or <start> + a word model's words."""
        if self.level == "char":
            return self.text_ids(prompt or "\n", source)
        return np.asarray(self.vocabulary.encode(tokenize(prompt), add_end=False), np.int32)

    # -- generation ------------------------------------------------------------------
    def generate(self, prompt="", length=200, temperature=1.0, top_k=0, seed=0, num_samples=1, beam_size=1):
        """Continue `prompt`: `num_samples` strings (the continuation only). temperature 0 (or
        None) is greedy decoding (beam search with `beam_size`); else sampling, top_k 0 = all
        tokens. A word model stops at <end> (or `length` words)."""
        prompt = np.tile(self.prompt_ids(prompt)[None, :], [int(num_samples), 1])  # (S, P)
        sampling = temperature is not None and float(temperature) > 0
        out = self.generator(prompt, beam_size=1 if sampling else beam_size, alpha=0.0, max_length=length,
                             temperature=temperature if sampling else None, top_k=top_k, seed=seed).numpy()
        texts = []
        for row, n in zip(out["tokens"][:, 0], out["lengths"][:, 0]):
            if self.level == "char":
                texts.append("".join(self.vocabulary.tokens[i] for i in row[:n] if i > UNK_ID))
            else:
                texts.append(detokenize(self.vocabulary.decode(row[:n].tolist())))
        return texts

    # -- likelihood ------------------------------------------------------------------
    def _window_signature(self):
        ints = tf.TensorSpec((None, None), tf.int32)
        floats = tf.TensorSpec((None, self.units), self.state_dtype)  # the carried state
        return [ints, ints, floats, floats]

    @compiled_method(input_signature=_window_signature)
    def _window(self, inputs, targets, h, c):
        """Summed NLL (B,) of one window of ids from the carried state, and the state after it."""
        logits, state = self(inputs, initial_state={"h": h, "c": c}, return_state=True)
        nll = tf.nn.sparse_softmax_cross_entropy_with_logits(targets, tf.cast(logits, tf.float32))  # (B, T)
        nll = nll * tf.cast(targets != PAD_ID, tf.float32)
        return tf.reduce_sum(nll, axis=1), state["h"], state["c"]

    def _context_signature(self):
        ints = tf.TensorSpec((None, None), tf.int32)
        return [ints, ints, tf.TensorSpec((), tf.int32)]

    @compiled_method(input_signature=_context_signature)
    def _context_window(self, inputs, targets, first):
        """A Transformer's summed NLL (B,) of the targets of one window from position `first` on."""
        logits = self.decoder.logits(inputs)  # (B, T, V)
        nll = tf.nn.sparse_softmax_cross_entropy_with_logits(targets, tf.cast(logits, tf.float32))  # (B, T)
        scored = (targets != PAD_ID) & (tf.range(tf.shape(targets)[1]) >= first)[None]
        return tf.reduce_sum(nll * tf.cast(scored, tf.float32), axis=1)

    def _context_windows(self, width, stride):
        """(start, first scored position) of the Transformer's windows over ids of `width`."""
        out, start, covered = [], 0, 0  # covered: the last target index scored
        while covered < width - 1:
            out.append((start, covered - start))
            covered = min(start + self.context, width - 1)
            start += stride
        return out

    def window_stride(self, stride=None):
        stride = int(stride or max(self.context // 2, 1))
        if not 1 <= stride <= self.context:
            raise ValueError(f"stride must be in [1, context={self.context}], got {stride}")
        return stride

    def log_likelihood(self, streams, batch_size=64, window=None, progress=None, stride=None):
        """Negative log-likelihood (nats) of id sequences, each read from a zero state with its
        first id given, every later id predicted from all before it (an RNN: windows of `window`
        ids, the state carried across; a Transformer: windows of its context sliding by `stride`,
        see the module docstring). Returns (nll per stream (S,), predicted tokens per stream (S,)).
        `progress(n)` is called with the windows done."""
        if self.arch == "transformer":
            stride = self.window_stride(stride)
            read = lambda ids: self._context_parts(ids, stride)  # noqa: E731
        else:
            window = int(window or self.window)
            read = lambda ids: self._carried_parts(ids, window)  # noqa: E731
        streams = [np.asarray(s, np.int32) for s in streams]
        nll = np.zeros(len(streams), np.float64)
        counts = np.array([max(len(s) - 1, 0) for s in streams], np.int64)
        order = sorted(range(len(streams)), key=lambda i: len(streams[i]))  # similar lengths together
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            width = max(len(streams[i]) for i in idx)
            if width < 2:
                continue
            ids = np.full((len(idx), width), PAD_ID, np.int32)  # (B, L)
            for b, i in enumerate(idx):
                ids[b, :len(streams[i])] = streams[i]
            for part in read(ids):
                nll[idx] += part
                if progress:
                    progress(1)
        return nll, counts

    def _carried_parts(self, ids, window):
        """An RNN's summed NLL (B,) of each window of `window` ids, the state carried across."""
        h = c = tf.zeros((len(ids), self.units), self.state_dtype)
        for t in range(0, ids.shape[1] - 1, window):
            targets = ids[:, t + 1:t + 1 + window]
            part, h, c = self._window(ids[:, t:t + targets.shape[1]], targets, h, c)
            yield part.numpy()

    def _context_parts(self, ids, stride):
        """A Transformer's summed NLL (B,) of the new targets of each window sliding by `stride`."""
        for t, first in self._context_windows(ids.shape[1], stride):
            targets = ids[:, t + 1:t + 1 + self.context]
            yield self._context_window(ids[:, t:t + targets.shape[1]], targets, np.int32(first)).numpy()

    def windows_needed(self, streams, batch_size=64, window=None, stride=None):
        """How many windows :meth:`log_likelihood` will run (for a progress bar)."""
        lengths = sorted(len(s) for s in streams)
        if self.arch == "transformer":
            stride = self.window_stride(stride)
            return sum(len(self._context_windows(max(lengths[i:i + batch_size]), stride))
                       for i in range(0, len(lengths), batch_size))
        window = int(window or self.window)
        return sum(math.ceil(max(max(lengths[i:i + batch_size]) - 1, 0) / window)
                   for i in range(0, len(lengths), batch_size))

    def streams_of(self, text, source="text", streams=1):
        """`text` as the id streams this model reads: a character model's one stream (or
        `streams` contiguous parts, read side by side: faster, and the first character of each
        is given, not predicted); a word model's sentence per non-empty line."""
        if self.level == "char":
            return np.array_split(self.text_ids(text, source), max(int(streams), 1))
        return [self.sentence_ids(line) for line in text.split("\n") if line.strip()]

    def evaluate_text(self, text, source="text", batch_size=64, window=None, progress=None, streams=1, stride=None):
        """Perplexity of `text` (see the module docstring for what is predicted): a dict with
        perplexity, tokens (predicted), nll, and bits_per_char (char) or oov_rate (word).
        `streams` > 1 (char): read the text as that many parts side by side (see streams_of).
        `stride`: a Transformer's window stride (default half its context)."""
        streams = self.streams_of(text, source, streams)
        nll, counts = self.log_likelihood(streams, batch_size, window, progress, stride=stride)
        total, n = float(nll.sum()), int(counts.sum())
        if n == 0:
            raise InputError(f"{source}: nothing to predict (a character model needs at least 2 characters, "
                             "a word model one non-empty line)")
        result = {"level": self.level, "perplexity": perplexity(total, n), "tokens": n, "nll_nats": total}
        if self.level == "char":
            result["bits_per_char"] = bits_per_token(total, n)
        else:
            result["sentences"] = len(streams)
            words = np.concatenate([s[1:-1] for s in streams])  # the words, without <start> / <end>
            result["oov_rate"] = float(np.mean(words == UNK_ID)) if len(words) else 0.0
        return result

    # -- persistence -----------------------------------------------------------------
    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary": list(self.vocabulary.tokens), "level": self.level,
            "embedding_dim": self.embedding_dim, "units": self.units, "cell": self.cell,
            "dropout": self.dropout, "window": self.window, "training_config": self.training_config,
            **({"arch": self.arch, "num_layers": self.num_layers, "num_heads": self.num_heads,
                "context": self.context}
               if self.arch == "transformer" else {}),
        }


def load_language_model(path) -> LanguageModel:
    """Load a language model (.keras), safe mode on; errors name the file."""
    return LanguageModel.load(path)
