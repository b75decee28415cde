"""Transliteration with a character-level `Seq2Seq` model (romanized -> native script).

A line is either one word or running text. It is cut into runs of letters and everything
else; a run of Latin letters is transliterated, everything else is copied as it is (spaces,
punctuation, digits, and words already in the model's native script). A word in another
script (Cyrillic, Greek, ...) is copied too, and reported. Every distinct word is decoded
once per call (the one Generator, beam search), so a long text of common words costs little.

    model = keras.models.load_model("assets/models/dakshina_hi_translit.keras")
    transliterate_text(model, ["main ghar ja raha hoon.", "India"])

`evaluate_transliteration` scores a model on a lexicon as the field does (top-k, CER).
"""

from __future__ import annotations

import dataclasses
import unicodedata

import regex

from captioner.metrics.transliteration import transliteration_scores

__all__ = ["LineResult", "MAX_LINE_CHARS", "segments", "word_key", "word_script", "transliterate_text",
           "evaluate_transliteration"]

MAX_LINE_CHARS = 5000
# a run of letters with their combining marks, or a run of anything else
_SEGMENT_RE = regex.compile(r"(?:\p{L}\p{M}*)+|[^\p{L}]+")


@dataclasses.dataclass
class LineResult:
    text: str                    # the line with each Latin word replaced by its best transliteration
    words: list                  # [(source word, [(candidate, score), ...] best first)] of the Latin words
    candidates: list             # [(line text, score)]: one word -> its n-best; several -> rank k of each word
    warnings: list               # what was wrong with the line, in words ("" for none)
    # With a model that re-ranks its n-best (a rescorer), the scores above are the rescorer's and
    # these are the model's own, in the same order (None without one):
    word_model_scores: list | None = None       # per Latin word: [model score of each candidate]
    candidate_model_scores: list | None = None  # per line candidate: summed model scores


def segments(line: str) -> list[str]:
    """The line cut into runs of letters and runs of the rest: "".join(segments(s)) == NFC(s)."""
    return _SEGMENT_RE.findall(unicodedata.normalize("NFC", line))


def word_key(word: str) -> str:
    """What the model reads of a Latin word: lower case, accents removed (Café -> cafe); the key
    of the `cache` of `transliterate_text`."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


def word_script(word: str) -> str:
    """"LATIN", "DEVANAGARI", "CYRILLIC", ... (Unicode's name of the first letter's script),
    "MIXED" when letters of several scripts are in one word."""
    scripts = set()
    for c in word:
        if unicodedata.category(c).startswith("L"):
            name = unicodedata.name(c, "UNKNOWN")
            scripts.add("CJK" if name.startswith("CJK") else name.split()[0])
    if len(scripts) > 1:
        return "MIXED"
    return scripts.pop() if scripts else "NONE"


def _native_script(model) -> str:
    """The script of the model's target characters (e.g. DEVANAGARI)."""
    letters = [t for t in model.target_vocabulary.tokens[4:] if len(t) == 1 and unicodedata.category(t).startswith("L")]
    return word_script(letters[0]) if letters else "NONE"


def output_bound(letters):
    """The most characters a transliteration of a `letters`-letter word may have: 4 per letter plus 8
    (every Dakshina Hindi training pair fits: "w" -> "डबल्यू" 6, "lbw" -> "एलबीडब्ल्यू" 11), so a model that
    never ends (a lone "A" gave ~40 repeated characters) stops there."""
    return 4 * int(letters) + 8


def _bounded(result, most):
    """`result` with its text and hypotheses cut to `most` characters (marked unfinished) where the
    model wrote more: a batch's bound follows its longest word, a short word's is tighter."""
    import dataclasses

    if len(result.text) <= most:
        return result
    return dataclasses.replace(result, text=result.text[:most], finished=False, hypotheses=[
        (text[:most], score) for text, score in result.hypotheses])


