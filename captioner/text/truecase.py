"""Truecasing: put back the capitals of a model that reads and writes lower-cased words.

The rule is the unigram truecaser, the baseline of Lita et al. (2003, "tRuEcasIng"), learned
from the cased target side of the training data:

* **learn**: for every word, count the forms it takes *away from the start of a sentence* (a
  sentence's first word is capitalized whatever it is, so it says nothing about the word); the
  table maps the lower-cased word to its most frequent form, and keeps only the words whose
  form is not the lower-cased one ("mann" -> "Mann", "september" -> "September", "ipod" ->
  "iPod"). Ties go to the form seen first.
* **apply**, to the words of one output sentence: a word in the table takes its form; a word
  that is not, but that the source sentence holds (a name the model copied for an unknown
  word, "jane"), takes the source's form, the source's first word excepted (it is capitalized
  by position); the first output word is then capitalized.

The table lives in the model's config (`target_tokenizer["truecase"]`: a dict), so the one
`.keras` file carries it; the SavedModel export applies the same rule in the graph
(`captioner.export.saved_model`). `captioner model add-truecaser` learns it for a trained model.
"""

from __future__ import annotations

from collections import Counter, defaultdict


def learn_truecase(token_lists, keep=None) -> dict:
    """{lower-cased word: its most frequent non-initial form} for the words whose form is not
    the lower-cased one, from cased tokenized sentences. ``keep``: only these lower-cased words
    (e.g. a model's vocabularies) make it into the table."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for tokens in token_lists:
        for token in tokens[1:]:
            counts[token.lower()][token] += 1
    table = {}
    for lower, forms in counts.items():
        if keep is not None and lower not in keep:
            continue
        form = forms.most_common(1)[0][0]  # most_common keeps first-seen order among ties
        if form != lower:
            table[lower] = form
    return table


def capitalize_first(word: str) -> str:
    """The word with its first character upper-cased (the rest as it is): "mann" -> "Mann"."""
    return word[:1].upper() + word[1:]


def source_forms(source_tokens) -> dict:
    """{lower-cased word: its form in the source} for the source's words after the first."""
    forms: dict[str, str] = {}
    for token in list(source_tokens)[1:]:
        forms.setdefault(token.lower(), token)
    return forms


def apply_truecase(words, table: dict, source_tokens=None) -> list[str]:
    """The output words of one sentence in true case (see the module docstring).
    ``source_tokens``: the source sentence's words in their written case, or None."""
    from_source = source_forms(source_tokens) if source_tokens else {}
    out = [table.get(w, from_source.get(w, w)) for w in words]
    if out:
        out[0] = capitalize_first(out[0])
    return out
