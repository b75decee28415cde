"""Batch captioning on Apache Beam: image files or URIs -> JSON lines shards, by RunInference.

    captioner pipeline caption --input 'photos/**.jpg' --output out/captions [--model M] \\
        [--runner DirectRunner | PrismRunner | DataflowRunner | FlinkRunner | SparkRunner ...]

    rows = build_caption_pipeline(pipeline, ["photos/*.jpg"], "out/captions", "model.keras")

The stages, each a Beam transform (so any runner spreads them over its workers):

* **Match**: every input glob (a folder: its image files, recursed) is matched through
  `apache_beam.io.filesystems`, so local paths and every filesystem Beam has (gs://, s3://,
  hdfs://, ...) work alike; a path matched by two inputs is captioned once. The distinct
  step is a shuffle, so the files of one glob are spread over the workers.
* **Read**: each file's bytes (at most `MAX_IMAGE_BYTES`); a file that cannot be read is an
  error row.
* **Caption**: `RunInference` with `ImageCaptionerModelHandler`: the `.keras` file (local or on
  any Beam filesystem) is loaded once per worker process and shared by its threads (Beam's
  `Shared` handle), batches come from `BatchElements` (`min_batch_size`..`max_batch_size`
  images, Beam adapts the size to the time a batch takes). Each image is decoded and resized
  by the code of `captioner caption` (`captioner.inference.batch.decode_image`), so both give
  the same pixels and the same captions; an image that does not decode is an error row, and
  a batch whose model call raises becomes error rows for its images (RunInference's
  dead-letter output). A bad image never fails the pipeline.
* **Write**: one JSON line per input file, `{"image", "caption", "score"}` or
  `{"image", "error"}` (the rows of `captioner caption`), in shards
  `PREFIX-SSSSS-of-NNNNN.jsonl`, each written to a temporary file and renamed into place by
  Beam's finalize step.
"""

import concurrent.futures
import contextlib
import glob
import json
import logging
import os
import shutil
import tempfile
import zipfile

import apache_beam as beam
import numpy as np
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.ml.inference.base import ModelHandler, RunInference

from captioner.errors import InputError
from captioner.features.images import IMAGE_EXTENSIONS
from captioner.features.paths import not_a_regular_file
from captioner.inference.batch import caption_row, decode_image, error_row

log = logging.getLogger(__name__)

NAMESPACE = "captioner"
MAX_IMAGE_BYTES = 64 * 1024 * 1024  # a larger file is an error row, not read into a worker's memory
DEFAULT_SUFFIX = ".jsonl"


# ----------------------------------------------------------------------------- inputs


def is_local(path):
    """Whether Beam reads `path` from the local filesystem (no scheme, or file://)."""
    return FileSystems.get_scheme(path) in (None, "file")


@contextlib.contextmanager
def output_run(output):
    """Around one run writing the local output prefix `output`: hold ``PREFIX.lock`` (a second run
    on the same prefix is refused), and remove the ``beam-temp-NAME-*`` folders that Beam's
    WriteToText leaves beside the output when a run is killed. A remote prefix: nothing."""
    if not is_local(output):
        yield
        return
    path = os.path.abspath(output[len("file://"):] if output.startswith("file://") else output)
    folder, name = os.path.dirname(path), os.path.basename(path)
    lock_path = path + ".lock"
    try:
        os.makedirs(folder, exist_ok=True)
        handle = open(lock_path, "a")
    except OSError as e:
        raise InputError(f"--output {output}: cannot be written ({e.strerror or e})") from None
    with handle:
        try:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except OSError:
            raise InputError(f"--output {output}: another pipeline is writing this prefix ({lock_path} is "
                             "locked); wait for it, or give this run another --output") from None
        for stale in glob.glob(os.path.join(glob.escape(folder), f"beam-temp-{glob.escape(name)}-*")):
            log.info("removing %s, left by a run that did not finish", stale)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(lock_path)


