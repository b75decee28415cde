"""The one output contract of the batch commands: rows written as they are done to `OUTPUT.partial`,
locked, resumed after a kill and renamed to `OUTPUT` when complete (`ask`, `video`, `translate`,
`transliterate`, `summarize`, `entail`, `classify`, `respond`; `caption` appends to its output itself,
for its shards and CSV: see `captioner.inference.batch`).

    with batch_output(args.output, inputs, same=lambda row, item: ...) as out:
        for batch in batches(out.todo):  # the inputs a killed run had not done
            for row in ...:
                out.write(row)           # a JSON object, or a line of text (text=True)
            out.flush()                  # flushed and fsynced: a kill loses no finished batch
    # OUTPUT.partial -> OUTPUT, in one rename; with no OUTPUT the rows go to standard output

* A second process on the same OUTPUT is refused (an exclusive lock on OUTPUT.partial, taken
  before anything is read or changed), so two runs never interleave into one file.
* A rerun keeps the rows a killed run wrote (`ResumableJsonl.rows`, `BatchOutput.done`); the caller
  skips those inputs. Half a line left by a kill is dropped; a partial file whose complete lines are
  not JSON objects (of a JSON-lines output) is refused and left as it is, and so is one with more rows
  than the input or, where the caller can tell (`same`), rows of another input.
* An output that is a directory, or cannot be created or written, is an InputError naming it.
"""

import contextlib
import json
import os
import sys

from captioner.errors import InputError


class ResumableJsonl:
    """OUTPUT.partial, locked; `rows` holds what a killed run wrote (JSON objects, or with ``text`` lines)."""

    def __init__(self, output, text=False):
        self.output = os.fspath(output)
        self.partial = self.output + ".partial"
        self.text = bool(text)
        self.file = None
        self.rows = []

    def __enter__(self):
        for path in (self.output, self.partial):
            if os.path.isdir(path):
                raise InputError(f"{path}: is a directory; give a file name for --output")
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.output)), exist_ok=True)
            self.file = open(self.partial, "a+b")  # never truncates: a locked-out run changes nothing
        except OSError as exc:
            raise InputError(f"{self.partial}: cannot write ({exc.strerror or exc})") from None
        try:
            _lock(self.file, self.output)
            self.rows = self._read()
        except BaseException:
            self.file.close()
            raise
        return self

    def _read(self):
        self.file.seek(0)
        data = self.file.read()
        cut = data.rfind(b"\n") + 1
        rows = []
        if self.text:
            try:
                rows = data[:cut].decode("utf-8").split("\n")[:-1]
            except UnicodeDecodeError:
                raise InputError(f"{self.partial}: not UTF-8 text, so not an earlier run's output; this file was "
                                 f"left unchanged: move it away or choose another --output") from None
            self.file.truncate(cut)  # half a line left by a kill: that input is done again
            self.file.seek(0, os.SEEK_END)
            return rows
        for lineno, line in enumerate(data[:cut].splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                row = None
            if not isinstance(row, dict):
                raise InputError(f"{self.partial}:{lineno}: not a row of an earlier run; this file was left "
                                 f"unchanged: move it away or choose another --output")
            rows.append(row)
        tail = data[cut:]
        if tail:
            if not tail.startswith(b"{"):
                raise InputError(f"{self.partial}: ends in a line that is not a row of an earlier run; this file "
                                 f"was left unchanged: move it away or choose another --output")
            self.file.truncate(cut)  # half a row left by a kill: that input is done again
        self.file.seek(0, os.SEEK_END)
        return rows

    def mismatch(self, index, what):
        """The InputError for a resumed row `index` (0-based) that is not the one for `what`."""
        return InputError(f"{self.partial}:{index + 1}: this row is not the one for {what}: the partial output "
                          f"is from another input; move it away or choose another --output")

    def write(self, rows):
        self.file.write(_lines(rows, self.text).encode("utf-8"))
        self.file.flush()
        os.fsync(self.file.fileno())

    def finish(self):
        """Rename OUTPUT.partial to OUTPUT (still under the lock), in one step."""
        self.file.flush()
        os.fsync(self.file.fileno())
        try:
            os.replace(self.partial, self.output)
        except OSError as exc:
            raise InputError(f"{self.output}: cannot write ({exc.strerror or exc}); the rows are kept in "
                             f"{self.partial}") from None

    def __exit__(self, *exc):
        if self.file is not None:
            if exc[0] is not None and os.path.exists(self.partial) and os.fstat(self.file.fileno()).st_size == 0:
                os.remove(self.partial)  # failed before its first row: nothing to resume, nothing left behind
            self.file.close()
            self.file = None
        return False


OUTPUT_HELP = ("output file (default: stdout); rows go to OUTPUT.partial as they are done, renamed to OUTPUT at the "
               "end: a rerun after a kill goes on from there")


class BatchOutput:
    """What `batch_output` yields: `todo` (the inputs still to do), `done` (the rows a killed run wrote),
    `write(row)` and `flush()` (after each batch)."""

    def __init__(self, todo, done, out=None, text=False):
        self.todo, self.done, self.out, self.text = todo, done, out, text
        self.pending = []

    def write(self, row):
        self.pending.append(row)

    def flush(self):
        if self.out is not None:
            self.out.write(self.pending)
        else:
            sys.stdout.write(_lines(self.pending, self.text))
            sys.stdout.flush()
        self.pending = []


@contextlib.contextmanager
def batch_output(output, inputs, text=False, same=None, what="the input"):
    """The batch commands' output (module docstring): OUTPUT (resumable) or, when None, standard output.
    `inputs`: one per output row, in order; `same(row, input)`: whether a resumed row is that input's."""
    inputs = list(inputs)
    if not output:
        sink = BatchOutput(inputs, [], text=text)
        yield sink
        sink.flush()
        return
    with ResumableJsonl(output, text=text) as out:
        done = out.rows
        if len(done) > len(inputs):
            raise out.mismatch(len(inputs), f"{what} (it has {len(inputs)} rows)")
        for k, (row, item) in enumerate(zip(done, inputs)):
            if same is not None and not same(row, item):
                raise out.mismatch(k, f"{what}, row {k + 1}")
        if done:
            print(f"{out.partial}: resuming after {len(done)} rows", file=sys.stderr)
        sink = BatchOutput(inputs[len(done):], done, out, text)
        yield sink
        sink.flush()
        out.finish()


def _lines(rows, text):
    """Rows as output lines: JSON objects, or (``text``) one line of text each."""
    return "".join((row.replace("\n", " ") if text else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows)


def _lock(f, output):
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise InputError(f"{output}: another captioner process is writing this output (its .partial file is "
                         f"locked); wait for it, or give this run another --output") from None
