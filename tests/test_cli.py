"""`captioner -h` is instant (no TensorFlow), TensorFlow's start-up chatter is kept off a command's
stderr (unless --verbose), and `import captioner` still makes a saved model loadable (issue 23)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from captioner.quiet import LineFilter, is_chatter

REPO = Path(__file__).resolve().parents[1]
CHATTER = [
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    b"I0000 00:00:1795431701.241608   23406 port.cc:153] oneDNN custom operations are on. You may see slightly "
    b"different numerical results due to floating-point round-off errors from different computation orders. "
    b"To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.",
    b"I0000 00:00:1795431096.089337   17321 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use "
    b"available CPU instructions in performance-critical operations.",
    b"To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 AVX_VNNI FMA, in other "
    b"operations, rebuild TensorFlow with the appropriate compiler flags.",
    b"E0000 00:00:1795431747.141452   23406 util.cc:131] oneDNN supports DT_BOOL only on platforms with AVX-512. "
    b"Falling back to the default Eigen-based implementation if present.",
]


def _env():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return env


def test_the_filter_drops_chatter_and_passes_everything_else_at_once():
    f = LineFilter()
    assert all(is_chatter(line) for line in CHATTER)
    kept = [b"captioner entail: error: x.keras: model file not found\n", b"E0000 00:00:1.5  1 op.cc:9] a real error\n",
            b"INFO captioner.training: epoch 1\n", b"Traceback (most recent call last):\n"]
    stream = b"".join(line + b"\n" for line in CHATTER[:3]) + kept[0] + CHATTER[3] + b"\n" + b"".join(kept[1:])
    out = b"".join(f.feed(stream[i:i + 7]) for i in range(0, len(stream), 7)) + f.close()
    assert out == b"".join(kept)
    assert f.feed(b"\rcaption:  40%|####") == b"\rcaption:  40%|####"  # a progress bar is not held back
    assert f.feed(b"      | 4/10\r") == b"      | 4/10\r"
    assert f.feed(b"\n") == b"\n"
    assert f.feed(b"I0000 00:00:1.2 ") == b"" and f.feed(b"  7 x.cc:1] chatter\nnext") == b"next"


HELP_PROBE = """
import sys, time
sys.argv = ["captioner"] + sys.argv[1:]
start = time.perf_counter()
from captioner.cli import main
try:
    main()
except SystemExit:
    pass
print("SECONDS", time.perf_counter() - start, "TF", "tensorflow" in sys.modules, "KERAS", "keras" in sys.modules)
"""


@pytest.mark.parametrize("args", [["-h"], ["ask", "-h"], ["caption", "-h"], ["video", "-h"], ["extract", "-h"]])
def test_help_does_not_import_tensorflow(args):
    out = subprocess.run([sys.executable, "-c", HELP_PROBE, *args], env=_env(), capture_output=True, text=True,
                         timeout=120).stdout
    assert "usage: captioner" in out
    assert "TF False KERAS False" in out, out[-300:]


def test_import_captioner_then_load_model_in_a_fresh_process():
    code = ("import sys, captioner; assert 'tensorflow' not in sys.modules; import keras; "
            "m = keras.models.load_model(sys.argv[1]); print(type(m).__name__)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO / "assets" / "models" / "easy_vqa.keras")],
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert out.stdout.strip() == "VQAModel", out.stderr[-2000:]


def test_a_command_prints_no_tensorflow_chatter(tmp_path):
    result = subprocess.run([sys.executable, "-m", "captioner", "entail", "--model", str(tmp_path / "none.keras"),
                             "--input", str(tmp_path / "none.tsv")], env=_env(), capture_output=True, timeout=600)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines == [f"captioner entail: error: {tmp_path / 'none.keras'}: model file not found".encode()], lines


def test_a_full_disk_or_a_read_only_folder_is_one_line_and_keeps_what_was_there(tmp_path, monkeypatch, capsys):
    """Issue 66 items 7-8: ENOSPC / EROFS / EACCES from any writer (an OSError, HDF5's message, TensorFlow's
    SaveV2) end the command with one line naming the path, exit status 2; the earlier output stays whole
    and no temporary file is left (a fault-injecting writer: a test cannot mount a full filesystem)."""
    import errno
    import os

    import captioner.commands.translate as translate
    from captioner.cli import main, storage_error

    out = tmp_path / "out.txt"
    out.write_text("an earlier run's translation\n")

    def full_disk(model, lines, args, write, flush):
        write("half a translation")
        raise OSError(errno.ENOSPC, "No space left on device", str(out))

    monkeypatch.setattr(translate, "translate_lines", full_disk)
    monkeypatch.setattr("captioner.models.seq2seq.load_translator", lambda path: object())
    src = tmp_path / "in.txt"
    src.write_text("a b\n")
    assert main(["translate", "--model", "m.keras", "--input", str(src), "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out}: cannot be written: the disk is full" in err[0]
    assert out.read_text() == "an earlier run's translation\n" and sorted(os.listdir(tmp_path)) == ["in.txt", "out.txt"]
    hdf5 = OSError("Can't write data (file write failed: time = Mon, filename = 'work/f.h5', file descriptor = 5, "
                   "errno = 28, error message = 'No space left on device')")
    assert storage_error(hdf5).startswith("work/f.h5: cannot be written: the disk is full")
    assert storage_error(PermissionError(errno.EACCES, "Permission denied", "/ro/att")).startswith(
        "/ro/att: cannot be written: permission denied")
    assert "read-only" in storage_error(OSError(errno.EROFS, "Read-only file system", "/ro/x.keras"))
    assert storage_error(ValueError("a bug")) is None
