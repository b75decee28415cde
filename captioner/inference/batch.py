"""Batch captioning: many image files -> one output row per image, resumable and shardable.

    report = caption_images(list_images(["photos/"]), load_captioner("model.keras"),
                            output="captions.jsonl", attention_dir="attention/")

* Images are decoded by a thread pool while the model captions the previous batch (as in
  `captioner.features.extract`); only `prefetch` batches are in memory at once.
* One row per image, `{"image": path, "caption": ..., "score": ...}` or
  `{"image": path, "error": ...}` (a broken file is reported and skipped, the rest captioned),
  as JSON lines (default) or CSV. Rows are appended, flushed and fsynced after every batch,
  so a kill loses at most the batch in flight.
* A rerun with the same output skips images already present (resume without duplicates); an
  incomplete last line left by a kill is dropped and that image captioned again.
* `shard=(i, n)`: each image belongs to exactly one of n shards, chosen by a stable hash of its
  path, so n hosts given the same PATHS can each run one shard into their own output.
* `attention_dir`: one PNG per image, the caption's words each over its attention map; the
  file name is the image's stem plus a hash of its absolute path (two `img.jpg` in different
  folders never collide) and the row names it under "attention".
"""

import collections
import concurrent.futures
import csv
import dataclasses
import hashlib
import io
import json
import logging
import os
import re
import sys
import time

import numpy as np
from PIL import Image
from tqdm.auto import tqdm

from captioner.errors import ImageError, InputError

log = logging.getLogger(__name__)

FORMATS = ("jsonl", "csv")
CSV_FIELDS = ("image", "caption", "score", "error", "attention")
DISPLAY_MAX_SIDE = 448  # pixels kept per image for attention figures


@dataclasses.dataclass
class CaptionReport:
    selected: int = 0          # images in this run's shard
    captioned: int = 0         # captioned in this run
    skipped: int = 0           # already in the output (captioned or failed before)
    failed: list = dataclasses.field(default_factory=list)  # [(path, message)] failed in this run
    previous_errors: int = 0   # images of this shard recorded as failed by an earlier run
    seconds: float = 0.0

    @property
    def images_per_second(self):
        return self.captioned / self.seconds if self.seconds else 0.0

    @property
    def exit_status(self):
        """1 when any image of the shard has an error row (this run or an earlier one), else 0."""
        return 1 if self.failed or self.previous_errors else 0


# ----------------------------------------------------------------------------- model


def load_captioner(path):
    """Load an `ImageCaptioner` .keras file (safe mode on); InputError naming the file if it can't."""
    # registers the Keras classes a saved captioner refers to
    import captioner.layers.image_preprocessing  # noqa: F401
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file

    return load_model_file(path, ImageCaptioner, "an image captioner (ImageCaptioner)")


# ----------------------------------------------------------------------------- sharding


def parse_shard(text):
    """Parse "I/N" (0 <= I < N) into (I, N); InputError otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match:
        raise InputError(f"--shard {text!r}: expected I/N, e.g. 0/4 (shards are numbered 0..N-1)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise InputError(f"--shard {text!r}: need N >= 1 and 0 <= I < N (shards are numbered 0..N-1)")
    return index, count


def shard_of(path, count):
    """The shard (0..count-1) of `path`: a stable hash of the path as listed, same on every host."""
    key = os.fspath(path).replace(os.sep, "/").encode("utf-8", "surrogateescape")
    return int.from_bytes(hashlib.sha1(key).digest()[:8], "big") % count


def select_shard(paths, shard):
    """The paths of `shard` = (index, count) in sorted order; all paths when shard is None."""
    paths = sorted(os.fspath(p) for p in paths)
    if shard is None:
        return paths
    index, count = parse_shard(shard) if isinstance(shard, str) else (int(shard[0]), int(shard[1]))
    if count < 1 or not 0 <= index < count:
        raise InputError(f"shard {index}/{count}: need N >= 1 and 0 <= I < N")
    return [p for p in paths if shard_of(p, count) == index]


# ----------------------------------------------------------------------------- output files


def output_format(output, fmt=None):
    """`fmt` if given, else "csv" for a .csv output, else "jsonl"."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(f"--format {fmt!r}: choose from {', '.join(FORMATS)}")
        return fmt
    return "csv" if output and os.fspath(output).lower().endswith(".csv") else "jsonl"


