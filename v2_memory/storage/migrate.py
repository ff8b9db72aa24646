"""``migrate``: copy a store to another backend — every record with its id, the ledger, the tracks,
the audit events — check the counts, and never change the source.

    >>> report = migrate("memory_store.json", "memory.sqlite3")      # doctest: +SKIP
    >>> report.ok, report.counts["records"]                           # doctest: +SKIP
    (True, (1200, 1200))

How the source stays untouched: it is never opened for writing. Its files are copied into a
temporary folder first — each SQLite file through SQLite's online backup from a read-only
connection (a consistent picture even while another process writes), the JSON record file and
logs after it, byte for byte — and the *copy* is opened, which finishes whatever a crash left
half done there (uncommitted records dropped, outbox flushed, erasures completed), exactly as the
next real open would. The copy is exported (``portable.py``), imported into the target in one
transaction, the target is closed, reopened, and its counts compared with the source's.

The target must be empty (a new path, or a store that never held anything): a migration never
merges. If the copy fails, a target this call created is removed again.
"""
from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreError, StoreInconsistentError, StorePathError
from .audit_log import AuditLog
from .backends import backend_of, open_storage

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
    if "postgres" in (backend_of(source)[0], backend_of(target)[0]):
        # The snapshot and the target cleanup below are file operations; a server needs its own.
        raise ValueError("migrate copies between JSON and SQLite stores; PostgreSQL is not supported yet")
    source_backend, source_path = _existing(source)
    target_backend, target_path = backend_of(target)
    if target_path is None:
        raise ValueError("migrate needs a target path (a .json file, a .sqlite3 file or sqlite:///path)")
    if target_path.resolve() in {p.resolve() for p in _source_files(source_backend, source_path)}:
        raise StorePathError("the target is the source (or one of its files); pick a new path", path=target_path)
    with tempfile.TemporaryDirectory(prefix="v2_memory_migrate_") as folder:
        snapshot = _snapshot(source_backend, source_path, Path(folder))
        original = open_storage(snapshot)
        try:
            source_counts = original.counts()
            _copy_into(original, target, target_path)
        finally:
            original.close()
    copied = open_storage(target)  # reopened: the counts are what the next user of the target sees
    try:
        target_counts = copied.counts()
    finally:
        copied.close()
    report = MigrationReport(str(source), str(target), source_backend, target_backend,
                             {name: (n, target_counts.get(name, 0)) for name, n in source_counts.items()})
    if not report.ok:
        error = StoreInconsistentError(f"the copy does not match the source in {', '.join(report.mismatches)}",
                                       path=target_path)
        error.report = report  # type: ignore[attr-defined]
        raise error
    return report


def _existing(source: Path | str) -> tuple[str, Path]:
    backend, path = backend_of(source)
    if path is None or not path.is_file():
        raise StorePathError("no store here to migrate from", path=path or "(none)")
    return backend, path


def _copy_into(original, target: Path | str, target_path: Path) -> None:
    """Import ``original``'s export into the target; remove the target again if this call made it
    and the copy failed."""
    existed = target_path.exists() and target_path.stat().st_size > 0
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
    return [path, _state_of(path), *AuditLog(path.parent, stem=path.stem).files()]


def _state_of(path: Path) -> Path:
    return path.with_name(path.stem + ".governance.sqlite3")


def _snapshot(backend: str, path: Path, folder: Path) -> Path:
    """Copy the source into ``folder`` under the same names; return the copy's store path.

    The state database is copied first and the record file after it: records a writer appended
    in between are above the copied commit mark, so opening the copy drops them as uncommitted."""
    copy = folder / path.name
    if backend == "sqlite":
        _backup(path, copy)
        return copy
    state = _state_of(path)
    if state.exists():
        _backup(state, folder / state.name)
    shutil.copyfile(path, copy)
    for log in AuditLog(path.parent, stem=path.stem).files():
        shutil.copyfile(log, folder / log.name)
    return copy


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
