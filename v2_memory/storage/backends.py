"""Backends, chosen by one argument: a path (or URL) names the store, its suffix the backend.

    MemoryManager(store_path="memory_store.json")        the article's JSON Lines file + a state database beside it
    MemoryManager(store_path="memory.sqlite3")           SQLite: one file, many processes (also sqlite:///path)
    MemoryManager(store_path="postgresql://user:pass@host/db")   PostgreSQL (also postgres://), extra ``postgres``
    MemoryManager(store_path=None)                       everything in memory

What each guarantees:
- **JSON** (the demo's): one writer process per file (an OS lock); crash-safe and atomic through
  a commit mark and erasure intents (see ``contract.py``); the record file stays the article's
  readable JSON Lines.
- **SQLite**: records, ledger, tracks and logs in one database, one ``COMMIT`` per operation; any
  number of processes read and write it (WAL, writers take turns); each sees the others' writes
  on its next call.
- **PostgreSQL**: the SQLite backend's tables on a server (``postgres.py``): the same single
  ``COMMIT`` per operation, writers take turns under an advisory lock, any number of processes
  on any number of machines.
"""
from __future__ import annotations

import time
import weakref
from pathlib import Path
from typing import Any

from .audit_log import JsonlAuditLog
from .contract import Storage
from .database import StateDatabase
from .vector_store import hooks_of
from ..errors import StoreCorruptError, StorePathError
from ..lru import DEFAULT_CACHE_USERS
from .urls import URL_SCHEMES, mask_url

__all__ = ["open_storage", "open_manager_storage", "json_storage", "sqlite_storage", "postgres_storage", "backend_of", "check_store_path",
           "SQLITE_SUFFIXES", "JSON_SUFFIXES"]

SQLITE_SUFFIXES = (".sqlite3", ".sqlite", ".db")
JSON_SUFFIXES = (".json", ".jsonl")


def backend_of(target: Path | str | None) -> tuple[str, Path | str | None]:
    """Which backend a store argument names, and its path (a URL for PostgreSQL):
    ``("json" | "sqlite" | "postgres", path)``."""
    if target is None:
        return "json", None
    if isinstance(target, str) and target.startswith(URL_SCHEMES):
        return "postgres", target
    if isinstance(target, str) and target.startswith("sqlite:///"):
        return "sqlite", Path(target[len("sqlite:///"):])  # sqlite:///rel/path, sqlite:////abs/path
    if isinstance(target, str) and "://" in target:
        raise ValueError(f"unknown store URL scheme in {target.split('://')[0]!r}://...; use a path, "
                         "sqlite:///path or postgresql://user@host/db")
    path = Path(target)
    return ("sqlite" if path.suffix.lower() in SQLITE_SUFFIXES else "json"), path


def open_storage(target: Path | str | None, *, fsync: bool = False, scorer: Any = None,
                 ledger_path: Path | str | None = None, adopt_store: bool = False,
                 cache_users: int = DEFAULT_CACHE_USERS) -> Storage:
    """Open the storage ``target`` names (see the module docstring). ``cache_users``: how many
    users' records and indexes the database backends keep cached (the JSON file holds all)."""
    backend, path = backend_of(target)
    if backend == "postgres":
        if ledger_path is not None:
            raise ValueError("a PostgreSQL store keeps its ledger in the same database; drop ledger_path")
        return postgres_storage(str(path), fsync=fsync, scorer=scorer, cache_users=cache_users)
    if backend == "sqlite":
        if ledger_path is not None:
            raise ValueError("a SQLite store keeps its ledger inside the same file; drop ledger_path")
        return sqlite_storage(path, fsync=fsync, scorer=scorer, cache_users=cache_users)
    return json_storage(path, fsync=fsync, scorer=scorer, ledger_path=ledger_path, adopt_store=adopt_store)


def open_manager_storage(store: Any, store_path: Path | str | None, *, fsync: bool, scorer: Any,
                         ledger_path: Path | str | None, audit: Any, adopt_store: bool, cache_users: int) -> Storage:
    """The storage a ``MemoryManager``'s arguments ask for: a plugged-in ``store`` (its state in
    memory, or at ``ledger_path``), or the backend ``store_path`` names; ``audit`` may be an
    ``JsonlAuditLog`` to write the logs to instead of the backend's own."""
    if store is not None:
        storage = Storage(store, StateDatabase(ledger_path, fsync=fsync), JsonlAuditLog(None), adopt_store=True)
    else:
        storage = open_storage(store_path, fsync=fsync, scorer=scorer, ledger_path=ledger_path, adopt_store=adopt_store,
                               cache_users=cache_users)
    if isinstance(audit, JsonlAuditLog):
        storage.audit = audit
    return storage


def check_store_path(target: Path | str | None, *, create: bool) -> None:
    """No silent amnesia: refuse a store argument that would quietly start an empty memory.

    A store that exists opens, whatever its name. A new file store's name must say its backend
    (``.json``/``.jsonl``, ``.sqlite3``/``.sqlite``/``.db``): ``mem.txt`` is refused, not made as
    JSON. Its folder (after following a symlink) must exist: a mistyped folder is an error, never
    created. A new store is made only with ``create=True`` (the manager's default, as in the
    article); ``create=False`` says the memory must already be there.
    """
    backend, path = backend_of(target)
    if path is None:
        return
    if backend == "postgres":
        if not create and not _server_holds_a_store(str(path)):
            raise StorePathError("no v2_memory store in this database or schema (create=False); "
                                 "create=True makes its tables", path=mask_url(str(path)))
        return
    path = Path(path)
    if path.exists():
        return  # an existing store, or a directory: the backend names that mistake itself
    if backend == "json" and path.suffix.lower() not in JSON_SUFFIXES:
        raise StorePathError(f"unknown store file extension {path.suffix or '(none)'!r}: name a .json file (JSON "
                             f"Lines), a {'/'.join(SQLITE_SUFFIXES)} file (SQLite) or a postgresql:// URL", path=path)
    if not path.resolve().parent.is_dir():  # resolved: a dangling symlink's target folder counts
        raise StorePathError(f"folder {path.parent} does not exist: create it first (a store is never opened "
                             "in a folder made up on the spot: a mistyped path would start an empty memory)", path=path)
    if not create:
        raise StorePathError("no store here (create=False); create=True starts a new, empty one", path=path)


