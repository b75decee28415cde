"""A saved `.keras` model -> a TensorFlow SavedModel that runs without captioner.

Image captioner (`ImageCaptioner`): one graph does everything the Python path does:

    encoded JPEG/PNG/GIF/BMP bytes (B,) -> decode (first frame, RGB) -> resize to the backbone's
    input (Pillow's antialiased bilinear filter, bit-exact: `decode_image`) -> backbone (its
    preprocessing inside) -> the one beam search (`Generator.search`, beam size, alpha and max
    length as tensors) -> vocabulary lookup -> detokenized text.

Signatures (see `saved_model_cli show --all`):

* ``serving_default(images)``: ``images`` string (B,) of encoded image bytes, decoded at the
  model's own beam size, alpha and maximum length (TF Serving, ``saved_model_cli run`` and
  ``loaded.signatures["serving_default"](images=...)`` need nothing else).
* ``caption_with_settings(images, beam_size, alpha, max_length)``: the same with the three
  settings as scalar inputs (``loaded.caption(images, beam_size=...)`` from Python).
* ``caption_pixels(pixels, beam_size, alpha, max_length)``: uint8 (B, H, W, 3) at the input size.
* A captioner trained on several corpora (style tokens) takes one more scalar string input in
  both: ``style``, "" for its saved default, a style name ("flickr8k", "web") or "auto" (each photo
  its nearest corpus, where `captioner model fit-styles` fitted the choice); another name fails
  the call with the styles there are.

Outputs: ``caption`` string (B,), ``score`` float (B,) (log_prob / length**alpha),
``log_prob`` (B,), ``length`` int32 (B,) (words + <end>), ``words`` string (B, T) ("" after the
end), ``attention`` float (B, T, h, w) (one map per generated token of the best hypothesis, zeros
after its end), ``hypotheses`` string (B, K) and ``hypothesis_scores`` (B, K), best first.

Translator (`Seq2Seq`): ``serving_default(sentences)`` at the model's settings, and
``translate_with_settings(sentences, beam_size, alpha, max_length)``:
string (B,) -> ``translation`` string (B,), ``score``, ``hypotheses``, ``hypothesis_scores``,
``source_tokens`` (B, S), ``attention`` (B, T, S). Tokenization is the model's `WordPreprocessor`
(`tf_tokens`, the graph twin of the `tokens` the Python path reads with: no NFC normalisation, see
captioner.text.tokenizer; French elisions split where the model splits them), the source is cut
at the model's ``max_source_length``, and ``<unk>`` outputs are replaced by the most attended
source word when the model's ``replace_unk`` is on, as `Seq2Seq.translate` does (an extractive
headline model's outputs are the source's words as written at the positions it chose). A subword
(SentencePiece) translator tokenizes in the graph with tensorflow-text (`SubwordGraph`): its
``source_tokens`` are pieces, and loading it needs ``import tensorflow_text`` first. An input with
no tokens gives "" and score -inf. The coverage penalty re-ranking is not in the graph; a model
with an n-best rescorer (`captioner.decoding.rescoring`) is refused.

Every variable is saved in the SavedModel's checkpoint; the vocabularies are graph constants
(captioner) or a lookup table (translator source side).
"""

from __future__ import annotations

import base64
import os

import tensorflow as tf

from captioner.decoding import Decoding
from captioner.features.images import tf_resize_like_pillow
from captioner.features.tf_images import decode_rgb
from captioner.text.subword import CORE_EDGE, WORD_START
from captioner.text.tokenizer import WordPreprocessor, tf_detokenize
from captioner.text.vocabulary import END_ID, PAD_ID, START_ID, UNK_ID


def _scalar_specs():
    return [tf.TensorSpec((), tf.int32, name="beam_size"), tf.TensorSpec((), tf.float32, name="alpha"),
            tf.TensorSpec((), tf.int32, name="max_length")]


def _texts(vocabulary, tokens):
    """tokens int (B, K, T) -> detokenized strings (B, K)."""
    shape = tf.shape(tokens)
    flat = tf.reshape(tokens, [shape[0] * shape[1], shape[2]])  # (B*K, T)
    return tf.reshape(tf_detokenize(vocabulary.tf_decode(flat)), shape[:2])  # (B, K)


