"""Audit logs: what was written to memory, and what was read from it, as JSON Lines.

Diagnosis starts from the write side (most pollution is written in, not searched up), so every
write is logged with its source, trust, weight and the policy's reasons, and every read with its
route, every candidate's numbers and verdict, and the context that was built:

    memory_store.writes.jsonl   {"kind": "write", "time": ..., "user_id": ..., "record_id": ...,
                                 "source": ..., "verified": ..., "weight": ..., "reasons": [...]}
                                also lifecycle events: verify, confirm_fact, end_session,
                                start_task, task_progress, finish_task, erasure
    memory_store.reads.jsonl    {"kind": "read", "query": ..., "route": ..., "candidates": [...],
                                 "context": ..., "context_tokens": ...}

Each event is appended with a single write (a crash can only cut the last line short, and reading
skips such a line with a warning); a damaged line anywhere else raises ``StoreCorruptError``.
Files rotate by size (``.1``, ``.2``, ... hold older events). ``erase`` rewrites every file
without the user's events and the manager records that an erasure happened — a fingerprint of the
id and the counts, never the content; ``forget`` does the same for one record's events.
With ``folder=None`` the events stay in memory (the health report still works).
"""
from __future__ import annotations

import hashlib
import json
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..errors import StoreCorruptError, StorePathError
from ..files import append_whole, atomic_write_bytes, open_private_append
from ..governance.sensitive import find_sensitive, redact
from ..text.tokenizer import tokenize

__all__ = ["AuditEvent", "AuditLog", "TornLogLineWarning", "user_hash", "write_event", "read_event"]


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


def _encode(event: AuditEvent) -> bytes:
    return json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _JsonlFile:
    """One log: the live file plus its rotated predecessors."""

    def __init__(self, path: Path, max_bytes: int, backups: int, fsync: bool) -> None:
        self.path, self.max_bytes, self.backups, self.fsync = path, max_bytes, backups, fsync
        self._checked_tail = False  # the first append of a process repairs a tail torn by a crash

    def rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.stem}.{n}{self.path.suffix}")

    def files(self) -> list[Path]:
        """Oldest first: .N, ..., .1, then the live file (only those that exist)."""
        chain = [self.rotated(n) for n in range(self.backups, 0, -1)] + [self.path]
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
        warnings.warn(f"{self.path}: dropped an incomplete last line ({len(data) - keep} bytes) left by an "
                      "interrupted write", TornLogLineWarning, stacklevel=4)

    def _rotate(self) -> None:
        # .N-1 -> .N, ..., live -> .1; the oldest beyond `backups` falls off the end.
        for n in range(self.backups, 0, -1):
            source = self.rotated(n - 1) if n > 1 else self.path
            if source.exists():
                source.replace(self.rotated(n))

    def read(self) -> Iterator[AuditEvent]:
        for path in self.files():
            yield from _read_file(path)


def _read_file(path: Path) -> Iterator[AuditEvent]:
    data = path.read_bytes()
    complete, _, torn = data.rpartition(b"\n")
    if torn:
        warnings.warn(f"{path}: skipped an incomplete last line ({len(torn)} bytes) left by an interrupted write",
                      TornLogLineWarning, stacklevel=3)
    for number, raw in enumerate(complete.split(b"\n") if complete else [], start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw.decode("utf-8"))
            yield AuditEvent.from_dict(event)
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise StoreCorruptError(f"unreadable audit event ({exc})", path=path, line=number) from exc


