"""Decoding: one batched beam search for every generator; greedy is beam width 1, and sampling
(temperature, top-k) is the same search with one beam and a drawn token.

The search takes its settings (:class:`SearchSettings`), rules on each step's log-probabilities
(:mod:`captioner.decoding.rules`) and a strategy (:mod:`captioner.decoding.strategies`: beam,
sampling, constrained); :class:`Generator` is what models decode through, given one
:class:`Decoding` (settings) and one :class:`Steering` (per-input tags) per call (memory by row for the compact search, banned
tokens, the compiled-function cache, one result type and one way to text); the penalties are
small pure functions beside it.
"""

from captioner.decoding.beam_search import SearchSettings, beam_search, greedy_search, tile_beams
from captioner.decoding.generator import Decoding, Generation, Generator, Steering, hypothesis_texts, hypothesis_words
from captioner.decoding.rules import BanTokens, NoRepeatNGram, TokenBonus
from captioner.decoding.strategies import BeamStrategy, Constrained, Sampling
from captioner.decoding.penalties import coverage_penalty, length_penalty, normalized_score
from captioner.decoding.sampling import sample_tokens

__all__ = ["SearchSettings", "beam_search", "greedy_search", "tile_beams", "Decoding", "Generation", "Generator",
           "Steering", "hypothesis_texts", "hypothesis_words", "BanTokens", "NoRepeatNGram", "TokenBonus",
           "BeamStrategy", "Constrained", "Sampling", "coverage_penalty", "length_penalty", "normalized_score",
           "sample_tokens"]
