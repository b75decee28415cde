"""Error types raised by captioner.

Every error that reaches a user names the input it is about and what is wrong with it.
"""

import contextlib
import math


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


def check_non_negative(flag, value):
    """InputError naming `flag` unless `value` is None or a finite number >= 0."""
    if value is not None and not (value >= 0 and math.isfinite(value)):
        raise InputError(f"{flag} {value}: must be a finite number >= 0")


@contextlib.contextmanager
def text_file_errors(path):
    """Around opening and reading a text file: a missing file or bytes that are not UTF-8
    become an InputError naming `path` (format errors are the reader's own to report)."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e})") from None
