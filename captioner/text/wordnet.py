"""WordNet for the whole package: one loader (`load_wordnet`, for METEOR and for entailment)
and the lexical relations ESIM/KIM take from it.

`load_wordnet()` returns ``(reader, None)`` or ``(None, reason)``: NLTK's WordNet data when
installed, else the system one (Debian's `wordnet-base`, ``/usr/share/wordnet``). NLTK is
imported only when it is called.

`build_lexicon` and `build_relations` turn a reader and a vocabulary into plain JSON-able
tables that a model stores in its config; `lexicon_features` and `WordRelations` read those
tables, so inference needs no WordNet.
"""

from __future__ import annotations

import functools
import io
import os
import warnings

import numpy as np

NUM_LEXICON_FEATURES = 3
RELATIONS = ("synonym", "antonym", "hypernym", "hyponym", "co-hyponym")  # r_ij, in this order
MAX_HYPERNYM_EDGES = 8  # KIM: hypernymy = 1 - n/8 over n <= 8 edges
# function words whose rare WordNet senses only add noise ("a": vitamin A, "is": "be" as a verb)
RELATION_STOPWORDS = frozenset("a an the is are am was were be been being has have had do does did of in on at "
                               "to into onto and or with by for from as it its there this that these those "
                               "he she they his her their him them who which while".split())

# WordNet 3.0 lexicographer file names, in file-number order (the "lexnames" file that
# NLTK needs and Debian's wordnet-base lacks; listed in its lexnames(5WN) man page).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food "
    "noun.group noun.location noun.motive noun.object noun.person noun.phenomenon "
    "noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition "
    "verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
    "verb.weather adj.ppl"
).split()
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def _lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(_LEXNAMES))


@functools.lru_cache(maxsize=1)
def load_wordnet():
    """``(reader, None)`` or ``(None, reason)``: NLTK's WordNet data, else the system one.

    The system fallback reads ``$WNSEARCHDIR`` or ``/usr/share/wordnet`` (adding it to
    ``nltk.data.path``, which NLTK's path sandbox requires) and supplies the missing
    ``lexnames`` file from memory.
    """
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        return None, "nltk is not installed"
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet, None
    except (LookupError, OSError, ValueError):
        pass

    class _SystemWordNet(WordNetCorpusReader):
        """WordNet 3.0 from a plain WNSEARCHDIR (no lexnames file, no OMW mapping)."""

        def open(self, file):
            if file == "lexnames" and not os.path.exists(os.path.join(str(self._root.path), "lexnames")):
                return io.StringIO(_lexnames_text())
            return super().open(file)

        def map_wn(self, version="wordnet"):
            return None  # only needed for multilingual (OMW) data

    reasons = []
    for root in (os.environ.get("WNSEARCHDIR"), "/usr/share/wordnet"):
        if not root or not os.path.isfile(os.path.join(root, "data.noun")):
            continue
        try:
            if root not in nltk.data.path:
                nltk.data.path.append(root)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reader = _SystemWordNet(root, None)
                reader.synsets("dog")
            return reader, None
        except Exception as e:  # any failure means: no METEOR, say why
            reasons.append(f"{root}: {type(e).__name__}: {e}")
    return None, "WordNet not found (no NLTK wordnet data, no /usr/share/wordnet)" + (
        f"; {'; '.join(reasons)}" if reasons else ""
    )


def lexicon_features(premise_tokens, hypothesis_tokens, lexicon) -> np.ndarray:
    """Features from a word-relation table (`build_lexicon`), float32 (NUM_LEXICON_FEATURES,):

    share of hypothesis words that a premise word entails lexically (same lemma, synonym, or
    the hypothesis word is a hypernym: "boy" -> "kid", "person"); whether any hypothesis word is
    an antonym of a premise word; the same share premise-over-hypothesis.
    """
    lemma, general, antonym = lexicon.get("lemma", {}), lexicon.get("general", {}), lexicon.get("antonym", {})

    def covers(src, dst):
        reach = set()
        for w in src:
            reach.add(w)
            reach.add(lemma.get(w, w))
            reach.update(general.get(w, ()))
        return sum((w in reach or lemma.get(w, w) in reach) for w in dst) / max(len(dst), 1)

    p, h = list(premise_tokens), list(hypothesis_tokens)
    anti = set()
    for w in p:
        anti.update(antonym.get(w, ()))
    n_anti = sum(w in anti or lemma.get(w, w) in anti for w in h)
    return np.array([covers(p, h), min(n_anti, 2) / 2.0, covers(h, p)], np.float32)


