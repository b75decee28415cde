"""Decoding: one batched beam search for every generator; greedy is beam width 1."""

from captioner.decoding.beam_search import beam_search, greedy_search, tile_beams
from captioner.decoding.length_penalty import length_penalty, normalized_score

__all__ = ["beam_search", "greedy_search", "tile_beams", "length_penalty", "normalized_score"]
