"""The store's file: an append-only JSON Lines log of records behind a versioned header.

    {"format": "v2_memory.json_store", "version": 1, "next_id": 1}     <- header, line 1
    {"record_id": 1, "user_id": "default", "role": "user", "content": "..."}
    {"record_id": 2, ...}                                              <- one line per add

Why a log: an ``add`` appends one line with one ``write`` call instead of rewriting the whole file,
so ingest cost stays flat as history grows. Erasure is the one operation that must remove bytes;
it rewrites the file atomically (see ``files.py``), which is also the log's compaction.

Crash safety: a line that was written before ``add`` returned survives ``kill -9`` (it is in the
operating system's page cache). A power loss can lose the adds since the last fsync unless the
log is opened with ``fsync=True``. A crash mid-write can leave one incomplete last line; it was
never acknowledged, so loading drops it, trims the file, and warns. Any other damage raises
``StoreCorruptError`` and the file is left exactly as it was.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..diagnostics import warn
from ..errors import StoreCorruptError, StoreError, StorePathError, UnsupportedFormatError
from ..files import append_whole, atomic_write_bytes, lock_exclusively, open_private_append

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "TornRecordWarning", "LoadedLog", "RecordLog", "encode_record"]

FORMAT_NAME = "v2_memory.json_store"
FORMAT_VERSION = 1
REQUIRED_FIELDS = {"record_id": int, "user_id": str, "role": str, "content": str}


class TornRecordWarning(UserWarning):
    """Loading dropped an incomplete last record left by a crash mid-write."""


@dataclass(frozen=True)
class LoadedLog:
    """What a load found: the records in file order, the next free id, bytes of torn tail dropped."""

    records: list[dict[str, Any]]
    next_id: int
    dropped_bytes: int = 0


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one UTF-8 JSON line. Raises TypeError/ValueError for non-JSON metadata."""
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"record is not JSON-serializable: {exc}") from exc
    return text.encode("utf-8") + b"\n"


def _header(next_id: int) -> bytes:
    return encode_record({"format": FORMAT_NAME, "version": FORMAT_VERSION, "next_id": next_id})