def input_patterns(inputs):
    """[(glob, folder)] for the --input values: a local folder or a URI ending in "/" is
    matched recursively (`DIR/**`, image extensions only, as `captioner caption` lists
    folders); anything else is a glob whose every match is captioned, whatever its name.

    InputError naming the input when it matches nothing (checked here, before any work)."""
    patterns = []
    for value in inputs:
        value = os.fspath(value)
        folder = value.endswith("/") or (is_local(value) and os.path.isdir(value))
        pattern = FileSystems.join(value.rstrip("/"), "**") if folder else value
        try:
            found = FileSystems.match([pattern], limits=[None if folder else 1])[0].metadata_list
        except Exception as exc:  # BeamIOError for an unknown scheme, a missing bucket, ...
            raise InputError(f"--input {value}: cannot list it ({type(exc).__name__}: {exc})") from None
        if folder:
            found = [m for m in found if has_image_extension(m.path)]
        if not found:
            what = "no image files (JPEG, PNG, WebP, GIF, BMP, TIFF by extension) in this folder" if folder \
                else "matches no file"
            raise InputError(f"--input {value}: {what}")
        patterns.append((pattern, folder))
    return patterns


def has_image_extension(path):
    return path.lower().endswith(IMAGE_EXTENSIONS)


def count_inputs(patterns):
    """The number of distinct files the patterns match (for the progress bar of a local run)."""
    paths = set()
    for pattern, folder in patterns:
        for m in FileSystems.match([pattern])[0].metadata_list:
            if not folder or has_image_extension(m.path):
                paths.add(m.path)
    return len(paths)


UNNAMEABLE = -1  # the size given to a match whose name is not UTF-8 (Beam's coders would crash on it)
NOT_REGULAR = -2  # ... to a local FIFO, socket or device (never opened)


def path_and_size(match):
    """A file match -> (path, size); a name that is not valid UTF-8 (a byte such as 0xff, which
    Python holds as a surrogate) -> (the name with backslash escapes, UNNAMEABLE): an error row
    for that file, the others go on."""
    try:
        match.path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(match.path).decode("utf-8", "backslashreplace"), UNNAMEABLE
    if is_local(match.path) and not_a_regular_file(match.path):  # a FIFO would block its worker forever
        return match.path, NOT_REGULAR
    return match.path, match.size_in_bytes


class ReadImageFiles(beam.DoFn):
    """(path, size) -> (path, bytes); a file too large or unreadable -> an error row on the
    `errors` output."""

    ERRORS = "errors"

    def process(self, element):
        path, size = element
        if size == UNNAMEABLE:
            yield beam.pvalue.TaggedOutput(self.ERRORS, error_row(
                path, "the file name is not valid UTF-8 (shown with backslash escapes); rename the file"))
            return
        if size == NOT_REGULAR:
            yield beam.pvalue.TaggedOutput(self.ERRORS, error_row(path, not_a_regular_file(path) or "not a regular file"))
            return
        if size is not None and size > MAX_IMAGE_BYTES:
            yield beam.pvalue.TaggedOutput(self.ERRORS, error_row(
                path, f"file too large ({size / 2**20:.1f} MB; images of at most {MAX_IMAGE_BYTES >> 20} MB are read)"))
            return
        try:
            with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
                data = f.read(MAX_IMAGE_BYTES + 1)
        except Exception as exc:  # a batch job reports the file it cannot read and goes on
            yield beam.pvalue.TaggedOutput(self.ERRORS, error_row(path, f"cannot read: {type(exc).__name__}: {exc}"))
            return
        if len(data) > MAX_IMAGE_BYTES:
            yield beam.pvalue.TaggedOutput(self.ERRORS, error_row(
                path, f"file too large (over {MAX_IMAGE_BYTES >> 20} MB)"))
            return
        yield path, data


# ----------------------------------------------------------------------------- the model


