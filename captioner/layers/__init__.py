"""Registered Keras layers: attention, the decoder engine, encoders, preprocessing.

Every module here is imported on package import so that saved models find their classes.
"""

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

from captioner.layers.additive_attention import AdditiveAttention  # noqa: E402
from captioner.layers.attention_decoder import AttentionDecoder  # noqa: E402
from captioner.layers.image_preprocessing import ImagePreprocessing  # noqa: E402

__all__ = ["AdditiveAttention", "AttentionDecoder", "ImagePreprocessing"]