def build_lexicon(words, wordnet, hypernym_depth=4) -> dict:
    """Relations among `words` (a vocabulary) from a WordNet reader, as plain JSON-able lists, so a
    trained model carries them in its config and needs no WordNet at inference:

    lemma[w]: w's base form (if different); general[w]: words of the vocabulary that are a
    synonym of w or a hypernym up to `hypernym_depth` levels (nouns and verbs) or w's lemma's
    forms; antonym[w]: words of the vocabulary that are antonyms of w.
    """
    vocab = set(words)
    lemma, synsets = {}, {}
    for w in words:
        if not w.isalpha():
            continue
        for pos in ("n", "v", "a"):
            base = wordnet.morphy(w, pos)
            if base:
                if base != w and w not in lemma:
                    lemma[w] = base
                synsets.setdefault(w, []).extend(wordnet.synsets(base, pos)[:3])  # the common senses
    by_lemma = {}
    for w in words:
        by_lemma.setdefault(lemma.get(w, w), set()).add(w)

    def forms(name):
        name = name.lower()
        return by_lemma.get(name, set()) | ({name} if name in vocab else set())

    general, antonym = {}, {}
    for w, syns in synsets.items():
        g, a = set(), set()
        for syn in syns:
            frontier = [syn]
            for depth in range(hypernym_depth + 1):
                nxt = []
                for s in frontier:
                    for lem in s.lemmas():
                        g |= forms(lem.name())
                        if depth == 0:
                            for ant in lem.antonyms():
                                a |= forms(ant.name())
                    nxt.extend(s.hypernyms())
                frontier = nxt
        g.discard(w)
        if g:
            general[w] = sorted(g)
        if a:
            antonym[w] = sorted(a)
    return {"lemma": lemma, "general": general, "antonym": antonym}


def build_relations(words, wordnet, senses=3, max_edges=MAX_HYPERNYM_EDGES) -> dict:
    """WordNet relations among `words` (a vocabulary) for KIM's r_ij, as plain JSON-able tables
    that a model stores in its config:

    base[w]: w's base forms where they differ from w ("sawing" -> ["saw", "sawing"]: WordNet's
    morphy for noun, verb and adjective); and over base forms b, from each part of speech's
    first `senses` senses: synonym[b] (lemmas of a shared synset), antonym[b] (the lemmas'
    antonyms, and for an adjective satellite those of its head: "big" -> "small"),
    hypernym[b] = {h: n} (h a direct or indirect hypernym n <= `max_edges` edges up),
    parents[b] (the names of b's direct hypernym synsets: two words with a parent in common
    are co-hyponyms). Only base forms of `words` appear, as keys and as values; words of
    `RELATION_STOPWORDS` have no relations.
    """
    words = [w for w in words if w.isalpha() and w not in RELATION_STOPWORDS]
    base = {}
    for w in words:
        forms = sorted({b for pos in ("n", "v", "a") if (b := wordnet.morphy(w, pos))})
        if forms and forms != [w]:
            base[w] = forms
    names = {b for w in words for b in base.get(w, [w])} - RELATION_STOPWORDS
    synonym, antonym, hypernym, parents = {}, {}, {}, {}

    def lemma_names(synset):
        return {lem.name().lower() for lem in synset.lemmas()} & names

    for name in sorted(names):
        by_pos = {}
        for syn in wordnet.synsets(name):
            group = by_pos.setdefault("a" if syn.pos() == "s" else syn.pos(), [])
            if len(group) < senses:
                group.append(syn)
        syn_, ant, hyp, par = set(), set(), {}, set()
        for syn in (s for group in by_pos.values() for s in group):
            syn_ |= lemma_names(syn)
            heads = [syn] + (syn.similar_tos() if syn.pos() == "s" else [])
            ant |= {a.name().lower() for h in heads for lem in h.lemmas() for a in lem.antonyms()} & names
            direct = syn.hypernyms() + syn.instance_hypernyms()
            par |= {h.name() for h in direct}
            frontier, seen = direct, set()
            for n in range(1, max_edges + 1):
                nxt = []
                for h in frontier:
                    if h in seen:
                        continue
                    seen.add(h)
                    for lem in lemma_names(h):
                        hyp[lem] = min(hyp.get(lem, n), n)
                    nxt.extend(h.hypernyms() + h.instance_hypernyms())
                frontier = nxt
        syn_.discard(name)
        hyp.pop(name, None)
        for table, value in ((synonym, sorted(syn_)), (antonym, sorted(ant)), (parents, sorted(par))):
            if value:
                table[name] = value
        if hyp:
            hypernym[name] = dict(sorted(hyp.items()))
    return {"base": base, "synonym": synonym, "antonym": antonym, "hypernym": hypernym, "parents": parents}


