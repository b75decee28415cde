"""A hierarchical dialogue response model (HRED, Serban et al. 2016) with attention over the
turns, in one Keras object:

    context (B, N, W): the last N turns, each "<user>"/"<system>" + its words (0-padded)
      -> WordEncoder (the HAN word level: BiGRU + word attention) -> one vector per turn (B, N, D)
      -> SentenceEncoder (the HAN sentence level: BiGRU over the turns) -> turn annotations
         (B, N, 2U) and a pooled context vector (B, 2U)
      -> AttentionDecoder (the translator's GRU decoder, s0 = tanh(W c)) attending over the turn
         annotations -> the next SYSTEM turn, word by word

``attend="words"`` swaps what the same decoder attends over: the WordEncoder's per-word BiGRU
annotations of the last N turns, flattened to (B, N*W, 2U) with the word mask (the pooled
context vector still gives s0). Its per-turn attention is the sum over each turn's words.
The bundled model attends over the turns: on the SGD data the two were compared at an equal
training budget (docs/models.md, the dialogue model) and the turns kept.

The two hierarchical encoders are the document classifier's layer classes. Decoding is the one
Generator (beam search); its attention over the N turns says which earlier turn each response
word looked at. The vocabulary and reading settings are in the config::

    import captioner, keras
    model = keras.models.load_model("assets/models/sgd_dialogue.keras")
    model.respond([[("USER", "I want to book a table for two in San Jose.")]])
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from captioner.decoding.generator import Generator, hypothesis_words
from captioner.layers.attention_decoder import AttentionDecoder, DecoderDesign
from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.word_encoder import WordEncoder
from captioner.models.text_model import TextTaskModel
from captioner.text.tokenizer import detokenize, tokenize
from captioner.text.vocabulary import PAD_ID, START_ID, UNK_ID, Vocabulary

SPEAKER_TOKENS = {"USER": "<user>", "SYSTEM": "<system>"}
ATTEND = ("turns", "words")  # what the decoder attends over: the context's turn annotations or the turns' words


def utterance_tokens(text: str) -> list[str]:
    return tokenize(text, lower=True, keep_punct=True)


@dataclasses.dataclass
class Response:
    text: str
    words: list
    score: float
    hypotheses: list           # [(text, score)], best first (the n-best list)
    turn_attention: np.ndarray  # (len(words) + 1, turns read): attention of each generated token over the turns
    turns: list                # the (speaker, utterance) turns read, oldest first
    word_attention: np.ndarray | None = None  # attend="words": (len(words) + 1, turns read, max_words)


@dataclasses.dataclass(frozen=True)
class DialogueNetwork:
    """The shape of the hierarchical encoder-decoder (HRED, Serban et al. 2016, with attention):
    word embeddings, each utterance's BiGRU units, the context GRU's, the decoder's, the attention
    MLPs', dropout; ``attend``: the decoder attends over the "turns" (context states) or the "words"."""

    embedding_dim: int = 64
    units: int = 64
    context_units: int = 128
    decoder_units: int = 256
    attention_units: int = 128
    dropout: float = 0.2
    attend: str = "turns"


