"""Audit log files: what was written to memory and what was read from it, as JSON Lines.

    memory_store.writes.jsonl   writes and lifecycle events (verify, confirm_fact, end_session, ...)
    memory_store.reads.jsonl    reads: route, every candidate's numbers and verdict, the context

Each event is appended with a single write (a crash can only cut the last line short, and reading
skips such a line with a warning); a damaged line anywhere else raises ``StoreCorruptError`` when
read. Files rotate by size (``.1``, ``.2``, ... hold older events). ``erase`` and ``forget``
rewrite every file — rotated ones included, however many there are — without the events they
pick; a damaged line cannot be attributed to anyone, so a rewrite drops it and reports it (a
line nobody can read is no evidence, and it could hold the very text being erased).
With ``folder=None`` the events stay in memory, each log its newest ``MAX_EVENTS`` (the database
backends keep as many: ``SqliteAuditLog``). What goes *into* an event (never raw personal
data) is ``observe/audit.py``'s business; this module only keeps the files.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..diagnostics import warn
from ..errors import StoreCorruptError, StorePathError
from ..files import append_whole, atomic_write_bytes, open_private_append

__all__ = ["encode_event", "AuditEvent", "JsonlAuditLog", "TornLogLineWarning", "user_hash", "DamagedLine", "mentions_record",
           "records_named", "MAX_EVENTS", "check_max_events", "EventBound"]

MAX_EVENTS = 10_000  # per log, where events are counted rather than files sized (memory, database tables)


def check_max_events(value: Any) -> int:
    """A log's bound on its events: a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_events must be a whole number >= 1, got {value!r}")
    return value


class EventBound:
    """``max_events``, checked whenever it is set: how many events a log that counts them keeps;
    and ``settle``, which the storage sets: it writes the read events this process keeps waiting
    (``read_book.py``), called before ``reads()`` reads, so a process reads its own reads."""

    _max_events: int = MAX_EVENTS
    settle: Callable[[], None] | None = None

    @property
    def max_events(self) -> int:
        return self._max_events

    @max_events.setter
    def max_events(self, value: int) -> None:
        self._max_events = check_max_events(value)


class TornLogLineWarning(UserWarning):
    """A log's last line was cut short by a crash; it was skipped."""


@dataclass(frozen=True)
class AuditEvent:
    """One logged event: its kind, when, whose, and the details."""

    kind: str
    time: str
    user_id: str | None
    tenant_id: str | None = None
    session_id: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "time": self.time, "user_id": self.user_id, "tenant_id": self.tenant_id,
                "session_id": self.session_id, **self.data}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> AuditEvent:
        core = {"kind", "time", "user_id", "tenant_id", "session_id"}
        return cls(raw["kind"], raw["time"], raw.get("user_id"), raw.get("tenant_id"), raw.get("session_id"),
                   {k: v for k, v in raw.items() if k not in core})


def user_hash(user_id: str, tenant_id: str | None = None) -> str:
    """A fingerprint of a user id, so an operator can check "was this user erased?" by hashing the
    id again. It keeps no content; but a guessable id (an e-mail, "user-42") can be found by trying
    candidates, so treat the fingerprint as pseudonymous, not anonymous."""
    return hashlib.sha256(json.dumps([tenant_id, user_id]).encode("utf-8")).hexdigest()[:16]


def mentions_record(event: AuditEvent, record_id: int) -> bool:
    """Whether an event holds one record's text: its write, or a read that judged or showed it."""
    return record_id in records_named(event)


def records_named(event: AuditEvent) -> set[int]:
    """The records whose text an event holds: a write's record; a read's candidates and shown."""
    if event.kind == "read":
        return {*event.data.get("shown", []), *(c.get("record_id") for c in event.data.get("candidates", []))}
    return {event.data.get("record_id")}


def _owned_by(event: AuditEvent, user_id: str, tenant_id: str | None) -> bool:
    return event.user_id == user_id and event.tenant_id == tenant_id


def encode_event(event: AuditEvent) -> str:
    """One event as the JSON text of its log line."""
    return json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"))


def _encode(event: AuditEvent | None, text: str | None = None) -> bytes:
    return (encode_event(event) if text is None else text).encode("utf-8") + b"\n"  # type: ignore[arg-type]


