"""Sentence-to-sentence models (translation, entailed-hypothesis generation) in one Keras object.

The same engine as the image captioner: an encoder makes annotation vectors and the project's
`AttentionDecoder` emits target words, decoded by the one `Generator`.

Kinds (all trained and decoded by the same code):

* ``"attention"``: Bahdanau et al. 2015 (RNNsearch). Bidirectional GRU encoder, annotations
  h_j = [fw_j ; bw_j]; decoder GRU with additive attention e_ij = v^T tanh(W s_{i-1} + U h_j),
  the context c_i fed to the cell and to a deep maxout output; s0 = tanh(W_s bw_1).
* ``"fixed"``: the fixed-length-context encoder-decoder the seed paper compares with
  (RNNencdec, Cho et al. 2014): the encoder's last state c is the only thing the decoder sees,
  as its initial state AND concatenated to its input and deep output at every step.
* ``"sutskever"``: Sutskever et al. 2014: a deep LSTM encoder (optionally reading the source
  reversed) whose last (h, c) is the decoder's initial state, as it is; nothing else.

A saved model holds both vocabularies and the tokenizer settings in its config, so

    import captioner, keras
    model = keras.models.load_model("assets/models/anki_fr_en.keras")
    model.translate(["Jane visite l'Afrique en septembre."])

works in a fresh process: `translate` tokenizes raw strings in Python, runs the compiled beam
search and returns text, tokens, scores and the alignment (attention) matrix.
"""

from __future__ import annotations

import dataclasses
import logging

import keras
import numpy as np
import tensorflow as tf

from captioner.decoding import Generator, coverage_penalty, hypothesis_words
from captioner.errors import check_model_settings
from captioner.decoding.hypotheses import Hypothesis, rerank
from captioner.decoding.rescoring import rescorer_from_config
from captioner.layers.attention_decoder import AttentionDecoder, CopyMechanism, DecoderDesign, doubly_stochastic_penalty
from captioner.layers.text_encoder import TextEncoder
from captioner.models.text_model import TextTaskModel, check_token_ids
from captioner.text.subword import WORD_START, check_spm, decode_pieces, encode_pieces, piece_words, word_core, word_groups
from captioner.text.tokenizer import FUNCTION_WORDS, WordPreprocessor, char_tokenize, detokenize
from captioner.text.truecase import apply_truecase
from captioner.text.vocabulary import PAD_ID, SPECIAL_TOKENS, START_ID, UNK, Vocabulary

log = logging.getLogger(__name__)

KINDS = {
    # kind: (decoder context mode, bidirectional encoder)
    "attention": ("attention", True),
    "fixed": ("concat", False),
    "sutskever": ("none", False),
}
DEFAULT_TOKENIZER = {"lower": True, "keep_punct": True, "split_elisions": False, "numbers": False}
POSITION = "@{}"  # an extractive model's target token that writes source word {}


def may_end_on(word: str) -> bool:
    """Whether an extractive headline may end on this (lower-case) source word: not one of the
    `FUNCTION_WORDS`, nor a token without a letter or digit."""
    return any(ch.isalnum() for ch in word) and word not in FUNCTION_WORDS


def position_vocabulary(max_source_length: int) -> Vocabulary:
    """An extractive model's target vocabulary: the specials, then one token per source position."""
    return Vocabulary(SPECIAL_TOKENS + tuple(POSITION.format(j) for j in range(int(max_source_length))))


def extract_words(position_ids, first_id, source_words):
    """The source words an extractive hypothesis points at, in order, each word once (a word the
    output already holds, compared without case, is left out: "apple ... apple" says it once),
    and the steps that wrote them; position_ids: its generated ids (<end> and what follows are not
    positions). Returns (words, steps)."""
    words, steps, seen = [], [], set()
    for step, i in enumerate(np.asarray(position_ids).tolist()):
        j = int(i) - first_id
        if 0 <= j < len(source_words) and source_words[j].lower() not in seen:
            seen.add(source_words[j].lower())
            words.append(source_words[j])
            steps.append(step)
    return words, steps



