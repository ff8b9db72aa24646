"""``migrate``: copy a store to another backend — every record with its id, the ledger, the tracks,
the audit events — check the counts, and never change the source.

    >>> report = migrate("memory_store.json", "memory.sqlite3")      # doctest: +SKIP
    >>> report.ok, report.counts["records"]                           # doctest: +SKIP
    (True, (1200, 1200))

How the source stays untouched: it is never opened for writing. Its files are copied into a
temporary folder first — each SQLite file through SQLite's online backup from a read-only
connection (a consistent picture even while another process writes); a JSON store's files byte
for byte, holding its writer's lock (a store a writer has open is refused) — and the *copy* is opened, which finishes whatever a crash left
half done there (uncommitted records dropped, outbox flushed, erasures completed), exactly as the
next real open would. A PostgreSQL source is read through a read-only connection inside one
``REPEATABLE READ`` transaction (one picture, whatever other clients write). The copy is exported (``portable.py``), imported into the target in one
transaction, the target is closed, reopened, and its counts compared with the source's.

The target must be empty (a new path, or a store that never held anything): a migration never
merges. If the copy fails, a target file this call created is removed again (on a server, the
single import transaction rolls back).
"""
from __future__ import annotations

import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import StoreError, StoreInconsistentError, StoreLockedError, StorePathError
from ..files import lock_exclusively
from .audit_log import JsonlAuditLog
from .backends import backend_of, open_storage, tables_storage
from .contract import Storage
from .database import consistent_reads
from .urls import mask_url

__all__ = ["migrate", "MigrationReport"]


@dataclass(frozen=True)
class MigrationReport:
    """What was copied: each count as (in the source, in the target after reopening it)."""

    source: str
    target: str
    source_backend: str
    target_backend: str
    counts: dict[str, tuple[int, int]]

    @property
    def ok(self) -> bool:
        return all(a == b for a, b in self.counts.values())

    @property
    def mismatches(self) -> list[str]:
        return [name for name, (a, b) in self.counts.items() if a != b]

    def to_dict(self) -> dict[str, object]:
        return {"source": self.source, "target": self.target, "source_backend": self.source_backend,
                "target_backend": self.target_backend, "ok": self.ok,
                "counts": {name: {"source": a, "target": b} for name, (a, b) in self.counts.items()}}


def migrate(source: Path | str, target: Path | str) -> MigrationReport:
    """Copy the store ``source`` names into the empty store ``target`` names (any backends).

    Raises ``StorePathError`` for a missing source or a target that is the source,
    ``StoreInconsistentError`` when the target already holds data or the counts disagree after
    the copy (the report is on the error as ``.report``)."""
    source_backend, source_where = _existing(source)
    target_backend, target_where = backend_of(target)
    if target_where is None:
        raise ValueError("migrate needs a target: a .json file, a .sqlite3 file, sqlite:///path or postgresql://...")
    if _same_store(source_backend, source_where, target_backend, target_where):
        raise StorePathError("the target is the source (or one of its files); pick a new one", path=str(target_where))
    with tempfile.TemporaryDirectory(prefix="v2_memory_migrate_") as folder:
        original = _open_source(source_backend, source_where, Path(folder))
        try:
            with consistent_reads(original.db):
                source_counts = original.counts()
                _copy_into(original, target, target_backend, target_where)
        finally:
            original.close()
    copied = open_storage(target)  # reopened: the counts are what the next user of the target sees
    try:
        target_counts = copied.counts()
    finally:
        copied.close()
    report = MigrationReport(_shown(source), _shown(target), source_backend, target_backend,
                             {name: (n, target_counts.get(name, 0)) for name, n in source_counts.items()})
    if not report.ok:
        error = StoreInconsistentError(f"the copy does not match the source in {', '.join(report.mismatches)}",
                                       path=_shown(target))
        error.report = report  # type: ignore[attr-defined]
        raise error
    return report


def _existing(source: Path | str) -> tuple[str, Path | str]:
    backend, where = backend_of(source)
    if backend == "postgres":
        return backend, where
    if where is None or not Path(where).is_file():
        raise StorePathError("no store here to migrate from", path=where or "(none)")
    return backend, where


