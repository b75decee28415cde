"""Pretrained image backbones: a spatial grid of annotation vectors and a pooled vector."""

from captioner.backbones.backbone import BACKBONES, DEFAULT_BACKBONE, Backbone, get_backbone
from captioner.backbones.torch_weights import load_torch_state_dict

__all__ = ["BACKBONES", "DEFAULT_BACKBONE", "Backbone", "get_backbone", "load_torch_state_dict"]