def join_tokens(tokens, settings: dict | None = None) -> str:
    """The text of tokens made by `text_tokens` with these settings: characters joined as they
    are, SentencePiece pieces decoded, words detokenized."""
    s = settings or {}
    if s.get("spm"):
        return decode_pieces(tokens)
    return "".join(tokens) if s.get("chars") else detokenize(tokens)


def text_tokens(text: str, settings: dict | None = None) -> list[str]:
    """Tokenize one sentence the way a model was trained (settings from its config).

    ``{"chars": True}`` (transliteration): the tokens are the characters (code points, NFC).
    ``{"spm": <base64 SentencePiece model>, "lower": False}`` (subword translators): the tokens
    are SentencePiece pieces (see :mod:`captioner.text.subword`).
    """
    s = {**DEFAULT_TOKENIZER, **(settings or {})}
    if s.get("spm"):
        return encode_pieces(text, s["spm"], lower=s["lower"])
    if s.get("chars"):
        return char_tokenize(text, lower=s["lower"])
    return WordPreprocessor.of(s).tokens(text)


@dataclasses.dataclass
class Translation:
    text: str                  # detokenized best hypothesis ("" for an empty input)
    tokens: list               # its words, without <start>/<end>
    source_tokens: list        # the source words the model read (after truncation)
    score: float               # what ranks the hypotheses: length-normalized log-probability, plus
                               # the coverage penalty when one is used; with a rescorer, its
                               # combined score (see `model_scores`)
    log_prob: float            # summed log-probability
    attention: np.ndarray | None  # (steps, len(source_tokens)): one row per word, then one for <end>
                                  # when the hypothesis finished (steps = len(tokens) + finished)
    hypotheses: list           # [(text, score)] of every beam, best first (by the rescorer's score
                               # when the model has one)
    replaced_unk: int = 0      # <unk> outputs replaced by their most-attended source word
    truncated: bool = False    # the source was longer than max_source_length
    finished: bool = True      # the hypothesis emitted <end> within max_length
    coverage: float = 0.0      # the coverage penalty term included in `score` (0 when off)
    # Subword models: `tokens`, `source_tokens` and `attention` are merged to words (see
    # `word_alignment`); what the network read and wrote is kept here (None for word models):
    pieces: list | None = None              # the output pieces (an <unk> piece: the copied source word)
    source_pieces: list | None = None       # the source pieces
    piece_attention: np.ndarray | None = None  # (steps, len(source_pieces))
    # With an n-best rescorer (`captioner.decoding.rescoring`): the model's own score of each
    # hypothesis, in the order of `hypotheses` (None without one)
    model_scores: list | None = None

    @property
    def attention_labels(self):
        """Row labels of `attention`: the words, then "<end>" if the hypothesis finished."""
        return list(self.tokens) + (["<end>"] if self.finished else [])

    def unknown_source_words(self, vocabulary) -> list[str]:
        """The source words the model could not read whole: not in ``vocabulary`` (a word model),
        or holding a piece that is not (a subword model: a character never seen in training)."""
        if self.source_pieces is None:
            return [w for w in self.source_tokens if w not in vocabulary]
        groups = word_groups(self.source_pieces)
        return [w for w, g in zip(self.source_tokens, groups) if any(self.source_pieces[i] not in vocabulary for i in g)]


def word_alignment(attention, source_groups, target_groups, finished):
    """Attention over pieces -> attention over words.

    attention (steps, source pieces), steps = target pieces (+ 1 for <end> when ``finished``);
    ``source_groups`` / ``target_groups``: the piece positions of each word (`word_groups`).
    A source word's column is the SUM of its pieces' columns (a row stays a distribution over
    the source: it still sums to 1); a target word's row is the MEAN of its pieces' rows (a
    mean of distributions is one, so every row sums to 1 again). The <end> row is kept as is.
    Returns (len(target_groups) + finished, len(source_groups)).
    """
    a = np.asarray(attention, np.float32)
    cols = np.stack([a[:, g].sum(axis=1) for g in source_groups], axis=1) if source_groups else a[:, :0]
    rows = [cols[g].mean(axis=0) for g in target_groups]
    if finished and len(a) > sum(len(g) for g in target_groups):
        rows.append(cols[-1])
    return np.stack(rows).astype(np.float32) if rows else cols[:0]


