"""The one generator: a model's inputs -> the one beam search -> hypotheses -> text.

Every generating model (image captioning, video captioning, translation and entailed-hypothesis
generation) holds one :class:`Generator` and decodes only through it::

    generator = Generator(decoder, encode, banned_ids=(PAD_ID, UNK_ID, START_ID))
    result = generator(annotations, beam_size=3, alpha=0.0, max_length=20)   # compiled, cached
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

import numpy as np
import tensorflow as tf

from captioner.decoding.beam_search import beam_search, deadline_per_input, rows_per_input
from captioner.decoding.sampling import check_sampling
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


def _settings(beam_size, alpha, max_length, no_repeat_ngram=0, temperature=None, top_k=0, seed=0):
    """The decoding settings as a hashable key; checked here, before anything is traced.

    Tensors for ``beam_size``, ``alpha``, ``max_length`` (the inputs of an exported signature, see
    :meth:`Generator.search`) pass as they are: the search checks them in the graph."""
    no_repeat_ngram = int(no_repeat_ngram)
    if no_repeat_ngram < 0:
        raise ValueError(f"no_repeat_ngram must be >= 0, got {no_repeat_ngram}")
    if any(tf.is_tensor(x) for x in (beam_size, alpha, max_length)):
        if temperature is not None:
            raise ValueError("sampling takes python settings (beam_size 1), not tensors")
        return beam_size, alpha, max_length, no_repeat_ngram, None, 0, 0
    beam_size, max_length = int(beam_size), int(max_length)
    if beam_size < 1:
        raise ValueError(f"beam_size must be >= 1, got {beam_size}")
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    if temperature is None:
        return beam_size, float(alpha), max_length, no_repeat_ngram, None, 0, 0
    temperature, top_k = check_sampling(temperature, top_k)
    if beam_size != 1:
        raise ValueError(f"sampling draws one hypothesis per input: beam_size must be 1, got {beam_size}")
    return beam_size, float(alpha), max_length, no_repeat_ngram, temperature, top_k, _seed(seed)


def _seed(seed):
    """The draw's seed: an int in [0, 2**31), or a scalar int tensor as it is (a compiled function's input)."""
    return tf.cast(seed, tf.int32) if tf.is_tensor(seed) else int(seed) % 2**31


MAX_COMPILED = 16  # compiled functions a Generator keeps; the least recently used is dropped (its graph freed)
PER_INPUT = "per input"  # `Generator.compiled`'s constraint_deadline when each input's comes as an int32 (B,) input


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

    def search(self, *inputs, beam_size, alpha, max_length, no_repeat_ngram=0, temperature=None, top_k=0, seed=0,
               token_bonus=None, constraints=None, constraint_deadline=0):
        """Uncompiled: inputs -> the beam_search dict of tensors. For use inside a graph (a
        Keras ``call``, another ``tf.function``); eager callers want ``__call__``.
        ``no_repeat_ngram``: n > 0 blocks repeated n-grams (see :func:`beam_search`). With a
        ``temperature`` (and ``top_k``, ``seed``), tokens are sampled (beam_size 1).

        ``beam_size``, ``alpha`` and ``max_length`` may be scalar tensors here (one graph for
        every setting: what ``captioner export`` puts in a SavedModel's serving signature).
        ``token_bonus`` float (B, V): a soft lexical constraint per input; ``constraints`` int32
        (B, C, D): hard, disjunctive ones (constrained beam search; see :func:`beam_search`)."""
        beam_size, alpha, max_length, no_repeat_ngram, temperature, top_k, seed = _settings(
            beam_size, alpha, max_length, no_repeat_ngram, temperature, top_k, seed)
        encoded = self.encode(*inputs)
        annotations, mask, initial_state = encoded[:3]  # (B, R, D), (B, R)
        start_tokens = encoded[3] if len(encoded) > 3 else None  # (B,)
        memory, state = self.decoder.prepare(annotations, mask, initial_state)  # leaves (B, ...)
        per_input = beam_size if constraints is None else rows_per_input(beam_size, constraints)

        def step_fn(tokens, st, rows):
            # the M live hypotheses: tokens (M,), st leaves (M, ...), rows (M,) = b * per_input + k
            inputs_of_rows = rows // per_input  # (M,) the input b of each
            mem = tf.nest.map_structure(lambda t: tf.gather(t, inputs_of_rows), memory)  # (M, ...)
            return self.decoder.step(tokens, st, mem)  # (M, V), state, (M, R)

        return beam_search(
            step_fn, state, tf.shape(annotations)[0], beam_size=beam_size, max_length=max_length,
            start_id=self.start_id, end_id=self.end_id, pad_id=self.pad_id, alpha=alpha,
            attention_size=tf.shape(annotations)[1], banned_ids=self.banned_ids, compact=True,
            no_repeat_ngram=no_repeat_ngram, start_tokens=start_tokens, temperature=temperature, top_k=top_k, seed=seed,
            token_bonus=token_bonus, constraints=constraints, constraint_deadline=constraint_deadline)

    def __call__(self, *inputs, beam_size, alpha, max_length, no_repeat_ngram=0, temperature=None, top_k=0,
                 seed=0, token_bonus=None, constraints=None, constraint_deadline=0) -> Generation:
        """Compiled :meth:`search` (one function per setting and input kind); eager tensors.
        A ``token_bonus`` (B, V) is one more input of its own compiled function, and so are
        ``constraints`` (B, C, D) (one function per C and D) and a per-input ``constraint_deadline``
        (B,) (one function for every deadline; an int deadline is a setting of its own function)."""
        inputs = [tf.convert_to_tensor(x) for x in inputs]
        deadlines = None
        if constraints is not None:
            constraints = tf.convert_to_tensor(constraints, tf.int32)
            if deadline_per_input(constraint_deadline):
                deadlines, constraint_deadline = tf.reshape(tf.convert_to_tensor(constraint_deadline, tf.int32), [-1]), PER_INPUT
        fn = self.compiled(*inputs, beam_size=beam_size, alpha=alpha, max_length=max_length,
                           no_repeat_ngram=no_repeat_ngram, temperature=temperature, top_k=top_k, seed=seed,
                           bonus=token_bonus is not None,
                           constraint_shape=None if constraints is None else tuple(constraints.shape[1:]),
                           constraint_deadline=constraint_deadline)
        if token_bonus is not None:
            inputs.append(tf.convert_to_tensor(token_bonus, tf.float32))
        if constraints is not None:
            inputs.append(constraints)
        if deadlines is not None:
            inputs.append(deadlines)
        if temperature is not None:  # the seed is the sampling function's last input
            inputs.append(tf.cast(_seed(seed), tf.int32))
        return Generation(fn(*inputs))

    def compiled(self, *inputs, beam_size, alpha, max_length, no_repeat_ngram=0, temperature=None, top_k=0, seed=0,
                 bonus=False, constraint_shape=None, constraint_deadline=0):
        """The cached ``tf.function`` that decodes ``inputs`` with these settings. With a
        ``temperature`` (sampling) it takes the seed as one more input, a scalar int32 tensor
        (``seed`` here plays no part: one function serves every seed). Its extra inputs, in this
        order: the token bonus (``bonus``), the constraints (``constraint_shape`` (C, D)), each
        input's deadline (``constraint_deadline`` `PER_INPUT`: int32 (B,)), the seed."""
        settings = _settings(beam_size, alpha, max_length, no_repeat_ngram, temperature, top_k, seed)
        sampling = settings[4] is not None
        signature = self.input_signature or [
            tf.TensorSpec([None] + x.shape[1:].as_list(), x.dtype) for x in inputs]  # batch free
        constraint_shape = None if constraint_shape is None else tuple(int(d) for d in constraint_shape)
        per_input = constraint_deadline == PER_INPUT and constraint_shape is not None
        constraint_deadline = PER_INPUT if per_input else int(constraint_deadline) if constraint_shape else 0
        key = (settings[:6], tuple((tuple(s.shape.as_list()), s.dtype.name) for s in signature), bool(bonus),
               constraint_shape, constraint_deadline)
        extra = ([tf.TensorSpec((None, None), tf.float32)] if bonus else []) + \
            ([tf.TensorSpec((None, *constraint_shape), tf.int32)] if constraint_shape else []) + \
            ([tf.TensorSpec((None,), tf.int32)] if per_input else []) + \
            ([tf.TensorSpec((), tf.int32)] if sampling else [])
        if key in self._compiled:
            self._compiled.move_to_end(key)
        else:
            def decode(*xs):
                xs, draw_seed = (xs[:-1], xs[-1]) if sampling else (xs, 0)
                xs, deadline = (xs[:-1], xs[-1]) if per_input else (xs, constraint_deadline)
                xs, constraints = (xs[:-1], xs[-1]) if constraint_shape else (xs, None)
                xs, token_bonus = (xs[:-1], xs[-1]) if bonus else (xs, None)
                return self.search(*xs, beam_size=settings[0], alpha=settings[1], max_length=settings[2],
                                   no_repeat_ngram=settings[3], temperature=settings[4], top_k=settings[5],
                                   seed=draw_seed, token_bonus=token_bonus, constraints=constraints,
                                   constraint_deadline=deadline)

            # autograph off: plain TF ops; beam_search has its own while_loop
            self._compiled[key] = tf.function(
                decode, input_signature=list(signature) + extra,
                reduce_retracing=True, autograph=False)
            while len(self._compiled) > MAX_COMPILED:  # a server sent a new alpha each request: bounded memory
                self._compiled.popitem(last=False)
        return self._compiled[key]
