"""Read PyTorch state-dict files without torch and without running pickle code.

A `.pth` file is a pickle whose tensors point at raw storages. We unpickle it with a
restricted unpickler that admits exactly the globals needed to rebuild tensors and an
OrderedDict; any other global (``os.system``, ``builtins.eval``, ...) raises
`WeightsError`, so a malicious file cannot execute anything. Both layouts are read:

* the legacy stream (torch < 1.6): magic, protocol, sys-info pickles, the state dict
  pickle, a list of storage keys, then each storage as int64 element count + raw bytes;
* the zip archive (torch >= 1.6): ``<root>/data.pkl`` plus one ``<root>/data/<key>`` file
  per storage.

Nothing in the file is trusted to be consistent (issue 23): every storage's bytes must be
exactly its declared element count, every tensor view (offset, sizes, strides) must lie inside
its storage and hold no more elements than it, a zip member's declared size is checked (and
its compression ratio bounded) before it is inflated, and the legacy stream's sizes are checked
against the bytes left in the file before anything is allocated. Any failure is a WeightsError.
"""

import collections
import io
import operator
import os
import pickle
import struct
import zipfile

import numpy as np

from captioner.errors import WeightsError

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
# Largest total of tensor bytes and of the pickle read from one file, and the largest
# compression ratio of a zip member: PyTorch stores its members uncompressed, so a member that
# inflates 100-fold is a bomb, not weights.
MAX_WEIGHTS_BYTES = 4 * 2**30
MAX_PICKLE_BYTES = 256 * 2**20
MAX_COMPRESSION_RATIO = 100

# torch storage class name -> numpy dtype
_STORAGE_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name):
        self.dtype = np.dtype(_STORAGE_DTYPES[name])


def _count(value, what):
    """`value` as a Python int >= 0, else WeightsError."""
    try:
        n = operator.index(value)
    except TypeError:
        raise WeightsError(f"{what} is {type(value).__name__}, not an integer") from None
    if n < 0:
        raise WeightsError(f"{what} is negative ({n})")
    return n


class _Storage:
    """A lazily filled flat array; tensors are views rebuilt once data is read."""

    def __init__(self, dtype, numel):
        self.dtype = dtype
        self.numel = _count(numel, "a storage's element count")
        if self.numel * np.dtype(dtype).itemsize > MAX_WEIGHTS_BYTES:
            raise WeightsError(f"a storage declares {self.numel:,} elements, over the "
                               f"{MAX_WEIGHTS_BYTES // 2**30} GiB this reader accepts")
        self.data = None

    @property
    def nbytes(self):
        return self.numel * np.dtype(self.dtype).itemsize

    def fill(self, raw, key):
        """Set the data from `raw` bytes, which must be exactly the declared element count."""
        if len(raw) != self.nbytes:
            raise WeightsError(f"storage {key}: {len(raw)} bytes, but it declares {self.numel:,} elements "
                               f"of {np.dtype(self.dtype).itemsize} bytes (truncated or crafted file)")
        self.data = np.frombuffer(raw, dtype=self.dtype)


class _LazyTensor:
    def __init__(self, storage, offset, size, stride):
        if not isinstance(storage, _Storage):
            raise WeightsError(f"a tensor's storage is a {type(storage).__name__}, not a storage")
        if not isinstance(size, (tuple, list)) or not isinstance(stride, (tuple, list)) or len(size) != len(stride):
            raise WeightsError("a tensor's sizes and strides are not two tuples of the same length")
        self.storage = storage
        self.offset = _count(offset, "a tensor's storage offset")
        self.size = tuple(_count(n, "a tensor size") for n in size)
        self.stride = tuple(_count(n, "a tensor stride") for n in stride)
        numel = int(np.prod(self.size, dtype=object)) if self.size else 1
        if numel and numel > storage.numel:  # a view never holds more elements than its storage
            raise WeightsError(f"a tensor of shape {self.size} ({numel:,} elements) views a storage of "
                               f"{storage.numel:,} elements")
        # The last element the view reaches must lie inside the storage.
        last = self.offset + sum((n - 1) * st for n, st in zip(self.size, self.stride)) if numel else 0
        if numel and last >= storage.numel:
            raise WeightsError(f"a tensor view (offset {self.offset}, shape {self.size}, stride {self.stride}) "
                               f"runs past its storage of {storage.numel:,} elements")
        self.numel = numel

    def materialize(self):
        flat = self.storage.data
        if flat is None:
            raise WeightsError("tensor storage was never read (truncated file?)")
        if len(flat) != self.storage.numel:  # pragma: no cover - fill() guarantees it
            raise WeightsError("tensor storage does not hold its declared element count")
        if not self.numel:
            return np.zeros(self.size, dtype=flat.dtype)
        if not self.size:
            return np.array(flat[self.offset])
        itemsize = flat.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(  # in bounds: checked in __init__
            flat[self.offset:],
            shape=self.size,
            strides=[s * itemsize for s in self.stride],
            writeable=False,
        )
        return np.array(view)  # own copy, contiguous


def _rebuild_tensor(storage, storage_offset, size, stride, *unused):
    return _LazyTensor(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks, *unused):
    return data


_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, storages, make_storage):
        super().__init__(file)
        self._storages = storages
        self._make_storage = make_storage

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        raise WeightsError(
            f"refused to load global {module}.{name}: only tensors and dicts are allowed in a "
            "weights file (the file may be malicious or not a plain state dict)"
        )

    def persistent_load(self, saved_id):
        if not isinstance(saved_id, tuple) or not saved_id or saved_id[0] != "storage":
            raise WeightsError(f"unsupported persistent id in weights file: {saved_id!r:.80}")
        return self._make_storage(saved_id[1:], self._storages)