class Translator(TextTaskModel, keras.Model):
    """What a translation model offers, one network (`Seq2Seq`) or several decoded as one
    (`Seq2SeqEnsemble`): text in, `Translation` out. A subclass sets the vocabularies, tokenizer
    settings, ``kind``, ``max_source_length``, the decoding defaults, ``rescorer`` and the
    ``generator`` (the one `Generator` over its decoder)."""

    model_kind = "a translation model"
    extractive = False  # an extractive pointer's outputs are source positions (see `Seq2Seq`)
    _first_position = 0  # its target id of source position 0

    def generate(self, source_ids, beam_size=None, alpha=None, max_length=None, no_repeat_ngram=None):
        """Beam-decode source ids (B, S) (0-padded; None: the model's settings). Returns a
        `Generation` of NumPy arrays: tokens (B, K, L), scores, log_probs, lengths, finished
        (B, K), attention (B, K, L, R)."""
        check_token_ids(source_ids, len(self.source_vocabulary), "source ids")
        out = self.generator(np.asarray(source_ids, np.int32),
                             beam_size=self.beam_size if beam_size is None else beam_size,
                             alpha=self.alpha if alpha is None else alpha,
                             max_length=self.max_length if max_length is None else max_length,
                             no_repeat_ngram=self.no_repeat_ngram if no_repeat_ngram is None else no_repeat_ngram)
        return out.numpy()

    # -- text in, text out -----------------------------------------------------------
    def source_tokens(self, text: str) -> list[str]:
        return text_tokens(text, self.source_tokenizer)

    def known_words(self, text: str) -> tuple[int, int]:
        """(source words of `text` the model's vocabulary holds, source words): how well the text is
        in the language the model reads (a French sentence given to an English -> German model knows
        few). For a subword model, the words that are one piece of its vocabulary (the words its
        training text held often)."""
        tokens = self.source_tokens(text)
        vocabulary = self.source_vocabulary
        if self.source_tokenizer.get("spm"):  # a word the pieces' training text held often is one piece
            groups = word_groups(tokens)
            return sum(1 for g in groups if len(g) == 1 and tokens[g[0]] in vocabulary), len(groups)
        return sum(1 for t in tokens if t in vocabulary), len(tokens)

    def target_tokens(self, text: str) -> list[str]:
        return text_tokens(text, self.target_tokenizer)

    def encode_sources(self, token_lists) -> np.ndarray:
        """Token lists -> (B, S) int32 ids, 0-padded (no <start>/<end> on the source side)."""
        return self.source_vocabulary.encode_batch([t[: self.max_source_length] for t in token_lists],
                                                   add_start=False, add_end=False)

    def translate(self, sentences, beam_size=None, alpha=None, max_length=None, batch_size=64,
                  replace_unk=None, coverage_penalty=None, no_repeat_ngram=None, copy_distinct=None, rescore=True):
        """Translate raw strings. Returns one `Translation` per sentence, in order; an empty
        sentence (no tokens) gives ``Translation(text="", ...)`` with no hypotheses.

        ``coverage_penalty`` (beta >= 0; default: the model's): re-rank the beam's finished
        hypotheses by score + beta * sum_j log(min(sum_i a_ij, 1)) over the source words j, the
        attention a_ij of output step i summed (GNMT, Wu et al. 2016): a hypothesis that never
        attends to part of the source (a dropped phrase) loses. Attention models only.
        ``no_repeat_ngram`` (n >= 0; default: the model's): no output repeats an n-gram.
        ``copy_distinct`` (default: the model's): an <unk> copies the most attended source word
        that the output does not hold yet (see :func:`captioner.decoding.hypothesis_words`).
        ``rescore``: with the model's n-best rescorer (if it has one, see
        :mod:`captioner.decoding.rescoring`), re-rank each beam's hypotheses by its combined score
        (``Translation.model_scores`` keeps the model's own); False: the beam's ranking.
        Summaries and headlines use the same method (a source text in, a headline out)."""
        if isinstance(sentences, str):
            raise TypeError("translate() takes a list of sentences; wrap a single string in a list")
        replace_unk = self.replace_unk if replace_unk is None else replace_unk
        distinct = self.copy_distinct if copy_distinct is None else bool(copy_distinct)
        beta = self.coverage_penalty if coverage_penalty is None else float(coverage_penalty)
        if beta < 0 or not np.isfinite(beta):
            raise ValueError(f"coverage_penalty must be a finite number >= 0, got {beta}")
        toks = [self.source_tokens(s) for s in sentences]
        results: list[Translation | None] = [None] * len(toks)
        for i, t in enumerate(toks):
            if not t:
                results[i] = Translation("", [], [], float("-inf"), float("-inf"), None, [])
        todo = sorted((i for i, t in enumerate(toks) if t), key=lambda i: len(toks[i]))  # similar lengths together
        for start in range(0, len(todo), batch_size):
            idx = todo[start:start + batch_size]
            batch = [toks[i][: self.max_source_length] for i in idx]
            out = self.generate(self.encode_sources(batch), beam_size, alpha, max_length, no_repeat_ngram)
            for b, i in enumerate(idx):
                results[i] = self._decode_one(out, b, batch[b], replace_unk, distinct=distinct,
                                              truncated=len(toks[i]) > self.max_source_length, beta=beta,
                                              rescorer=self.rescorer if rescore else None, source=sentences[i])
        return results

    def _decode_one(self, out, b, source_tokens, replace_unk, truncated=False, beta=0.0, distinct=False,
                    rescorer=None, source=None):
        n_src = len(source_tokens)
        subword = bool(self.source_tokenizer.get("spm") or self.target_tokenizer.get("spm"))
        if subword:  # the <unk> copy and the alignment work on source words made of pieces
            src_groups = word_groups(source_tokens) if self.source_tokenizer.get("spm") else [[i] for i in range(n_src)]
            src_words = piece_words(source_tokens) if self.source_tokenizer.get("spm") else list(source_tokens)
        truecase = None if subword else self.target_tokenizer.get("truecase")
        if self.extractive or truecase:  # the source's words as written (a copied name keeps its capitals)
            cased_source = WordPreprocessor.of(self.source_tokenizer).as_written(source or "")[: self.max_source_length]
        if self.extractive:  # ... when they split as the model's words did
            extract_from = (cased_source if [w.lower() for w in cased_source] == list(source_tokens)
                            else list(source_tokens))
        hyps = []
        for k in range(out["tokens"].shape[1]):
            if not np.isfinite(out["scores"][b, k]):
                continue  # a dead beam (tiny vocabularies)
            steps = int(out["lengths"][b, k])
            attn = out["attention"][b, k, :steps, :n_src] if self.kind == "attention" else None
            finished = bool(out["finished"][b, k])
            coverage = coverage_penalty(attn, beta) if beta and attn is not None else 0.0
            extra = {}
            if subword:
                words, replaced, extra = self._subword_words(out["tokens"][b, k], attn, source_tokens, src_groups,
                                                             src_words, replace_unk, distinct, finished)
                text = " ".join(w for w in words if w) if self.target_tokenizer.get("spm") else detokenize(words)
            elif self.extractive:
                words, kept = extract_words(out["tokens"][b, k], self._first_position, extract_from)
                attn, replaced = attn[kept + ([steps - 1] if finished else [])], 0  # a dropped repeat's row too
                text = detokenize(words)
                text = text[:1].upper() + text[1:]  # a headline's first letter
            else:
                words, replaced = hypothesis_words(self.target_vocabulary, out["tokens"][b, k], attn,
                                                   source_tokens if replace_unk else None, distinct=distinct)
                if truecase:
                    words = apply_truecase(words, truecase, cased_source)
                text = join_tokens(words, self.target_tokenizer)
            hyps.append(Hypothesis(text, float(out["scores"][b, k]) + coverage, words, float(out["log_probs"][b, k]),
                                   finished, extra.pop("attention", attn), replaced, coverage, extra))
        hyps, model_scores = rerank(hyps, coverage=beta, rescorer=rescorer, source=source)
        best = hyps[0]
        src = src_words if subword else list(source_tokens)
        return Translation(best.text, best.words, src, best.score, best.log_prob, best.attention,
                           [(h.text, h.score) for h in hyps], best.replaced, truncated, best.finished, best.coverage,
                           **best.extra, model_scores=model_scores)

    def _subword_words(self, ids, attn, source_pieces, src_groups, src_words, replace_unk, distinct, finished):
        """One hypothesis of a subword model -> (target words, <unk> replaced, Translation extras).

        An <unk> output piece becomes the source WORD that its step attends to most, summing the
        attention over each word's pieces, without the punctuation around it (`word_core`: what
        `--copy-unk-rate` hides in training), and stands as a word of its own."""
        pieces = self.target_vocabulary.decode(np.asarray(ids).tolist())
        copied, replaced = pieces, 0
        if replace_unk and attn is not None and src_words:
            word_attn = np.stack([attn[:, g].sum(axis=1) for g in src_groups], axis=1)  # (steps, source words)
            cores = [word_core(w) for w in src_words]  # a copy leaves the source word's punctuation behind
            copied, replaced = hypothesis_words(self.target_vocabulary, ids, word_attn, cores, distinct=distinct)
        marker = WORD_START if self.target_tokenizer.get("spm") else ""
        pieces = [marker + c if p == UNK else p for p, c in zip(pieces, copied)]  # an <unk> is a word of its own
        if self.target_tokenizer.get("spm"):
            tgt_groups, words = word_groups(pieces), piece_words(pieces)
        else:
            tgt_groups, words = [[i] for i in range(len(pieces))], list(pieces)
        extra = {"pieces": pieces, "source_pieces": list(source_pieces), "piece_attention": attn}
        if attn is not None:
            extra["attention"] = word_alignment(attn, src_groups, tgt_groups, finished)
        return words, replaced, extra

    def _rescorer_config(self) -> dict:
        """{"rescorer": config} with one; {} without (the config of a model of before, unchanged)."""
        return {"rescorer": self.rescorer.get_config()} if self.rescorer is not None else {}


