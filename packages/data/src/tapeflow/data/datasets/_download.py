"""Downloading dataset files once into a cache folder, checked by size and MD5, written atomically.

The cache folder is ``$TAPEFLOW_DATA_HOME`` (default ``~/.tapeflow/datasets``), one subfolder per
dataset.  A file already there with the right size and hash is used as is, so a machine without
network access works once the files are placed there by hand.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import threading
import urllib.error
import urllib.request

from tapeflow.core.errors import DataLossError, UnavailableError

#: opens a URL (``https://``, ``file://``); tests replace it to stay off the network
urlopen = urllib.request.urlopen
TIMEOUT = 60


def data_home(cache_dir=None) -> pathlib.Path:
    """The folder datasets are cached in: ``cache_dir``, else ``$TAPEFLOW_DATA_HOME``, else
    ``~/.tapeflow/datasets``.

    >>> from tapeflow.data.datasets import data_home
    >>> data_home("/tmp/tf-data").as_posix()
    '/tmp/tf-data'
    """
    if cache_dir is not None:
        return pathlib.Path(cache_dir)
    env = os.environ.get("TAPEFLOW_DATA_HOME")
    return pathlib.Path(env) if env else pathlib.Path.home() / ".tapeflow" / "datasets"


def _md5(path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _valid(path: pathlib.Path, size: int, md5: str) -> bool:
    return path.is_file() and path.stat().st_size == size and _md5(path) == md5


def _download(url: str, dest: pathlib.Path, size: int, md5: str) -> None:
    tmp = dest.with_name(f"{dest.name}.part-{os.getpid()}-{threading.get_ident()}")
    h = hashlib.md5(usedforsecurity=False)
    n = 0
    try:
        with urlopen(url, timeout=TIMEOUT) as r, open(tmp, "wb") as f:
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                n += len(chunk)
                if n > size:
                    raise DataLossError(f"{url} is larger than the expected {size} bytes")
                h.update(chunk)
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        if n != size:
            raise DataLossError(f"{url} gave {n} bytes, expected {size}")
        if h.hexdigest() != md5:
            raise DataLossError(f"{url} has MD5 {h.hexdigest()}, expected {md5}")
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()


def fetch(dataset: str, filename: str, mirrors, size: int, md5: str, cache_dir=None) -> pathlib.Path:
    """The cached path of ``filename``, downloading it from the first mirror that serves it intact."""
    folder = data_home(cache_dir) / dataset
    dest = folder / filename
    if dest.exists():
        if _valid(dest, size, md5):
            return dest
        dest.unlink()  # damaged or partial: fetch again
    folder.mkdir(parents=True, exist_ok=True)
    errors = []
    for base in mirrors:
        url = base if base.endswith(filename) else base.rstrip("/") + "/" + filename
        try:
            _download(url, dest, size, md5)
            return dest
        except (OSError, urllib.error.URLError, ValueError, DataLossError) as e:
            errors.append(f"{url}: {getattr(e, 'message', None) or e}")
    raise UnavailableError(f"could not download {filename} for {dataset} ({'; '.join(errors)}); with no "
                           f"network, place the file ({size} bytes, MD5 {md5}) in {folder}", "LoadData")
