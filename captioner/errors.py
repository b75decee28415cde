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


# The documented bounds of every decoding option of the commands (checked before any work): a beam of
# 100,000 or a length of 2**31 would only end in an out-of-memory kill.
SEARCH_BOUNDS = {"beam_size": (1, 64), "max_length": (1, 1000), "n_best": (1, 64), "nbest": (1, 64),
                 "num_samples": (1, 1000), "length": (1, 100_000)}
MAX_ALPHA = 10.0


def check_search_options(args):
    """InputError naming the option unless each decoding option `args` has (argparse names as in
    SEARCH_BOUNDS, and `alpha`) is None or within its bound; `alpha` must be finite, 0..MAX_ALPHA."""
    for name, (low, high) in SEARCH_BOUNDS.items():
        value = getattr(args, name, None)
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if value < low:
            raise InputError(f"{flag} {value}: must be >= {low}")
        if value > high:
            raise InputError(f"{flag} {value}: must be at most {high}")
    alpha = getattr(args, "alpha", None)
    if alpha is not None and not (math.isfinite(alpha) and 0.0 <= alpha <= MAX_ALPHA):
        raise InputError(f"--alpha {alpha}: must be a finite number in 0..{MAX_ALPHA:g}")


def check_model_settings(owner, beam_size, alpha, max_length):
    """InputError unless a model config's decoding defaults are within SEARCH_BOUNDS (a crafted
    file with beam_size 100000 or max_length 1e8 is refused at load, before any work)."""
    for name, value in (("beam_size", beam_size), ("max_length", max_length)):
        low, high = SEARCH_BOUNDS[name]
        if not low <= int(value) <= high:
            raise InputError(f"{owner} config {name} {value}: must be {low}..{high}")
    if not (math.isfinite(float(alpha)) and 0.0 <= float(alpha) <= MAX_ALPHA):
        raise InputError(f"{owner} config alpha {alpha}: must be a finite number in 0..{MAX_ALPHA:g}")
