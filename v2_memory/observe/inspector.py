"""The inspector: find the polluting write in minutes, from the logs, without reading code.

The manual's four-step diagnosis starts from the write log: what entered memory, from which
source, how trusted. Then the read log: what each query retrieved, with scores and reasons, and
how the context changed from one response to the next. And when one session went wrong and
another did not, a *snapshot diff* lines the two up and shows where they first part ways.

    open_store_dir(where)          the store, ledger and logs, read-only: a folder or JSON store
                                   file, a SQLite file, or a PostgreSQL URL
    session_turns(...)             the last N turns of a session: writes, the read, context diff
    diff_sessions(...)             two sessions aligned; every difference, and the first one
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .audit import AuditEvent, AuditLog
from ..errors import StorePathError
from ..storage.backends import backend_of
from ..storage.database import StateDatabase
from ..storage.ledger import Ledger
from ..storage import JsonVectorStore

__all__ = ["Inspection", "open_store_dir", "Turn", "sessions", "session_owners", "session_turns", "SessionDiff",
           "diff_sessions", "STORE_FILE"]

STORE_FILE = "memory_store.json"


@dataclass
class Inspection:
    """A store folder opened for reading: nothing here can write, lock or trim a file."""

    store_path: Path | str  # the JSON store file, the SQLite file, or the server's URL
    store: Any  # JsonVectorStore, or the records table (SqliteVectorStore)
    ledger: Ledger
    audit: Any  # AuditLog, or the audit table (SqliteAuditLog)

    def close(self) -> None:
        self.store.close()
        self.ledger.close()  # closes the database the tables share, too

    def __enter__(self) -> Inspection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_store_dir(path: Path | str, *, scorer: str | None = None) -> Inspection:
    """Open a store read-only: a folder holding memory_store.json or that file itself, a SQLite
    file (``.sqlite3``, ``.sqlite``, ``.db`` or ``sqlite:///path``), or a PostgreSQL URL.
    ``scorer`` ("article", the default, or "bm25") is how its searches score, as the agent's does."""
    backend, where = backend_of(path)
    if backend != "json":
        return _open_tables(backend, where, scorer)
    path = Path(path)
    store_path = path / STORE_FILE if path.is_dir() else path
    if not store_path.exists():
        raise StorePathError(f"no {STORE_FILE} here (run the demo, or point --store at your store's folder)",
                             path=store_path)
    stem = store_path.stem
    ledger = Ledger(store_path.with_name(stem + ".governance.sqlite3"), read_only=True)
    ledger.db.check_version()  # a newer release's state database is refused here too, not misread
    return Inspection(store_path, JsonVectorStore(store_path, read_only=True, scorer=scorer), ledger,
                      AuditLog(store_path.parent, stem=stem))


def _open_tables(backend: str, where: Any, scorer: str | None = None) -> Inspection:
    """A store whose records, ledger and logs are tables of one database, opened read-only."""
    from ..storage.sqlite_store import SqliteAuditLog, SqliteVectorStore

    if backend == "sqlite":
        if not Path(where).is_file():
            raise StorePathError("no SQLite store here", path=where)
        db: Any = StateDatabase(where, read_only=True)
    else:
        from ..storage.postgres import PostgresDatabase

        db = PostgresDatabase(str(where), read_only=True)
    try:
        has_meta = ("SELECT count(*) FROM sqlite_master WHERE name = 'meta'" if backend == "sqlite"
                    else "SELECT count(*) FROM (SELECT to_regclass('meta') AS t) found WHERE t IS NOT NULL")
        if not db.fetchone(has_meta)[0]:  # an empty file, or a schema no store was ever opened in
            raise StorePathError("no v2_memory store here: the database holds none of its tables", path=db.where)
        db.check_version()  # a newer release's tables are refused here too, not misread
        return Inspection(db.where, SqliteVectorStore(db, scorer=scorer), Ledger(db), SqliteAuditLog(db))
    except BaseException:
        db.close()
        raise


# -- one session, turn by turn ------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What was written since the previous response, the read that built this response's context,
    and how that context differs from the previous one."""

    index: int
    writes: tuple[AuditEvent, ...]
    read: AuditEvent | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.index, "writes": [w.to_dict() for w in self.writes],
                "read": self.read.to_dict() if self.read else None,
                "context_diff": {"added": list(self.added), "removed": list(self.removed)}}


def session_owners(events: Sequence[AuditEvent], session_id: str) -> list[tuple[str | None, str]]:
    """The (tenant, user) pairs that wrote in a session — normally one."""
    return list(dict.fromkeys((e.tenant_id, e.user_id) for e in events if e.session_id == session_id and e.user_id))


def sessions(events: Sequence[AuditEvent]) -> dict[str, list[tuple[str | None, str]]]:
    """Every session id in the write log, with who wrote in it."""
    found: dict[str, list[tuple[str | None, str]]] = {}
    for e in events:
        if e.session_id and e.user_id and (e.tenant_id, e.user_id) not in found.setdefault(e.session_id, []):
            found[e.session_id].append((e.tenant_id, e.user_id))
    return found


def _owned(event: AuditEvent, session_id: str, owner: tuple[str | None, str] | None) -> bool:
    return event.session_id == session_id and (owner is None or (event.tenant_id, event.user_id) == owner)


def with_texts(read: AuditEvent, texts: Mapping[int, Any]) -> AuditEvent:
    """``read`` with the text of each candidate the read log keeps without it (a rejected one:
    ``audit.read_event``), taken from the write log's ``texts`` (record id -> content as logged)."""
    candidates = read.data.get("candidates") or []
    if all("content" in c for c in candidates):
        return read
    filled = [c if "content" in c else {**c, "content": texts.get(c.get("record_id"))} for c in candidates]
    return AuditEvent(read.kind, read.time, read.user_id, read.tenant_id, read.session_id, {**read.data, "candidates": filled})


def written_texts(events: Sequence[AuditEvent], owner: tuple[str | None, str] | None = None) -> dict[int, Any]:
    """Record id -> the text the write log holds for it (of ``owner`` = (tenant, user) only, if given)."""
    return {e.data["record_id"]: e.data.get("content") for e in events
            if e.kind == "write" and e.data.get("record_id") is not None and (owner is None or (e.tenant_id, e.user_id) == owner)}


def session_turns(events: Sequence[AuditEvent], reads: Sequence[AuditEvent], session_id: str,
                  window: int = 5, owner: tuple[str | None, str] | None = None) -> list[Turn]:
    """The last ``window`` turns of a session (of ``owner`` = (tenant, user), when session ids are
    shared across users). A turn ends with a ``build_context`` read."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    writes = [e for e in events if _owned(e, session_id, owner)]
    texts = written_texts(events, owner)
    responses = [with_texts(r, texts) for r in reads if _owned(r, session_id, owner) and r.data.get("call") == "build_context"]
    timeline = sorted([(e.time, 0, e) for e in writes] + [(r.time, 1, r) for r in responses], key=lambda t: t[:2])
    turns: list[Turn] = []
    pending: list[AuditEvent] = []
    previous: list[str] = []
    for _, is_read, event in timeline:
        if not is_read:
            pending.append(event)
            continue
        lines = (event.data.get("context") or "").splitlines()
        turns.append(Turn(len(turns) + 1, tuple(pending), event, tuple(l for l in lines if l not in previous),
                          tuple(l for l in previous if l not in lines)))
        pending, previous = [], lines
    if pending:
        turns.append(Turn(len(turns) + 1, tuple(pending), None))
    return turns[-window:]


# -- two sessions, side by side -----------------------------------------------------------------

_WRITE_FIELDS = ("role", "source", "verified", "weight", "stored_in", "fact")


@dataclass(frozen=True)
class SessionDiff:
    """Two sessions' writes and reads aligned by position; ``differences`` earliest first."""

    session_a: str
    session_b: str
    writes: tuple[tuple[AuditEvent | None, AuditEvent | None], ...]
    reads: tuple[tuple[AuditEvent | None, AuditEvent | None], ...]
    differences: tuple[str, ...] = field(default=())

    @property
    def first(self) -> str | None:
        return self.differences[0] if self.differences else None

    def to_dict(self) -> dict[str, Any]:
        pair = lambda a, b: [a.to_dict() if a else None, b.to_dict() if b else None]  # noqa: E731
        return {"session_a": self.session_a, "session_b": self.session_b, "first_difference": self.first,
                "differences": list(self.differences), "writes": [pair(a, b) for a, b in self.writes],
                "reads": [pair(a, b) for a, b in self.reads]}


def _aligned(left: list[AuditEvent], right: list[AuditEvent]) -> list[tuple[AuditEvent | None, AuditEvent | None]]:
    size = max(len(left), len(right))
    return [(left[i] if i < len(left) else None, right[i] if i < len(right) else None) for i in range(size)]


def _write_difference(n: int, a: AuditEvent | None, b: AuditEvent | None) -> str | None:
    if a is None or b is None:
        return f"write #{n}: only in session {'B' if a is None else 'A'}"
    changed = [f"{name} {a.data.get(name)!r} vs {b.data.get(name)!r}" for name in _WRITE_FIELDS
               if a.data.get(name) != b.data.get(name)]
    if not changed:
        return None
    texts = [a.data.get("content"), b.data.get("content")]
    shown = repr(texts[0]) if texts[0] == texts[1] else f"A {texts[0]!r} | B {texts[1]!r}"
    return f"write #{n} ({shown}): " + "; ".join(changed)


def _verdict(candidate: dict[str, Any]) -> str:
    if candidate.get("admitted"):
        return f"admitted (weight {candidate.get('weight')})"
    return "rejected: " + ", ".join(candidate.get("reasons", []))


def _read_difference(n: int, a: AuditEvent | None, b: AuditEvent | None) -> str | None:
    if a is None or b is None:
        return f"read #{n}: only in session {'B' if a is None else 'A'}"
    # Candidates are matched by their text: the same memory has different record ids in two sessions.
    left = {c.get("content"): c for c in a.data.get("candidates", [])}
    right = {c.get("content"): c for c in b.data.get("candidates", [])}
    for content in list(left) + [c for c in right if c not in left]:
        x, y = left.get(content), right.get(content)
        vx = _verdict(x) if x else "not a candidate"
        vy = _verdict(y) if y else "not a candidate"
        if vx != vy:
            return f"read #{n} (query {a.data.get('query')!r}): {content!r} — A {vx}; B {vy}"
    return None


def diff_sessions(events: Sequence[AuditEvent], reads: Sequence[AuditEvent], session_a: str, session_b: str) -> SessionDiff:
    """Line two sessions up, write by write and read by read, and list where they differ.

    Each session must belong to one user (a session id shared by two users is ambiguous)."""
    owners = {sid: session_owners(events, sid) for sid in (session_a, session_b)}
    for sid, found in owners.items():
        if len(found) > 1:
            raise ValueError(f"session {sid!r} has several users ({', '.join(u for _, u in found)}); it cannot be diffed")

    def writes_of(sid: str) -> list[AuditEvent]:
        return [e for e in events if e.kind == "write" and e.session_id == sid]

    texts = written_texts(events)

    def reads_of(sid: str) -> list[AuditEvent]:
        return [with_texts(r, texts) for r in reads if r.session_id == sid]

    writes = _aligned(writes_of(session_a), writes_of(session_b))
    read_pairs = _aligned(reads_of(session_a), reads_of(session_b))
    # Every difference, stamped with when it happened in session A, so the earliest comes first:
    # the polluting write usually shows up before the read it spoiled.
    found = [((a or b).time, d) for i, (a, b) in enumerate(writes) if (d := _write_difference(i + 1, a, b))]
    found += [((a or b).time, d) for i, (a, b) in enumerate(read_pairs) if (d := _read_difference(i + 1, a, b))]
    ordered = tuple(text for _, text in sorted(found, key=lambda pair: pair[0]))
    return SessionDiff(session_a, session_b, tuple(writes), tuple(read_pairs), ordered)