@keras.saving.register_keras_serializable(package="captioner")
class DialogueResponder(TextTaskModel, keras.Model):
    """Training: {"context" (B, N, W), "tokens" (B, T)} -> logits (B, T, V).
    Inference: :meth:`respond` (turns in, the next SYSTEM turn out) or :meth:`generate` (ids)."""

    model_kind = "a dialogue response model"
    train_hint = " (train one with `captioner train respond`)"

    GROUPS = {"network": DialogueNetwork}  # `DialogueResponder.of(vocabulary, units=10, ...)`: flat settings

    def __init__(self, vocabulary, network: DialogueNetwork | None = None, context_turns=3, max_words=30, beam_size=4,
                 alpha=1.0, max_length=40, training_config=None, **kwargs):
        super().__init__(**kwargs)
        net = network or DialogueNetwork()
        embedding_dim, units, context_units = net.embedding_dim, net.units, net.context_units
        decoder_units, attention_units, dropout, attend = net.decoder_units, net.attention_units, net.dropout, net.attend
        self.vocabulary = Vocabulary.coerce(vocabulary)
        missing = [t for t in SPEAKER_TOKENS.values() if t not in self.vocabulary]
        if missing:
            raise ValueError(f"the vocabulary lacks the speaker tokens {missing}")
        self.embedding_dim = int(embedding_dim)
        self.units = int(units)
        self.context_units = int(context_units)
        self.decoder_units = int(decoder_units)
        self.attention_units = int(attention_units)
        self.dropout = float(dropout)
        self.context_turns = int(context_turns)
        self.max_words = int(max_words)
        self.beam_size = int(beam_size)
        self.alpha = float(alpha)
        self.max_length = int(max_length)
        if attend not in ATTEND:
            raise ValueError(f"attend must be one of {ATTEND}, not {attend!r}")
        self.attend = attend
        self.training_config = training_config or {}
        v = len(self.vocabulary)
        self.utterances = WordEncoder(v, embedding_dim=self.embedding_dim, units=self.units,
                                      attention_units=self.attention_units, dropout=self.dropout, name="utterances")
        self.context = SentenceEncoder(self.utterances.output_dim, units=self.context_units,
                                       attention_units=self.attention_units, dropout=self.dropout, name="context")
        annotation_dim = self.context.output_dim if attend == "turns" else self.utterances.output_dim
        self.decoder = AttentionDecoder(v, embedding_dim=self.embedding_dim, units=self.decoder_units,
                                        attention_units=self.attention_units, annotation_dim=annotation_dim,
                                        design=DecoderDesign("gru", "attention", "given", gate=False, maxout=True),
                                        dropout=self.dropout, name="decoder")
        self.init_h = keras.layers.Dense(self.decoder_units, activation="tanh", name="init_h")
        self.utterances.build()
        self.context.build()
        self.decoder.build((None, None, annotation_dim))
        self.init_h.build((None, self.context.output_dim))
        self.built = True
        banned = (PAD_ID, START_ID, UNK_ID) + tuple(self.vocabulary.token_to_id(t) for t in SPEAKER_TOKENS.values())
        self.generator = Generator(self.decoder, self.encode, banned_ids=banned,
                                   input_signature=[tf.TensorSpec((None, None, None), tf.int32)])

    # -- the network --------------------------------------------------------------------------
    def encode(self, context, training=False):
        """context ids (B, N, W) -> annotations, their mask and the decoder state: turns: (B, N, 2C),
        (B, N); words: (B, N*W, 2U), (B, N*W) (turn n's words at n*W .. n*W+W-1)."""
        if self.attend == "turns":
            vectors, _, mask = self.utterances(context, training=training)  # (B, N, 2U), (B, N)
        else:
            vectors, _, mask, words, word_mask = self.utterances(context, training=training, return_annotations=True)
        summary, _, annotations = self.context(vectors, mask=mask, training=training)  # (B, 2C), (B, N, 2C)
        h = self.init_h(summary)  # (B, S)
        if self.attend == "words":
            shape = tf.shape(words)  # (B, N, W, 2U)
            annotations = tf.reshape(words, tf.stack([shape[0], shape[1] * shape[2], self.utterances.output_dim]))
            mask = tf.reshape(word_mask, tf.stack([shape[0], shape[1] * shape[2]]))  # (B, N*W)
        return annotations, mask, {"h": h, "c": tf.zeros_like(h)}

    def call(self, inputs, training=False):
        annotations, mask, state = self.encode(inputs["context"], training=training)
        logits, _ = self.decoder(inputs["tokens"], annotations, annotation_mask=mask, initial_state=state,
                                 training=training)
        return logits  # (B, T, V)

    def generate(self, context_ids, beam_size=None, alpha=None, max_length=None):
        out = self.generator(np.asarray(context_ids, np.int32),
                             beam_size=self.beam_size if beam_size is None else beam_size,
                             alpha=self.alpha if alpha is None else alpha,
                             max_length=self.max_length if max_length is None else max_length)
        return out.numpy()

    # -- turns in, a response out ---------------------------------------------------------------
    def context_ids(self, contexts):
        """[[(speaker, utterance), ...]] (oldest first) -> (B, context_turns, max_words) ids: the
        last ``context_turns`` turns, oldest first, padding after them."""
        ids = np.zeros((len(contexts), self.context_turns, self.max_words), np.int32)
        for b, turns in enumerate(contexts):
            for n, (speaker, text) in enumerate(list(turns)[-self.context_turns:]):
                words = [SPEAKER_TOKENS[speaker]] + utterance_tokens(text)
                row = [self.vocabulary.token_to_id(w) for w in words[: self.max_words]]
                ids[b, n, : len(row)] = row
        return ids

    def respond(self, contexts, beam_size=None, alpha=None, max_length=None, batch_size=64):
        """One :class:`Response` per context (a list of (speaker, utterance) turns, oldest first;
        at least one turn)."""
        from captioner.errors import InputError

        contexts = [list(c) for c in contexts]
        for i, c in enumerate(contexts):
            if not c:
                raise InputError(f"context {i + 1}: no turns to respond to")
            for speaker, _ in c:
                if speaker not in SPEAKER_TOKENS:
                    raise InputError(f"context {i + 1}: speaker {speaker!r} is not USER or SYSTEM")
        out = []
        for start in range(0, len(contexts), batch_size):
            chunk = contexts[start:start + batch_size]
            gen = self.generate(self.context_ids(chunk), beam_size, alpha, max_length)
            for b, turns in enumerate(chunk):
                read = turns[-self.context_turns:]
                hyps = []
                for k in range(gen["tokens"].shape[1]):
                    if np.isfinite(gen["scores"][b, k]):
                        words, _ = hypothesis_words(self.vocabulary, gen["tokens"][b, k])
                        hyps.append((detokenize(words), float(gen["scores"][b, k]), words, k))
                text, score, words, k = hyps[0]
                steps = int(gen["lengths"][b, k])
                attention = gen["attention"][b, k, :steps]  # (steps, N) or (steps, N*W)
                word_attention = None
                if self.attend == "words":
                    word_attention = attention.reshape(steps, self.context_turns, self.max_words)[:, :len(read)]
                    attention = word_attention.sum(-1)  # a turn's share: the sum over its words
                out.append(Response(text, words, score, [(h[0], h[1]) for h in hyps], attention[:, :len(read)],
                                    read, word_attention))
        return out

    def get_config(self):
        return {**super().get_config(), "vocabulary": list(self.vocabulary.tokens),
                "embedding_dim": self.embedding_dim, "units": self.units, "context_units": self.context_units,
                "decoder_units": self.decoder_units, "attention_units": self.attention_units,
                "dropout": self.dropout, "context_turns": self.context_turns, "max_words": self.max_words,
                "beam_size": self.beam_size, "alpha": self.alpha, "max_length": self.max_length,
                "attend": self.attend, "training_config": self.training_config}


def load_dialogue_responder(path) -> DialogueResponder:
    return DialogueResponder.load(path)
