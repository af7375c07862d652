"""``tf.io.gfile``: TensorFlow's file API over local paths.

Names raise TensorFlow's errors: ``NotFoundError`` for a missing path, ``AlreadyExistsError`` for
``mkdir``/``rename``/``copy`` onto an existing path without ``overwrite``, ``FailedPreconditionError``
for reading a directory.

>>> import tapeflow as tf, tempfile, os
>>> d = tempfile.mkdtemp()
>>> with tf.io.gfile.GFile(os.path.join(d, "a.txt"), "w") as f:
...     _ = f.write("one\\ntwo\\n")
>>> tf.io.gfile.listdir(d), list(tf.io.gfile.GFile(os.path.join(d, "a.txt")))
(['a.txt'], ['one\\n', 'two\\n'])
"""
from __future__ import annotations

import glob as _glob
import os
import shutil

from ..errors import AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError

__all__ = ["GFile", "Open", "copy", "exists", "glob", "isdir", "listdir", "makedirs", "mkdir", "remove",
           "rename", "rmtree", "stat", "walk", "join", "split"]


def _path(p, op) -> str:
    if isinstance(p, (str, bytes, os.PathLike)):
        return os.fsdecode(p)
    if hasattr(p, "numpy"):
        v = p.numpy()
        if isinstance(v, bytes):
            return v.decode()
    raise TypeError(f"a path must be a str, bytes or os.PathLike, got {type(p).__name__} [Op:{op}]")


def _os_error(e: OSError, path, op):
    if isinstance(e, FileNotFoundError):
        return NotFoundError(f"{path}; No such file or directory", op)
    if isinstance(e, FileExistsError):
        return AlreadyExistsError(f"{path}; File exists", op)
    if isinstance(e, IsADirectoryError):
        return FailedPreconditionError(f"{path}; Is a directory", op)
    if isinstance(e, NotADirectoryError):
        return FailedPreconditionError(f"{path}; Not a directory", op)
    return FailedPreconditionError(f"{path}; {e.strerror or e}", op)


def exists(path) -> bool:
    """Whether ``path`` exists (a file or a directory)."""
    return os.path.exists(_path(path, "FileExists"))


def isdir(path) -> bool:
    """Whether ``path`` is a directory."""
    return os.path.isdir(_path(path, "IsDirectory"))


def glob(pattern) -> list:
    """The paths matching ``pattern`` (``*``, ``?``, ``[...]``), sorted; a list of patterns gives the union.

    >>> import tapeflow as tf, tempfile, os
    >>> d = tempfile.mkdtemp(); _ = open(os.path.join(d, "x.csv"), "w")
    >>> [os.path.basename(p) for p in tf.io.gfile.glob(os.path.join(d, "*.csv"))]
    ['x.csv']
    """
    pats = pattern if isinstance(pattern, (list, tuple)) else [pattern]
    out = []
    for p in pats:
        out.extend(_glob.glob(_path(p, "GetMatchingFiles")))
    return sorted(set(out))


def listdir(path) -> list:
    """The names in directory ``path`` (not ``.``/``..``), sorted; subdirectories without a trailing slash."""
    p = _path(path, "GetChildren")
    try:
        return sorted(os.listdir(p))
    except OSError as e:
        raise _os_error(e, p, "GetChildren") from None


def makedirs(path) -> None:
    """Create ``path`` and its missing parents (no error if it exists as a directory)."""
    p = _path(path, "RecursivelyCreateDir")
    try:
        os.makedirs(p, exist_ok=True)
    except OSError as e:
        raise _os_error(e, p, "RecursivelyCreateDir") from None


def mkdir(path) -> None:
    """Create directory ``path``; its parent must exist and it must not (``AlreadyExistsError``)."""
    p = _path(path, "CreateDir")
    try:
        os.mkdir(p)
    except OSError as e:
        raise _os_error(e, p, "CreateDir") from None


def remove(path) -> None:
    """Delete file ``path`` (``NotFoundError`` if missing)."""
    p = _path(path, "DeleteFile")
    try:
        os.remove(p)
    except OSError as e:
        raise _os_error(e, p, "DeleteFile") from None


def rmtree(path) -> None:
    """Delete directory ``path`` and everything under it."""
    p = _path(path, "DeleteRecursively")
    if not os.path.exists(p):
        raise NotFoundError(f"{p}; No such file or directory", "DeleteRecursively")
    shutil.rmtree(p)


def rename(src, dst, overwrite=False) -> None:
    """Rename ``src`` to ``dst``; an existing ``dst`` needs ``overwrite=True``."""
    s, d = _path(src, "RenameFile"), _path(dst, "RenameFile")
    if not os.path.exists(s):
        raise NotFoundError(f"{s}; No such file or directory", "RenameFile")
    if os.path.exists(d) and not overwrite:
        raise AlreadyExistsError(f"file already exists: {d}", "RenameFile")
    try:
        os.replace(s, d)
    except OSError as e:
        raise _os_error(e, d, "RenameFile") from None


