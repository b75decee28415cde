"""Regex word tokenization (Python and tf.strings twins), character tokenization, detokenization.

Conventions, shared by :func:`tokenize` and :func:`tf_tokenize`:

- Text is first NFC-normalised (Python only, see below) and the typographic apostrophe
  ``’`` becomes ``'``.
- A *word* is a run of letters, combining marks and digits (Unicode classes L, M, N), in
  any script, which may contain single inner apostrophes or hyphens:
  ``l'afrique``, ``aujourd'hui``, ``don't``, ``t-shirt``, ``straße``, ``नमस्ते``.
  Elided French articles are deliberately **not** split off (``l'afrique`` stays one token):
  it keeps tokenization reversible and identical in Python and tf.strings, and a
  vocabulary built with ``min_count`` maps rare elided forms to ``<unk>`` anyway.
  An apostrophe or hyphen that is not between two word characters is punctuation.
- ``keep_punct=False`` drops everything that is not part of a word (punctuation,
  symbols, underscores, stray apostrophes and hyphens).
  ``keep_punct=True`` keeps every such non-space character as a one-character token
  (``"..."`` becomes three ``"."`` tokens).
- ``lower=True`` lower-cases with ``str.lower`` (``ß`` stays ``ß``; no case folding).
- ``numbers=True`` also keeps a ``.`` or ``,`` between two digits inside the word, so a number
  stays whole: ``$1.8bn`` is ``$``, ``1.8bn``; ``5.25%`` is ``5.25``, ``%``; ``45,000`` is one
  token (without it: ``1``, ``.``, ``8bn``). ``U.S.`` still splits (no digits).

Differences between :func:`tokenize` and :func:`tf_tokenize` (none for ASCII input):

- ``tf_tokenize`` does not NFC-normalise (core TensorFlow has no Unicode normaliser), so
  text written with decomposed accents (``e`` + U+0301) lower-cases and splits the same
  but yields different (decomposed) strings, which a vocabulary built from NFC text
  maps to ``<unk>``. Normalise such text before it reaches tf.data.
- ``tf_tokenize`` treats the control characters U+0001 to U+0004 as spaces (it uses
  them internally as markers); ``tokenize`` treats them as punctuation.
"""

from __future__ import annotations

import dataclasses
import unicodedata

import regex


# closed-class English (articles, prepositions, conjunctions, possessives, auxiliaries): an extractive
# headline does not end on one (`captioner.models.seq2seq.may_end_on`), nor is one a verb
# (`captioner.data.headlines.verb_test`)
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for with by from into onto about after before over under against between during "
    "without within through across as than and or but nor if that which who whom whose this these those its "
    "their his her our your my is are was were be been being has have had do does did will would shall should "
    "can could may might must not no".split())

__all__ = ["tokenize", "char_tokenize", "detokenize", "tf_tokenize", "tf_detokenize", "split_elisions",
           "tf_split_elisions"]

# One "word character": letter, combining mark or digit, in any script.
_WORD_CHAR = r"[\p{L}\p{M}\p{N}]"
# A word: word characters with single inner apostrophes or hyphens.
_WORD = rf"{_WORD_CHAR}+(?:['\-]{_WORD_CHAR}+)*"
_WORD_RE = regex.compile(_WORD)
_WORD_OR_PUNCT_RE = regex.compile(rf"{_WORD}|[^\p{{L}}\p{{M}}\p{{N}}\s]")
# numbers=True: a "." or "," between two digits is inside the word too ("1.8bn", "45,000")
_NUMBER_WORD = rf"{_WORD_CHAR}+(?:(?:['\-]|(?<=\p{{N}})[.,](?=\p{{N}})){_WORD_CHAR}+)*"
_NUMBER_WORD_RE = regex.compile(_NUMBER_WORD)
_NUMBER_WORD_OR_PUNCT_RE = regex.compile(rf"{_NUMBER_WORD}|[^\p{{L}}\p{{M}}\p{{N}}\s]")
_SPACE_RE = regex.compile(r"\s+")
_GRAPHEME_RE = regex.compile(r"\X")