def attention_png_name(path):
    """File name of an image's attention PNG: its stem plus a hash of its absolute path."""
    absolute = os.path.abspath(os.fspath(path))
    digest = hashlib.sha1(absolute.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    stem = re.sub(r"[^\w.-]+", "_", os.path.splitext(os.path.basename(absolute))[0])[:80] or "image"
    return f"{stem}-{digest}.png"


def _key(path):
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def _is_row_prefix(tail, fmt, first_line):
    """Whether `tail` (bytes after the last newline) can be the start of a row this command
    writes, cut by a kill: a JSON row starts with `{"image": "`; a CSV file's first line is its
    header, and a later CSV row starts with the image path (anything)."""
    if fmt == "jsonl":
        start = b'{"image": "'
    elif first_line:
        start = ",".join(CSV_FIELDS).encode()
    else:
        return True
    return tail.startswith(start) or start.startswith(tail)


def _complete_row(tail):
    """The row dict if `tail` is a whole JSON row with an "image", else None."""
    try:
        row = json.loads(tail.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return row if isinstance(row, dict) and isinstance(row.get("image"), str) else None


def read_output(path, fmt):
    """Rows of an existing output file, as dicts; an incomplete last line (a kill mid-write)
    is then dropped.

    The whole file is checked before anything is changed: when a complete line is not a row
    this command writes, or the incomplete tail cannot be the start of one (another file given
    as --output by mistake), InputError names the file and line and the file is left exactly
    as it was.
    """
    path = os.fspath(path)
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    cut = data.rfind(b"\n") + 1  # bytes [cut:] are an incomplete last line
    tail = data[cut:]
    question = "is this a captioner output file? It was left unchanged"
    rows = []
    try:
        text = data[:cut].decode("utf-8")
        tail.decode("utf-8", errors="ignore")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason}); {question}") from None
    if fmt == "jsonl":
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not a JSON line ({exc.msg}); {question}") from None
            if not isinstance(row, dict) or not isinstance(row.get("image"), str):
                raise InputError(f"{path}:{lineno}: a row without an \"image\" field; {question}")
            rows.append(row)
    elif text:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is not None and tuple(header) != CSV_FIELDS:
            raise InputError(f"{path}:1: CSV header is {header}, expected {list(CSV_FIELDS)}; {question}")
        for record in reader:
            if not record:
                continue
            if len(record) != len(CSV_FIELDS):
                raise InputError(f"{path}:{reader.line_num}: {len(record)} fields, expected {len(CSV_FIELDS)}; "
                                 f"{question}")
            rows.append({k: v for k, v in zip(CSV_FIELDS, record) if v != ""})
    if tail and fmt == "jsonl" and _complete_row(tail) is not None:
        rows.append(_complete_row(tail))  # a whole row that only lacks its newline: kept
        with open(path, "ab") as f:
            f.write(b"\n")
        return rows
    if tail:
        if not _is_row_prefix(tail, fmt, first_line=not text):
            raise InputError(f"{path}:{text.count(chr(10)) + 1}: an unfinished line that is not the start of "
                             f"a row this command writes; {question}")
        with open(path, "r+b") as f:
            f.truncate(cut)
        log.warning("%s: dropped an incomplete last line (%d bytes) left by an interrupted run; "
                    "that image is captioned again", path, len(tail))
    return rows


def _rewrite_without(path, fmt, drop_keys):
    """Atomically rewrite `path` without the error rows of images in `drop_keys`."""
    from captioner.io import atomic_path

    kept = [r for r in read_output(path, fmt) if not ("error" in r and _key(r["image"]) in drop_keys)]
    with atomic_path(path, ".tmp") as tmp:
        with open(tmp, "wb") as f:
            f.write(_encode_rows(kept, fmt, header=True))