def _keep_mask(tokens):
    """tokens int (..., T) -> bool (..., T): the generated words, before the first <end> and not
    a special id (what `Vocabulary.decode` keeps)."""
    before_end = tf.cumsum(tf.cast(tokens == END_ID, tf.int32), axis=-1, exclusive=True) == 0
    return before_end & (tokens != END_ID) & (tokens != PAD_ID) & (tokens != START_ID)


def _capitalize_first(words):
    """`captioner.text.truecase.capitalize_first` on a string tensor."""
    return tf.strings.join([tf.strings.upper(tf.strings.substr(words, 0, 1, unit="UTF8_CHAR"), encoding="utf-8"),
                            tf.strings.substr(words, 1, tf.int32.max, unit="UTF8_CHAR")])


def decode_image(data, size):
    """Encoded image bytes (scalar string) -> uint8 (h, w, 3) at `size` = (h, w).

    The graph twin of `captioner.features.images.load_image`: `decode_rgb` (JPEG with libjpeg's
    accurate integer DCT and its EXIF orientation, PNG alpha composited on white), then Pillow's
    resize without crop (`tf_resize_like_pillow`, bit-exact). What is not in the graph is listed
    in `captioner.features.tf_images`.
    """
    return tf_resize_like_pillow(decode_rgb(data), size)  # (h, w, 3)


class CaptionerModule(tf.Module):
    """The SavedModel of an `ImageCaptioner`: see the module docstring."""

    def __init__(self, model):
        super().__init__(name="captioner")
        self._model = model
        self._weights = list(model.variables)  # tracked: saved in the checkpoint
        self.input_size = tuple(model.input_size)
        self.grid_shape = tuple(model.grid_shape) if model.feature == "grid" else (1, 1)
        defaults = (tf.constant(model.beam_size), tf.constant(model.alpha, tf.float32),
                    tf.constant(model.max_length))
        h, w = self.input_size
        # a captioner of several corpora takes the style per request: "" (its default), a name, "auto"
        styles = [tf.TensorSpec((), tf.string, name="style")] if model.styles else []

        def decode(images):
            return tf.map_fn(lambda data: decode_image(data, (h, w)), images,
                             fn_output_signature=tf.TensorSpec((h, w, 3), tf.uint8))  # (B, h, w, 3)

        if styles:
            no_style = tf.constant("")

            def caption(images, beam_size=defaults[0], alpha=defaults[1], max_length=defaults[2], style=no_style):
                return self._caption(decode(images), beam_size, alpha, max_length, style)

            def caption_pixels(pixels, beam_size=defaults[0], alpha=defaults[1], max_length=defaults[2],
                               style=no_style):
                return self._caption(pixels, beam_size, alpha, max_length, style)
        else:  # one corpus: no style input (the signatures of before)
            def caption(images, beam_size=defaults[0], alpha=defaults[1], max_length=defaults[2]):
                return self._caption(decode(images), beam_size, alpha, max_length, None)

            def caption_pixels(pixels, beam_size=defaults[0], alpha=defaults[1], max_length=defaults[2]):
                return self._caption(pixels, beam_size, alpha, max_length, None)

        self.caption = tf.function(caption, input_signature=[tf.TensorSpec((None,), tf.string, name="images")]
                                   + _scalar_specs() + styles, autograph=False)
        self.caption_pixels = tf.function(
            caption_pixels, input_signature=[tf.TensorSpec((None, h, w, 3), tf.uint8, name="pixels")]
            + _scalar_specs() + styles, autograph=False)
        # serving_default: the images alone, at the model's settings (what TF Serving and a Python
        # caller of `signatures["serving_default"](images=...)` expect); the settings: caption_with_settings
        self.caption_images = tf.function(lambda images: caption(images), autograph=False,
                                          input_signature=[tf.TensorSpec((None,), tf.string, name="images")])

    def _caption(self, pixels, beam_size, alpha, max_length, style):
        model = self._model
        features = model.features(pixels)  # (B, R, C) or (B, P)
        start = model.graph_start_tokens(features, style)  # a several-corpora captioner's style token, else None
        inputs = (features,) if start is None else (features, start)
        out = model.decoder.generator.search(*inputs, decoding=Decoding(beam_size, alpha, max_length))
        hypotheses = _texts(model.vocabulary, out["tokens"])  # (B, K)
        best = out["tokens"][:, 0]  # (B, T)
        lengths = out["lengths"][:, 0]  # (B,)
        steps = tf.sequence_mask(lengths, tf.shape(best)[1])  # (B, T)
        words = tf.where(steps & (best != END_ID), tf.gather(tf.constant(model.vocabulary_tokens), best), "")
        attention = out["attention"][:, 0]  # (B, T, R)
        shape = tf.shape(attention)
        gh, gw = self.grid_shape
        return {
            "caption": hypotheses[:, 0], "score": out["scores"][:, 0], "log_prob": out["log_probs"][:, 0],
            "length": lengths, "words": words, "attention": tf.reshape(attention, [shape[0], shape[1], gh, gw]),
            "hypotheses": hypotheses, "hypothesis_scores": out["scores"],
        }

    def signatures(self):
        return {"serving_default": self.caption_images, "caption_with_settings": self.caption,
                "caption_pixels": self.caption_pixels}