def _server_holds_a_store(url: str) -> bool:
    from .postgres import PostgresDatabase

    db = PostgresDatabase(url, read_only=True)
    try:
        return bool(db.fetchone("SELECT to_regclass('meta') IS NOT NULL")[0])
    finally:
        db.close()


def sqlite_storage(path: Path | str, *, fsync: bool = False, scorer: Any = None,
                   cache_users: int = DEFAULT_CACHE_USERS) -> Storage:
    """Everything in one SQLite file."""
    path = Path(path)
    if path.is_dir():
        raise StorePathError("store path is a directory, expected a file", path=path)
    if path.is_file() and _stays_empty(path):  # SQLite would take it for a new, empty database
        raise StoreCorruptError("the file is empty (0 bytes): no v2_memory store, and no data to keep. If a "
                                "store was here, it was cut short: restore it from a backup; to start a new "
                                "one, delete the file", path=path)
    return tables_storage(StateDatabase(path.resolve() if path.is_symlink() else path, fsync=fsync), "sqlite", scorer,
                          cache_users)


def _stays_empty(path: Path, patience: float = 2.0) -> bool:
    """Whether the file is empty and stays so: another process creating the store right now leaves
    it empty for the moment between creating the file and writing its first page."""
    deadline = time.monotonic() + patience
    while path.stat().st_size == 0:
        if time.monotonic() > deadline:
            return True
        time.sleep(0.01)
    return False


def postgres_storage(url: str, *, fsync: bool = False, scorer: Any = None,
                     cache_users: int = DEFAULT_CACHE_USERS) -> Storage:
    """Everything in one PostgreSQL database (or schema): the SQLite backend's tables on a server."""
    from .postgres import PostgresDatabase

    return tables_storage(PostgresDatabase(url, fsync=fsync), "postgres", scorer, cache_users)


def tables_storage(db: Any, backend: str, scorer: Any = None, cache_users: int = DEFAULT_CACHE_USERS) -> Storage:
    """Records, logs and state as tables of one database (SQLite's or a server's); the database
    is closed again if the storage cannot be opened on it."""
    from .sqlite_store import SqliteAuditLog, SqliteVectorStore

    try:
        storage = Storage(SqliteVectorStore(db, scorer=scorer, cache_users=cache_users), db,  # type: ignore[arg-type]
                          SqliteAuditLog(db))
    except BaseException:
        db.close()
        raise
    storage.backend = backend
    return storage


def json_storage(path: Path | str | None, *, fsync: bool = False, scorer: Any = None, ledger_path: Path | str | None = None,
                 adopt_store: bool = False) -> Storage:
    """The article's JSON Lines store with the other tracks beside it (``path=None``: all in memory).

        memory_store.json                  the records (the article's file, an append-only log)
        memory_store.governance.sqlite3    the state database: ledger, tracks, outbox, intents
        memory_store.writes.jsonl / .reads.jsonl   the audit logs
    """
    from .json_store import JsonVectorStore

    if path is not None:
        _close_earlier_opening(Path(path))
    records = JsonVectorStore(path, fsync=fsync, scorer=scorer)
    db = None
    try:
        if path is None:
            db, audit = StateDatabase(ledger_path, fsync=fsync), JsonlAuditLog(None)
        else:
            real = records.path
            state = Path(ledger_path) if ledger_path is not None else real.with_name(real.stem + ".governance.sqlite3")
            db = StateDatabase(state, fsync=fsync)
            audit = JsonlAuditLog(real.parent, stem=real.stem, fsync=fsync)
        storage = Storage(records, db, audit, adopt_store=adopt_store)
    except BaseException:
        _abandon(records, db)
        raise
    storage.backend = "json"
    if path is not None:
        _OPEN[_key(Path(path))] = weakref.ref(storage)
    return storage


# resolved store path -> the Storage this process has open on it (a notebook cell run twice)
_OPEN: dict[Path, weakref.ref[Storage]] = {}


def _key(path: Path) -> Path:
    return path.resolve()


def _close_earlier_opening(path: Path) -> None:
    """Opening a store this process already has open closes the earlier opening first: re-running
    ``memory = MemoryManager(...)`` in a notebook just works, and the old object says why it stopped."""
    earlier = _OPEN.pop(_key(path), None)
    storage = earlier() if earlier is not None else None
    if storage is not None and not storage.closed:
        storage.close(reason="the same store was opened again in this process (a notebook cell run twice?); "
                             "use the newer MemoryManager")


def _abandon(records: Any, db: StateDatabase | None) -> None:
    """Undo a failed open: release the writer lock, and remove files this open created, so a
    second attempt meets exactly the situation the first one refused."""
    if db is not None:
        db.close()
        if db.created and db.path is not None:
            for path in db.files():
                path.unlink(missing_ok=True)
    hooks = hooks_of(records)
    records_path, created = hooks.path, hooks.created
    records.close()
    if created and records_path is not None:
        records_path.unlink(missing_ok=True)
