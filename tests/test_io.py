"""Issue 23 item 10: atomic writes leave `.tmp-*` files behind after a kill; the next write of the
same file removes them (only those whose process is gone)."""

import os
import signal
import subprocess
import sys

from captioner.io import write_json

KILLED_MID_WRITE = """
import os, signal, sys
from captioner.io import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    open(tmp, "w").write("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    target = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(target)], env=env)
    assert proc.returncode == -signal.SIGKILL
    left = [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]
    assert len(left) == 1 and left[0].startswith(".tmp-report.json.")
    live = tmp_path / f".tmp-report.json.{os.getppid()}-abc.json"  # a live process's: kept
    live.write_text("busy")
    other = tmp_path / ".tmp-other.json.999999999-abc.json"  # another file's: not this write's business
    other.write_text("x")
    write_json(target, {"a": 1})
    assert sorted(os.listdir(tmp_path)) == sorted(["report.json", live.name, other.name])
