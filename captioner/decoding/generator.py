"""The one generator: a model's inputs -> the one beam search -> hypotheses -> text.

Every generating model (image captioning, video captioning, translation and entailed-hypothesis
generation) holds one :class:`Generator` and decodes only through it::

    generator = Generator(decoder, encode, banned_ids=(PAD_ID, UNK_ID, START_ID))
    result = generator(annotations, decoding=Decoding(beam_size=3, max_length=20))  # compiled, cached
    result = generator(annotations, beam_size=3, max_length=20)               # the same, fields as keywords
    texts = hypothesis_texts(result, vocabulary)                            # best beam, as text

``encode(*inputs) -> (annotations (B, R, D), mask (B, R) bool or None, initial_state or None)``
is the model's own part (project a CNN grid, run a frame or source encoder); it may return a
fourth element, ``start_tokens`` int32 (B,), the first input token of each input instead of
``<start>`` (a language model continuing a prompt). The rest is the same for every task:

* ``decoder.prepare(annotations, mask, initial_state) -> (memory, state)`` once per input, and
  ``decoder.step(tokens, state, memory) -> (log_probs, state, attention)`` per token (the
  interface of :class:`captioner.layers.attention_decoder.AttentionDecoder`);
* the compact beam search (:func:`captioner.decoding.beam_search`, ``compact=True``): the step
  runs on the live hypotheses only, and each gathers its input's memory by row
  (``rows // beam_size``), so memory is never tiled to B*K rows;
* ``banned_ids``: ids the search never generates (-inf at every step);
* decoding strategies: beam search (greedy = width 1), or sampling (``temperature``, ``top_k``,
  ``seed``; :mod:`captioner.decoding.sampling`) as a rule of the same search with one beam;
* one compiled function per decoding setting (beam size, alpha, max length, sampling) and input kind
  (at most ``MAX_COMPILED``, least recently used dropped: a server given a new alpha per request
  keeps bounded memory),
  ``tf.function(reduce_retracing=True)``, with the batch dimension left free (plus the dims
  ``input_signature`` leaves free), so it is traced once per setting; a sampling function takes
  the seed as one more (scalar int32) input, so a new seed per batch (self-critical training
  draws one per batch) costs no new trace;
* one result type, :class:`Generation`, and one way from ids to text
  (:func:`hypothesis_words`, :func:`hypothesis_texts`: ``Vocabulary.decode`` then
  ``detokenize``).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import tensorflow as tf

from captioner.decoding.beam_search import SearchSettings, beam_search, rows_per_input
from captioner.decoding.rules import standard_rules
from captioner.decoding.sampling import check_sampling
from captioner.decoding.strategies import Constrained, deadline_per_input, strategy_for
from captioner.text.tokenizer import detokenize
from captioner.text.vocabulary import END_ID, PAD_ID, START_ID, UNK


class Generation(dict):
    """What a :class:`Generator` returns: hypotheses of each input, best first by score.

    A dict (so ``result["tokens"]``) of tensors, or NumPy arrays after :meth:`numpy`:

        "tokens"     int32   (B, K, T)     generated ids, ``<end>`` included, then ``<pad>``
        "lengths"    int32   (B, K)        ids generated, ``<end>`` included
        "scores"     float32 (B, K)        log_probs / lengths ** alpha (the ranking)
        "log_probs"  float32 (B, K)        summed log-probabilities
        "finished"   bool    (B, K)        emitted ``<end>`` within T
        "attention"  float32 (B, K, T, R)  attention of each generated token, zeros after the end
    """

    def numpy(self) -> Generation:
        """The same result with NumPy arrays."""
        return Generation({k: np.asarray(v) for k, v in self.items()})

    def texts(self, vocabulary, beam=0):
        """:func:`hypothesis_texts` of this result."""
        return hypothesis_texts(self, vocabulary, beam)


def hypothesis_words(vocabulary, token_ids, attention=None, source_tokens=None, distinct=False):
    """The words of one hypothesis, and how many ``<unk>`` were replaced.

    token_ids (T,): its generated ids (``Vocabulary.decode`` stops at ``<end>`` and drops
    ``<pad>``/``<start>``). With ``source_tokens`` and ``attention`` (steps, len(source_tokens)),
    each ``<unk>`` word j becomes the source word its step attends to most (Luong et al. 2015):
    names and numbers the target vocabulary lacks pass through. ``distinct``: the most attended
    source word that the output does not hold yet (the argmax when every one is taken), so
    consecutive <unk> steps whose attention stays on one word do not copy it again (headlines).

    Returns (words list, replaced int).
    """
    words = vocabulary.decode(np.asarray(token_ids).tolist())
    if source_tokens is None or attention is None:
        return words, 0
    replaced = 0
    for j, word in enumerate(words):
        if word == UNK and j < len(attention):
            order = np.argsort(-np.asarray(attention[j]), kind="stable")  # source positions, most attended first
            pick = source_tokens[int(order[0])]
            if distinct:
                taken = set(words[:j])
                pick = next((source_tokens[int(i)] for i in order if source_tokens[int(i)] not in taken), pick)
            words[j] = pick
            replaced += 1
    return words, replaced


def hypothesis_texts(result, vocabulary, beam=0):
    """Detokenized text of the hypotheses in ``result`` (a :class:`Generation` or its dict).

    beam: which hypothesis of each input (0: the best) -> a list of B strings; None: every
    hypothesis -> B lists of K strings, best first.
    """
    tokens = np.asarray(result["tokens"])  # (B, K, T)
    if beam is not None:
        return [detokenize(vocabulary.decode(row.tolist())) for row in tokens[:, beam]]
    return [[detokenize(vocabulary.decode(row.tolist())) for row in hyps] for hyps in tokens]


@dataclasses.dataclass(frozen=True)
class Decoding:
    """The decoding settings of one compiled function: beam width, length penalty exponent, most
    generated tokens, n-gram blocking, and sampling (``temperature`` not None: one drawn hypothesis,
    ``top_k`` K > 0 from the K most probable; beam_size 1). Hashable: the Generator's cache key.

    ``beam_size``, ``alpha`` and ``max_length`` may be scalar tensors (one graph for every setting:
    what ``captioner export`` puts in a SavedModel's serving signature); the search checks them in
    the graph then. `checked` checks python values before anything is traced."""

    beam_size: object = 1
    alpha: object = 0.0
    max_length: object = 20
    no_repeat_ngram: int = 0
    temperature: float | None = None
    top_k: int = 0

    def checked(self) -> Decoding:
        no_repeat_ngram = int(self.no_repeat_ngram)
        if no_repeat_ngram < 0:
            raise ValueError(f"no_repeat_ngram must be >= 0, got {no_repeat_ngram}")
        if any(tf.is_tensor(x) for x in (self.beam_size, self.alpha, self.max_length)):
            if self.temperature is not None:
                raise ValueError("sampling takes python settings (beam_size 1), not tensors")
            return dataclasses.replace(self, no_repeat_ngram=no_repeat_ngram, temperature=None, top_k=0)
        beam_size, max_length = int(self.beam_size), int(self.max_length)
        if beam_size < 1:
            raise ValueError(f"beam_size must be >= 1, got {beam_size}")
        if max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}")
        if self.temperature is None:
            return Decoding(beam_size, float(self.alpha), max_length, no_repeat_ngram)
        temperature, top_k = check_sampling(self.temperature, self.top_k)
        if beam_size != 1:
            raise ValueError(f"sampling draws one hypothesis per input: beam_size must be 1, got {beam_size}")
        return Decoding(beam_size, float(self.alpha), max_length, no_repeat_ngram, temperature, top_k)

    @property
    def sampling(self):
        return self.temperature is not None


@dataclasses.dataclass
class Steering:
    """What steers each input's caption, as tensors (inputs of the compiled function, not settings):
    ``token_bonus`` float (B, V), a soft lexical constraint (:class:`~captioner.decoding.rules.TokenBonus`);
    ``constraints`` int32 (B, C, D), hard disjunctive ones, and their ``deadline`` (an int for all, or
    int32 (B,) each input's own; :class:`~captioner.decoding.strategies.Constrained`)."""

    token_bonus: object = None
    constraints: object = None
    deadline: object = 0

    @staticmethod
    def of(token_bonus=None, constraints=None, constraint_deadline=0):
        """The Steering of a tagger's search inputs (`ObjectTagger.search_inputs`: {"token_bonus"} or
        {"constraints", "constraint_deadline"}), passed as keywords."""
        return Steering(token_bonus, constraints, constraint_deadline)

    def kind(self):
        """(bonus?, constraint shape (C, D) or None, deadline: an int or PER_INPUT): what a compiled
        function is specialised on."""
        shape = None if self.constraints is None else tuple(int(d) for d in self.constraints.shape[1:])
        per_input = shape is not None and deadline_per_input(self.deadline)
        deadline = PER_INPUT if per_input else int(self.deadline) if shape else 0
        return self.token_bonus is not None, shape, deadline

    def tensors(self):
        """The steering inputs of the compiled function, in its order: bonus, constraints, deadlines."""
        bonus, shape, deadline = self.kind()
        out = [tf.convert_to_tensor(self.token_bonus, tf.float32)] if bonus else []
        if shape is not None:
            out.append(tf.convert_to_tensor(self.constraints, tf.int32))
        if deadline == PER_INPUT:
            out.append(tf.reshape(tf.convert_to_tensor(self.deadline, tf.int32), [-1]))
        return out

    @staticmethod
    def specs(kind):
        bonus, shape, deadline = kind
        return ([tf.TensorSpec((None, None), tf.float32)] if bonus else []) + \
            ([tf.TensorSpec((None, *shape), tf.int32)] if shape else []) + \
            ([tf.TensorSpec((None,), tf.int32)] if deadline == PER_INPUT else [])

    @staticmethod
    def from_tensors(kind, xs):
        """The Steering of a compiled function's steering inputs `xs` (as `tensors` gave them)."""
        bonus, shape, deadline = kind
        xs = list(xs)
        token_bonus = xs.pop(0) if bonus else None
        constraints = xs.pop(0) if shape else None
        return Steering(token_bonus, constraints, xs.pop(0) if deadline == PER_INPUT else deadline)


def _seed(seed):
    """The draw's seed: an int in [0, 2**31), or a scalar int tensor as it is (a compiled function's input)."""
    return tf.cast(seed, tf.int32) if tf.is_tensor(seed) else int(seed) % 2**31


MAX_COMPILED = 16  # compiled functions a Generator keeps; the least recently used is dropped (its graph freed)
PER_INPUT = "per input"  # a Steering's deadline kind when each input's comes as an int32 (B,) input


class Generator:
    """Decodes a model's inputs with the one beam search (see the module docstring).

    Args:
        decoder: has ``prepare(annotations, mask, initial_state) -> (memory, state)`` and
            ``step(tokens, state, memory) -> (log_probs (N, V), state, attention (N, R))``
            (memory and state: tf.nest structures with leading dim B, resp. N).
        encode: ``encode(*inputs) -> (annotations (B, R, D), mask (B, R) or None,
            initial_state or None)``, the model's own part, run inside the compiled function.
        banned_ids: token ids never generated (e.g. ``<pad>``, ``<unk>``, ``<start>``).
        input_signature: optional list of ``tf.TensorSpec`` of the inputs; default: each input's
            dtype and shape as first seen, its batch dimension free.
        start_id, end_id, pad_id: the special ids of the target vocabulary (end_id None: no
            token ends a hypothesis; each runs max_length steps).
    """

    def __init__(self, decoder, encode, *, banned_ids=(), input_signature=None, start_id=START_ID,
                 end_id=END_ID, pad_id=PAD_ID):
        self.decoder = decoder
        self.encode = encode
        self.banned_ids = tuple(sorted({int(i) for i in banned_ids}))
        self.input_signature = None if input_signature is None else list(input_signature)
        self.start_id, self.pad_id = int(start_id), int(pad_id)
        self.end_id = None if end_id is None else int(end_id)
        self._compiled = collections.OrderedDict()  # (settings, input specs) -> tf.function, most recent last

    def search(self, *inputs, decoding: Decoding, steering: Steering | None = None, seed=0):
        """Uncompiled: inputs -> the beam_search dict of tensors. For use inside a graph (a Keras
        ``call``, another ``tf.function``); eager callers want ``__call__``. ``decoding``: the
        settings (tensors allowed, see :class:`Decoding`); ``steering``: a token bonus and hard
        constraints per input (:class:`Steering`); ``seed``: sampling's draw (an int or a scalar
        int32 tensor)."""
        decoding = decoding.checked()
        steering = steering or Steering()
        encoded = self.encode(*inputs)
        annotations, mask, initial_state = encoded[:3]  # (B, R, D), (B, R)
        start_tokens = encoded[3] if len(encoded) > 3 else None  # (B,)
        memory, state = self.decoder.prepare(annotations, mask, initial_state)  # leaves (B, ...)
        strategy = strategy_for(decoding.temperature, decoding.top_k, _seed(seed), steering.constraints,
                                steering.deadline)
        per_input = rows_per_input(decoding.beam_size, steering.constraints) \
            if isinstance(strategy, Constrained) else decoding.beam_size

        def step_fn(tokens, st, rows):
            # the M live hypotheses: tokens (M,), st leaves (M, ...), rows (M,) = b * per_input + k
            inputs_of_rows = rows // per_input  # (M,) the input b of each
            mem = tf.nest.map_structure(lambda t: tf.gather(t, inputs_of_rows), memory)  # (M, ...)
            return self.decoder.step(tokens, st, mem)  # (M, V), state, (M, R)

        settings = SearchSettings(decoding.beam_size, decoding.max_length, decoding.alpha, self.start_id,
                                  self.end_id, self.pad_id)
        return beam_search(
            step_fn, state, tf.shape(annotations)[0], settings,
            rules=standard_rules(decoding.no_repeat_ngram, steering.token_bonus, self.banned_ids),
            strategy=strategy, start_tokens=start_tokens, attention_size=tf.shape(annotations)[1], compact=True)

    def __call__(self, *inputs, decoding: Decoding | None = None, steering: Steering | None = None, seed=0,
                 **settings) -> Generation:
        """Compiled :meth:`search` (one function per setting and input kind); eager tensors.
        ``decoding`` or its fields as keywords (``beam_size=3, alpha=0.5, max_length=20``). A
        ``steering``'s token bonus (B, V), constraints (B, C, D) and per-input deadlines (B,) are
        inputs of their own compiled function (one per C and D; an int deadline is a setting)."""
        if decoding is not None and settings:
            raise TypeError(f"give the settings as decoding=Decoding(...) or as keywords, not both ({sorted(settings)})")
        decoding = decoding or Decoding(**settings)
        steering = steering or Steering()
        inputs = [tf.convert_to_tensor(x) for x in inputs]
        fn = self.compiled(*inputs, decoding=decoding, steering=steering.kind())
        inputs += steering.tensors()
        if decoding.sampling:  # the seed is the sampling function's last input
            inputs.append(tf.cast(_seed(seed), tf.int32))
        return Generation(fn(*inputs))

    def compiled(self, *inputs, decoding: Decoding, steering=(False, None, 0)):
        """The cached ``tf.function`` that decodes ``inputs`` with these settings and this kind of
        steering (`Steering.kind`). Its extra inputs, in this order: the steering tensors
        (`Steering.tensors`), then, when sampling, the seed (a scalar int32: one function serves
        every seed)."""
        decoding = decoding.checked()
        signature = self.input_signature or [
            tf.TensorSpec([None] + x.shape[1:].as_list(), x.dtype) for x in inputs]  # batch free
        key = (decoding, tuple((tuple(s.shape.as_list()), s.dtype.name) for s in signature), steering)
        extra = Steering.specs(steering) + ([tf.TensorSpec((), tf.int32)] if decoding.sampling else [])
        if key in self._compiled:
            self._compiled.move_to_end(key)
        else:
            n = len(signature)

            def decode(*xs):
                draw_seed = xs[-1] if decoding.sampling else 0
                guide = Steering.from_tensors(steering, xs[n:len(xs) - int(decoding.sampling)])
                return self.search(*xs[:n], decoding=decoding, steering=guide, seed=draw_seed)

            # autograph off: plain TF ops; beam_search has its own while_loop
            self._compiled[key] = tf.function(
                decode, input_signature=list(signature) + extra,
                reduce_retracing=True, autograph=False)
            while len(self._compiled) > MAX_COMPILED:  # a server sent a new alpha each request: bounded memory
                self._compiled.popitem(last=False)
        return self._compiled[key]