def check_model(path):
    """InputError naming `path` unless it exists; a local file must also be a sound `.keras`
    archive of an ImageCaptioner (checked without loading it: workers load it)."""
    from captioner.models.keras_archive import check_keras_archive

    if not is_local(path):
        if not FileSystems.exists(path):
            raise InputError(f"model file {path} not found")
        return
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a model file")
    if not os.path.isfile(path):
        raise InputError(f"model file {path} not found")
    check_keras_archive(path)
    try:
        with zipfile.ZipFile(path) as z:
            config = json.loads(z.read("config.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path}: not a Keras model file ({type(exc).__name__}: {exc})") from None
    if config.get("class_name") != "ImageCaptioner":
        raise InputError(f"{path}: holds a {config.get('class_name')}, not an image captioner (ImageCaptioner)")


def local_model_file(path):
    """`path` itself when it is local; else a copy in a temporary folder (Keras reads local files)."""
    if is_local(path):
        return path[len("file://"):] if path.startswith("file://") else path
    target = os.path.join(tempfile.mkdtemp(prefix="captioner-model-"), os.path.basename(path.rstrip("/")))
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    log.info("copied %s to %s", path, target)
    return target


class ImageCaptionerModelHandler(ModelHandler):
    """RunInference's handler of a saved ImageCaptioner: examples are (path, bytes), predictions
    the output rows (`captioner caption`'s). Beam's RunInference calls `load_model` once per
    worker process (its `Shared` handle) and `run_inference` on each batch of BatchElements."""

    def __init__(self, model_path, *, beam_size=None, alpha=None, max_length=None, min_batch_size=1,
                 max_batch_size=32, decode_threads=4, progress_total=None, objects=True):
        if not 1 <= min_batch_size <= max_batch_size:
            raise InputError(f"batch sizes: need 1 <= min ({min_batch_size}) <= max ({max_batch_size})")
        super().__init__(min_batch_size=min_batch_size, max_batch_size=max_batch_size)
        self.model_path = os.fspath(model_path)
        self.beam_size, self.alpha, self.max_length = beam_size, alpha, max_length
        self.decode_threads = decode_threads
        self.objects = objects  # object tags from the backbone's ImageNet head, as `captioner caption` (captioner.tagging)
        self.progress_total = progress_total  # a local run: a tqdm bar of this many images
        self._bar = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_bar"] = None  # a bar lives in the process that draws it
        return state

    def load_model(self):
        from captioner.inference.batch import load_captioner

        log.info("loading %s", self.model_path)
        return load_captioner(local_model_file(self.model_path))

    def run_inference(self, batch, model, inference_args=None):
        size = model.input_size
        with concurrent.futures.ThreadPoolExecutor(max(1, min(self.decode_threads, len(batch)))) as pool:
            decoded = list(pool.map(lambda item: decode_image(item[0], size, data=item[1]), batch))
        ok = [i for i, (pixels, _, _) in enumerate(decoded) if pixels is not None]
        rows = {}
        if ok:
            pixels = np.stack([decoded[i][0] for i in ok])  # (images, h, w, 3) uint8
            use_objects = self.objects and model.can_tag_objects
            out = model.generate_from_features(model.encode(pixels), self.beam_size, self.alpha, self.max_length,
                                               objects=use_objects, pixels=pixels)
            for i, cap in zip(ok, model.decode_outputs(out)):
                rows[i] = caption_row(batch[i][0], cap)
        self._progress(len(batch))
        return [rows[i] if i in rows else error_row(path, decoded[i][2]) for i, (path, _) in enumerate(batch)]

    def _progress(self, n):
        if not self.progress_total:
            return
        if self._bar is None:
            import sys

            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.progress_total, unit="img", desc="caption", dynamic_ncols=True,
                             file=sys.stderr)
        self._bar.update(n)
        if self._bar.n >= self._bar.total:
            self._bar.close()

    def get_num_bytes(self, batch):
        return sum(len(data) for _, data in batch)

    def get_metrics_namespace(self):
        return NAMESPACE


# ----------------------------------------------------------------------------- the pipeline


