"""The standard VQA accuracy (Antol et al. 2015; VQA v2 evaluation).

An answer is right in proportion to how many of the human annotators gave it::

    Acc(a) = mean over the 10 subsets of 9 of the 10 human answers of min(#matches / 3, 1)

so an answer given by 3 or more of the other 9 annotators scores 1, by 2 scores 2/3, by 1
scores 1/3. With m of the n answers equal to the prediction, leaving out a matching answer
leaves m - 1 matches and leaving out another one leaves m, hence the closed form in
:func:`vqa_accuracy` (m = 1, 2, 3 give 0.3, 0.6, 0.9; m >= 4 gives 1).

Answers are compared after the normalisation of the official evaluation script
(``vqaEval.py``): newlines and tabs to spaces, punctuation removed or turned into spaces,
periods not followed by a digit dropped, lower case, number words ``none``/``zero`` ..
``ten`` to digits, the articles ``a``/``an``/``the`` dropped, apostrophe-less contractions
(``dont``) restored (``don't``).

Two deliberate differences from that script, both of which only make the metric
symmetric: the official code applies the punctuation step to the human answers only when
they disagree and never applies the digit/article step to them (their answers were
already cleaned by the dataset authors); here every answer goes through the same
:func:`normalize_answer`. On the released VQA v2 annotations this gives the same matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from captioner.errors import InputError

__all__ = ["normalize_answer", "vqa_accuracy", "vqa_score", "exact_match_accuracy"]

# Apostrophe-less spellings -> the contraction (table of the official VQA evaluation).
CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't",
    "dont": "don't", "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've",
    "hasnt": "hasn't", "havent": "haven't", "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've",
    "hes": "he's", "howd": "how'd", "howll": "how'll", "hows": "how's", "isnt": "isn't", "itd": "it'd", "itd've": "it'd've",
    "it'dve": "it'd've", "itll": "it'll", "let's": "let's", "maam": "ma'am", "mightnt": "mightn't",
    "mightnt've": "mightn't've", "mightn'tve": "mightn't've", "mightve": "might've", "mustnt": "mustn't",
    "mustve": "must've", "neednt": "needn't", "notve": "not've", "oclock": "o'clock", "oughtnt": "oughtn't",
    "ow's'at": "'ow's'at", "'ows'at": "'ow's'at", "'ow'sat": "'ow's'at", "shant": "shan't",
    "shed've": "she'd've", "she'dve": "she'd've", "she's": "she's", "shouldve": "should've",
    "shouldnt": "shouldn't", "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've",
    "somebody'd": "somebodyd", "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've",
    "somebodyll": "somebody'll", "somebodys": "somebody's", "someoned": "someone'd",
    "someoned've": "someone'd've", "someone'dve": "someone'd've", "someonell": "someone'll",
    "someones": "someone's", "somethingd": "something'd", "somethingd've": "something'd've",
    "something'dve": "something'd've", "somethingll": "something'll", "thats": "that's",
    "thered": "there'd", "thered've": "there'd've", "there'dve": "there'd've", "therere": "there're",
    "theres": "there's", "theyd": "they'd", "theyd've": "they'd've", "they'dve": "they'd've",
    "theyll": "they'll", "theyre": "they're", "theyve": "they've", "twas": "'twas", "wasnt": "wasn't",
    "wed've": "we'd've", "we'dve": "we'd've", "weve": "we've", "werent": "weren't", "whatll": "what'll",
    "whatre": "what're", "whats": "what's", "whatve": "what've", "whens": "when's", "whered": "where'd",
    "wheres": "where's", "whereve": "where've", "whod": "who'd", "whod've": "who'd've",
    "who'dve": "who'd've", "wholl": "who'll", "whos": "who's", "whove": "who've", "whyll": "why'll",
    "whyre": "why're", "whys": "why's", "wont": "won't", "wouldve": "would've", "wouldnt": "wouldn't",
    "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've",
    "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've",
    "youll": "you'll", "youre": "you're", "youve": "you've",
}
NUMBER_WORDS = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}
ARTICLES = frozenset(("a", "an", "the"))
PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@",
               "`", ",", "?", "!")
_COMMA_BETWEEN_DIGITS = re.compile(r"(\d)(,)(\d)")
# The official pattern is "(?!<=\d)(\.)(?!\d)": its first group is a (typo'd) lookahead that
# never fails before a ".", so in effect it drops every period not followed by a digit
# ("3.5" keeps its point, "yes." loses it). Written here as what it does.
_PERIOD_NOT_BEFORE_DIGIT = re.compile(r"\.(?!\d)")


def _process_punctuation(text: str) -> str:
    out = text
    has_digit_comma = _COMMA_BETWEEN_DIGITS.search(text) is not None
    for p in PUNCTUATION:
        # Punctuation touching a space, or any text with a "1,000"-style comma: delete;
        # otherwise it separates words ("black/white" -> "black white").
        if (p + " " in text) or (" " + p in text) or has_digit_comma:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return _PERIOD_NOT_BEFORE_DIGIT.sub("", out)


def _process_digits_articles(text: str) -> str:
    words = []
    for word in text.lower().split():
        word = NUMBER_WORDS.get(word, word)
        if word not in ARTICLES:
            words.append(CONTRACTIONS.get(word, word))
    return " ".join(words)


def normalize_answer(answer: str) -> str:
    """The official VQA answer normalisation: ``"Two dogs!"`` -> ``"2 dogs"``."""
    if not isinstance(answer, str):
        raise InputError(f"an answer must be a string, got {type(answer).__name__}: {answer!r}")
    text = answer.replace("\n", " ").replace("\t", " ").strip()
    return _process_digits_articles(_process_punctuation(text))


def vqa_accuracy(prediction: str, human_answers: Sequence[str]) -> float:
    """Accuracy of one predicted answer against the human answers of one question.

    With n >= 2 human answers (10 in VQA v1/v2): the mean over the n leave-one-out subsets
    of ``min(#matching answers in the subset / 3, 1)``. With a single reference answer
    (datasets such as easy-VQA) it is exact match after normalisation.
    """
    if isinstance(human_answers, str) or not len(human_answers):
        raise InputError(f"human_answers must be a non-empty list of strings, got {human_answers!r}")
    pred = normalize_answer(prediction)
    answers = [normalize_answer(a) for a in human_answers]
    n = len(answers)
    if n == 1:
        return float(pred == answers[0])
    m = sum(a == pred for a in answers)
    # leave out one of the m matching answers: m - 1 matches remain; one of the others: m.
    return (m * min((m - 1) / 3.0, 1.0) + (n - m) * min(m / 3.0, 1.0)) / n


def vqa_score(predictions: Mapping, references: Mapping) -> dict:
    """Corpus VQA accuracy: ``predictions`` {question_id: answer}, ``references``
    {question_id: [human answers]}. Every reference question must have a prediction.

    Returns {"accuracy": percent, "questions": n, "per_question": {qid: accuracy}}.
    """
    missing = [q for q in references if q not in predictions]
    if missing:
        raise InputError(f"{len(missing)} question(s) have no predicted answer, e.g. {missing[:3]}")
    per_question = {q: vqa_accuracy(predictions[q], refs) for q, refs in references.items()}
    n = len(per_question)
    accuracy = 100.0 * sum(per_question.values()) / n if n else 0.0
    return {"accuracy": accuracy, "questions": n, "per_question": per_question}


def exact_match_accuracy(predictions: Sequence[str], answers: Sequence[str]) -> float:
    """Percent of predictions equal to the single reference answer (after normalisation)."""
    if len(predictions) != len(answers):
        raise InputError(f"{len(predictions)} predictions for {len(answers)} answers")
    if not answers:
        return 0.0
    hits = sum(normalize_answer(p) == normalize_answer(a) for p, a in zip(predictions, answers))
    return 100.0 * hits / len(answers)
