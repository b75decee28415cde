"""A causal Transformer decoder (Vaswani et al. 2017, decoder only, as GPT-2 / nanoGPT arrange
it): the language model's second architecture beside the recurrent :class:`AttentionDecoder`.

    x = token embedding + learned position embedding         (B, T, D), T <= context
    for each of `num_layers` blocks (pre-norm):
        x = x + Dropout(MultiHeadSelfAttention(LayerNorm(x), causal mask))
        x = x + Dropout(Dense(D)(GELU(Dense(4 D)(LayerNorm(x)))))
    logits = LayerNorm(x) @ token_embedding^T + bias         (B, T, V), input and output tied

It speaks the decoder interface the one :class:`~captioner.decoding.Generator` drives, so beam
search, greedy decoding and sampling are the project's own:

* ``call(tokens, annotations, initial_state=None, training=False, return_state=False)``: teacher
  forcing over (B, T) tokens; the annotations are a (B, 1, 1) placeholder (a language model has
  no encoder) and are never read;
* ``prepare(annotations, mask, initial_state) -> (memory, state)``; ``step(tokens, state, memory)
  -> (log_probs, state, attention)``. The state is the visible context: ``{"context": (B, C)
  int32 ids, left-aligned, "length": (B,) int32}`` (C = ``context``). A step writes its token
  after the last one (or, with the context full, drops the oldest one: the window slides, as
  nanoGPT's ``generate`` crops to its block size) and runs the blocks over the window; the
  causal mask hides the unused places after ``length``. There is no key/value cache: a step
  costs one pass over at most C tokens, which is what a window that slides needs anyway (the
  learned positions move with it).
"""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="captioner")
class CausalTransformer(keras.layers.Layer):
    def __init__(self, vocab_size, units=128, num_layers=4, num_heads=4, context=128, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if units % num_heads:
            raise ValueError(f"units ({units}) must be a multiple of num_heads ({num_heads})")
        if num_layers < 1 or context < 1:
            raise ValueError(f"num_layers and context must be >= 1, got {num_layers} and {context}")
        self.vocab_size, self.units, self.num_layers = int(vocab_size), int(units), int(num_layers)
        self.num_heads, self.context, self.dropout = int(num_heads), int(context), float(dropout)
        self.embedding = keras.layers.Embedding(vocab_size, units, name="embedding")
        self.position = keras.layers.Embedding(context, units, name="position")
        # one list per sublayer kind (Keras tracks lists of layers), block i at index i
        self.norm1 = [keras.layers.LayerNormalization(epsilon=1e-5, name=f"norm1_{i}") for i in range(self.num_layers)]
        self.attention = [keras.layers.MultiHeadAttention(num_heads, units // num_heads, dropout=dropout, name=f"attention_{i}")
                          for i in range(self.num_layers)]
        self.norm2 = [keras.layers.LayerNormalization(epsilon=1e-5, name=f"norm2_{i}") for i in range(self.num_layers)]
        self.hidden = [keras.layers.Dense(4 * units, activation="gelu", name=f"hidden_{i}") for i in range(self.num_layers)]
        self.out = [keras.layers.Dense(units, name=f"out_{i}") for i in range(self.num_layers)]
        self.final_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")
        self.drop = keras.layers.Dropout(dropout)

    def build(self, tokens_shape=None, annotations_shape=None):
        d = self.units
        self.embedding.build((None, None))
        self.position.build((None, None))
        for i in range(self.num_layers):
            self.norm1[i].build((None, None, d))
            self.attention[i].build((None, None, d), (None, None, d))
            self.norm2[i].build((None, None, d))
            self.hidden[i].build((None, None, d))
            self.out[i].build((None, None, 4 * d))
        self.final_norm.build((None, None, d))
        self.output_bias = self.add_weight(name="output_bias", shape=(self.vocab_size,), initializer="zeros")
        self.built = True

    # -- the network ------------------------------------------------------------------
    def logits(self, tokens, training=False):
        """tokens (B, T), T <= context -> next-token logits (B, T, V) (position t sees 0..t)."""
        length = tf.shape(tokens)[1]
        tf.debugging.assert_less_equal(length, self.context,
                                       message=f"a causal Transformer reads at most context={self.context} tokens")
        x = self.embedding(tokens) + self.position(tf.range(length))[None]  # (B, T, D)
        x = self.drop(x, training=training)
        for i in range(self.num_layers):
            h = self.norm1[i](x)
            x = x + self.drop(self.attention[i](h, h, use_causal_mask=True, training=training), training=training)
            x = x + self.drop(self.out[i](self.hidden[i](self.norm2[i](x))), training=training)
        x = self.final_norm(x)
        table = tf.cast(self.embedding.embeddings, x.dtype)  # (V, D): the input embedding, tied
        return tf.einsum("btd,vd->btv", x, table) + tf.cast(self.output_bias, x.dtype)

    def call(self, tokens, annotations=None, annotation_mask=None, initial_state=None, training=False,
             return_state=False):
        """Teacher forcing: logits (B, T, V) and attention (B, T, 1) zeros (no annotations) [,
        the state after the tokens: their last ``context`` ids]. ``initial_state`` is not read:
        the context a window continues is part of its tokens (the language model's perplexity
        windows overlap for that)."""
        tokens = tf.cast(tokens, tf.int32)
        batch, steps = tf.shape(tokens)[0], tf.shape(tokens)[1]
        logits = self.logits(tokens, training=training)
        attention = tf.zeros((batch, steps, 1), logits.dtype)
        if not return_state:
            return logits, attention
        return logits, attention, self.context_state(tokens)

    # -- the Generator's interface ----------------------------------------------------
    def empty_state(self, batch):
        return {"context": tf.zeros((batch, self.context), tf.int32), "length": tf.zeros((batch,), tf.int32)}

    def context_state(self, tokens):
        """The state after reading `tokens` (B, P) (P may be 0): their last `context` ids."""
        tokens = tf.cast(tokens, tf.int32)
        kept = tokens[:, tf.maximum(tf.shape(tokens)[1] - self.context, 0):]
        return {"context": tf.pad(kept, [[0, 0], [0, self.context - tf.shape(kept)[1]]]),
                "length": tf.fill([tf.shape(tokens)[0]], tf.shape(kept)[1])}

    def prepare(self, annotations, mask=None, initial_state=None):
        annotations = tf.convert_to_tensor(annotations)
        state = initial_state if initial_state is not None else self.empty_state(tf.shape(annotations)[0])
        return {"annotations": annotations}, state

    def step(self, tokens, state, memory):
        """tokens (N,) the last ids; -> log-probs (N, V) of the next, the new state, (N, 1) zeros."""
        context, length = state["context"], state["length"]
        full = length >= self.context  # (N,)
        write = tf.one_hot(tf.minimum(length, self.context - 1), self.context, on_value=True, off_value=False,
                           dtype=tf.bool)  # (N, C)
        appended = tf.where(write, tokens[:, None], context)
        slid = tf.concat([context[:, 1:], tokens[:, None]], axis=1)
        context = tf.where(full[:, None], slid, appended)
        length = tf.minimum(length + 1, self.context)
        logits = self.logits(context)  # (N, C, V)
        last = tf.gather(logits, length - 1, axis=1, batch_dims=1)  # (N, V)
        log_probs = tf.nn.log_softmax(tf.cast(last, tf.float32), -1)
        return log_probs, {"context": context, "length": length}, tf.zeros((tf.shape(tokens)[0], 1), tf.float32)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "units": self.units,
                "num_layers": self.num_layers, "num_heads": self.num_heads, "context": self.context, "dropout": self.dropout}