class TranslatorModule(tf.Module):
    """The SavedModel of a `Seq2Seq` translator: see the module docstring."""

    def __init__(self, model):
        self._subword = subword_graph(model)  # None for a word model
        if getattr(model, "rescorer", None) is not None:
            raise ValueError("cannot export a translator with an n-best rescorer (e.g. the Hindi transliterator's "
                             "word-list LM): the re-ranking runs in Python after the beam search, not in the graph; "
                             "use the .keras file (keras.models.load_model, `captioner transliterate`, "
                             "`captioner serve`)")
        super().__init__(name="translator")
        self._model = model
        self._weights = list(model.variables)
        self._source_lookup = model.source_vocabulary.lookup_layer()  # its table is tracked and saved
        table = model.target_tokenizer.get("truecase") or {}
        self._truecase = None
        if table:  # lower-cased word -> its form ("" where the table has none); tracked and saved
            keys = sorted(table)
            self._truecase = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant(keys), tf.constant([table[k] for k in keys])), "")
        defaults = (tf.constant(model.beam_size), tf.constant(model.alpha, tf.float32),
                    tf.constant(model.max_length))

        def translate(sentences, beam_size=defaults[0], alpha=defaults[1], max_length=defaults[2]):
            return self._translate(sentences, beam_size, alpha, max_length)

        self.translate = tf.function(
            translate, input_signature=[tf.TensorSpec((None,), tf.string, name="sentences")] + _scalar_specs(),
            autograph=False)
        self.translate_sentences = tf.function(  # serving_default: the sentences alone, the model's settings
            lambda sentences: translate(sentences), autograph=False,
            input_signature=[tf.TensorSpec((None,), tf.string, name="sentences")])

    def _translate(self, sentences, beam_size, alpha, max_length):
        """Tokenize (words, or SentencePiece pieces through `SubwordGraph`), cut, look up, decode
        with the model's own generator, and write the hypotheses as `Seq2Seq.translate` does."""
        model = self._model
        settings = model.source_tokenizer
        if self._subword is not None:
            tokens = self._subword.pieces(sentences)  # (B, None)
        else:
            tokens = WordPreprocessor.of(settings).tf_tokens(sentences)  # (B, None), as `text_tokens`
        tokens = tokens[:, : model.max_source_length]
        source_tokens = tokens.to_tensor(default_value="")  # (B, S)
        # at least one column: a batch of only empty sentences must not reduce over an empty axis
        source_tokens = tf.pad(source_tokens, [[0, 0], [0, tf.maximum(1 - tf.shape(source_tokens)[1], 0)]],
                               constant_values="")  # (B, max(S, 1))
        n_source = tokens.row_lengths()  # (B,)
        ids = tf.cast(self._source_lookup(tokens), tf.int32).to_tensor(default_value=PAD_ID)  # (B, S)
        # a sentence without tokens is decoded from one <pad> (the Python path skips it) and blanked below
        ids = tf.pad(ids, [[0, 0], [0, tf.maximum(1 - tf.shape(ids)[1], 0)]])
        out = model.generator.search(ids, decoding=Decoding(beam_size, alpha, max_length, model.no_repeat_ngram))
        out_tokens = out["tokens"]  # (B, K, T)
        attention = out["attention"][:, :, :, : tf.shape(source_tokens)[1]]  # (B, K, T, S)
        replace = model.replace_unk and model.kind == "attention"
        if model.extractive:
            hypotheses = self._extract_texts(sentences, source_tokens, n_source, out_tokens, settings)
        elif self._subword is not None:
            hypotheses = self._subword.texts(tokens, out_tokens, attention, replace)
        elif replace or self._truecase is not None:
            hypotheses = self._word_texts(sentences, source_tokens, n_source, out_tokens, attention, replace, settings)
        else:
            hypotheses = _texts(model.target_vocabulary, out_tokens)
        empty = (n_source == 0)[:, None]  # (B, 1)
        hypotheses = tf.where(empty, "", hypotheses)
        scores = tf.where(empty, float("-inf"), out["scores"])
        return {"translation": hypotheses[:, 0], "score": scores[:, 0], "hypotheses": hypotheses,
                "hypothesis_scores": scores, "source_tokens": source_tokens, "attention": attention[:, 0]}

    def _words_as_written(self, sentences, settings):
        """The source's words as written, ragged (B, None), cut to the model's source length."""
        return WordPreprocessor.of(settings).tf_as_written(sentences)[:, : self._model.max_source_length]

    def _cased_source(self, sentences, source_tokens, settings):
        """The source's words as written (B, S), cut and padded like the lower-cased `source_tokens`."""
        return self._words_as_written(sentences, settings).to_tensor(default_value="", shape=tf.shape(source_tokens))

    def _extract_texts(self, sentences, source_tokens, n_source, out_tokens, settings):
        """Hypotheses (B, K) of an extractive model as `Seq2Seq._decode_one` writes them
        (`captioner.models.seq2seq.extract_words`): the source's words as written (where they
        split as the model's words did) at the positions the ids point at, a word the hypothesis
        already holds (case ignored) left out, the first letter capitalized."""
        model = self._model
        shape = tf.shape(out_tokens)  # (B, K, T)
        cased = self._cased_source(sentences, source_tokens, settings)  # (B, S)
        same = tf.reduce_all(tf.equal(tf.strings.lower(cased, encoding="utf-8"), source_tokens), -1)  # (B,)
        words = tf.where(same[:, None], cased, source_tokens)  # (B, S)
        positions = out_tokens - model._first_position  # (B, K, T)
        valid = _keep_mask(out_tokens) & (positions >= 0) & (positions < tf.cast(n_source, tf.int32)[:, None, None])
        picked = tf.gather(words, tf.reshape(tf.clip_by_value(positions, 0, tf.shape(words)[1] - 1),
                                             [shape[0], -1]), batch_dims=1)
        picked = tf.reshape(picked, shape)  # (B, K, T)
        lower = tf.strings.lower(picked, encoding="utf-8")
        earlier = tf.range(shape[2])[None, :] < tf.range(shape[2])[:, None]  # [t, s]: s before t
        repeat = tf.reduce_any(tf.equal(lower[..., :, None], lower[..., None, :]) & valid[..., None, :] & earlier, -1)
        keep = valid & ~repeat
        flat = tf.ragged.boolean_mask(tf.reshape(picked, [-1, shape[2]]), tf.reshape(keep, [-1, shape[2]]))
        flat = tf.concat([tf.ragged.map_flat_values(_capitalize_first, flat[:, :1]), flat[:, 1:]], axis=1)
        return tf.reshape(tf_detokenize(flat), shape[:2])  # (B, K)

    def _word_texts(self, sentences, source_tokens, n_source, out_tokens, attention, replace, settings):
        """Hypotheses (B, K) as `Seq2Seq._decode_one` writes them for a word model: with `replace`,
        an <unk> at step j becomes the source word step j attends to most; with a truecase table,
        `captioner.text.truecase.apply_truecase` in the graph (`_truecase_words`)."""
        shape = tf.shape(out_tokens)  # (B, K, T)
        target = tf.gather(tf.constant(list(self._model.target_vocabulary.tokens)), out_tokens)  # (B, K, T)
        if replace:
            target = copy_unknown(target, out_tokens, attention, source_tokens, n_source, self._model.copy_distinct)
        if self._truecase is not None:
            target = self._truecase_words(sentences, source_tokens, target, settings)
        keep = _keep_mask(out_tokens)
        flat = tf.ragged.boolean_mask(tf.reshape(target, [-1, shape[2]]), tf.reshape(keep, [-1, shape[2]]))
        if self._truecase is not None:  # the first word of each hypothesis, capitalized
            head = tf.ragged.map_flat_values(_capitalize_first, flat[:, :1])
            flat = tf.concat([head, flat[:, 1:]], axis=1)
        return tf.reshape(tf_detokenize(flat), shape[:2])  # (B, K)

    def _truecase_words(self, sentences, source_tokens, target, settings):
        """Words (B, K, T) in the table's form, else in the form the same word has in the source
        (its first word excepted: `captioner.text.truecase.source_forms`, the first such word), else
        as they are. The source's words as written are matched by their lower case, not by position:
        they need not split as the model's words did (a French source's elisions)."""
        shape = tf.shape(target)
        cased = self._words_as_written(sentences, settings).to_tensor(default_value="")  # (B, S')
        cased = tf.pad(cased, [[0, 0], [0, tf.maximum(1 - tf.shape(cased)[1], 0)]], constant_values="")
        later = (tf.range(tf.shape(cased)[1]) > 0) & (cased != "")  # (B, S'): not the source's first word
        lowered = tf.strings.lower(cased, encoding="utf-8")
        match = tf.equal(target[..., None], lowered[:, None, None, :]) & later[:, None, None, :]  # (B, K, T, S')
        first = tf.argmax(tf.cast(match, tf.int32), axis=-1, output_type=tf.int32)  # (B, K, T)
        written = tf.reshape(tf.gather(cased, tf.reshape(first, [shape[0], -1]), batch_dims=1), shape)
        known = self._truecase.lookup(target)  # (B, K, T): "" where the table has no form
        return tf.where(known != "", known, tf.where(tf.reduce_any(match, -1), written, target))

    def signatures(self):
        return {"serving_default": self.translate_sentences, "translate_with_settings": self.translate}


