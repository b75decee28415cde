"""The one decoder of the project: an LSTM/GRU that emits a token per step while a soft
attention picks which annotation vectors matter now.

Configurations cover every task of DESIGN.md:

(each a `DecoderDesign`; the copy mechanisms below a `CopyMechanism`)

* image captioning with soft attention (Xu et al. 2015, Show, Attend and Tell):
  `context="attention"`, `init_state="mean"`, `gate=True`, `deep_output=True`;
* Show and Tell with a pooled/fc7 vector (one annotation, R=1): option 1 `context="none"`,
  `init_state="mean"` (the vector sets s0); option 2 `context="concat"` (the vector is
  concatenated to the word embedding at every step);
* Bahdanau translation: `cell="gru"`, `init_state="given"` (from the encoder),
  `maxout=True`, and `pointer=True` for headlines (below); video captioning:
  `init_state="given"` (s0 = h_T) with attention over frames.

Two entry points share the recurrent step:

* `call(tokens, annotations, ...)`: teacher forcing over a whole sequence. Everything
  that does not depend on the recurrence (embeddings and their input projection, the
  attention keys `U a`, the deep output and the vocabulary projection) is computed for all
  time steps at once outside the loop; the loop holds only the attention and the cell.
* `prepare` + `step`: one token at a time, the interface `captioner.decoding.beam_search`
  drives.

``pointer=True`` makes it a pointer-generator (See et al. 2017, "Get To The Point", eq. 8-9):
at every step a switch p_gen = sigmoid(w^T [s_t ; c_t ; y_{t-1}] + b) mixes the vocabulary
distribution with the attention itself, scattered onto the target ids of the attended source
words: P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{j: x_j = w} alpha_j. A source word the target
vocabulary lacks points at <unk>, which decoding replaces with the attended source word (the
unknown-word copy), so any source word can be written. The target id of each annotation's word
comes in with the initial state (``initial_state["copy_ids"]`` (B, R) int32; it moves to the
memory). Both entry points then return log P instead of logits: a normalized log-distribution,
which every consumer of logits (softmax cross-entropy, log_softmax, temperature) reads unchanged.

``positions_from=P`` (P > 0, with ``pointer=True``) makes it an extractive pointer network
(Vinyals et al. 2015, "Pointer Networks"), for deletion-based compression (Filippova et al. 2015):
the target ids from P on are the source positions (id P + j writes source word j: the copy ids
are those ids), the vocabulary part of the mixture is ``<end>`` alone (so the switch is the
probability of stopping), and the choice is monotonic: a step whose input is position j attends
only to the positions after j, in training and in decoding alike, so an output is the source's
words in their order, none twice. When no position is left the step stops. With
``initial_state["stop_after"]`` (B, R) bool, an output may end only after a position marked
True (and not before its first word): a headline does not end on "to" or "their".
"""

import dataclasses

import keras
import tensorflow as tf

from captioner.layers.additive_attention import AdditiveAttention
from captioner.text.vocabulary import END_ID


@dataclasses.dataclass(frozen=True)
class DecoderDesign:
    """How the decoder is wired (the configurations above): the recurrent ``cell`` ("lstm", "gru"),
    what it reads of the annotations (``context``: "attention", "concat", "none"), where its first
    state comes from (``init_state``: "mean" of the annotations, or "given"), Xu et al.'s gate on the
    context, the deep output layer and Bahdanau's maxout."""

    cell: str = "lstm"
    context: str = "attention"
    init_state: str = "mean"
    gate: bool = True
    deep_output: bool = True
    maxout: bool = False


@dataclasses.dataclass(frozen=True)
class CopyMechanism:
    """What the decoder may copy besides its vocabulary (none by default): ``pointer`` the attended
    source words, ``positions_from`` > 0 (with a pointer) the source positions (an extractive
    pointer network)."""

    pointer: bool = False
    positions_from: int = 0