def copy(src, dst, overwrite=False) -> None:
    """Copy file ``src`` to ``dst``; an existing ``dst`` needs ``overwrite=True``."""
    s, d = _path(src, "CopyFile"), _path(dst, "CopyFile")
    if os.path.exists(d) and not overwrite:
        raise AlreadyExistsError(f"file already exists: {d}", "CopyFile")
    try:
        shutil.copyfile(s, d)
    except OSError as e:
        raise _os_error(e, s, "CopyFile") from None


class FileStatistics:
    """What :func:`stat` returns: ``length`` (bytes), ``mtime_nsec``, ``is_directory``."""

    __slots__ = ("length", "mtime_nsec", "is_directory")

    def __init__(self, length, mtime_nsec, is_directory) -> None:
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory

    def __repr__(self):
        return f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, is_directory={self.is_directory})"


def stat(path) -> FileStatistics:
    """Size, modification time (ns) and kind of ``path``.

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "f"); _ = open(p, "wb").write(b"abc")
    >>> tf.io.gfile.stat(p).length
    3
    """
    p = _path(path, "Stat")
    try:
        st = os.stat(p)
    except OSError as e:
        raise _os_error(e, p, "Stat") from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(p))


def walk(top, topdown=True, onerror=None):
    """``(dirname, subdirs, files)`` for each directory under ``top``, as ``os.walk`` (names sorted)."""
    t = _path(top, "Walk")
    for d, subdirs, files in os.walk(t, topdown=topdown, onerror=onerror):
        subdirs.sort()
        yield d, subdirs, sorted(files)


def join(path, *paths) -> str:
    """``os.path.join`` for gfile paths."""
    return os.path.join(_path(path, "Join"), *[_path(p, "Join") for p in paths])


def split(path):
    """``os.path.split`` for gfile paths."""
    return os.path.split(_path(path, "Split"))


_MODES = ("r", "rb", "w", "wb", "a", "ab", "r+", "rb+", "w+", "wb+", "a+", "ab+")


class GFile:
    """``tf.io.gfile.GFile(name, mode="r")``: a file object; modes ``r``/``w``/``a`` with ``b`` for bytes.

    ``read(n=-1)``, ``readline()``, ``readlines()``, iteration over lines, ``write``, ``seek``/``tell``,
    ``size()``, ``flush``, ``close``, and the context-manager protocol.  Writes to ``w`` mode go to a
    temporary file that replaces ``name`` when the file is closed (readers never see half a file).

    >>> import tapeflow as tf, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "log.txt")
    >>> with tf.io.gfile.GFile(p, "w") as f:
    ...     _ = f.write("a\\n")
    >>> with tf.io.gfile.GFile(p, "a") as f:
    ...     _ = f.write("b\\n")
    >>> tf.io.gfile.GFile(p).readline(), tf.io.gfile.GFile(p, "rb").read()
    ('a\\n', b'a\\nb\\n')
    """

    def __init__(self, name, mode="r") -> None:
        op = "GFile"
        if not isinstance(mode, str) or mode not in _MODES:
            raise InvalidArgumentError(f"mode = {mode!r}; allowed: {', '.join(_MODES)}", op)
        self.name, self.mode = _path(name, op), mode
        self._binary = "b" in mode
        self._tmp = None
        target = self.name
        if mode.startswith("w"):
            self._tmp = target = f"{self.name}.tmp-{os.getpid()}-{id(self):x}"
        try:
            self._f = open(target, mode if self._binary else mode + "b")  # noqa: SIM115 - closed by close()
        except OSError as e:
            raise _os_error(e, self.name, op) from None

    def _out(self, data: bytes):
        return data if self._binary else data.decode("utf-8")

    def read(self, n=-1):
        """``n`` bytes (or characters' bytes) from the current position; all the rest when ``n < 0``."""
        return self._out(self._f.read(n))

    def readline(self):
        """The next line with its newline ('' / b'' at the end)."""
        return self._out(self._f.readline())

    def readlines(self):
        """The remaining lines."""
        return [self._out(x) for x in self._f.readlines()]

    def __iter__(self):
        return self

    def __next__(self):
        line = self._f.readline()
        if not line:
            raise StopIteration
        return self._out(line)

    def write(self, data):
        """Append ``data`` (str or bytes) at the current position."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif hasattr(data, "numpy"):
            data = data.numpy()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"GFile.write takes str or bytes, got {type(data).__name__} [Op:GFile]")
        return self._f.write(data)

    def seek(self, offset=None, whence=0, position=None):
        """Move to byte ``offset`` (``position`` is TensorFlow's older name)."""
        return self._f.seek(position if offset is None else offset, whence)

    def tell(self):
        return self._f.tell()

    def size(self):
        """The file's size in bytes."""
        self._f.flush()
        return os.fstat(self._f.fileno()).st_size

    def flush(self):
        self._f.flush()

    def seekable(self):
        return True

    def close(self):
        """Close; a ``w`` file then replaces its target atomically."""
        if self._f.closed:
            return
        self._f.close()
        if self._tmp is not None:
            os.replace(self._tmp, self.name)

    @property
    def closed(self):
        return self._f.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


Open = GFile
