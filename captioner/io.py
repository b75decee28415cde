"""Atomic file writes and JSON, shared by every package: a crash never leaves a half-written
checkpoint, model or report."""

import contextlib
import json
import os
import tempfile


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Yield a temporary path beside `path`; on success it replaces `path` in one rename.

    The temporary file is named `.tmp-<name>.<pid>-<random><suffix>`: a process killed before
    the rename leaves it behind, and the next write of the same `path` removes the ones whose
    process is gone (never one a live process may still be writing)."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if suffix is None:  # keep the extension: some writers (Keras) insist on it
        suffix = next((s for s in (".weights.h5", ".keras", ".h5", ".json", ".jsonl", ".png", ".csv")
                       if path.endswith(s)), "")
    stem = f".tmp-{os.path.basename(path)[:100]}."
    remove_stale_temporaries(directory, stem)
    fd, tmp = tempfile.mkstemp(prefix=f"{stem}{os.getpid()}-", suffix=suffix or ".tmp", dir=directory)
    os.close(fd)
    os.unlink(tmp)  # writers that refuse to overwrite get a fresh name
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def remove_stale_temporaries(directory, stem):
    """Remove files `<stem><pid>-*` in `directory` whose process no longer runs."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(stem)]
    except OSError:
        return
    for name in names:
        pid = name[len(stem):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:  # gone already, or a folder: left alone
            pass


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


@contextlib.contextmanager
def exclusive_writer(paths, flag="--model"):
    """Hold, for the whole read-modify-write of each file in `paths`, an exclusive lock that a
    second captioner process asking for one of them is refused with one line (InputError), as the
    batch commands refuse a second writer of their output.

    The lock is `flock()` on a hidden `.NAME.lock` file beside each path (not on the file itself: an
    atomic rewrite replaces its inode, which a waiting process would then lock freely). Paths are
    locked in sorted order, so two processes over the same set never deadlock; a folder where no
    lock file can be made (read-only, missing permission) is named as an InputError too."""
    from captioner.errors import InputError

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    handles = []
    try:
        for path in sorted({os.path.abspath(os.fspath(p)) for p in paths if p}):
            lock = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.lock")
            try:
                handle = open(lock, "a+b")
            except OSError as e:
                raise InputError(f"{flag} {path}: cannot be written ({e.strerror or e})") from None
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                raise InputError(f"{path}: another captioner process is changing this file now; wait for it "
                                 "and run this command again") from None
            handles.append(handle)
        yield
    finally:
        for handle in handles:
            handle.close()


def write_text(path, text):
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


def write_json(path, data):
    with atomic_path(path, ".json") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False, default=_default)
            f.write("\n")


def as_written(data):
    """`data` as `write_json` writes it and `json.load` reads it back (tuples as lists, numpy as Python)."""
    return json.loads(json.dumps(data, default=_default))


def _default(obj):
    try:
        import numpy as np
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def check_output_not_input(output, inputs, flag="--output"):
    """InputError unless writing `output` leaves every input untouched.

    `inputs` are files or folders (a folder is recursed by the command, so an `output` inside it
    would be read and then replaced). Compared by `os.path.samefile` (hard and symbolic links
    included) and by real paths; nothing happens for a missing `output` or a stdout (None/"-")."""
    from captioner.errors import InputError

    if not output or output == "-" or not os.path.exists(output):
        return
    real_output = os.path.realpath(output)
    for path in inputs:
        if not path or path == "-" or not os.path.exists(path):
            continue
        if os.path.isdir(path):
            inside = os.path.commonpath([os.path.realpath(path), real_output]) == os.path.realpath(path)
            if inside and os.path.isfile(real_output):
                raise InputError(f"{flag} {output}: lies inside the input folder {path}, whose files this "
                                 "command reads; write it elsewhere")
        elif os.path.samefile(path, output):
            raise InputError(f"{flag} {output}: is the input {path} itself; writing it would replace the "
                             "input; name another output file")


def check_writable(path, flag="--output"):
    """InputError naming `path` unless a file can be written there (its folder made if missing,
    a temporary file created and removed), checked before any work."""
    from captioner.errors import InputError

    directory = os.path.dirname(os.path.abspath(os.fspath(path)))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".tmp-probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot be written ({e.strerror or e})") from None


# byte-order marks, longest first (UTF-32-LE's starts with UTF-16-LE's)
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def user_text_bytes(raw, name):
    """A user's text file as UTF-8 bytes with "\n" line ends, for every text command alike: a
    byte-order mark dropped, UTF-16/32 with one decoded (InputError naming `name` when it does not
    decode), "\r\n" and a lone "\r" read as "\n". NUL bytes (UTF-16 without a byte-order mark, or
    not a text file) are an InputError naming the line: they would reach a model as characters."""
    from captioner.errors import InputError

    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            if encoding != "utf-8":
                try:
                    raw = raw[len(bom):].decode(encoding).encode("utf-8")
                except UnicodeError as e:
                    raise InputError(f"{name}: starts with a {encoding.upper()} byte-order mark but does not "
                                     f"decode as {encoding.upper()} ({e.reason}); save it as UTF-8") from None
            else:
                raw = raw[len(bom):]
            break
    raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise InputError(f"{name}: line {line} holds NUL bytes: UTF-16/32 text without a byte-order mark, or "
                         "not a text file; save it as UTF-8")
    return raw


def numbered_lines(path=None):
    """[(line number, text or None)] of the text file at `path` (None: standard input), for a batch
    command that reports a bad line and goes on: None for a line that is not UTF-8, the file read as
    `user_text_bytes` reads it (UTF-16/32 with a byte-order mark decoded, CRLF and CR as LF, NUL bytes
    refused), an empty file no lines. InputError naming the file when it cannot be read."""
    import sys

    from captioner.errors import InputError

    if path:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    else:
        raw = sys.stdin.buffer.read()
    raw = user_text_bytes(raw, path or "<stdin>")
    if not raw:
        return []  # an empty file has no lines (not one empty line)
    out = []
    for i, line in enumerate(raw.split(b"\n"), start=1):
        try:
            out.append((i, line.decode("utf-8")))
        except UnicodeDecodeError:
            out.append((i, None))
    if out and out[-1][1] == "" and raw.endswith(b"\n"):
        out.pop()  # the newline that ends the last line does not start another one
    return out

