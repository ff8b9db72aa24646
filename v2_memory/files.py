"""Durable file writes: the one place that knows how to replace a file safely.

The recipe (used for every file v2_memory rewrites): write the whole new content to a temporary
file in the same folder, flush and fsync it, then ``os.replace`` it over the old one. A crash at
any moment leaves either the complete old file or the complete new one, never a half of each.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write_bytes", "atomic_write_text", "append_whole", "open_private_append", "lock_exclusively",
           "fsync_directory"]


def atomic_write_bytes(path: Path | str, data: bytes, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temp file + fsync + ``os.replace``)."""
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        # Never leave a stray temp file behind (it could hold text that was meant to be erased).
        Path(tmp_name).unlink(missing_ok=True)
        raise
    if fsync:
        fsync_directory(path.parent)


def atomic_write_text(path: Path | str, text: str, *, fsync: bool = True) -> None:
    """UTF-8 text version of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


def fsync_directory(folder: Path | str) -> None:
    """Make a rename inside ``folder`` durable. A no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_whole(handle: BinaryIO, data: bytes, *, fsync: bool = False) -> None:
    """Append ``data`` to an unbuffered append handle, all of it or nothing.

    Lines are appended with one call so that a crash leaves at most the *last* line incomplete;
    if the write itself fails (disk full), the file is cut back so no half line is left in front
    of the next append.
    """
    start = handle.seek(0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[handle.write(view):]
        if fsync:
            os.fsync(handle.fileno())
    except BaseException:
        handle.truncate(start)
        raise


def open_private_append(path: Path | str) -> BinaryIO:
    """Open ``path`` for unbuffered appends, creating it readable by its owner only (0600).

    Memory files hold people's private text; the atomic rewrites (``mkstemp``) are 0600 too.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
    return os.fdopen(fd, "ab", buffering=0)


def lock_exclusively(lock_path: Path, *, read_only: bool = False) -> BinaryIO:
    """Hold an exclusive, non-blocking lock on ``lock_path``; close the returned handle to release it.

    The operating system drops the lock when the process dies, so a crash never leaves a stale lock.
    Raises ``StoreLockedError`` when another writer holds it. ``read_only=True`` locks an existing
    file through a read-only handle (a store on a read-only medium can still be locked).
    """
    from .errors import StoreLockedError

    handle = open(lock_path, "rb", buffering=0) if read_only else open_private_append(lock_path)
    try:
        if os.name == "nt":
            import msvcrt

            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.close()
        raise StoreLockedError(
            "another writer (or a migrate copying it) has this store open (one writer per store file). In this process? close() "
            "the other JsonVectorStore first (a MemoryManager opened again on the same file closes the "
            "earlier one by itself). In another process? Stop it, or open it read-only, without the lock: "
            "python -m v2_memory inspect|health --store PATH, or JsonVectorStore(path, read_only=True)",
            path=lock_path) from exc
    return handle