def failed_batch_rows(bad):
    """Error rows for the images of a batch whose model call raised: `bad` is RunInference's
    dead-letter record (batch, exception info)."""
    batch, info = bad
    if isinstance(info, BaseException):
        message = f"{type(info).__name__}: {info}"
    elif isinstance(info, (tuple, list)) and len(info) >= 2:
        kind = getattr(info[0], "__name__", info[0])
        message = f"{kind}: {info[1]}"
    else:
        message = str(info)
    return [error_row(path, f"captioning failed: {message}") for path, _ in batch]


class CountRows(beam.DoFn):
    """Counts the rows (Beam metrics `captioner/captioned` and `captioner/failed`) and passes them on."""

    def setup(self):
        self.captioned = beam.metrics.Metrics.counter(NAMESPACE, "captioned")
        self.failed = beam.metrics.Metrics.counter(NAMESPACE, "failed")

    def process(self, row):
        (self.failed if "error" in row else self.captioned).inc()
        yield row


def to_json_line(row):
    return json.dumps(row, ensure_ascii=False)


def build_caption_pipeline(pipeline, inputs, output, model_path, *, beam_size=None, alpha=None, max_length=None,
                           min_batch_size=1, max_batch_size=32, num_shards=0, suffix=DEFAULT_SUFFIX,
                           decode_threads=4, progress_total=None, objects=True):
    """Add the captioning stages to `pipeline` (a `beam.Pipeline`): files matched by `inputs`
    (globs or folders) -> rows -> `output`-SSSSS-of-NNNNN`suffix`. Returns the rows PCollection.

    Raises InputError before building anything when an input matches nothing or the model
    file is missing (or, locally, not an image captioner)."""
    check_model(model_path)
    patterns = input_patterns(inputs)
    handler = ImageCaptionerModelHandler(
        model_path, beam_size=beam_size, alpha=alpha, max_length=max_length, min_batch_size=min_batch_size,
        max_batch_size=max_batch_size, decode_threads=decode_threads, progress_total=progress_total, objects=objects)
    matched = []
    for k, (pattern, folder) in enumerate(patterns):
        files = pipeline | f"Match{k}" >> fileio.MatchFiles(pattern)
        if folder:
            files = files | f"ImageExtensions{k}" >> beam.Filter(lambda m: has_image_extension(m.path))
        matched.append(files | f"PathSize{k}" >> beam.Map(path_and_size))
    files = (matched | "AllInputs" >> beam.Flatten()) if len(matched) > 1 else matched[0]
    read = (files
            | "Distinct" >> beam.Distinct()  # also a shuffle: the files of one glob spread over the workers
            | "Read" >> beam.ParDo(ReadImageFiles()).with_outputs(ReadImageFiles.ERRORS, main="images"))
    captioned, dead_letters = read.images | "Caption" >> RunInference(handler).with_exception_handling()
    failed = dead_letters.failed_inferences | "FailedBatches" >> beam.FlatMap(failed_batch_rows)
    rows = ((captioned, read[ReadImageFiles.ERRORS], failed) | "Rows" >> beam.Flatten()
            | "Count" >> beam.ParDo(CountRows()))
    _ = (rows
         | "JSON" >> beam.Map(to_json_line)
         | "Write" >> beam.io.WriteToText(os.fspath(output), file_name_suffix=suffix, num_shards=num_shards))
    return rows


def counters(result):
    """{"captioned": n, "failed": m} from a finished pipeline's metrics (None where the runner
    reports none)."""
    from apache_beam.metrics.metric import MetricsFilter

    out = {"captioned": None, "failed": None}
    try:
        found = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]
    except Exception:  # a runner without metrics support
        return out
    if not found:  # every run has rows (an input that matches nothing is refused): no metrics
        return out
    out = {"captioned": 0, "failed": 0}  # a counter never incremented is not reported
    for counter in found:
        name = counter.key.metric.name
        if name in out:
            value = counter.committed if counter.committed is not None else counter.attempted
            out[name] += value or 0
    return out