def _same_store(source_backend: str, source: Path | str, target_backend: str, target: Path | str) -> bool:
    if "postgres" in (source_backend, target_backend):
        return source_backend == target_backend and str(source) == str(target)
    return Path(target).resolve() in {p.resolve() for p in _source_files(source_backend, Path(source))}


def _shown(where: Path | str) -> str:
    """How a store is named in reports and errors: a server URL with its password masked."""
    return mask_url(where) if backend_of(where)[0] == "postgres" else str(where)


def _open_source(backend: str, where: Path | str, folder: Path) -> Storage:
    """The source, opened so that nothing in it can change: files are copied and the copy opened;
    a server is read through a read-only connection."""
    if backend != "postgres":
        return open_storage(_snapshot(backend, Path(where), folder))
    from .postgres import PostgresDatabase

    db = PostgresDatabase(str(where), read_only=True)
    if "meta" not in db.tables() or db.meta("schema_version") is None:
        db.close()
        raise StorePathError("no store here to migrate from (no v2_memory tables in this schema)",
                             path=mask_url(str(where)))
    return tables_storage(db, "postgres")


def _copy_into(original: Storage, target: Path | str, backend: str, where: Path | str) -> None:
    """Import ``original``'s export into the target; remove the target's files again if this call
    made them and the copy failed (on a server the one import transaction rolls back instead)."""
    existed = backend == "postgres" or (Path(where).exists() and Path(where).stat().st_size > 0)
    storage = open_storage(target)
    try:
        storage.import_(original.export())
    except BaseException:
        files = storage.files()
        storage.close()
        if not existed:
            for path in files:
                path.unlink(missing_ok=True)
        raise
    storage.close()


# -- the snapshot: the source's files, copied without writing to any of them --------------------
def _source_files(backend: str, path: Path) -> list[Path]:
    """The files a store consists of: the SQLite file; or the JSON record file, its state
    database and every audit log (rotated ones included)."""
    if backend == "sqlite":
        return [path]
    return [path, _state_of(path), *JsonlAuditLog(path.parent, stem=path.stem).files()]


def _state_of(path: Path) -> Path:
    return path.with_name(path.stem + ".governance.sqlite3")


def _snapshot(backend: str, path: Path, folder: Path) -> Path:
    """Copy the source into ``folder`` under the same names; return the copy's store path.

    A JSON store is copied holding its writer's lock, so nothing changes it meanwhile: an add
    or an erasure between copying one of its files and the next would leave a copy whose logs
    name records it lacks, or quote what was erased. A store a writer has open is refused."""
    copy = folder / path.name
    if backend == "sqlite":
        _backup(path, copy)
        return copy
    with _no_writer(path):
        state = _state_of(path)
        if state.exists():
            _backup(state, folder / state.name)
        shutil.copyfile(path, copy)
        for log in JsonlAuditLog(path.parent, stem=path.stem).files():
            shutil.copyfile(log, folder / log.name)
    return copy


@contextmanager
def _no_writer(path: Path) -> Iterator[None]:
    """Hold a JSON store's writer lock, through a read-only handle (a source on a read-only medium
    is copied too). A store never opened for writing has no lock file, and none is made: the
    source is not changed. A lock file this process may not read locks nothing."""
    real = path.resolve()
    lock = real.with_name(f".{real.name}.lock")
    try:
        handle = lock_exclusively(lock, read_only=True)
    except (FileNotFoundError, PermissionError):
        yield
        return
    except StoreLockedError:
        raise StoreLockedError("a writer has this JSON store open (one writer per store file): close it, or stop "
                               "that process, and migrate again. A JSON store is copied while no one writes it; "
                               "SQLite and PostgreSQL stores can be copied live", path=path) from None
    try:
        yield
    finally:
        handle.close()


def _backup(path: Path, copy: Path) -> None:
    """SQLite's online backup from a read-only connection: a consistent copy, the source untouched."""
    try:
        source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            with sqlite3.connect(copy) as target:
                source.backup(target)
            target.close()
        finally:
            source.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot read this database read-only ({exc}); if a crash left it with a -wal file, "
                         "open it once with the library (which finishes the recovery) and migrate again",
                         path=path) from exc