class SubwordGraph(tf.Module):
    """The two parts of a subword (SentencePiece) `Seq2Seq`'s Python path (`Seq2Seq.translate`)
    that differ from a word model's, in the graph; `TranslatorModule` does the rest (cut, look
    up, search, blank empty inputs) for both.

    Source (`pieces`): NFC (and lower case when the model's tokenizer lowers), SentencePiece pieces
    (tensorflow-text's ``SentencepieceTokenizer`` on the proto stored in the model config: the
    same pieces as the ``sentencepiece`` package).
    Output (`texts`): the pieces of each hypothesis up to ``<end>``; with ``replace_unk``, an ``<unk>`` piece
    becomes the source WORD (its pieces joined) whose pieces its step attends to most in sum,
    standing as a word of its own; pieces joined, ``▁`` read as a space, spaces collapsed.
    ``source_tokens`` and ``attention`` are the source pieces and the attention over them (what
    the network read); `captioner translate` shows the word-level merge.

    A SavedModel with this graph needs tensorflow-text's ops registered where it is loaded
    (``import tensorflow_text`` before ``tf.saved_model.load``; TF Serving: a build with them).
    """

    def __init__(self, model):
        try:
            import tensorflow_text as tf_text
        except ImportError:
            raise ValueError("exporting a subword (SentencePiece) translator needs tensorflow-text: `make install` "
                             "installs it, or `pip install --no-deps tensorflow-text==2.21.1`") from None

        super().__init__(name="subwords")
        self._model = model
        source = model.source_tokenizer
        self._source_lower = bool(source.get("lower"))
        if not (source.get("spm") and model.target_tokenizer.get("spm")):
            raise ValueError("cannot export a translator with SentencePiece on one side only (`captioner train "
                             "translate --subword` gives both sides one)")
        self._spm = tf_text.SentencepieceTokenizer(model=base64.b64decode(source["spm"]), out_type=tf.string)
        self._target_tokens = tf.constant(list(model.target_vocabulary.tokens))

    def pieces(self, sentences):
        """(B,) strings -> ragged (B, None) source pieces, as `Seq2Seq.source_tokens` gives them."""
        import tensorflow_text as tf_text

        text = tf_text.normalize_utf8(sentences, "NFC")
        if self._source_lower:
            text = tf.strings.lower(text, encoding="utf-8")
        return self._spm.tokenize(text)

    def texts(self, pieces, tokens, attention, replace):
        """The hypotheses (B, K) of the search's ``tokens`` (B, K, T) as `Seq2Seq.translate` writes
        them: pieces up to ``<end>``; with ``replace``, an ``<unk>`` piece becomes the source word
        (`_source_words`) its step attends to most, as a word of its own; pieces joined."""
        target = tf.gather(self._target_tokens, tokens)  # (B, K, T) pieces
        if replace:
            words, n_words, word_attention = self._source_words(pieces, attention)
            copied = copy_unknown(target, tokens, word_attention, words, n_words, self._model.copy_distinct)
            target = tf.where(tokens == UNK_ID, tf.strings.join([WORD_START, copied]),
                              target)  # a copied word stands as a word of its own
        target = tf.where(_keep_mask(tokens), target, "")
        joined = tf.strings.regex_replace(tf.strings.reduce_join(target, axis=-1), WORD_START, " ")  # (B, K)
        return tf.strings.strip(tf.strings.regex_replace(joined, " +", " "))

    def _source_words(self, pieces, attention):
        """The source words (B, W) that the pieces spell (marker dropped, their cores as
        `captioner.text.subword.word_core` has them, "" after the last), their
        number (B,), and the attention summed over each word's pieces (B, K, T, W), as
        `Seq2Seq._subword_words` has them."""
        starts = tf.strings.regex_full_match(pieces, WORD_START + ".*")  # ragged (B, None)
        first = tf.equal(tf.ragged.range(pieces.row_lengths()), 0)  # a word starts at the first piece too
        word_of = tf.math.cumsum(tf.cast(starts | first, tf.int32), axis=1) - 1  # ragged (B, None)
        n_words = tf.maximum(tf.reduce_max(word_of, axis=1) + 1, 0)  # (B,): an empty row's max is the int minimum
        # word texts (B, W): the pieces of each word joined, the marker dropped
        row_starts = tf.cumsum(n_words, exclusive=True)  # (B,)
        global_word = (word_of + row_starts[:, None]).flat_values  # one id per piece, over the batch
        words = tf.strings.reduce_join(tf.RaggedTensor.from_value_rowids(
            pieces.flat_values, global_word, nrows=tf.reduce_sum(n_words)), axis=1)
        words = tf.strings.strip(tf.strings.regex_replace(words, WORD_START, " "))
        core = tf.strings.regex_replace(words, CORE_EDGE, "")  # `captioner.text.subword.word_core`
        words = tf.where(core != "", core, words)
        words = tf.RaggedTensor.from_row_lengths(words, n_words).to_tensor(default_value="")  # (B, W)
        # attention summed over each word's pieces: (B, K, T, S) x (B, S, W)
        member = tf.one_hot(word_of.to_tensor(default_value=-1), tf.shape(words)[1],
                            dtype=attention.dtype)  # (B, S, W): zeros at padding (S: the source's width)
        return words, n_words, tf.einsum("bkts,bsw->bktw", attention, member)


