"""Check a `.keras` file's zip structure before Keras opens it.

Keras inflates `config.json` into memory, reads `model.weights.h5` and extracts asset members
to a temporary folder, all by the sizes the archive declares. A small crafted file can so
declare gigabytes (issue 23: a 30 MB file with a 3 GiB config.json took 6.9 GB of memory; one
with twelve 250 MiB members wrote 3 GB into /tmp). `check_keras_archive` reads only the zip's
central directory and refuses, with a message naming the file:

* a file that is not a zip archive at all (corrupt, truncated, or not a `.keras` file);
* an archive with no `config.json` (not a Keras model);
* `config.json` / `metadata.json` over `MAX_CONFIG_BYTES`;
* more than `MAX_MEMBERS` members, or more than `MAX_TOTAL_BYTES` in all once inflated;
* a compressed member that inflates more than `MAX_COMPRESSION_RATIO` times (Keras stores its
  members uncompressed: a member that inflates 100-fold is a zip bomb, not a model).

Every captioner loader calls it (`captioner.models.loading.load_model_file`, the app's loader).
A legacy `.h5` model file is not a zip and is left to Keras.
"""

import os
import zipfile

from captioner.errors import InputError

MAX_CONFIG_BYTES = 64 * 2**20
MAX_TOTAL_BYTES = 2 * 2**30
MAX_MEMBERS = 10_000
MAX_COMPRESSION_RATIO = 100
_SMALL = 2**20  # members up to this size may compress as well as they like


def _mb(n):
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} bytes"


def check_keras_archive(path):
    """Raise InputError naming `path` unless it is a `.keras` zip whose declared sizes are sane."""
    path = os.fspath(path)
    if path.endswith(".h5") and not zipfile.is_zipfile(path):
        return  # a legacy HDF5 model: not an archive
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise InputError(f"{path}: not a readable .keras file: the file is corrupt, truncated or not a Keras "
                         f"model ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"{path}: the archive has {len(infos):,} members (at most {MAX_MEMBERS:,}); not a Keras model")
    names = {info.filename for info in infos}
    if "config.json" not in names:
        raise InputError(f"{path}: not a Keras model archive (it has no config.json)")
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        if info.filename in ("config.json", "metadata.json") and size > MAX_CONFIG_BYTES:
            raise InputError(f"{path}: {info.filename} declares {_mb(size)} (at most {_mb(MAX_CONFIG_BYTES)}); "
                             f"refused before loading")
        if (info.compress_type != zipfile.ZIP_STORED and size > _SMALL
                and size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1)):
            raise InputError(f"{path}: member {info.filename} inflates {_mb(info.compress_size)} to {_mb(size)} "
                             f"(over {MAX_COMPRESSION_RATIO}x: a zip bomb, not a model); refused before loading")
    if total > MAX_TOTAL_BYTES:
        raise InputError(f"{path}: the archive declares {_mb(total)} once inflated (at most {_mb(MAX_TOTAL_BYTES)}); "
                         f"refused before loading")
