"""Read PyTorch state-dict files without torch and without running pickle code.

A `.pth` file is a pickle whose tensors point at raw storages. We unpickle it with a
restricted unpickler that admits exactly the globals needed to rebuild tensors and an
OrderedDict; any other global (``os.system``, ``builtins.eval``, ...) raises
`WeightsError`, so a malicious file cannot execute anything. Both layouts are read:

* the legacy stream (torch < 1.6): magic, protocol, sys-info pickles, the state dict
  pickle, a list of storage keys, then each storage as int64 element count + raw bytes;
* the zip archive (torch >= 1.6): ``<root>/data.pkl`` plus one ``<root>/data/<key>`` file
  per storage.
"""

import collections
import io
import pickle
import struct
import zipfile

import numpy as np

from captioner.errors import WeightsError

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C

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


class _Storage:
    """A lazily filled flat array; tensors are views rebuilt once data is read."""

    def __init__(self, dtype, numel):
        self.dtype = dtype
        self.numel = numel
        self.data = None


class _LazyTensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def materialize(self):
        flat = self.storage.data
        if flat is None:
            raise WeightsError("tensor storage was never read (truncated file?)")
        itemsize = flat.dtype.itemsize
        if not self.size:
            return np.array(flat[self.offset])
        view = np.lib.stride_tricks.as_strided(
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
    storage_type, key, _location, numel = data[:4]
    if key not in storages:
        storages[key] = _Storage(storage_type.dtype, numel)
    return storages[key]


def _zip_storage(data, storages):
    storage_type, key, _location, numel = data[:4]
    if key not in storages:
        storages[key] = _Storage(storage_type.dtype, numel)
    return storages[key]


def _read_legacy(f, path):
    if _SimpleUnpickler(f).load() != _LEGACY_MAGIC:
        raise WeightsError(f"{path}: not a PyTorch weights file (bad magic number)")
    _SimpleUnpickler(f).load()  # protocol version
    _SimpleUnpickler(f).load()  # sys info
    storages = {}
    result = _RestrictedUnpickler(f, storages, _legacy_storage).load()
    keys = _SimpleUnpickler(f).load()
    for key in keys:
        (numel,) = struct.unpack("<q", f.read(8))
        storage = storages[key]
        nbytes = numel * storage.dtype.itemsize
        raw = f.read(nbytes)
        if len(raw) != nbytes:
            raise WeightsError(f"{path}: truncated storage {key}")
        storage.data = np.frombuffer(raw, dtype=storage.dtype)
    return result


def _read_zip(path):
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if not pkl:
            raise WeightsError(f"{path}: zip file has no data.pkl (not a PyTorch checkpoint)")
        root = pkl[0][: -len("data.pkl")]
        storages = {}
        with archive.open(pkl[0]) as f:
            result = _RestrictedUnpickler(io.BytesIO(f.read()), storages, _zip_storage).load()
        for key, storage in storages.items():
            raw = archive.read(f"{root}data/{key}")
            storage.data = np.frombuffer(raw, dtype=storage.dtype)
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
    except (pickle.UnpicklingError, EOFError, struct.error, KeyError, ValueError, TypeError) as exc:
        raise WeightsError(f"{path}: cannot read PyTorch weights: {exc}") from None
    if isinstance(result, dict) and "state_dict" in result and isinstance(result["state_dict"], dict):
        result = result["state_dict"]
    if not isinstance(result, dict):
        raise WeightsError(f"{path}: expected a state dict, found {type(result).__name__}")
    return {k: v.materialize() for k, v in result.items() if isinstance(v, _LazyTensor)}