def copy_unknown(target, tokens, attention, source_words, n_words, distinct):
    """`captioner.decoding.hypothesis_words` in the graph: every <unk> of ``tokens`` (B, K, T)
    becomes, in ``target`` (B, K, T strings), the source word (``source_words`` (B, S), the first
    ``n_words`` (B,) of each row real, padding after) that its step's ``attention`` (B, K, T, S)
    weighs most (ties: the first). With ``distinct``, the most attended one not already among the
    hypothesis's earlier words (after their own copies), or the most attended one when every word
    is taken."""
    shape = tf.shape(tokens)
    unknown = tokens == UNK_ID
    real = (tf.range(tf.shape(source_words)[1])[None, :] < tf.cast(n_words, tf.int32)[:, None])[:, None, :]  # (B, 1, S)

    def pick(att, taken):  # att (B, K, S), taken (B, K, S) -> (B, K) words
        free = real & ~taken
        att = tf.where(tf.reduce_any(free, axis=-1, keepdims=True), tf.where(free, att, float("-inf")), att)
        most = tf.argmax(att, axis=-1, output_type=tf.int32)
        return tf.reshape(tf.gather(source_words, tf.reshape(most, [shape[0], -1]), batch_dims=1), shape[:2])

    if not distinct:
        pointed = tf.reshape(tf.gather(source_words, tf.reshape(
            tf.argmax(attention, axis=-1, output_type=tf.int32), [shape[0], -1]), batch_dims=1), shape)
        return tf.where(unknown, pointed, target)
    steps = tf.range(shape[2])

    def step(j, words):
        earlier = (steps < j)[None, None, :, None]  # (1, 1, T, 1)
        taken = tf.reduce_any(earlier & tf.equal(words[..., None], source_words[:, None, None, :]), axis=2)
        chosen = pick(attention[:, :, j], taken)  # (B, K)
        here = (steps == j)[None, None, :] & unknown
        return j + 1, tf.where(here, chosen[..., None], words)

    _, target = tf.while_loop(lambda j, _: j < shape[2], step, [tf.constant(0), target])
    return target