def _encode_rows(rows, fmt, header=False):
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if header:
        writer.writerow(CSV_FIELDS)
    for r in rows:
        writer.writerow(["" if r.get(k) is None else r[k] for k in CSV_FIELDS])
    return buf.getvalue().encode("utf-8")


class _Sink:
    """Appends encoded rows to a locked file (flush + fsync per batch) or writes them to a text stream."""

    def __init__(self, output, fmt, stream=None):
        self.fmt = fmt
        self.output = os.fspath(output) if output is not None else None
        self.stream = stream
        self.file = None
        self._header = fmt == "csv"  # for a stream: before the first row
        if self.output is not None:
            if os.path.isdir(self.output):
                raise InputError(f"{self.output}: is a directory; give a file name for --output")
            try:
                os.makedirs(os.path.dirname(os.path.abspath(self.output)), exist_ok=True)
            except OSError as exc:
                raise InputError(f"{self.output}: cannot create its folder ({exc.strerror or exc})") from None
            self.reopen()

    def reopen(self):
        """(Re)open the output for appending under an exclusive lock (after it was replaced)."""
        if self.file is not None:
            self.file.close()
        try:
            self.file = open(self.output, "ab")
        except OSError as exc:
            raise InputError(f"{self.output}: cannot write ({exc.strerror or exc})") from None
        _lock(self.file, self.output)

    def write(self, rows):
        if self.file is not None:
            header = self.fmt == "csv" and os.fstat(self.file.fileno()).st_size == 0
            data = _encode_rows(rows, self.fmt, header=header)
            self.file.write(data)
            self.file.flush()
            os.fsync(self.file.fileno())
        else:
            data = _encode_rows(rows, self.fmt, header=self._header)
            self._header = False
            stream = self.stream or sys.stdout
            stream.write(data.decode("utf-8"))
            stream.flush()

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


