"""Writing a file all at once: every file gradviz writes goes through here.

A file appears whole or not at all (a temporary file beside it, then
``os.replace``), keeps the permission bits of the file it replaces, and a
read-only file, a directory or a device is refused before anything is made.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import secrets
import stat
from typing import Any

__all__ = ["check_path", "write_text_atomic", "write_bytes_atomic"]


def check_path(path: Any, example: str = "report.html") -> pathlib.Path:
    """The absolute file path to write, checked before anything is rendered."""
    raw = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(path, bool) or not isinstance(raw, str):
        raise TypeError(f"path: expected a file path (str or pathlib.Path), "
                        f"got {type(path).__name__}")
    p = pathlib.Path(raw).expanduser()
    if not p.name:  # ("/"; an existing directory is refused by _kept_mode below)
        raise ValueError(f"path: {str(p)!r} is a directory; give a file path such as "
                         f"{str(p / example)!r}")
    # pathlib drops a trailing separator ("d/new/" becomes "d/new"), so the
    # string itself is asked whether it names a directory.
    if raw.endswith(("/", os.sep)) or os.path.basename(raw) in (".", ".."):
        raise ValueError(f"path: {raw!r} names a directory, not a file; expected a file path "
                         f"such as {str(p / example)!r}")
    parent = p.parent.resolve()
    if not parent.is_dir():
        if parent.exists():
            raise ValueError(f"path: {str(parent)!r} is a file, not a directory "
                             "(give a path inside an existing directory)")
        raise ValueError(f"path: the directory {str(parent)!r} does not exist "
                         "(create it first, or write into an existing directory)")
    target = parent / p.name
    _kept_mode(target)  # a read-only file is refused before the page is rendered
    return target


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (as UTF-8) to the file ``path`` all at once (:func:`write_bytes_atomic`).

    The text goes to a temporary file beside ``path``, which then replaces it
    (``os.replace``): a failure at any point leaves the old file as it was and no
    temporary file behind.  A replaced file keeps its permission bits; a new one
    gets the mode ``open()`` would give it (0o666 less the umask).  A read-only
    file (no write bit for anyone, or one this user may not write) is refused
    with ``PermissionError``, and so is a directory or anything but a regular file.

    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> write_text_atomic(out, "d(x*x)/dx = 2*x")
    >>> out.read_text(encoding="utf-8")
    'd(x*x)/dx = 2*x'
    >>> out.chmod(0o444)
    >>> write_text_atomic(out, "something else")
    Traceback (most recent call last):
    ...
    PermissionError: path: '...notes.txt' is read-only (mode 0o444); gradviz does not replace
    a read-only file: make it writable (chmod u+w) or give another path
    >>> import shutil; shutil.rmtree(out.parent)
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to the file ``path`` all at once, as :func:`write_text_atomic` does."""
    path = pathlib.Path(path)
    keep = _kept_mode(path)
    fd, tmp = _open_temp(path, 0o666 if keep is None else keep)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if keep is not None:  # exactly the old bits: the umask may have taken some away
            os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _kept_mode(path: pathlib.Path) -> int | None:
    """The permission bits of the file at ``path``, which its replacement keeps, or
    None if there is no file yet; raises if it is not a file gradviz may replace."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"path: {str(path)!r} is a directory; give a file path such as "
                         f"{str(path / 'report.html')!r}")
    if not stat.S_ISREG(st.st_mode):  # a device or a pipe (/dev/stdout): never replaced
        raise ValueError(f"path: {str(path)!r} is not a regular file; give the path of a file")
    bits = stat.S_IMODE(st.st_mode) & 0o777
    # No write bit for anyone says "keep this as it is", even to root, whom
    # os.access lets write anything: so the bits are read, and os.access asked too.
    if not bits & 0o222:
        raise PermissionError(f"path: {str(path)!r} is read-only (mode {bits:#o}); gradviz "
                              "does not replace a read-only file: make it writable "
                              "(chmod u+w) or give another path")
    if not os.access(path, os.W_OK):  # someone else's file, or a read-only file system
        raise PermissionError(f"path: {str(path)!r} (mode {bits:#o}, owner uid {st.st_uid}) "
                              "may not be written by this user; give another path")
    return bits


# How much of the file's name the temporary name repeats: at most 4 bytes a
# character in UTF-8, so ".{32 characters}.{8 hex}.tmp" stays within 142 bytes,
# well inside the 255-byte limit on a name however long the file's own name is.
_TEMP_NAME_CHARS = 32


def _open_temp(path: pathlib.Path, mode: int) -> tuple[int, str]:
    """A new, empty file beside ``path``, open for writing, and its name.

    Created with ``mode`` less the umask, as ``open()`` creates a file (so a new
    report gets the usual 0o644), and never wider than the file it replaces.
    """
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL
             | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    for _ in range(100):
        tmp = path.parent / f".{path.name[:_TEMP_NAME_CHARS]}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, mode), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free name for a temporary file", str(path.parent))
