"""One module per task model. All are imported (and so registered with Keras) on package import."""

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

from captioner.models.caption_decoder_model import CaptionDecoderModel  # noqa: E402
from captioner.models.image_captioner import Caption, ImageCaptioner  # noqa: E402

__all__ = ["CaptionDecoderModel", "ImageCaptioner", "Caption"]