class RecordLog:
    """Reads, appends to and atomically rewrites one store file.

    One process writes a store at a time: a writer holds an exclusive lock on a sibling
    ``.<name>.lock`` file (released by the operating system even if the process is killed).
    ``read_only=True`` (for inspection tools) takes no lock, creates and trims nothing.
    """

    def __init__(self, path: Path | str, *, fsync: bool = False, read_only: bool = False) -> None:
        # subtle: a symlink is followed before anything else, so the lock sits beside the real file
        # and two writers reaching it by different names still exclude each other.
        self.path = Path(path).resolve() if Path(path).is_symlink() else Path(path)
        self.fsync = fsync
        self.read_only = read_only
        self._handle: Any = None  # the open append handle, after load()
        self._lock_file: Any = None
        self.created = False  # True when load() made a new, empty file
        if self.path.is_dir():
            raise StorePathError("store path is a directory, expected a file", path=self.path)
        if read_only and not self.path.exists():
            raise StorePathError("no store file here", path=self.path)

    # -- loading -----------------------------------------------------------------------------
    def load(self) -> LoadedLog:
        """Read the file (creating it if missing), drop a torn tail, and open it for appends."""
        if self.read_only:
            return self._load_read_only()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_file = lock_exclusively(self.path.with_name(f".{self.path.name}.lock"))
        try:
            return self._load_locked()
        except BaseException:
            self.close()  # a failed open must not keep the lock
            raise

    def _load_locked(self) -> LoadedLog:
        self._remove_stale_temp_files()
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.path, _header(1), fsync=self.fsync)
            self.created = True
        data = self.path.read_bytes()
        complete, _, torn = data.rpartition(b"\n")
        loaded = self._parse(complete.split(b"\n") if complete else [], len(torn))
        if torn:
            self._drop_torn_tail(len(complete) + 1, len(torn))
        self._open()
        return loaded

    def _load_read_only(self) -> LoadedLog:
        data = self.path.read_bytes()
        complete, _, torn = data.rpartition(b"\n")
        if torn:
            warn(f"{self.path}: skipped an incomplete last record ({len(torn)} bytes); the file is left as it is",
                 TornRecordWarning, room="storage", stacklevel=3)
        return self._parse(complete.split(b"\n") if complete else [], len(torn))

    def _remove_stale_temp_files(self) -> None:
        # A crash during rewrite() can leave its temp file behind. It may hold text that was
        # erased later, so it must not linger; the real file is intact either way (os.replace).
        for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            stale.unlink(missing_ok=True)

    def _parse(self, lines: list[bytes], torn_bytes: int) -> LoadedLog:
        if not lines:
            raise StoreCorruptError("no complete header line; not a v2_memory store", path=self.path)
        next_id = self._parse_header(lines[0])
        records: list[dict[str, Any]] = []
        seen: set[int] = set()
        for number, raw in enumerate(lines[1:], start=2):
            if not raw.strip():
                continue
            record = self._parse_record(raw, number)
            if record["record_id"] in seen:
                raise StoreCorruptError(f"duplicate record_id {record['record_id']}", path=self.path, line=number)
            seen.add(record["record_id"])
            records.append(record)
            next_id = max(next_id, record["record_id"] + 1)
        return LoadedLog(records, next_id, torn_bytes)

    def _parse_header(self, raw: bytes) -> int:
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise StoreCorruptError(f"unreadable header ({exc}); not a v2_memory store", path=self.path, line=1) from exc
        if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
            raise StoreCorruptError(f"header does not name format {FORMAT_NAME!r}; not a v2_memory store", path=self.path, line=1)
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise StoreCorruptError(f"invalid format version {version!r}", path=self.path, line=1)
        if version > FORMAT_VERSION:
            raise UnsupportedFormatError(
                f"format version {version} is newer than this release understands ({FORMAT_VERSION}); "
                "upgrade v2_memory to read it",
                path=self.path,
                version=version,
            )
        next_id = header.get("next_id", 1)
        if not isinstance(next_id, int) or next_id < 1:
            raise StoreCorruptError(f"invalid next_id {next_id!r} in header", path=self.path, line=1)
        return next_id

    def _parse_record(self, raw: bytes, number: int) -> dict[str, Any]:
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise StoreCorruptError(f"unreadable record ({exc})", path=self.path, line=number) from exc
        if not isinstance(record, dict):
            raise StoreCorruptError("record is not a JSON object", path=self.path, line=number)
        for name, kind in REQUIRED_FIELDS.items():
            value = record.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise StoreCorruptError(f"record field {name!r} missing or not {kind.__name__}", path=self.path, line=number)
        if record["record_id"] < 1:
            raise StoreCorruptError(f"record_id {record['record_id']} is not positive", path=self.path, line=number)
        # Share the strings every record repeats: json.loads makes fresh copies of the field names,
        # the user id and the role for each line, about 350 bytes a record.
        record = {sys.intern(key): value for key, value in record.items()}
        record["user_id"], record["role"] = sys.intern(record["user_id"]), sys.intern(record["role"])
        return record

    def _drop_torn_tail(self, keep: int, dropped: int) -> None:
        # subtle: the only bytes we ever remove on load — a last line without its newline, which a
        # crash cut short before its add returned. Everything before it is kept byte for byte.
        with open(self.path, "r+b") as handle:
            handle.truncate(keep)
            if self.fsync:
                os.fsync(handle.fileno())
        warn(
            f"{self.path}: dropped an incomplete last record ({dropped} bytes) left by an interrupted write; "
            "it was never acknowledged",
            TornRecordWarning, room="storage", stacklevel=4)

    # -- writing -----------------------------------------------------------------------------
    def _open(self) -> None:
        self._handle = open_private_append(self.path)

    def append(self, lines: Iterable[bytes]) -> None:
        """Append encoded lines with a single write; on failure, cut the file back to where it was."""
        data = b"".join(lines)
        if not data:
            return
        self._require_writable()
        append_whole(self._handle, data, fsync=self.fsync)

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError("store was opened read-only", path=self.path)
        if self._handle is None:
            raise StoreError("store is closed", path=self.path)

    def size(self) -> int:
        """The file's length in bytes now (where the next append starts)."""
        self._require_writable()
        return self._handle.seek(0, os.SEEK_END)

    def truncate(self, size: int) -> None:
        """Cut the file back to ``size`` bytes (undo an append whose commit failed)."""
        self._require_writable()
        self._handle.truncate(size)
        if self.fsync:
            os.fsync(self._handle.fileno())

    def rewrite(self, records: Iterable[dict[str, Any]], next_id: int) -> None:
        """Replace the whole file with ``records`` atomically (erasure and compaction)."""
        self._require_writable()
        data = _header(next_id) + b"".join(encode_record(record) for record in records)
        self._handle.close()
        try:
            atomic_write_bytes(self.path, data, fsync=True)
        finally:
            self._open()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._lock_file is not None:
            self._lock_file.close()  # closing releases the lock
            self._lock_file = None
