"""Keep TensorFlow's start-up chatter off a command's stderr (`captioner --verbose` keeps it).

TensorFlow 2.21 logs through absl before absl is initialised, so `TF_CPP_MIN_LOG_LEVEL` no
longer silences lines such as

    WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
    I0000 00:00:1795431701.241608   23406 port.cc:153] oneDNN custom operations are on. ...
    I0000 ... cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use ...
    To enable the following instructions: AVX2 AVX512F ..., rebuild TensorFlow with the ...
    E0000 ... util.cc:131] oneDNN supports DT_BOOL only on platforms with AVX-512. Falling back ...

`filter_stderr()` passes the process's stderr (file descriptor 2, so C++ writes too) through a
small forked filter that drops exactly those: C++ log lines of severity I and W, the known
oneDNN notices and the two absl/cpu-feature lines. Every other byte (our messages, errors,
progress bars, a crash report) goes through unchanged and at once; a line is held back only
while it may still turn out to be chatter. The filter is a separate process, so what the
command writes just before it dies still arrives.
"""

import atexit
import logging
import os
import re
import signal
import sys
import time

_CHATTER = re.compile(
    rb"(?:WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] .*"
    rb"|E\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] oneDNN .*"
    rb"|To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags\.)\r?"
)
_STARTS = (b"WARNING: All log messages", b"To enable the following")
_LOG_START = re.compile(rb"[IWE](?:\d|$)")


def is_chatter(line):
    """Whether a complete line (bytes, without its newline) is TensorFlow start-up chatter."""
    return _CHATTER.fullmatch(line) is not None


def _may_become_chatter(start):
    """Whether an unfinished line that starts with `start` could still be chatter."""
    head = start[:26]
    if any(s.startswith(head) or head.startswith(s) for s in _STARTS):
        return True
    return _LOG_START.match(start) is not None


class LineFilter:
    """Feed bytes in, get the bytes to pass on: chatter lines removed."""

    def __init__(self):
        self.pending = b""  # the start of a line held back
        self.passing = False  # the current line is already being passed on

    def feed(self, data):
        out = []
        while data:
            newline = data.find(b"\n")
            piece, data = (data, b"") if newline < 0 else (data[:newline + 1], data[newline + 1:])
            if self.passing:
                out.append(piece)
                self.passing = newline < 0 and not piece.endswith(b"\n")
                continue
            line = self.pending + piece
            if line.endswith(b"\n"):
                self.pending = b""
                if not is_chatter(line[:-1]):
                    out.append(line)
            elif _may_become_chatter(line) and len(line) < 4096:
                self.pending = line
            else:
                self.pending = b""
                self.passing = True
                out.append(line)
        return b"".join(out)

    def close(self):
        rest, self.pending = self.pending, b""
        return b"" if is_chatter(rest) else rest


def _pump(read_fd, write_fd):
    line_filter = LineFilter()
    while True:
        try:
            data = os.read(read_fd, 65536)
        except InterruptedError:  # pragma: no cover
            continue
        out = line_filter.feed(data) if data else line_filter.close()
        while out:
            try:
                out = out[os.write(write_fd, out):]
            except OSError:
                return
        if not data:
            return


def quiet_environment():
    """Environment and Python loggers: TensorFlow's own knobs, for what they still cover."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for name in ("tensorflow", "absl"):
        logging.getLogger(name).setLevel(logging.ERROR)


def filter_stderr():
    """Route file descriptor 2 through a forked chatter filter for the rest of the process."""
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return
    try:
        sys.stderr.flush()
        read_fd, write_fd = os.pipe()
        pid = os.fork()
    except OSError:  # pragma: no cover - no fork: keep the chatter
        return
    if pid == 0:  # the filter: reads until every writer has closed the pipe
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the command, not for us
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.close(write_fd)
            _pump(read_fd, 2)
        finally:
            os._exit(0)
    os.close(read_fd)
    saved = os.dup(2)
    os.dup2(write_fd, 2)
    os.close(write_fd)

    def restore():
        try:
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed stderr: nothing left to pass on
            pass
        os.dup2(saved, 2)  # closes our end of the pipe: the filter drains it and exits
        for _ in range(200):  # unless a child process we started still holds the pipe: 2 s at most
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    return
            except ChildProcessError:  # pragma: no cover
                return
            time.sleep(0.01)

    atexit.register(restore)