class WordRelations:
    """KIM's relation vectors from a `build_relations` table: `matrix(premise_tokens,
    hypothesis_tokens)` -> uint8 (P, H, len(RELATIONS)) in eighths (8 = 1.0)."""

    def __init__(self, table):
        self.base = table.get("base", {})
        self.synonym = {k: set(v) for k, v in table.get("synonym", {}).items()}
        self.antonym = {k: set(v) for k, v in table.get("antonym", {}).items()}
        self.hypernym = table.get("hypernym", {})
        self.parents = {k: set(v) for k, v in table.get("parents", {}).items()}
        self._cache = {}

    def pair(self, p, h):
        """Relation vector of premise word p and hypothesis word h (uint8 eighths): h is p's
        synonym (or the same base form), antonym, hypernym (p -> h generalizes: "banana" ->
        "fruit"), hyponym (h is more specific), co-hyponym (shared parent, not synonyms)."""
        key = (p, h)
        if key in self._cache:
            return self._cache[key]
        r = np.zeros(len(RELATIONS), np.uint8)
        pb, hb = self.base.get(p, [p]), self.base.get(h, [h])
        if set(pb) & set(hb) or any(y in self.synonym.get(x, ()) for x in pb for y in hb):
            r[0] = 8
        if any(y in self.antonym.get(x, ()) or x in self.antonym.get(y, ()) for x in pb for y in hb):
            r[1] = 8
        up = [self.hypernym.get(x, {}).get(y) for x in pb for y in hb]
        down = [self.hypernym.get(y, {}).get(x) for x in pb for y in hb]
        if any(up):
            r[2] = 8 - min(n for n in up if n)
        if any(down):
            r[3] = 8 - min(n for n in down if n)
        if not r[0] and any(self.parents.get(x, set()) & self.parents.get(y, set()) for x in pb for y in hb):
            r[4] = 8
        if len(self._cache) < 500_000:
            self._cache[key] = r
        return r

    def named_pairs(self, premise_tokens, hypothesis_tokens):
        """[(premise word, hypothesis word, relation, strength 0-1)] for every pair of different
        words with a relation, in reading order: what the model is told about this pair."""
        out = []
        for p in dict.fromkeys(premise_tokens):
            for h in dict.fromkeys(hypothesis_tokens):
                if p != h:
                    r = self.pair(p, h)
                    out.extend((p, h, RELATIONS[k], float(r[k]) / 8.0) for k in np.flatnonzero(r))
        return out

    def matrix(self, premise_tokens, hypothesis_tokens, width_p=None, width_h=None):
        out = np.zeros((width_p or len(premise_tokens), width_h or len(hypothesis_tokens), len(RELATIONS)), np.uint8)
        for i, p in enumerate(premise_tokens):
            for j, h in enumerate(hypothesis_tokens):
                out[i, j] = self.pair(p, h)
        return out
