"""Error types raised by captioner.

Every error that reaches a user names the input it is about and what is wrong with it.
"""


class CaptionerError(Exception):
    """Base class of every error captioner raises on purpose."""


class InputError(CaptionerError, ValueError):
    """A user-supplied file or value is malformed; the message names it."""


class ImageError(InputError):
    """An image file cannot be read, decoded or is unsafe (e.g. a decompression bomb)."""

    def __init__(self, path, reason):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class WeightsError(CaptionerError):
    """Pretrained weights are missing, unsafe or do not match the architecture."""
