"""One hypothesis type and one re-rank step, after the one beam search, for every generating model.

    hyps = beam_hypotheses(out, b, vocabulary)                 # row b of a Generation, best first
    hyps, model_scores = rerank(hyps, coverage=0.2, rescorer=rescorer, source=text)

A :class:`Hypothesis` is one beam of one input as text: its words, what ranks it (``score``: the
search's length-normalized log-probability, plus the coverage penalty, or the rescorer's combined
score) and what the search knew of it. The captioners read the beams as they come; a translator
first turns each beam's ids into words its own way (the ``<unk>`` copy, subword pieces, truecasing:
:class:`captioner.models.seq2seq.Translator`) and then re-ranks them here:

* the coverage penalty (GNMT, Wu et al. 2016; :func:`captioner.decoding.penalties.coverage_penalty`)
  is added to each score by the caller (it needs the attention the caller cut to the source), and
  ``rerank(coverage=beta)`` sorts by the new scores (stable: ties keep the beam's order);
* an n-best rescorer (:mod:`captioner.decoding.rescoring`) gives every hypothesis a combined score
  and a new order; the model's own scores are returned beside, in the new order.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from captioner.decoding.rescoring import rescore_nbest
from captioner.text.tokenizer import detokenize


@dataclasses.dataclass
class Hypothesis:
    text: str                     # as the user reads it
    score: float                  # what ranks it (see the module docstring)
    words: list                   # its words, without <start>/<end>
    log_prob: float = 0.0         # summed log-probability under the model
    finished: bool = True         # emitted <end> within the length limit
    attention: np.ndarray | None = None  # (steps, positions) the caller kept, or None
    replaced: int = 0             # <unk> outputs replaced by a source word
    coverage: float = 0.0         # the coverage penalty term inside `score`
    extra: dict = dataclasses.field(default_factory=dict)  # what one model kind adds (subword pieces)


def beam_hypotheses(out, b, vocabulary, live_only=False):
    """Every beam of row `b` of a search output (a `Generation` of arrays, or the outputs of an
    exported graph: "tokens" and "scores" at least), best first, as `Hypothesis` (text
    detokenized from `vocabulary.decode`; log_prob NaN where the output has none). ``live_only``:
    skip the beams with a non-finite score (dead beams of a tiny vocabulary)."""
    hyps = []
    for k in range(out["tokens"].shape[1]):
        score = float(out["scores"][b, k])
        if live_only and not np.isfinite(score):
            continue
        words = vocabulary.decode(np.asarray(out["tokens"][b, k]).tolist())
        hyps.append(Hypothesis(detokenize(words), score, words,
                               float(out["log_probs"][b, k]) if "log_probs" in out else float("nan"),
                               bool(out["finished"][b, k]) if "finished" in out else True))
    return hyps


def rerank(hyps, coverage=0.0, rescorer=None, source=None):
    """The re-rank step: -> (hypotheses best first, the model's own scores in that order or None).

    coverage: the beta whose penalty the caller added to the scores (non-zero: sort by score);
    rescorer: re-score the n-best (`source`: the input text it may read); its combined score
    becomes each hypothesis's ``score``."""
    hyps = list(hyps)
    if coverage:
        hyps.sort(key=lambda h: -h.score)  # stable: ties keep the beam's order
    if rescorer is None or not hyps:
        return hyps, None
    order, combined = rescore_nbest(rescorer, [h.text for h in hyps], [h.score for h in hyps], source)
    model_scores = [hyps[i].score for i in order]
    return [dataclasses.replace(hyps[i], score=float(combined[i])) for i in order], model_scores