def _lock(f, name):
    """Refuse a second process appending to the same output (rows would interleave)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise InputError(f"{name}: another captioning process is writing this file; "
                         f"give each process its own --output (e.g. one per --shard)") from None


# ----------------------------------------------------------------------------- decoding


def decode_image(path, size, keep_display=False, data=None):
    """(pixels (h, w, 3) uint8 at the model size, display image or None, error or None).

    `data`: the file's bytes when they were read already (a URI read through another
    filesystem); `path` then only names the image in messages."""
    from captioner.features.images import model_pixels, open_image

    try:
        image = open_image(path) if data is None else open_image(data, name=path)
        pixels = model_pixels(image, size)
        display = None
        if keep_display:
            image.thumbnail((DISPLAY_MAX_SIDE, DISPLAY_MAX_SIDE), Image.BILINEAR)
            display = np.asarray(image, dtype=np.uint8)
        return pixels, display, None
    except ImageError as exc:
        return None, None, exc.reason
    except Exception as exc:  # a batch job reports a file it cannot read and goes on
        log.debug("unexpected error reading %s", path, exc_info=True)
        return None, None, f"cannot read image: {type(exc).__name__}: {exc}"


def _clean(text):
    return " ".join(str(text).split())  # one line: no newlines inside a CSV/JSON row


def caption_row(path, cap):
    """The output row of a captioned image (`cap` a `Caption`)."""
    row = {"image": path, "caption": cap.text, "score": round(float(cap.score), 5)}
    if getattr(cap, "style", None):  # JSON lines only (the CSV columns are fixed): a several-corpora captioner's
        row["style"] = cap.style
    if getattr(cap, "objects", None):
        row["objects"] = cap.objects
    return row


def error_row(path, message):
    """The output row of an image that could not be captioned, the message on one line."""
    return {"image": path, "error": _clean(message)}


# ----------------------------------------------------------------------------- engine


def caption_images(paths, model, *, beam_size=None, alpha=None, max_length=None, batch_size=32,
                   output=None, fmt=None, attention_dir=None, shard=None, workers=None, prefetch=2,
                   progress=True, retry_errors=False, stream=None, objects=True):
    """Caption image files with `model` (an ImageCaptioner) and write one row per image.

    Args:
        paths: image files (expand folders/globs first with `captioner.features.images.list_images`).
        beam_size, alpha, max_length: decoding settings (None: the model's own).
        objects: tag each image with the backbone's ImageNet head and let confident tags
            constrain the caption (`captioner.tagging`); rows list them as "objects".
        batch_size: images per model call.
        output: file to append rows to (created; resumed when it exists), or None to write
            rows to `stream` (default stdout) with no resume.
        fmt: "jsonl" or "csv" (default: from the output's extension, else jsonl).
        attention_dir: folder for one attention PNG per image (attention models only).
        shard: (index, count) or "I/N": caption only this shard of the sorted paths.
        workers: image decoding threads; prefetch: batches decoded ahead of the model.
        retry_errors: caption again the images an earlier run recorded as failed (their
            error rows are removed from the output first).

    Returns a CaptionReport; its `exit_status` is 1 when any image of the shard failed.
    """
    use_objects = bool(objects) and getattr(model, "can_tag_objects", False)
    if batch_size < 1:
        raise InputError(f"batch size must be >= 1, got {batch_size}")
    fmt = output_format(output, fmt)
    if attention_dir is not None and model.decoder.feature != "grid":
        raise InputError(f"--attention-dir needs a soft-attention model; this model is of kind "
                         f"{model.decoder.kind!r} (one pooled vector, no attention map)")
    selected = select_shard(paths, shard)
    report = CaptionReport(selected=len(selected))
    wanted = {_key(p) for p in selected}

    sink = _Sink(output, fmt, stream=stream)  # locks the output before reading it
    try:
        done = {}
        if output is not None:
            rows = read_output(output, fmt)
            errors = {_key(r["image"]) for r in rows if "error" in r} & wanted
            if retry_errors and errors:
                log.info("%s: removing %d error rows to caption those images again", output, len(errors))
                _rewrite_without(output, fmt, errors)
                sink.reopen()
                rows = [r for r in rows if not ("error" in r and _key(r["image"]) in errors)]
            for r in rows:
                done[_key(r["image"])] = "error" not in r
        todo = [p for p in selected if _key(p) not in done]
        report.skipped = len(selected) - len(todo)
        report.previous_errors = sum(1 for p in selected if done.get(_key(p)) is False)
        if report.skipped:
            log.info("%s: %d of %d images already done, skipping them", output, report.skipped, len(selected))
        if attention_dir is not None:
            os.makedirs(attention_dir, exist_ok=True)
        _run(todo, model, sink, report, beam_size=beam_size, alpha=alpha, max_length=max_length,
             batch_size=batch_size, attention_dir=attention_dir, workers=workers, prefetch=prefetch,
             progress=progress, use_objects=use_objects)
    finally:
        sink.close()
    return report


def _run(todo, model, sink, report, *, beam_size, alpha, max_length, batch_size, attention_dir, workers,
         prefetch, progress, use_objects=False):
    """The decode -> caption -> write loop over `todo`; fills `report`."""
    size = model.input_size
    workers = workers or min(8, (os.cpu_count() or 2) * 2)
    batches = [todo[i:i + batch_size] for i in range(0, len(todo), batch_size)]
    width = min(batch_size, len(todo))  # images per model call
    bar = tqdm(total=len(todo), unit="img", desc="caption", disable=not progress, dynamic_ncols=True,
               file=sys.stderr)
    start = time.perf_counter()
    try:
        # three stages overlap: the thread pool decodes JPEGs `prefetch` batches ahead, one
        # thread runs the backbone on the next batch, and this thread runs the beam search
        # on the current one (both TF calls release the GIL; the beam search's many small
        # ops leave cores idle that the backbone's convolutions fill)
        with concurrent.futures.ThreadPoolExecutor(workers) as pool, \
                concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="backbone") as encoder:
            pending = collections.deque()  # (batch, decode futures)
            encoding = collections.deque()  # (batch, decoded, ok, features future or None)

            def submit(batch):
                pending.append((batch, [pool.submit(decode_image, p, size, attention_dir is not None)
                                        for p in batch]))

            def encode_next():
                nonlocal next_batch
                batch, futures = pending.popleft()
                if next_batch < len(batches):
                    submit(batches[next_batch])
                    next_batch += 1
                decoded = [f.result() for f in futures]
                ok = [i for i, (pixels, _, _) in enumerate(decoded) if pixels is not None]
                features = None
                if ok:
                    # always `width` images per call (zero images pad a short batch), so the
                    # compiled backbone and beam search are traced once per run, not per batch size
                    pixels = np.zeros((max(width, len(ok)), size[0], size[1], 3), np.uint8)  # (width, h, w, 3)
                    for j, i in enumerate(ok):
                        pixels[j] = decoded[i][0]
                    features = encoder.submit(model.encode, pixels)
                encoding.append((batch, decoded, ok, features, pixels if ok else None))

            for batch in batches[:prefetch]:
                submit(batch)
            next_batch = prefetch
            while pending or encoding:
                while pending and len(encoding) < 2:  # the next batch's backbone runs meanwhile
                    encode_next()
                batch, decoded, ok, features, pixels = encoding.popleft()
                captions = {}
                if ok:
                    out = model.generate_from_features(features.result(), beam_size, alpha, max_length,
                                                       objects=use_objects, pixels=pixels)
                    out = {k: v[:len(ok)] for k, v in out.items()}
                    captions = dict(zip(ok, model.decode_outputs(out)))
                figures = {}
                if attention_dir is not None:
                    figures = {i: pool.submit(_save_attention, attention_dir, batch[i], decoded[i][1], cap,
                                              *word_attention(model, out, b))
                               for b, (i, cap) in enumerate(captions.items())}
                rows = []
                for i, path in enumerate(batch):
                    if i in captions:
                        cap = captions[i]
                        row = caption_row(path, cap)
                        if i in figures:
                            row["attention"] = figures[i].result()  # PNG on disk before its row
                        rows.append(row)
                        report.captioned += 1
                    else:
                        rows.append(error_row(path, decoded[i][2]))
                        message = rows[-1]["error"]
                        report.failed.append((path, message))
                        log.warning("skipped %s: %s", path, message)
                sink.write(rows)
                bar.update(len(batch))
                if report.failed:
                    bar.set_postfix(failed=len(report.failed))
    finally:
        report.seconds = time.perf_counter() - start
        bar.close()


def word_attention(model, out, b):
    """(words, maps (len(words) + 1 or len(words), h, w)) of the best beam of item `b` of `out`.

    Built from the raw token ids so each map stays with its word: steps whose token is
    <pad> or <start> (which a barely trained model can emit, and the caption text drops)
    are dropped with their maps; the <end> step's map is kept last when there is one.
    """
    from captioner.text.vocabulary import END_ID, PAD_ID, START_ID

    gh, gw = model.grid_shape
    steps = int(out["lengths"][b, 0])
    ids = out["tokens"][b, 0, :steps].tolist()
    maps = out["attention"][b, 0, :steps].reshape(steps, gh, gw)  # (steps, h, w)
    words, keep = [], []
    for t, token_id in enumerate(ids):
        if token_id in (PAD_ID, START_ID):
            continue
        keep.append(t)
        if token_id == END_ID:
            break
        words.append(model.vocabulary.id_to_token(token_id))
    return words, maps[keep]


def _save_attention(directory, path, display, cap, words, maps):
    from captioner.visualize.attention_overlay import save_caption_attention_png

    target = os.path.join(directory, attention_png_name(path))
    title = f"{cap.text}   (score {cap.score:.3f})" if words else "(empty caption)"
    return save_caption_attention_png(target, display, words, maps, title=title)