def transliterate_text(model, lines, n_best=1, beam_size=None, alpha=None, batch_size=256, cache=None):
    """Transliterate each line; returns one `LineResult` per line, in order.

    A line over MAX_LINE_CHARS characters, an empty line, or one with no Latin word gives a
    warning (and the line's text, or "" for the over-long one). `cache` (a dict) keeps the
    decoded words between calls.
    """
    cache = {} if cache is None else cache
    if len(cache) > 200_000:
        cache.clear()  # a long file of ever new words: memory stays bounded
    beam = max(int(beam_size or model.beam_size), int(n_best))
    native = _native_script(model)
    plans = []
    for line in lines:
        warnings = []
        if line is None or not line.strip():
            plans.append(([], ["empty; wrote an empty line" if line is not None else "not UTF-8 text; wrote an empty line"]))
            continue
        if len(line) > MAX_LINE_CHARS:
            plans.append(([], [f"{len(line)} characters, more than the {MAX_LINE_CHARS} a line may have; "
                               "wrote an empty line"]))
            continue
        parts = []
        for seg in segments(line):
            if not seg[0].isalpha():
                parts.append((seg, None))
                continue
            script = word_script(seg)
            plain = word_key(seg)
            if script == "LATIN" and plain.isascii():
                if len(plain) > model.max_source_length:
                    warnings.append(f"word {seg[:40]!r}{'...' if len(seg) > 40 else ''} is longer than the "
                                    f"{model.max_source_length} letters the model reads; copied unchanged")
                    parts.append((seg, None))
                else:
                    parts.append((seg, plain))
            else:
                if script != native:
                    warnings.append(f"word {seg[:40]!r} is in {script.title()} script, not Latin; copied unchanged")
                parts.append((seg, None))
        if not any(key for _, key in parts):
            warnings.append("no Latin-script word to transliterate; copied as it is")
        plans.append((parts, warnings))
    # shortest first, so each batch's output bound (`output_bound`) follows its own words' lengths
    todo = sorted({key for parts, _ in plans for _, key in parts if key and key not in cache}, key=lambda w: (len(w), w))
    for start in range(0, len(todo), batch_size):
        chunk = todo[start:start + batch_size]
        bound = min(model.max_length, output_bound(max(map(len, chunk))))
        for word, result in zip(chunk, model.translate(chunk, beam_size=beam, alpha=alpha, batch_size=batch_size,
                                                       max_length=bound)):
            cache[word] = _bounded(result, output_bound(len(word)))
    rescored = getattr(model, "rescorer", None) is not None
    out = []
    for parts, warnings in plans:
        words = [(seg, list(cache[key].hypotheses)[:beam]) for seg, key in parts if key]
        warnings += [f"word {seg[:40]!r}: the model wrote no end within {output_bound(len(key))} characters; cut there"
                     for seg, key in parts if key and not cache[key].finished]
        text = "".join(cache[key].text if key else seg for seg, key in parts)
        ranks = min((len(h) for _, h in words), default=0)
        candidates = []
        for k in range(min(int(n_best), ranks)):
            it = iter(words)
            line_text = "".join(next(it)[1][k][0] if key else seg for seg, key in parts)
            candidates.append((line_text, float(sum(h[k][1] for _, h in words))))
        word_model = cand_model = None
        if rescored:
            word_model = [list(cache[key].model_scores or [s for _, s in cache[key].hypotheses])[:beam]
                          for _, key in parts if key]
            cand_model = [float(sum(m[k] for m in word_model)) for k in range(len(candidates))]
        out.append(LineResult(text, words, candidates, warnings, word_model, cand_model))
    return out


def evaluate_transliteration(model, lexicon, beam_size, alpha=None, limit=None, batch_size=256):
    """Decode each romanization of `lexicon` ({romanized: [native words]}) and score it.

    -> (scores {"top-1", "top-5" (beam >= 5), "CER", "words", "beam_size"}, predictions
    [(romanized, [candidates best first], references)])."""
    items = list(lexicon.items())[:limit] if limit else list(lexicon.items())
    results = model.translate([r for r, _ in items], beam_size=beam_size, alpha=alpha, batch_size=batch_size)
    predictions = [[t for t, _ in res.hypotheses] for res in results]
    ks = (1, 5) if beam_size >= 5 else (1,)
    scores = transliteration_scores(predictions, [refs for _, refs in items], ks=ks)
    scores = {k: round(v, 2) if isinstance(v, float) else v for k, v in scores.items()}
    scores["beam_size"] = int(beam_size)
    return scores, [(r, p, refs) for (r, refs), p in zip(items, predictions)]