def subword_graph(model):
    """A `SubwordGraph` for a SentencePiece translator, None for a word model."""
    if model.source_tokenizer.get("spm") or model.target_tokenizer.get("spm"):
        return SubwordGraph(model)
    return None


def module_for(model):
    """The exportable tf.Module of a loaded captioner model; ValueError for a kind not exported."""
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.seq2seq import Translator

    if isinstance(model, ImageCaptioner):
        return CaptionerModule(model)
    if isinstance(model, Translator):  # one Seq2Seq or an ensemble of them
        return TranslatorModule(model)
    raise ValueError(f"cannot export a {type(model).__name__}: image captioners (ImageCaptioner) and "
                     f"translators (Seq2Seq) are exported")


EXPORT_MARKER = "captioner_export.json"  # written into every SavedModel this module makes


def check_export_target(output):
    """InputError unless `output` may be (re)placed by an export: absent, an empty folder, or a
    SavedModel an earlier export wrote (it holds `saved_model.pb` and EXPORT_MARKER). Anything
    else (a folder of other files, `.` or a folder above it, a symbolic link, a file) is left
    alone and refused, saying how to go on."""
    from captioner.errors import InputError

    given = os.fspath(output)
    if os.path.islink(given.rstrip(os.sep) or given):
        raise InputError(f"--output {given}: is a symbolic link; name a real folder (the link is left alone)")
    if not os.path.lexists(given):
        return
    if not os.path.isdir(given):
        raise InputError(f"--output {given}: is a file; a SavedModel is a folder")
    target = os.path.realpath(given)
    if os.path.commonpath([target, os.path.realpath(os.getcwd())]) == target:
        raise InputError(f"--output {given}: is the current folder or holds it; name a new folder")
    names = set(os.listdir(target))
    if names and not {"saved_model.pb", EXPORT_MARKER} <= names:
        raise InputError(f"--output {given}: a folder that holds other files ({len(names)} entries) and is "
                         "not a SavedModel written by `captioner export`; nothing was changed. Remove it "
                         "yourself, or name a new or empty folder")


