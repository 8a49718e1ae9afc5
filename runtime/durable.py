"""Durable, symlink-safe file writes: temporary file in the same folder, fsync, rename, fsync the folder.

Every file ldpsim writes into a run folder goes through :func:`write_file` (or its shortcuts), so that
after a crash a file is either its complete new content or its previous content, never a torn mix,
and once the call returns the bytes and the directory entry are on disk:

1. the content is written to ``.<name>.<random>.tmp`` beside the target (same file system, so the
   rename is atomic), created with mode ``0o666 & ~umask`` (like ``open(..., "w")``; ``mkstemp``
   alone would give 0600);
2. the temporary file is fsynced, then renamed over the target with ``os.replace`` (a rename replaces
   a symbolic link itself and never writes through it; a target that *is* a symbolic link is refused
   anyway, so a link planted in a run folder cannot redirect a write);
3. the folder is fsynced, so the rename itself survives a power cut.

Each file written is remembered for the life of the process (path → device, inode, size and mtime after
the rename): :func:`wrote` tells a file this process wrote, unchanged since, from one somebody else put
there (a run folder records only its own files; a report embeds only them).

Also here: :func:`sha256_file` (manifest checksums) and :func:`fsync_dir`. This module sits on the
ground floor (:mod:`ldpsim.runtime`) so that the report store (:mod:`ldpsim.simulator.report_store`),
the run folders and the sweep store share it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

_UMASK: int | None = None
#: files this process wrote through :func:`write_file`: absolute path → (device, inode, size, mtime_ns)
_WRITTEN: dict[str, tuple[int, int, int, int]] = {}


def file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file: ``0o666 & ~umask``."""
    global _UMASK
    if _UMASK is None:
        try:  # Linux reports it without changing it
            with open("/proc/self/status", encoding="ascii") as fh:
                _UMASK = next(int(ln.split()[1], 8) for ln in fh if ln.startswith("Umask:"))
        except (OSError, StopIteration, ValueError, IndexError):  # elsewhere reading means setting it (once)
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return 0o666 & ~_UMASK


def fsync_dir(path) -> None:
    """fsync a folder so that renames and creations inside it are durable (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def refuse_symlink(path) -> None:
    """Raise ``OSError`` when ``path`` exists as a symbolic link (ldpsim never writes through one)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise OSError(f"{path} is a symbolic link, which ldpsim did not create and will not write through; "
                      "remove it or choose another output folder")


def make_dirs(path) -> Path:
    """``mkdir -p`` that refuses symbolic links among the folders it walks through (created folders fsynced)."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and not p.is_symlink():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for q in reversed(missing):
        q.mkdir(exist_ok=True)
        fsync_dir(q.parent)
    if path.is_symlink():
        refuse_symlink(path)
    return path


def write_file(path, write: Callable[[str], None], *, sync: bool = True) -> Path:
    """Write ``path`` durably: ``write(tmp_path)`` fills a temporary file, which is fsynced and renamed.

    Parameters
    ----------
    path : path-like
        The target file; its folder must exist. A symbolic link there is refused (``OSError``).
    write : callable
        Called with the temporary file's path (a ``str``); writes the whole content (e.g.
        ``frame.to_parquet``).
    sync : bool
        fsync the file before the rename and the folder after it (default True).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    refuse_symlink(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        os.close(fd)
        fd = -1
        write(tmp)
        if sync:
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync:
        fsync_dir(path.parent)
    _WRITTEN[os.path.abspath(path)] = _stamp(os.lstat(path))
    return path


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def wrote(path) -> bool:
    """Whether ``path`` is a regular file that this process wrote through :func:`write_file` and that nobody
    replaced, changed or turned into a symbolic link since (same device, inode, size and mtime)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _WRITTEN.get(os.path.abspath(path)) == _stamp(st)


def write_bytes(path, data: bytes, *, sync: bool = True) -> Path:
    """:func:`write_file` with fixed bytes."""
    return write_file(path, lambda tmp: Path(tmp).write_bytes(data), sync=sync)


def write_text(path, text: str, *, sync: bool = True) -> Path:
    """:func:`write_file` with UTF-8 text."""
    return write_bytes(path, text.encode("utf-8"), sync=sync)


def sha256_file(path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes (opened without following a final symbolic link)."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def fsync_file(path) -> None:
    """fsync an existing regular file (written by a library that does not sync)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
