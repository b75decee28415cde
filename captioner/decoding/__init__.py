"""Decoding: one batched beam search for every generator; greedy is beam width 1, and sampling
(temperature, top-k) is the same search with one beam and a drawn token.

:class:`Generator` is what models decode through (memory by row for the compact search, banned
tokens, the compiled-function cache, one result type and one way to text); the penalties are
small pure functions beside it.
"""

from captioner.decoding.beam_search import beam_search, greedy_search, tile_beams
from captioner.decoding.generator import Generation, Generator, hypothesis_texts, hypothesis_words
from captioner.decoding.penalties import coverage_penalty, length_penalty, normalized_score
from captioner.decoding.sampling import sample_tokens

__all__ = ["beam_search", "greedy_search", "tile_beams", "Generation", "Generator", "hypothesis_texts",
           "hypothesis_words", "coverage_penalty", "length_penalty", "normalized_score", "sample_tokens"]