class _JsonlFile:
    """One log: the live file plus its rotated predecessors."""

    def __init__(self, path: Path, max_bytes: int, backups: int, fsync: bool) -> None:
        self.path, self.max_bytes, self.backups, self.fsync = path, max_bytes, backups, fsync
        self._checked_tail = False  # the first append of a process repairs a tail torn by a crash

    def rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.stem}.{n}{self.path.suffix}")

    def files(self) -> list[Path]:
        """Oldest first: every rotated file there is (``.N`` ... ``.1``, even beyond ``backups``), then the live one."""
        pattern = re.compile(re.escape(self.path.stem) + r"\.(\d{1,6})" + re.escape(self.path.suffix))
        rotated = [(int(m.group(1)), p) for p in self.path.parent.glob(f"{self.path.stem}.*{self.path.suffix}")
                   if (m := pattern.fullmatch(p.name))]
        chain = [p for _, p in sorted(rotated, reverse=True)] + [self.path]
        return [path for path in chain if path.exists()]

    def append(self, line: bytes) -> None:
        if not self._checked_tail:
            self._drop_torn_tail()
            self._checked_tail = True
        if self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
            self._rotate()
        with open_private_append(self.path) as handle:
            append_whole(handle, line, fsync=self.fsync)

    def remove_stale_temp_files(self) -> None:
        """A crash during a rewrite can leave a temp file behind; it may hold erased text."""
        for stale in self.path.parent.glob(f".{self.path.stem}*{self.path.suffix}.*.tmp"):
            stale.unlink(missing_ok=True)

    def _drop_torn_tail(self) -> None:
        # subtle: a line cut short by a crash must go before we append, or it would end up in the
        # middle of the file — where a damaged line is (rightly) an error, not something to skip.
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        data = self.path.read_bytes()
        if data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        with open(self.path, "r+b") as handle:
            handle.truncate(keep)
        warn(f"{self.path}: dropped an incomplete last line ({len(data) - keep} bytes) left by an "
             "interrupted write", TornLogLineWarning, room="storage", stacklevel=4)

    def _rotate(self) -> None:
        # .N-1 -> .N, ..., live -> .1; the oldest beyond `backups` falls off the end.
        for n in range(self.backups, 0, -1):
            source = self.rotated(n - 1) if n > 1 else self.path
            if source.exists():
                source.replace(self.rotated(n))

    def read(self) -> Iterator[AuditEvent]:
        for path in self.files():
            yield from _read_file(path)


@dataclass(frozen=True)
class DamagedLine:
    """A log line that could not be read: which file, which line (1-based)."""

    path: Path
    line: int


def _read_file(path: Path) -> Iterator[AuditEvent]:
    for event in _read_lenient(path, strict=True):
        if isinstance(event, AuditEvent):
            yield event