@dataclasses.dataclass(frozen=True)
class Seq2SeqNetwork:
    """The shape of a `Seq2Seq` network (what its weights depend on). ``kind``: "attention" (Bahdanau
    et al. 2015), "fixed" (Cho et al. 2014) or "sutskever" (2014); cells default to a GRU for
    attention, else an LSTM. ``attention_lambda`` > 0 (attention kind, training only): the doubly
    stochastic attention penalty of the captioner (Xu et al. 2015) over the source words.
    ``pointer``: a pointer-generator decoder (See et al. 2017) that also writes a target word by
    pointing at it in the source; ``extractive`` (with a pointer): an extractive pointer network whose
    target vocabulary is `position_vocabulary(max_source_length)` (deletion-based compression)."""

    kind: str = "attention"
    embedding_dim: int = 256
    units: int = 256
    attention_units: int = 256
    encoder_cell: str | None = None
    decoder_cell: str | None = None
    encoder_layers: int = 1
    reverse_source: bool = False
    dropout: float = 0.2
    maxout: bool = True
    attention_lambda: float = 0.0
    pointer: bool = False
    extractive: bool = False


@dataclasses.dataclass(frozen=True)
class Seq2SeqText:
    """How text becomes ids: each side's tokenizer settings (`DEFAULT_TOKENIZER` and what is given:
    case, characters, a SentencePiece model) and the source words read (the rest cut)."""

    source_tokenizer: dict | None = None
    target_tokenizer: dict | None = None
    max_source_length: int = 50