class _SimpleUnpickler(pickle.Unpickler):
    """For the small header pickles of the legacy format: no globals at all."""

    def find_class(self, module, name):
        raise WeightsError(f"refused to load global {module}.{name} in weights header")


def _legacy_storage(data, storages):
    if len(data) < 4 or not isinstance(data[0], _StorageType) or not isinstance(data[1], str):
        raise WeightsError(f"malformed storage reference in weights file: {data!r:.80}")
    storage_type, key, _location, numel = data[:4]
    if key not in storages:
        storages[key] = _Storage(storage_type.dtype, numel)
    elif storages[key].dtype != storage_type.dtype or storages[key].numel != numel:
        raise WeightsError(f"storage {key} is declared twice with different types or sizes")
    return storages[key]


_zip_storage = _legacy_storage


def _read_legacy(f, path):
    size = os.fstat(f.fileno()).st_size
    if _SimpleUnpickler(f).load() != _LEGACY_MAGIC:
        raise WeightsError(f"{path}: not a PyTorch weights file (bad magic number)")
    _SimpleUnpickler(f).load()  # protocol version
    _SimpleUnpickler(f).load()  # sys info
    storages = {}
    result = _RestrictedUnpickler(f, storages, _legacy_storage).load()
    keys = _SimpleUnpickler(f).load()
    if not isinstance(keys, list) or set(keys) != set(storages) or len(keys) != len(storages):
        raise WeightsError(f"{path}: the storage list does not match the storages the tensors use")
    for key in keys:
        header = f.read(8)
        if len(header) != 8:
            raise WeightsError(f"{path}: truncated storage {key}")
        (numel,) = struct.unpack("<q", header)
        storage = storages[key]
        if numel != storage.numel:
            raise WeightsError(f"{path}: storage {key} holds {numel:,} elements but its tensors declare "
                               f"{storage.numel:,}")
        if storage.nbytes > size - f.tell():  # before anything that size is allocated
            raise WeightsError(f"{path}: truncated storage {key} ({storage.nbytes:,} bytes declared, "
                               f"{max(size - f.tell(), 0):,} left in the file)")
        storage.fill(f.read(storage.nbytes), key)
    return result


def _read_member(archive, path, name, limit):
    """The bytes of zip member `name`, refused before inflating when its declared size is over
    `limit` or its compression ratio is a bomb's; never more than the declared size is read."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise WeightsError(f"{path}: the zip has no member {name}") from None
    if info.file_size > limit:
        raise WeightsError(f"{path}: member {name} declares {info.file_size:,} bytes, over the {limit:,} expected")
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1024):
        raise WeightsError(f"{path}: member {name} inflates {info.compress_size:,} bytes to {info.file_size:,} "
                           f"(a zip bomb, not weights)")
    with archive.open(info) as f:
        raw = f.read(info.file_size + 1)
    if len(raw) != info.file_size:
        raise WeightsError(f"{path}: member {name} is not the size its header declares")
    return raw


def _read_zip(path):
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if not pkl:
            raise WeightsError(f"{path}: zip file has no data.pkl (not a PyTorch checkpoint)")
        root = pkl[0][: -len("data.pkl")]
        storages = {}
        raw = _read_member(archive, path, pkl[0], MAX_PICKLE_BYTES)
        result = _RestrictedUnpickler(io.BytesIO(raw), storages, _zip_storage).load()
        total = sum(s.nbytes for s in storages.values())
        if total > MAX_WEIGHTS_BYTES:
            raise WeightsError(f"{path}: the tensors declare {total:,} bytes, over the "
                               f"{MAX_WEIGHTS_BYTES // 2**30} GiB this reader accepts")
        for key, storage in storages.items():
            storage.fill(_read_member(archive, path, f"{root}data/{key}", storage.nbytes), key)
    return result


def load_torch_state_dict(path):
    """Return {name: numpy array} from a PyTorch `.pth`/`.pt` state dict, safely.

    Raises WeightsError for a missing, malformed or unsafe file.
    """
    path = str(path)
    try:
        if zipfile.is_zipfile(path):
            result = _read_zip(path)
        else:
            with open(path, "rb") as f:
                result = _read_legacy(f, path)
    except WeightsError as exc:
        if path in str(exc):
            raise
        raise WeightsError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise WeightsError(f"{path}: weights file not found") from None
    except IsADirectoryError:
        raise WeightsError(f"{path}: is a directory, not a weights file") from None
    except OSError as exc:
        raise WeightsError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except MemoryError:
        raise WeightsError(f"{path}: too large to read into memory") from None
    except Exception as exc:  # noqa: BLE001 - any other failure of a crafted pickle or zip is a bad file
        raise WeightsError(f"{path}: cannot read PyTorch weights ({type(exc).__name__}: {exc})") from None
    if isinstance(result, dict) and "state_dict" in result and isinstance(result["state_dict"], dict):
        result = result["state_dict"]
    if not isinstance(result, dict):
        raise WeightsError(f"{path}: expected a state dict, found {type(result).__name__}")
    try:
        return {k: v.materialize() for k, v in result.items() if isinstance(v, _LazyTensor)}
    except WeightsError as exc:
        raise WeightsError(f"{path}: {exc}") from None