def _read_lenient(path: Path, *, strict: bool) -> Iterator[AuditEvent | DamagedLine]:
    """The file's events; a damaged line raises (``strict``) or comes back as a ``DamagedLine``."""
    data = path.read_bytes()
    complete, _, torn = data.rpartition(b"\n")
    if torn and strict:
        warn(f"{path}: skipped an incomplete last line ({len(torn)} bytes) left by an interrupted write",
             TornLogLineWarning, room="storage", stacklevel=3)
    for number, raw in enumerate(complete.split(b"\n") if complete else [], start=1):
        if not raw.strip():
            continue
        try:
            yield AuditEvent.from_dict(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            if strict:
                raise StoreCorruptError(f"unreadable audit event ({exc})", path=path, line=number) from exc
            yield DamagedLine(path, number)


class JsonlAuditLog(EventBound):
    """The write log and the read log of one store as JSON-lines files (or in memory, for an
    in-memory manager). ``v2_memory.observe.audit.AuditLog`` is this class under its public name."""

    def __init__(self, folder: Path | str | None = None, *, stem: str = "memory_store",
                 max_bytes: int = 5_000_000, backups: int = 3, fsync: bool = False, max_events: int = MAX_EVENTS) -> None:
        if max_bytes < 1024 or backups < 1:
            raise ValueError("max_bytes must be >= 1024 and backups >= 1")
        self.max_events = max_events  # in memory only: files rotate by size
        self._lock = threading.RLock()
        self.folder = Path(folder) if folder is not None else None
        self._memory: dict[str, list[AuditEvent]] = {"writes": [], "reads": []}
        self._logs: dict[str, _JsonlFile] = {}
        self.damaged: list[DamagedLine] = []  # lines a rewrite found unreadable and dropped
        if self.folder is not None:
            if self.folder.exists() and not self.folder.is_dir():
                raise StorePathError("audit log folder is not a directory", path=self.folder)
            self.folder.mkdir(parents=True, exist_ok=True)
            self._logs = {name: _JsonlFile(self.folder / f"{stem}.{name}.jsonl", max_bytes, backups, fsync)
                          for name in ("writes", "reads")}

    def log_write(self, event: AuditEvent) -> None:
        """Record a write or lifecycle event."""
        self._append("writes", event)

    def log_read(self, event: AuditEvent) -> None:
        self._append("reads", event)

    def _append(self, name: str, event: AuditEvent | None, text: str | None = None) -> None:
        with self._lock:
            if self._logs:
                self._logs[name].append(_encode(event, text))
            else:
                events = self._memory[name]
                events.append(event)
                if len(events) > self.max_events + self.max_events // 100:  # trimmed now and then: linear overall
                    del events[:len(events) - self.max_events]

    def writes(self) -> list[AuditEvent]:
        """Every write-log event, oldest first (rotated files included)."""
        return self._events("writes")

    def reads(self) -> list[AuditEvent]:
        """Every read-log event, oldest first, this process's waiting reads written first (``settle``)."""
        if self.settle is not None:
            self.settle()
        return self._events("reads")

    def _events(self, name: str) -> list[AuditEvent]:
        with self._lock:
            return list(self._logs[name].read()) if self._logs else self._memory[name][-self.max_events:]

    def erase(self, user_id: str, tenant_id: str | None = None) -> tuple[int, list[Path]]:
        """Remove the user's events from every log; return how many, and which files were rewritten."""
        return self.remove(lambda event: _owned_by(event, user_id, tenant_id))

    def forget(self, record_id: int, user_id: str, tenant_id: str | None = None) -> tuple[int, list[Path]]:
        """Remove the user's events that hold one forgotten record's text: its write, and every read
        that had it as a candidate or showed it (window, summary snippet or memory: the ``shown`` ids).
        Other users' events are never touched, whatever text they hold."""

        return self.remove(lambda event: _owned_by(event, user_id, tenant_id) and mentions_record(event, record_id))

    def remove(self, doomed: Callable[[AuditEvent], bool]) -> tuple[int, list[Path]]:
        """Rewrite every log without the events ``doomed`` picks (atomically, file by file).

        Damaged lines are dropped too and listed in ``self.damaged`` (a rewrite is the moment they
        would otherwise be kept forever, unreadable and unattributable)."""
        removed, rewritten = 0, []
        with self._lock:
            for name, events in self._memory.items():
                kept = [e for e in events if not doomed(e)]
                removed += len(events) - len(kept)
                self._memory[name] = kept
            for log in self._logs.values():
                log.remove_stale_temp_files()
                for path in log.files():
                    # subtle: a torn last line is skipped by reading, but its bytes are still on
                    # disk (and may be the very text being erased): rewriting drops them too.
                    torn = not path.read_bytes().endswith(b"\n") and path.stat().st_size > 0
                    items = list(_read_lenient(path, strict=False))
                    damaged = [item for item in items if isinstance(item, DamagedLine)]
                    events = [item for item in items if isinstance(item, AuditEvent)]
                    kept = [e for e in events if not doomed(e)]
                    if len(kept) != len(events) or torn or damaged:
                        atomic_write_bytes(path, b"".join(_encode(e) for e in kept))
                        removed += len(events) - len(kept)
                        rewritten.append(path)
                        self.damaged.extend(damaged)
        return removed, rewritten

    def append_events(self, name: str, events: list[AuditEvent]) -> None:
        """Append events to the ``writes`` or ``reads`` log."""
        for event in events:
            self._append(name, event)

    def append_lines(self, name: str, lines: list[str]) -> None:
        """Append events given as their ``encode_event`` texts (the storage's outbox flushes here)."""
        for line in lines:
            self._append(name, AuditEvent.from_dict(json.loads(line)) if not self._logs else None, line)

    def import_events(self, name: str, events: list[AuditEvent]) -> None:
        """Append copied events (a migration) with one write and no rotation: a log never drops
        events it was given to keep (the next ordinary append rotates the file whole)."""
        with self._lock:
            if not self._logs:
                self._memory[name].extend(events)
            elif events:
                with open_private_append(self._logs[name].path) as handle:
                    append_whole(handle, b"".join(_encode(e) for e in events), fsync=self._logs[name].fsync)

    def seqs(self, name: str) -> set[int]:
        """The outbox sequence numbers already in one log (to flush an outbox exactly once after a crash)."""
        return {e.data["seq"] for e in self._events(name) if isinstance(e.data.get("seq"), int)}

    def files(self) -> list[Path]:
        return [path for log in self._logs.values() for path in log.files()]