@dataclasses.dataclass(frozen=True)
class Seq2SeqOutput:
    """How the model writes unless told otherwise: the search (beam size, alpha, max length; n > 0
    `no_repeat_ngram`: no n-gram twice in one output), GNMT's coverage penalty beta re-ranking the
    final beam (Wu et al. 2016; 0 off), and an <unk> output replaced by the most attended source word
    (`replace_unk`; `copy_distinct`: one not yet in the output)."""

    beam_size: int = 5
    alpha: float = 1.0
    max_length: int = 50
    replace_unk: bool = True
    coverage_penalty: float = 0.0
    no_repeat_ngram: int = 0
    copy_distinct: bool = False


SEQ2SEQ_GROUPS = {"network": Seq2SeqNetwork, "text": Seq2SeqText, "output": Seq2SeqOutput}


@keras.saving.register_keras_serializable(package="captioner")
class Seq2Seq(Translator):
    """Training: {"source" (B, S), "tokens" (B, T)} -> logits (B, T, V).
    Inference: `generate(source ids)` (beam search) or `translate(strings)` (`Translator`).

    ``Seq2Seq(source_vocabulary, target_vocabulary, Seq2SeqNetwork(units=512), Seq2SeqText(...),
    Seq2SeqOutput(beam_size=4))``, or the same settings flat: ``Seq2Seq.of(src, tgt, units=512,
    beam_size=4)`` (a saved config is flat: `from_config` reads it so)."""

    GROUPS = SEQ2SEQ_GROUPS  # the constructor's groups: `Seq2Seq.of(src, tgt, **flat)` fills them

    def __init__(self, source_vocabulary, target_vocabulary, network: Seq2SeqNetwork | None = None,
                 text: Seq2SeqText | None = None, output: Seq2SeqOutput | None = None, rescorer=None,
                 training_config=None, **kwargs):
        super().__init__(**kwargs)
        net, text, out = network or Seq2SeqNetwork(), text or Seq2SeqText(), output or Seq2SeqOutput()
        kind, embedding_dim, units, maxout, dropout = net.kind, net.embedding_dim, net.units, net.maxout, net.dropout
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        self.source_vocabulary = Vocabulary.coerce(source_vocabulary)
        self.target_vocabulary = Vocabulary.coerce(target_vocabulary)
        self.kind = kind
        self.embedding_dim = embedding_dim
        self.units = units
        self.attention_units = attention_units = net.attention_units
        default_cell = "gru" if kind == "attention" else "lstm"
        self.encoder_cell = net.encoder_cell or default_cell
        self.decoder_cell = net.decoder_cell or default_cell
        self.encoder_layers = encoder_layers = net.encoder_layers
        self.reverse_source = reverse_source = net.reverse_source
        self.dropout = dropout
        self.maxout = maxout
        self.source_tokenizer = {**DEFAULT_TOKENIZER, **(text.source_tokenizer or {})}
        self.target_tokenizer = {**DEFAULT_TOKENIZER, **(text.target_tokenizer or {})}
        for side, settings in (("source", self.source_tokenizer), ("target", self.target_tokenizer)):
            if settings.get("spm"):  # refused at load, not after writing empty lines
                check_spm(settings["spm"], f"{type(self).__name__} {side}_tokenizer")
        self.max_source_length = int(text.max_source_length)
        check_model_settings(type(self).__name__, out.beam_size, out.alpha, out.max_length)  # a crafted config: refused
        self.beam_size = int(out.beam_size)
        self.alpha = float(out.alpha)
        self.max_length = int(out.max_length)
        self.replace_unk = bool(out.replace_unk)
        self.coverage_penalty = float(out.coverage_penalty)  # 0 = off
        self.attention_lambda = float(net.attention_lambda)
        self.no_repeat_ngram = int(out.no_repeat_ngram)  # 0 = off
        self.copy_distinct = bool(out.copy_distinct)
        # an n-best rescorer (`captioner.decoding.rescoring`, e.g. a training word list and a
        # character LM) that re-ranks the beam's hypotheses in `translate`; None: the beam's order
        self.rescorer = rescorer_from_config(rescorer)
        self.training_config = training_config or {}

        # a pointer-generator decoder copies through the attention (see `AttentionDecoder`)
        self.pointer = bool(net.pointer)
        if self.pointer and kind != "attention":
            raise ValueError(f"pointer=True copies through the attention: kind must be 'attention', got {kind!r}")
        # an extractive pointer network (`AttentionDecoder(positions_from=...)`): an output is the
        # source's words in their order (headlines)
        self.extractive = bool(net.extractive)
        self._first_position = 0
        if self.extractive:
            if not self.pointer:
                raise ValueError("extractive=True points at source positions: it needs pointer=True")
            if self.target_vocabulary.tokens != position_vocabulary(self.max_source_length).tokens:
                raise ValueError("extractive=True: the target vocabulary must be position_vocabulary("
                                 f"max_source_length={self.max_source_length})")
            self._first_position = self.target_vocabulary.token_to_id(POSITION.format(0))
        # an extractive model's (source id -> an output may end on it) table, see `may_end_on`
        self._stop_table = np.array([may_end_on(t) for t in self.source_vocabulary.tokens]) if self.extractive else None
        # the target id of each source id (the same string; <unk> where the target vocabulary lacks it)
        self._copy_table = np.array([self.target_vocabulary.token_to_id(t) for t in self.source_vocabulary.tokens],
                                    np.int32) if self.pointer and not self.extractive else None
        context, bidirectional = KINDS[kind]
        self.encoder = TextEncoder(
            len(self.source_vocabulary), embedding_dim=embedding_dim, units=units, cell=self.encoder_cell,
            bidirectional=bidirectional, num_layers=encoder_layers, dropout=dropout,
            reverse_source=reverse_source, name="encoder")
        self.annotation_dim = self.encoder.output_dim if kind == "attention" else units
        self.decoder = AttentionDecoder(
            len(self.target_vocabulary), embedding_dim=embedding_dim, units=units,
            attention_units=attention_units, annotation_dim=self.annotation_dim,
            design=DecoderDesign(self.decoder_cell, context, "given", gate=False, maxout=maxout), dropout=dropout,
            copy=CopyMechanism(pointer=self.pointer, positions_from=self._first_position), name="decoder")
        # s0 = tanh(W_s h): h is bw_1 (attention) or the encoder's last top-layer state (fixed);
        # an LSTM decoder's c0 = W_c c, linear: a cell state is unbounded, and a tanh of the
        # encoder's cell (|c| ~ 1 per unit over 256 units) saturates at +-1 for every sentence.
        # sutskever: the decoder starts from the encoder's final (h, c) itself, as in the paper.
        self.init_h = keras.layers.Dense(units, activation="tanh", name="init_h")
        if self.decoder_cell == "lstm":  # a GRU decoder has no cell state: nothing to store for it
            self.init_c = keras.layers.Dense(units, name="init_c")
        self.encoder.build((None, None))
        self.decoder.build((None, None, self.annotation_dim))
        self.init_h.build((None, units))
        if self.decoder_cell == "lstm":
            self.init_c.build((None, units))
        self.built = True  # every sub-layer is built above
        # <pad> and <start> are never generated (dropped from the words, they would leave attention
        # rows behind and shift the <unk> copy); an <unk> output is kept, to be replaced by a source
        # word (replace_unk)
        self.generator = Generator(self.decoder, self.encode, banned_ids=(PAD_ID, START_ID),
                                   input_signature=[tf.TensorSpec((None, None), tf.int32)])  # source ids

    # -- the network -----------------------------------------------------------------
    def encode(self, source, training=False):
        """source ids (B, S) -> annotations (B, R, D), mask (B, R), decoder initial state."""
        annotations, mask, final = self.encoder(source, training=training)  # (B, S, D), (B, S)
        if self.kind != "attention":  # the fixed-length context: one vector per sentence
            annotations = final["h"][:, None, :]  # (B, 1, U)
            mask = tf.ones(tf.shape(annotations)[:2], tf.bool)  # (B, 1)
        if self.kind == "sutskever":
            state = {"h": final["h"], "c": final["c"] if self.decoder_cell == "lstm" else tf.zeros_like(final["h"])}
        else:
            state = {"h": self.init_h(final["h"])}
            state["c"] = self.init_c(final["c"]) if self.decoder_cell == "lstm" else tf.zeros_like(state["h"])
        if self.extractive:  # pointing at position j writes the id of position j
            positions = tf.range(tf.shape(source)[1], dtype=tf.int32) + self._first_position
            state["copy_ids"] = tf.broadcast_to(positions[None, :], tf.shape(source))  # (B, S)
            state["stop_after"] = tf.gather(self._stop_table, tf.cast(source, tf.int32))  # (B, S)
        elif self.pointer:  # what the decoder writes when it points at each source position
            state["copy_ids"] = tf.gather(self._copy_table, tf.cast(source, tf.int32))  # (B, S)
        return annotations, mask, state

    def call(self, inputs, training=False):
        check_token_ids(inputs["source"], len(self.source_vocabulary), "source ids")
        check_token_ids(inputs["tokens"], len(self.target_vocabulary), "target ids")
        annotations, mask, state = self.encode(inputs["source"], training=training)
        tokens = inputs["tokens"]
        logits, alphas = self.decoder(tokens, annotations, annotation_mask=mask,
                                      initial_state=state, training=training)  # (B, T, V), (B, T, S)
        if training and self.kind == "attention" and self.attention_lambda:
            penalty = doubly_stochastic_penalty(alphas, tokens != PAD_ID, mask)  # (B,)
            self.add_loss(self.attention_lambda * tf.reduce_mean(penalty) / tf.cast(tf.shape(tokens)[1], tf.float32))
        return logits

    # -- persistence: `of(src, tgt, **flat)` (`GroupedSettings`) reads a saved flat config ----------
    def get_config(self):
        return {
            **super().get_config(),
            "source_vocabulary": list(self.source_vocabulary.tokens),
            "target_vocabulary": list(self.target_vocabulary.tokens),
            "kind": self.kind, "embedding_dim": self.embedding_dim, "units": self.units,
            "attention_units": self.attention_units, "encoder_cell": self.encoder_cell,
            "decoder_cell": self.decoder_cell, "encoder_layers": self.encoder_layers,
            "reverse_source": self.reverse_source, "dropout": self.dropout, "maxout": self.maxout,
            "source_tokenizer": self.source_tokenizer, "target_tokenizer": self.target_tokenizer,
            "max_source_length": self.max_source_length, "beam_size": self.beam_size,
            "alpha": self.alpha, "max_length": self.max_length, "replace_unk": self.replace_unk,
            "coverage_penalty": self.coverage_penalty, "attention_lambda": self.attention_lambda,
            "no_repeat_ngram": self.no_repeat_ngram, "copy_distinct": self.copy_distinct,
            **self._rescorer_config(), "training_config": self.training_config,
            **({"pointer": True} if self.pointer else {}),
            **({"extractive": True} if self.extractive else {}),
        }


def load_translator(path) -> Translator:
    """Load a translator / hypothesis generator / headline model (.keras; one `Seq2Seq` or a
    `Seq2SeqEnsemble`, registered with the package), safe mode on."""
    return Translator.load(path)


def check_transliterator(model, where: str):
    """InputError naming `where` unless `model` reads and writes characters (a transliteration
    model, not a word-level translator)."""
    from captioner.errors import InputError

    if not model.source_tokenizer.get("chars"):
        raise InputError(f"{where}: a word-level translation model, not a transliteration model (characters "
                         "in, characters out); use `captioner translate`")