def doubly_stochastic_penalty(alphas, step_mask, annotation_mask=None):
    """Xu et al. 2015, eq. 14, per example: sum_j (1 - sum_t alpha_tj)^2, float32 (B,).

    alphas (B, T, R) attention weights of the decoder steps; step_mask (B, T) marks real steps
    (decoder input != <pad>); annotation_mask (B, R) marks real annotations (a source
    sentence's words; None: all, as for an image grid). Each real annotation is pushed to
    receive a total weight of 1 over the sequence: every region looked at (captions), every
    source word translated (translation). Computed in float32 whatever the compute dtype."""
    alphas = tf.cast(alphas, tf.float32)
    coverage = tf.reduce_sum(alphas * tf.cast(step_mask, tf.float32)[..., None], axis=1)  # (B, R)
    missing = tf.square(1.0 - coverage)
    if annotation_mask is not None:
        missing = missing * tf.cast(annotation_mask, tf.float32)
    return tf.reduce_sum(missing, axis=-1)

CELLS = ("lstm", "gru")
CONTEXTS = ("attention", "concat", "none")
INIT_STATES = ("mean", "zero", "given")


@keras.saving.register_keras_serializable(package="captioner")
class AttentionDecoder(keras.layers.Layer):
    """``AttentionDecoder(vocab_size, embedding_dim, units, attention_units, annotation_dim,
    DecoderDesign(cell="gru", init_state="given"), dropout, CopyMechanism(pointer=True))``; a config's
    flat keys: `AttentionDecoder.of(vocab_size, cell="gru", ...)` (what `from_config` reads)."""

    def __init__(self, vocab_size, embedding_dim=256, units=512, attention_units=256, annotation_dim=None,
                 design: DecoderDesign | None = None, dropout=0.0, copy: CopyMechanism | None = None, **kwargs):
        super().__init__(**kwargs)
        design, copy = design or DecoderDesign(), copy or CopyMechanism()
        cell, context, init_state = design.cell, design.context, design.init_state
        gate, deep_output, maxout = design.gate, design.deep_output, design.maxout
        pointer, positions_from = copy.pointer, copy.positions_from
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {CELLS}, got {cell!r}")
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, got {context!r}")
        if init_state not in INIT_STATES:
            raise ValueError(f"init_state must be one of {INIT_STATES}, got {init_state!r}")
        if pointer and (context != "attention" or init_state != "given"):
            raise ValueError("pointer=True copies through the attention: it needs context='attention' and "
                             "init_state='given' (the copy ids come with the initial state)")
        if positions_from and (not pointer or not END_ID < positions_from < vocab_size):
            raise ValueError(f"positions_from={positions_from}: an extractive pointer needs pointer=True and the "
                             f"position ids after the specials, below vocab_size ({vocab_size})")
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.attention_units = attention_units
        self.annotation_dim = annotation_dim
        self.cell = cell
        self.context = context
        self.init_state = init_state
        self.gate = gate and context == "attention"
        self.deep_output = deep_output
        self.maxout = maxout
        self.dropout = dropout
        self.pointer = bool(pointer)
        self.positions_from = int(positions_from)

        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding")
        if context == "attention":
            self.attention = AdditiveAttention(attention_units, name="attention")
        if self.gate:
            self.gate_dense = keras.layers.Dense(1, activation="sigmoid", name="f_beta")
        if init_state == "mean":
            self.init_h = keras.layers.Dense(units, activation="tanh", name="init_h")
            self.init_c = keras.layers.Dense(units, activation="tanh", name="init_c")
        out_dim = embedding_dim * (2 if maxout else 1)
        self.vocab_output = not self.positions_from  # an extractive pointer has no vocabulary output
        if deep_output and self.vocab_output:
            self.out_h = keras.layers.Dense(out_dim, name="L_h")
            self.out_e = keras.layers.Dense(out_dim, use_bias=False, name="L_e")
            if context != "none":
                self.out_z = keras.layers.Dense(out_dim, use_bias=False, name="L_z")
        self.out_dropout = keras.layers.Dropout(dropout)
        if self.vocab_output:
            self.vocab_dense = keras.layers.Dense(vocab_size, name="L_o")
        if self.pointer:
            self.switch = keras.layers.Dense(1, name="p_gen")  # w^T [s_t ; c_t ; y_{t-1}] + b

    # -- weights ----------------------------------------------------------------------
    @property
    def _gates(self):
        return 4 if self.cell == "lstm" else 3

    def build(self, tokens_shape=None, annotations_shape=None):
        """Callers write ``build((B, R, D))``, the annotations' shape; a first call that builds
        the layer passes both shapes by name (a one-argument build would get the tokens' shape)."""
        if annotations_shape is None and tokens_shape is not None and len(tokens_shape) == 3:
            annotations_shape = tokens_shape  # build((B, R, D)): tokens are (B, T), never rank 3
        d = self.annotation_dim or int(annotations_shape[-1])
        self.annotation_dim = d
        e, h, g = self.embedding_dim, self.units, self._gates * self.units
        self.embedding.build((None, None))
        self.kernel_e = self.add_weight(name="kernel_e", shape=(e, g), initializer="glorot_uniform")
        if self.context != "none":
            self.kernel_z = self.add_weight(name="kernel_z", shape=(d, g), initializer="glorot_uniform")
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(h, g), initializer="orthogonal")
        bias_init = "zeros"
        if self.cell == "lstm":
            # forget-gate bias 1 (Jozefowicz et al. 2015)
            bias_init = keras.initializers.Constant(
                [0.0] * h + [1.0] * h + [0.0] * (2 * h))
        self.bias = self.add_weight(name="bias", shape=(g,), initializer=bias_init)
        if self.cell == "gru":
            self.recurrent_bias = self.add_weight(name="recurrent_bias", shape=(g,), initializer="zeros")
        if self.context == "attention":
            self.attention.build((None, h), (None, None, d))
        if self.gate:
            self.gate_dense.build((None, h))
        if self.init_state == "mean":
            self.init_h.build((None, d))
            self.init_c.build((None, d))
        out_dim = e * (2 if self.maxout else 1)
        if self.deep_output and self.vocab_output:
            self.out_h.build((None, None, h))
            self.out_e.build((None, None, e))
            if self.context != "none":
                self.out_z.build((None, None, d))
            self.vocab_dense.build((None, None, e))
        elif self.vocab_output:
            self.vocab_dense.build((None, None, h))
        if self.pointer:
            self.switch.build((None, h + d + e))
        del out_dim
        self.built = True

    def _cast(self, variable):
        """A weight in the compute dtype: Keras autocasts variables inside `call` only, and
        `step` (beam search) runs outside it (mixed_bfloat16: float32 weights, bf16 math)."""
        return tf.cast(variable, self.compute_dtype)

    # -- memory and state -------------------------------------------------------------
    def prepare(self, annotations, mask=None, initial_state=None):
        """Per-input tensors reused at every step, and the initial state.

        annotations (B, R, D); mask (B, R) bool or None; initial_state {"h", "c"} when
        init_state="given". Returns (memory dict, state dict).
        """
        annotations = tf.convert_to_tensor(annotations)
        annotations = tf.cast(annotations, self.compute_dtype)
        if mask is None:
            mask = tf.ones(tf.shape(annotations)[:2], dtype=tf.bool)
        weights = tf.cast(mask, annotations.dtype)[..., None]  # (B, R, 1)
        mean = tf.reduce_sum(annotations * weights, 1) / tf.maximum(tf.reduce_sum(weights, 1), 1.0)  # (B, D)
        memory = {"annotations": annotations, "mask": mask, "mean": mean}
        if self.context == "attention":
            memory["keys"] = self.attention.project_keys(annotations)  # (B, R, A)
        batch = tf.shape(annotations)[0]
        if self.init_state == "mean":
            state = {"h": self.init_h(mean), "c": self.init_c(mean)}
        elif self.init_state == "zero":
            zeros = tf.zeros((batch, self.units), self.compute_dtype)
            state = {"h": zeros, "c": zeros}
        else:
            if initial_state is None:
                raise ValueError("init_state='given' needs initial_state={'h': ..., 'c': ...}")
            h = tf.convert_to_tensor(initial_state["h"])
            state = {"h": h, "c": tf.convert_to_tensor(initial_state.get("c", tf.zeros_like(h)))}
        if self.pointer:
            if initial_state is None or initial_state.get("copy_ids") is None:
                raise ValueError("a pointer decoder needs initial_state['copy_ids'] (B, R): the target id of "
                                 "each annotation's source word")
            memory["copy_ids"] = tf.cast(initial_state["copy_ids"], tf.int32)
            if self.positions_from and initial_state.get("stop_after") is not None:
                memory["stop_after"] = tf.cast(initial_state["stop_after"], tf.bool)
        return memory, state

    # -- the recurrence ---------------------------------------------------------------
    def _written(self, tokens):
        """An extractive pointer's inputs ``tokens`` (B,) or (B, T) -> the source position each wrote
        (-1 for <start>)."""
        return tf.where(tokens >= self.positions_from, tokens - self.positions_from, -1)

    def _may_stop(self, tokens, memory):
        """An extractive pointer's (B, [T,] 1) bool: whether the steps whose inputs are ``tokens``
        may write <end> (after a position marked in ``stop_after``); None without the marks."""
        if "stop_after" not in memory:
            return None
        floor = self._written(tokens)
        length = tf.shape(memory["stop_after"])[1]
        # a position past the source comes only from a beam's impossible (-inf) candidates, when the
        # beam is wider than what a short source allows: read a real one, never stop after it
        inside = tf.logical_and(floor >= 0, floor < length)
        after = tf.gather(memory["stop_after"], tf.clip_by_value(floor, 0, length - 1), axis=1, batch_dims=1)
        return tf.logical_and(inside, after)[..., None]

    def _step_mask(self, tokens, memory):
        """An extractive pointer's attention mask for the steps whose inputs are ``tokens`` (B,) or
        (B, T): the real positions after the one the input wrote (all of them after <start>)."""
        after = tf.range(tf.shape(memory["mask"])[-1]) > self._written(tokens)[..., None]  # (B, [T,] R)
        mask = memory["mask"] if tokens.shape.rank == 1 else memory["mask"][:, None, :]
        return tf.logical_and(mask, after)

    def _recurrent_step(self, x_e, state, memory, step_mask=None):
        """x_e: embedding already projected by kernel_e (B, G*H); step_mask (B, R): this step's
        attention mask (an extractive pointer's). Returns (state, context, alpha)."""
        h_prev, c_prev = state["h"], state["c"]
        if self.context == "attention":
            mask = memory["mask"] if step_mask is None else step_mask
            context, alpha = self.attention(h_prev, memory["keys"], memory["annotations"], mask)
            if step_mask is not None:  # no position left: no weight anywhere (the step can only stop)
                left = tf.cast(tf.reduce_any(step_mask, -1, keepdims=True), alpha.dtype)
                context, alpha = context * left, alpha * left
            if self.gate:
                context = context * self.gate_dense(h_prev)  # beta_t, a scalar gate (Xu et al. 4.2.1)
        else:
            mask = tf.cast(memory["mask"], x_e.dtype)
            alpha = mask / tf.maximum(tf.reduce_sum(mask, -1, keepdims=True), 1.0)  # uniform (B, R)
            context = memory["mean"] if self.context == "concat" else None
        x = x_e + self._cast(self.bias)
        if context is not None:
            x = x + tf.matmul(context, self._cast(self.kernel_z))  # (B, G*H)
        if self.cell == "lstm":
            gates = x + tf.matmul(h_prev, self._cast(self.recurrent_kernel))
            i, f, g, o = tf.split(gates, 4, axis=-1)
            c = tf.sigmoid(f) * c_prev + tf.sigmoid(i) * tf.tanh(g)
            h = tf.sigmoid(o) * tf.tanh(c)
        else:  # GRU, reset gate after the recurrent matmul (as cuDNN / Keras reset_after)
            rec = tf.matmul(h_prev, self._cast(self.recurrent_kernel)) + self._cast(self.recurrent_bias)
            xz, xr, xh = tf.split(x, 3, axis=-1)
            rz, rr, rh = tf.split(rec, 3, axis=-1)
            z = tf.sigmoid(xz + rz)
            r = tf.sigmoid(xr + rr)
            h = z * h_prev + (1.0 - z) * tf.tanh(xh + r * rh)
            c = c_prev
        if context is None:
            context = tf.zeros((tf.shape(h)[0], 0), h.dtype)
        return {"h": h, "c": c}, context, alpha

    def _output_logits(self, embedded, h, context, training=False):
        """Deep output (Xu eq. 7 / Bahdanau maxout) -> vocabulary logits. Works on (B, ...) tensors.
        An extractive pointer has none: None."""
        if not self.vocab_output:
            return None
        if self.deep_output:
            hidden = self.out_h(h) + self.out_e(embedded)
            if self.context != "none":
                hidden = hidden + self.out_z(context)
            if self.maxout:
                shape = tf.concat([tf.shape(hidden)[:-1], [self.embedding_dim, 2]], 0)
                hidden = tf.reduce_max(tf.reshape(hidden, shape), -1)  # maxout, pool size 2
            else:
                hidden = tf.tanh(hidden)
        else:
            hidden = h
        return self.vocab_dense(self.out_dropout(hidden, training=training))

    def _copy_log_probs(self, logits, embedded, h, context, alpha, memory, may_stop=None):
        """log P of a pointer decoder (a copy over the attention)."""
        can_copy = tf.reduce_any(alpha > 0, -1, keepdims=True) if self.positions_from else None
        return self._pointer_log_probs(logits, embedded, h, context, alpha, memory["copy_ids"], can_copy, may_stop)

    def _pointer_log_probs(self, logits, embedded, h, context, alpha, copy_ids, can_copy=None, may_stop=None):
        """The pointer-generator's log P (..., V) from the vocabulary logits (..., V; None for an
        extractive pointer), the step's input embedding, state, context and attention alpha (..., R);
        copy_ids (B, R) is broadcast over the middle (time) axis of a (B, T, ...) call. ``can_copy``
        (..., 1) bool: False rows take the vocabulary distribution alone; ``may_stop`` (..., 1) bool: False
        rows copy only (an extractive pointer's stop rule). float32."""
        f32 = tf.float32
        switch_in = tf.concat([tf.cast(h, f32), tf.cast(context, f32), tf.cast(embedded, f32)], -1)
        p_gen = tf.sigmoid(tf.cast(self.switch(switch_in), f32))  # (..., 1)
        if may_stop is not None:
            p_gen = tf.where(may_stop, p_gen, 0.0)
        if can_copy is not None:
            p_gen = tf.where(can_copy, p_gen, 1.0)
        alpha = tf.cast(alpha, f32)
        if self.positions_from:  # an extractive pointer generates <end> only: p_gen is P(stop)
            shape = tf.concat([tf.shape(alpha)[:-1], [self.vocab_size]], 0)
            p_vocab = tf.broadcast_to(tf.one_hot(END_ID, self.vocab_size, dtype=f32), shape)
        else:
            p_vocab = tf.nn.softmax(tf.cast(logits, f32), -1)
        if copy_ids.shape.rank < alpha.shape.rank:  # (B, R) -> (B, T, R)
            copy_ids = tf.broadcast_to(copy_ids[:, None, :], tf.shape(alpha))
        vocab, width = self.vocab_size, tf.shape(alpha)[-1]
        flat_alpha = tf.reshape(alpha, [-1, width])  # (M, R)
        rows = tf.shape(flat_alpha)[0]
        segments = tf.reshape(copy_ids, [-1, width]) + tf.range(rows)[:, None] * vocab  # row m's id w -> m*V + w
        p_copy = tf.math.unsorted_segment_sum(tf.reshape(flat_alpha, [-1]), tf.reshape(segments, [-1]), rows * vocab)
        p_copy = tf.reshape(p_copy, tf.shape(p_vocab))
        return tf.math.log(tf.maximum(p_gen * p_vocab + (1.0 - p_gen) * p_copy, 1e-12))

    # -- teacher forcing --------------------------------------------------------------
    def call(self, tokens, annotations, annotation_mask=None, initial_state=None, training=False,
             return_state=False):
        """tokens (B, T) decoder inputs (<start> w1 ... w_{T-1}); annotations (B, R, D);
        annotation_mask (B, R) bool marks real annotations (source words, frames).

        Returns logits (B, T, V) (a pointer decoder: log P) and attention weights alpha (B, T, R);
        with return_state also the state after the last step, {"h", "c"} (B, H) each, so that a
        long sequence can be read in windows with the state carried over (a language model's
        perplexity).
        """
        memory, state = self.prepare(annotations, annotation_mask, initial_state)
        embedded = self.embedding(tokens)  # (B, T, E)
        x_e = tf.einsum("bte,eg->btg", embedded, self._cast(self.kernel_e))  # (B, T, G*H), all steps at once
        x_e_tm = tf.transpose(x_e, [1, 0, 2])  # time-major (T, B, G*H)

        def body(carry, elems):
            x_t, mask_t = elems if self.positions_from else (elems, None)
            st = {"h": carry[0], "c": carry[1]}
            new_state, context, alpha = self._recurrent_step(x_t, st, memory, mask_t)
            return new_state["h"], new_state["c"], context, alpha

        batch = tf.shape(tokens)[0]
        ctx_dim = 0 if self.context == "none" else self.annotation_dim
        init = (state["h"], state["c"],
                tf.zeros((batch, ctx_dim), x_e.dtype),
                tf.zeros(tf.shape(memory["mask"]), x_e.dtype))
        elems = x_e_tm
        if self.positions_from:  # each step's mask from its input token, time-major (T, B, R)
            elems = (x_e_tm, tf.transpose(self._step_mask(tf.cast(tokens, tf.int32), memory), [1, 0, 2]))
        hs, cs, contexts, alphas = tf.scan(body, elems, initializer=init)  # each (T, B, ...)
        final_state = {"h": hs[-1], "c": cs[-1]} if return_state else None
        hs = tf.transpose(hs, [1, 0, 2])  # (B, T, H)
        contexts = tf.transpose(contexts, [1, 0, 2])  # (B, T, D)
        alphas = tf.transpose(alphas, [1, 0, 2])  # (B, T, R)
        logits = self._output_logits(embedded, hs, contexts, training=training)  # (B, T, V)
        if self.pointer:
            may_stop = self._may_stop(tf.cast(tokens, tf.int32), memory) if self.positions_from else None
            logits = self._copy_log_probs(logits, embedded, hs, contexts, alphas, memory, may_stop)
        if return_state:
            return logits, alphas, final_state
        return logits, alphas

    # -- one step, for beam search ----------------------------------------------------
    def step(self, tokens, state, memory):
        """tokens (N,) previous words; returns log-probs (N, V), new state, alpha (N, R)."""
        embedded = self.embedding(tokens)  # (N, E)
        x_e = tf.matmul(embedded, self._cast(self.kernel_e))
        step_mask = self._step_mask(tf.cast(tokens, tf.int32), memory) if self.positions_from else None
        new_state, context, alpha = self._recurrent_step(x_e, state, memory, step_mask)
        logits = self._output_logits(embedded, new_state["h"], context)
        if self.pointer:
            may_stop = self._may_stop(tf.cast(tokens, tf.int32), memory) if self.positions_from else None
            logits = self._copy_log_probs(logits, embedded, new_state["h"], context, alpha, memory, may_stop)
        return tf.nn.log_softmax(tf.cast(logits, tf.float32), -1), new_state, tf.cast(alpha, tf.float32)

    @classmethod
    def of(cls, vocab_size, **settings):
        """The decoder of flat settings (``cell="gru", pointer=True``, a config's keys): the
        `DecoderDesign` and `CopyMechanism` fields to those, the rest to the constructor."""
        from captioner.settings_groups import group_settings

        groups = group_settings(settings, {"design": DecoderDesign, "copy": CopyMechanism})
        return cls(vocab_size, **groups, **settings)

    @classmethod
    def from_config(cls, config):
        return cls.of(**config)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size, "embedding_dim": self.embedding_dim, "units": self.units,
            "attention_units": self.attention_units, "annotation_dim": self.annotation_dim,
            "cell": self.cell, "context": self.context, "init_state": self.init_state,
            "gate": self.gate, "deep_output": self.deep_output, "maxout": self.maxout,
            "dropout": self.dropout, **({"pointer": True} if self.pointer else {}),
            **({"positions_from": self.positions_from} if self.positions_from else {}),
        }
