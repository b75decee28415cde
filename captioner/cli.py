"""`captioner` command line: one subcommand per module in `captioner/commands/`.

Each module in `captioner.commands` defines `register(subparsers)`, which adds its
subcommand(s) and sets `func` (taking the parsed args, returning an exit status).
Modules are discovered, so a new task adds a file and touches nothing here.
"""

import argparse
import errno
import importlib
import logging
import pkgutil
import re
import sys

import captioner.commands
from captioner.errors import CaptionerError


def build_parser():
    parser = argparse.ArgumentParser(
        prog="captioner",
        description="Attention encoder-decoder models: captions, translation, VQA, video.",
    )
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="debug logging, and TensorFlow's start-up messages (hidden by default)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(captioner.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"captioner.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv=None):
    """Run the command line `argv` (default: this process's own, whose stderr then loses
    TensorFlow's start-up chatter unless -v/--verbose is given)."""
    if argv is None and not {"-v", "--verbose"} & set(sys.argv[1:]):
        from captioner.quiet import filter_stderr, quiet_environment

        quiet_environment()  # before anything imports TensorFlow
        filter_stderr()
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "pass_unknown_args", False):
        parser.parse_args(argv)  # argparse's own error naming them (exit status 2)
    args.unknown_args = unknown  # a command that takes them: another tool's options (Beam's)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what a command records (a card's command line)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CaptionerError as exc:
        print(f"captioner {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a full disk or a read-only folder is one line, not a traceback
        message = storage_error(exc)
        if message is None:
            raise
        print(f"captioner {args.command}: error: {message}", file=sys.stderr)
        return 2


# what the disk said, by errno and by the text other libraries (HDF5, TensorFlow's SaveV2) carry it in
STORAGE_ERRORS = ((errno.ENOSPC, "No space left on device", "the disk is full"),
                  (errno.EDQUOT, "Disk quota exceeded", "the disk quota is used up"),
                  (errno.EROFS, "Read-only file system", "the file system is read-only"),
                  (errno.EACCES, "Permission denied", "permission denied"))


def storage_error(exc):
    """One line naming the path and the cause of a write that the storage refused (a full disk, a
    read-only or forbidden folder), from an OSError, an h5py error or a TensorFlow op error; None
    for any other exception. Whatever the command finished before stays as it was: every output
    here is written atomically or appended row by row."""
    text = str(exc)
    for number, words, cause in STORAGE_ERRORS:
        if getattr(exc, "errno", None) == number or words in text:
            path = getattr(exc, "filename", None)
            if not path:  # HDF5 / SaveV2 name the file inside their message
                match = re.search(r"(?:name|file|filename) ?= ?'([^']+)'|'(/[^']+)'", text)
                path = next((g for g in match.groups() if g), None) if match else None
            return (f"{path or 'an output'}: cannot be written: {cause} ({words}); what was written before is "
                    "kept: run the command again once it can be written")
    return None


if __name__ == "__main__":
    sys.exit(main())
