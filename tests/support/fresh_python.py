"""One Python process, apart from the tests', that runs the suite's "load it in a fresh process"
checks: `run(code, *args)` is `subprocess.run([sys.executable, "-c", code, *args])` without
the TensorFlow import each new interpreter pays (about 5 s on these 2 cores).

What a check needs from "fresh" is a process that never imported the test modules: a saved model
must load there after `import captioner` alone (its classes registered by the package, not by a
test that happened to import them), in safe mode, with no state of the process that saved it.
The helper process gives that: it is started with `-I`-like care (no test folder on its path,
this checkout on PYTHONPATH) and imports nothing of the tests. What it does not give is a process
that never loaded another check's model; the checks that need a pristine interpreter (TensorFlow
device configuration before start-up, "--help imports no TensorFlow", a SavedModel without
captioner importable) keep `subprocess.run`.

One helper per pytest process (each xdist worker has its own), started on first use and closed
at exit; a check that needs another kind of process (captioner blocked, say) makes its own
`Helper(prelude=...)`. Each job runs in new globals with `sys.argv` set as for `-c`; its stdout and stderr are
captured as text; `SystemExit` gives the return code; an uncaught exception gives 1 and its
traceback in stderr. A job past its timeout or a helper that died returns -9 and the next job
starts a new helper.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# the helper: the protocol moves to a private copy of fd 1, and fd 1 itself is pointed at fd 2 so
# that whatever a library writes to the C-level stdout cannot corrupt a reply
SERVER = r"""
import contextlib, gc, io, json, os, sys, traceback
exec(sys.argv[1])  # the helper's prelude
reply = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
here = os.getcwd()
for line in sys.stdin:
    job = json.loads(line)
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = ["-c", *job["argv"]]
    try:
        os.chdir(job["cwd"] or here)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(job["code"], "<fresh_python job>", "exec"), {"__name__": "__main__"})
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, (int, type(None))):
            err.write(str(stop.code) + "\n")
    except BaseException:
        err.write(traceback.format_exc())
        code = 1
    finally:
        os.chdir(here)
        if "keras" in sys.modules:
            sys.modules["keras"].backend.clear_session()
        gc.collect()
    reply.write(json.dumps({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\n")
"""


@dataclass
class Result:
    """What `subprocess.run(..., capture_output=True, text=True)` returns, as far as tests read it."""

    returncode: int
    stdout: str
    stderr: str


class Helper:
    """A helper process: `prelude` runs once at its start (before any job), `env` is added to the
    tests' environment (a None value removes the variable), jobs run in `cwd` unless they say."""

    def __init__(self, prelude: str = "", env: dict | None = None, cwd=REPO):
        self.prelude, self.cwd = prelude, cwd
        self.env = {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(REPO), **(env or {})}
        self.proc = None
        self.log = None
        atexit.register(self.close)

    def start(self):
        env = {**os.environ, **self.env}
        env = {k: v for k, v in env.items() if v is not None}
        self.log = tempfile.TemporaryFile("w+")  # the helper's own stderr (C-level logs)
        self.proc = subprocess.Popen([sys.executable, "-u", "-c", SERVER, self.prelude], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, env=env, cwd=self.cwd)

    def run(self, code: str, *args, timeout: float = 900, cwd=None) -> Result:
        """Run `code` as `python -c code args...` would, in this helper."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        job = {"code": code, "argv": [str(a) for a in args], "cwd": None if cwd is None else str(cwd)}
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            line = self.proc.stdout.readline() if ready else ""
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            why = "timed out" if self.proc.poll() is None else f"died with {self.proc.returncode}"
            self.close()
            return Result(-9, "", f"the fresh-process helper {why}:\n{self._log_tail()}")
        return Result(**json.loads(line))

    def _log_tail(self):
        if self.log is None:
            return ""
        self.log.seek(0)
        return self.log.read()[-3000:]

    def close(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None


    def last_line(self, code: str, *args, timeout: float = 900, cwd=None) -> str:
        """The last stdout line of `code` run with `args`, after checking that it succeeded."""
        result = self.run(code, *args, timeout=timeout, cwd=cwd)
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.strip().splitlines()[-1]


_HELPER = Helper()


def run(code: str, *args, timeout: float = 900, cwd=None) -> Result:
    """Run `code` as `python -c code args...` would, in the suite's fresh-process helper."""
    return _HELPER.run(code, *args, timeout=timeout, cwd=cwd)


def last_line(code: str, *args, timeout: float = 900, cwd=None) -> str:
    """The last stdout line of `run(code, *args)`, after checking that it succeeded."""
    return _HELPER.last_line(code, *args, timeout=timeout, cwd=cwd)
