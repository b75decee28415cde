"""A JSON-lines output written row by row to `OUTPUT.partial`, locked, resumed after a kill and
renamed to `OUTPUT` when complete (the `ask` and `video` commands; `caption` appends to its
output itself, see `captioner.inference.batch`).

    with ResumableJsonl(args.output) as out:
        done = out.rows          # rows a killed run had written, in order (checked by the caller)
        for batch in ...:
            out.write(rows)      # flushed and fsynced: a kill loses no finished row
        out.finish()             # OUTPUT.partial -> OUTPUT, in one rename

* A second process on the same OUTPUT is refused (an exclusive lock on OUTPUT.partial, taken
  before anything is read or changed), so two runs never interleave into one file.
* A rerun keeps the rows a killed run wrote: `rows` hands them back, the caller skips those
  inputs. Half a line left by a kill is dropped; a partial file whose complete lines are not
  JSON objects is refused and left as it is.
* An output that is a directory, or cannot be created or written, is an InputError naming it.
"""

import json
import os

from captioner.errors import InputError


class ResumableJsonl:
    def __init__(self, output):
        self.output = os.fspath(output)
        self.partial = self.output + ".partial"
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
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
        self.file.write(data)
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
            self.file.close()
            self.file = None
        return False


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