# Punctuation that attaches to the word before it / to the word after it.
_NO_SPACE_BEFORE = set(".,!?;:%)]}»…")
_NO_SPACE_AFTER = set("([{«¿¡$#@")
_BOTH_SIDES = set("/")


def _normalize(text: str, lower: bool) -> str:
    """NFC-normalise, unify apostrophes and optionally lower-case ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    text = unicodedata.normalize("NFC", text).replace("\u2019", "'")
    return text.lower() if lower else text


def tokenize(text: str, lower: bool = True, keep_punct: bool = False, numbers: bool = False) -> list[str]:
    """Split ``text`` into word tokens (and punctuation tokens if ``keep_punct``).

    Args:
        text: any Unicode string.
        lower: lower-case first.
        keep_punct: keep each punctuation/symbol character as its own token.
        numbers: keep a number whole ("1.8bn", "45,000": a "." or "," between two digits).

    Returns:
        The tokens, in order. ``tokenize("L'Afrique, c'est grand!")`` is
        ``["l'afrique", "c'est", "grand"]``; with ``keep_punct=True``
        ``["l'afrique", ",", "c'est", "grand", "!"]``.
    """
    text = _normalize(text, lower)
    if numbers:
        pattern = _NUMBER_WORD_OR_PUNCT_RE if keep_punct else _NUMBER_WORD_RE
    else:
        pattern = _WORD_OR_PUNCT_RE if keep_punct else _WORD_RE
    return pattern.findall(text)


def char_tokenize(text: str, lower: bool = False, graphemes: bool = False) -> list[str]:
    """Split ``text`` into characters, for character-level models (transliteration).

    Whitespace runs become a single ``" "`` token and leading/trailing whitespace is
    dropped, so ``"".join(char_tokenize(s))`` gives back ``s`` with spaces normalised.

    Args:
        text: any Unicode string (NFC-normalised first).
        lower: lower-case first.
        graphemes: split into extended grapheme clusters (what a reader sees as one
            character: ``"क्"`` or ``"é"`` written decomposed stay whole) instead of
            code points.

    Returns:
        The characters (or clusters) in order.
    """
    text = _SPACE_RE.sub(" ", _normalize(text, lower).strip())
    if graphemes:
        return _GRAPHEME_RE.findall(text)
    return list(text)


def detokenize(tokens: list[str]) -> str:
    """Join word tokens into a sentence, attaching punctuation the English way.

    No space goes before ``. , ! ? ; : % ) ] } » …`` nor after ``( [ { « ¿ ¡ $ # @``;
    ``/`` attaches on both sides; straight quotes (``"`` and a standalone ``'``)
    alternate between opening (attached to the next token) and closing (attached to
    the previous one). Special tokens are not treated specially (decode first).

    >>> detokenize(["a", "dog", "(", "brown", ")", "runs", ",", "says", '"', "hi", '"', "."])
    'a dog (brown) runs, says "hi".'
    """
    out: list[str] = []
    attach_next = False  # the previous token asks the next one to attach
    quote_open = {'"': False, "'": False}
    for token in tokens:
        if not token:
            continue
        if token in quote_open:
            closing = quote_open[token]
            quote_open[token] = not closing
            attach = closing or attach_next or not out
            out.append(token if attach else " " + token)
            attach_next = not closing
            continue
        attach = not out or attach_next or token in _NO_SPACE_BEFORE or token in _BOTH_SIDES
        out.append(token if attach else " " + token)
        attach_next = token in _NO_SPACE_AFTER or token in _BOTH_SIDES
    return "".join(out)


# the sound, not the letter, picks "a" or "an": a silent h ("an hourglass"), a "you" or "wun" sound
# ("a unicycle", "a european", "a one-armed bandit")
_AN_BEFORE = ("hour", "honest", "honor", "honour", "heir")
_A_BEFORE = ("uni", "use", "usu", "uten", "ur", "eu", "ewe", "one", "once")


def indefinite_article(word: str) -> str:
    """"a" or "an" before `word` (lower-case English), by its first sound as far as spelling tells."""
    word = word.lower()
    if word.startswith(_AN_BEFORE):
        return "an"
    if word.startswith(_A_BEFORE):
        return "a"
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def tf_tokenize(strings, lower: bool = True, keep_punct: bool = False, numbers: bool = False):
    """tf.strings twin of :func:`tokenize`, usable inside ``tf.data`` and Keras graphs.

    Args:
        strings: a string tensor (or Python str / list of str) of any rank.

    Returns:
        For a scalar: a 1-D string tensor of tokens, shape ``(num_tokens,)``.
        For rank >= 1: a ``tf.RaggedTensor`` with one more (ragged) dimension,
        e.g. ``(batch, None)``.

    See the module docstring for the (non-ASCII) differences from :func:`tokenize`.
    """
    import tensorflow as tf

    s = tf.convert_to_tensor(strings, dtype=tf.string)
    s = tf.strings.regex_replace(s, "\u2019", "'")
    if lower:
        s = tf.strings.lower(s, encoding="utf-8")
    # Pad with spaces so every word has a left and right neighbour.
    s = tf.strings.join([" ", s, " "])
    # Unicode spaces (RE2's \s is ASCII only) and our marker characters -> " ".
    s = tf.strings.regex_replace(s, r"[\s\pZ\x0b\x85\x01\x02\x03\x04]", " ")
    # Protect inner apostrophes/hyphens (word char on both sides) with markers
    # \x01 and \x02. Matches cannot overlap, so "a-b-c" needs a second pass.
    inner = r"([\pL\pM\pN])(')([\pL\pM\pN])"
    inner_h = r"([\pL\pM\pN])(-)([\pL\pM\pN])"
    for _ in range(2):
        s = tf.strings.regex_replace(s, inner, "\\1\x01\\3")
        s = tf.strings.regex_replace(s, inner_h, "\\1\x02\\3")
        if numbers:  # a "." or "," between two digits: markers \x03 and \x04 ("1,234,567": two passes)
            s = tf.strings.regex_replace(s, r"(\pN)\.(\pN)", "\\1\x03\\2")
            s = tf.strings.regex_replace(s, r"(\pN),(\pN)", "\\1\x04\\2")
    if keep_punct:
        # Every remaining non-word, non-space character becomes its own token.
        s = tf.strings.regex_replace(s, r"([^\pL\pM\pN\s\x01\x02\x03\x04])", " \\1 ")
    else:
        s = tf.strings.regex_replace(s, r"[^\pL\pM\pN\s\x01\x02\x03\x04]+", " ")
    s = tf.strings.regex_replace(s, "\x01", "'")
    s = tf.strings.regex_replace(s, "\x02", "-")
    if numbers:
        s = tf.strings.regex_replace(s, "\x03", ".")
        s = tf.strings.regex_replace(s, "\x04", ",")
    return tf.strings.split(s)


# French (and Italian) elided articles and pronouns written against the next word ("l'afrique"):
# one pattern, read by Python's `regex` (`split_elisions`) and by RE2 in graphs (`tf_split_elisions`).
ELISION_PATTERN = r"^((?:jusqu|lorsqu|puisqu|quoiqu|qu|[cdjlmnst])')(\p{L}.*)$"
_ELISION_RE = regex.compile(ELISION_PATTERN)


def split_elisions(tokens: list[str]) -> list[str]:
    """Each elided token in two: "l'afrique" -> "l'", "afrique" (a model's `split_elisions` setting)."""
    out = []
    for t in tokens:
        m = _ELISION_RE.match(t)
        out.extend([m.group(1), m.group(2)] if m else [t])
    return out


def tf_split_elisions(tokens):
    """tf.strings twin of :func:`split_elisions` on a (batch, None) ragged tensor of tokens (whose
    tokens hold no space: the split mark)."""
    import tensorflow as tf

    marked = tf.strings.regex_replace(tokens.flat_values, ELISION_PATTERN, "\\1 \\2")
    return tokens.with_flat_values(tf.strings.split(marked, " ")).merge_dims(1, 2)


@dataclasses.dataclass(frozen=True)
class WordPreprocessor:
    """How a word model reads text, one description for the Python and the graph paths (a Seq2Seq
    model's tokenizer settings: the exported SavedModel and `Seq2Seq.translate` both read through it):
    lower case or not, punctuation kept as tokens, numbers whole, French elisions split.

    `tokens` / `tf_tokens`: the model's words; `as_written` / `tf_as_written`: the same text's words in
    their written case, not split at elisions (what a copied name or a truecased word is taken from,
    matched by lower case)."""

    lower: bool = True
    keep_punct: bool = True
    numbers: bool = False
    split_elisions: bool = False

    @classmethod
    def of(cls, settings):
        """From a model's tokenizer settings (a dict; keys it does not name are other preprocessors')."""
        settings = settings or {}
        return cls(**{f.name: bool(settings.get(f.name, f.default)) for f in dataclasses.fields(cls)})

    def tokens(self, text):
        words = tokenize(text, lower=self.lower, keep_punct=self.keep_punct, numbers=self.numbers)
        return split_elisions(words) if self.split_elisions else words  # "l'afrique" -> "l'", "afrique"

    def tf_tokens(self, strings):
        """(B,) strings -> ragged (B, None): `tokens` of each, in the graph."""
        words = tf_tokenize(strings, lower=self.lower, keep_punct=self.keep_punct, numbers=self.numbers)
        return tf_split_elisions(words) if self.split_elisions else words

    def as_written(self, text):
        return tokenize(text, lower=False, keep_punct=self.keep_punct, numbers=self.numbers)

    def tf_as_written(self, strings):
        return tf_tokenize(strings, lower=False, keep_punct=self.keep_punct, numbers=self.numbers)


def tf_detokenize(tokens):
    """tf.strings twin of :func:`detokenize`, for graphs (an exported SavedModel's output text).

    Args:
        tokens: a ``tf.RaggedTensor`` of strings (batch, None), or a dense (batch, T) string
            tensor whose empty strings are skipped (as :func:`detokenize` skips them).

    Returns:
        string tensor (batch,): the same sentences :func:`detokenize` makes of each row (the
        same attachment rules, quotes alternating per row), computed without a Python loop.
    """
    import tensorflow as tf

    if not isinstance(tokens, tf.RaggedTensor):
        tokens = tf.convert_to_tensor(tokens, tf.string)
        tokens = tf.ragged.boolean_mask(tokens, tf.strings.length(tokens) > 0)
    else:
        tokens = tf.ragged.boolean_mask(tokens, tf.strings.length(tokens) > 0)
    words = tokens.to_tensor(default_value="")  # (B, T), "" after each row's end
    valid = tf.sequence_mask(tokens.row_lengths(), tf.shape(words)[1])  # (B, T)

    def member(chars):
        return tf.reduce_any(words[..., None] == tf.constant(sorted(chars)), axis=-1)  # (B, T)

    def closing(quote):  # this quote closes one opened earlier in the row: an odd count before it
        is_quote = words == quote
        before = tf.cumsum(tf.cast(is_quote, tf.int32), axis=1, exclusive=True)
        return is_quote & (before % 2 == 1)

    is_quote = (words == '"') | (words == "'")
    closes = closing('"') | closing("'")
    # what token j asks of the next one (attach_next in detokenize)
    asks = tf.where(is_quote, ~closes, member(_NO_SPACE_AFTER | _BOTH_SIDES))  # (B, T)
    asked = tf.pad(asks[:, :-1], [[0, 0], [1, 0]])  # (B, T): the previous token asked
    first = tf.range(tf.shape(words)[1])[None, :] == 0  # (1, T)
    attach = first | asked | tf.where(is_quote, closes, member(_NO_SPACE_BEFORE | _BOTH_SIDES))
    pieces = tf.where(attach | ~valid, words, tf.strings.join([" ", words]))  # (B, T)
    return tf.strings.reduce_join(pieces, axis=1)  # (B,)