class AuditLog:
    """The write log and the read log of one store (or of an in-memory manager)."""

    def __init__(self, folder: Path | str | None = None, *, stem: str = "memory_store",
                 max_bytes: int = 5_000_000, backups: int = 3, fsync: bool = False) -> None:
        if max_bytes < 1024 or backups < 1:
            raise ValueError("max_bytes must be >= 1024 and backups >= 1")
        self._lock = threading.RLock()
        self.folder = Path(folder) if folder is not None else None
        self._memory: dict[str, list[AuditEvent]] = {"writes": [], "reads": []}
        self._logs: dict[str, _JsonlFile] = {}
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

    def _append(self, name: str, event: AuditEvent) -> None:
        with self._lock:
            if self._logs:
                self._logs[name].append(_encode(event))
            else:
                self._memory[name].append(event)

    def writes(self) -> list[AuditEvent]:
        """Every write-log event, oldest first (rotated files included)."""
        return self._events("writes")

    def reads(self) -> list[AuditEvent]:
        return self._events("reads")

    def _events(self, name: str) -> list[AuditEvent]:
        with self._lock:
            return list(self._logs[name].read()) if self._logs else list(self._memory[name])

    def erase(self, user_id: str, tenant_id: str | None = None) -> tuple[int, list[Path]]:
        """Remove the user's events from every log; return how many, and which files were rewritten."""
        return self.remove(lambda event: event.user_id == user_id and event.tenant_id == tenant_id)

    def forget(self, record_id: int, content: str) -> tuple[int, list[Path]]:
        """Remove the events that hold one forgotten record's text: its write, and every read that
        had it as a candidate or showed it (window, summary snippet or memory: the ``shown`` ids)."""
        text = _safe(content) or content

        def mentions(event: AuditEvent) -> bool:
            if event.kind == "read":
                return (record_id in event.data.get("shown", [])
                        or any(c.get("record_id") == record_id for c in event.data.get("candidates", []))
                        or text in (event.data.get("context") or ""))
            return event.data.get("record_id") == record_id
        return self.remove(mentions)

    def remove(self, doomed: Callable[[AuditEvent], bool]) -> tuple[int, list[Path]]:
        """Rewrite every log without the events ``doomed`` picks (atomically, file by file)."""
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
                    events = list(_read_file(path))
                    kept = [e for e in events if not doomed(e)]
                    if len(kept) != len(events) or torn:
                        atomic_write_bytes(path, b"".join(_encode(e) for e in kept))
                        removed += len(events) - len(kept)
                        rewritten.append(path)
        return removed, rewritten

    def files(self) -> list[Path]:
        return [path for log in self._logs.values() for path in log.files()]


# -- building events from what the manager did ---------------------------------------------------


def _safe(text: str | None) -> str | None:
    """Text with personal data replaced by its kind: what a log may hold."""
    return redact(text, find_sensitive(text)) if text else text


def write_event(message: Any, result: Any) -> AuditEvent:
    """A write-log event for ``MemoryManager.add``: the text as stored (never raw sensitive data)."""
    data = {**result.to_dict(), "role": message.role, "task_id": message.task_id, "content": _safe(message.content)}
    data["sensitive"] = [finding["kind"] for finding in result.sensitive]  # kinds only in logs
    return AuditEvent("write", message.timestamp.isoformat(), message.user_id, message.tenant_id,
                      message.session_id, data)


def read_event(explanation: Any, time: str, scope: tuple[str | None, str], read_scope: Mapping[str, Any],
               call: str, context: str | None = None, shown: Sequence[int] = ()) -> AuditEvent:
    """A read-log event: the route, every candidate's numbers and verdict, and the context size."""
    candidates = [
        {"record_id": a.record_id, "content": _safe(a.record.get("content")), "source": a.record.get("source"),
         "domain": a.record.get("domain"), "session_id": a.record.get("session_id"),
         "similarity": round(a.similarity, 6), "weight": round(a.weight, 6), "effective": round(a.effective, 6),
         "admitted": a.admitted, "reasons": list(a.reasons)}
        for a in explanation.admissions
    ]
    data: dict[str, Any] = {"call": call, "query": _safe(explanation.query), "route": explanation.route.to_dict(),
                            "task_id": read_scope.get("task_id"), "domain": read_scope.get("domain"),
                            "candidates": candidates, "admitted": [a.record_id for a in explanation.admitted],
                            "shown": sorted(set(shown))}
    if context is not None:
        data.update(context=_safe(context), context_chars=len(context), context_tokens=len(tokenize(context)))
    return AuditEvent("read", time, scope[1], scope[0], read_scope.get("session_id"), data)