def export_saved_model(model, output, source=None):
    """Write `model` (a loaded ImageCaptioner or Seq2Seq) as a SavedModel folder `output`.

    Written to a sibling temporary folder first and swapped into place, so `output` is either the
    whole new export or what it held before; only an empty folder or an earlier export is ever
    replaced (`check_export_target`). `source` (the .keras path) is recorded in the folder's
    EXPORT_MARKER. Returns the tf.Module that was saved."""
    import json
    import shutil
    import tempfile

    from captioner.errors import InputError

    check_export_target(output)
    module = module_for(model)
    output = os.path.abspath(os.fspath(output))
    parent = os.path.dirname(output)
    try:
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".export-", dir=parent)
    except OSError as e:
        raise InputError(f"--output {output}: cannot write into {parent} ({e.strerror})") from None
    old = None
    try:
        tf.saved_model.save(module, staging, signatures=module.signatures())
        with open(os.path.join(staging, EXPORT_MARKER), "w", encoding="utf-8") as f:
            json.dump({"written_by": "captioner export", "model_class": type(model).__name__,
                       "source": None if source is None else os.fspath(source)}, f, indent=2)
        if os.path.isdir(output):  # checked above: empty, or an earlier export; moved aside, then removed
            old = tempfile.mkdtemp(prefix=".export-old-", dir=parent)
            os.replace(output, os.path.join(old, "previous"))
        os.replace(staging, output)
    except BaseException:
        if old is not None and not os.path.exists(output):  # put the previous export back
            os.replace(os.path.join(old, "previous"), output)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return module
