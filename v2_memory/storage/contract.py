"""The storage contract: everything the manager remembers, behind one object with transactions.

    storage.records     the long-term store (a ``VectorStore``: add, search, get, delete, ...)
    storage.ledger      what governance learned (trust, weights, identifiers, facts)
    storage.tracks      each scope's recent window, summary, sessions and tasks
    storage.audit       the write and read logs
    storage.vectors     each record's embedding, when the manager has an embedder (``vectors.py``)
    storage.transaction()   one block, all or nothing, across all four
    storage.writing(scope)  ... whose writes touch only that user's rows: on a server, other users' writers go on
    storage.export() / import_(items) / counts()   the portable form ``migrate`` copies (``portable.py``)

The manager talks to this and never names a backend; a backend never decides admission.

How one block becomes atomic. The ledger, the tracks, an *outbox* of audit events and the
*intents* of erasures all live in one SQLite state database, so its ``COMMIT`` is the commit
point. The record file is outside it, so: records added in a block are appended just before the
``COMMIT`` together with a *commit mark* (the highest committed record id). A crash between the
two leaves records above the mark; the next open drops them (they were never acknowledged). A
failed ``COMMIT`` cuts them off at once. Audit events wait in the outbox and are appended to the
logs after the ``COMMIT`` (the next open flushes what a crash left there, exactly once).

Erasure must remove bytes from several files, which no single commit can do. It commits an
*intent* with the state-database part of the erasure, then rewrites the record file and the logs,
then deletes the intent. A crash in between leaves the intent, and the next open finishes it.
"""
from __future__ import annotations

import json
import threading
from contextlib import contextmanager, nullcontext
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..diagnostics import logger, warn
from ..errors import StoreError, StoreInconsistentError
from .audit_log import AuditEvent, EventBound, JsonlAuditLog, DamagedLine, encode_event, mentions_record, records_named
from .vector_store import VectorStore, hooks_of
from .database import StateDatabase, consistent_reads
from .ledger import Ledger, scope_key
from . import portable
from .read_book import ReadBook
from .track_tables import ScopeTracks, TrackTables
from .vectors import VectorTable

__all__ = ["Storage", "ErasureDone", "UncommittedRecordWarning", "DelayedLogWarning"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, log TEXT NOT NULL, user_id TEXT, tenant_id TEXT, event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT, op TEXT NOT NULL, user_id TEXT NOT NULL, tenant_id TEXT,
    record_id INTEGER);
"""
COMMIT_MARK = "committed_through"


class UncommittedRecordWarning(UserWarning):
    """Opening dropped records that were appended but never committed (a crash mid-``add``)."""


class DelayedLogWarning(UserWarning):
    """A change committed, but appending its audit events to the log files failed (disk full):
    they wait in the outbox, and the next call or open appends them."""


@dataclass(frozen=True)
class ErasureDone:
    """What finishing one erasure intent removed from the files outside the state database."""

    op: str
    user_id: str
    tenant_id: str | None
    store: int
    logs: int
    store_files: tuple[str, ...]
    log_files: tuple[str, ...]
    damaged_log_lines: tuple[DamagedLine, ...] = ()
    record_id: int | None = None  # the forgotten record (None for erase_user)


class Storage:
    """Records + state database + audit logs, with one ``transaction()`` over all of them.

    ``records`` is any ``VectorStore``; with a ``batch()`` (the built-in stores) its adds join the
    transaction. ``adopt_store=True`` accepts a store file that has records but no state database
    yet (written by ``JsonVectorStore`` alone): its records are then trusted by their source.
    """

    backend = "custom"

    def __init__(self, records: VectorStore, db: StateDatabase, audit: JsonlAuditLog, *, adopt_store: bool = False) -> None:
        self.records, self.db, self.audit = records, db, audit
        self._seen_version: int | None = None
        self._done: list[ErasureDone] = []  # erasures carried out inside the open transaction
        # The outbox (file logs only): every row up to ``_logged_through`` is in the logs already;
        # rows up to ``_to_delete`` wait for the next block's COMMIT to delete them.
        self._logged_through = 0
        self._to_delete: int | None = None
        # Records in the state database itself (SQLite) commit with everything else; a file does not.
        self.hooks = hooks_of(records)  # what the store does for a transaction (``vector_store.py``)
        self.records_in_database = self.hooks.db is db
        self.ledger = Ledger(db, ids_reused=not self.records_in_database)
        self.tracks = TrackTables(db)
        self.vectors = VectorTable(db)
        self.book = ReadBook(db)  # reads' usage and events, written with the next write
        self.ledger.defer = self.vectors.defer = self.book.defer
        db.on_begin = self.book.write  # what earlier reads recorded commits with the next write, whoever writes
        db.on_end = self.book.ended  # ... or waits again if that write rolls back
        self._writing = threading.local()  # the scopes said by ``writing`` in this thread (``scopes``)
        db.lock_scopes = self._lock_scopes
        if isinstance(audit, EventBound):
            audit.settle = partial(self.book.settle, self)  # this process reads its own reads
        db.ensure(_SCHEMA)
        db.check_version()
        if not db.read_only:
            self._check_consistent(adopt_store)
            self._recover()

    # -- opening -------------------------------------------------------------------------------
    def _check_consistent(self, adopt_store: bool) -> None:
        """A state database and a store belong together; one missing beside the other is an error.

        Records kept inside the state database (SQLite) cannot go missing apart from it; there the
        check is skipped, since another process may fill a database this open found empty."""
        if self.records_in_database:
            return
        store_new, store_path = self.hooks.created, self.hooks.path
        mark = self.db.meta(COMMIT_MARK)
        if self.db.created and not store_new and len(self.records.all_records()) and not adopt_store:
            raise StoreInconsistentError(
                f"the store holds {len(self.records.all_records())} records but its state database "
                f"{self.db.path} is missing or empty, so every correction, verification and isolation "
                "would be forgotten. Restore that file from a backup; or, if this store never had one "
                "(written by JsonVectorStore alone), open it once with adopt_store=True to trust its "
                "records by their source", path=store_path)
        if store_new and not self.db.created and mark is not None and int(mark) > 0:
            raise StoreInconsistentError(
                f"the store file is missing or empty but its state database {self.db.path} remembers "
                f"{mark} records: ids would restart and the ledger would describe records that are gone. "
                "Restore the store file from a backup, or delete the state database too to start over",
                path=store_path)

    def _check_past_mark(self, mark: int) -> None:
        """Records past the commit mark are dropped only when a crash is all they can come from:
        the file's last records, numbered on from the mark, no event in the logs (appended only
        after a commit) naming one, and a file that still reaches the mark. Anything else is an
        error, and no record is dropped: a state database restored from an older backup would
        otherwise delete every record added since it, and a file cut short would hand the lost
        records' ids out again."""
        where = self.hooks.path
        if self.records.last_id < mark:
            raise StoreInconsistentError(
                f"the state database {self.db.path} committed records up to id {mark}, but the store file "
                f"reaches only id {self.records.last_id}: it was cut short or replaced by an older copy. Restore "
                "it from a backup at least as new as the state database, or both files from the same backup. "
                "(With no backup: move the state database aside and open with adopt_store=True. Every record is "
                "then trusted by its source: the corrections, confirmations, isolation and unfinished erasures "
                "the state database held are lost)", path=where)
        tail = self.records.records_after(mark)
        if tail and self._logged(set(tail)):
            raise StoreInconsistentError(
                f"the store file holds records {tail[0]}..{tail[-1]} past its state database's last commit (id "
                f"{mark}), and the audit logs show they were committed: the state database {self.db.path} is "
                "older than the file (restored from an older backup, or its last commits were lost in a power "
                "cut with fsync=False). Restore the state database that belongs with this file, or both files "
                f"from the same backup. To give those records up instead, delete the file's last {len(tail)} "
                "line(s) (their events stay in the logs until erased). No record was dropped", path=where)

    def _logged(self, record_ids: set[int]) -> bool:
        """Whether any audit event names one of these records (a damaged log is no witness)."""
        try:
            events = self.audit.writes() + self.audit.reads()
        except StoreError:
            return False
        return any(not record_ids.isdisjoint(records_named(event)) for event in events)

    def _recover(self) -> None:
        """Finish what a crash interrupted: uncommitted records out, outbox flushed, erasures done."""
        mark = self.db.meta(COMMIT_MARK)
        if mark is not None and self.hooks.recovers_by_mark:
            self._check_past_mark(int(mark))
            dropped = self.hooks.drop_records_after(int(mark))
            if dropped:
                warn(f"dropped {len(dropped)} record(s) (ids {dropped[0]}..{dropped[-1]}) appended by an "
                     "add or a batch that was interrupted before it committed; it was never acknowledged",
                     UncommittedRecordWarning, room="storage", stacklevel=4)
        self._set_mark()
        self._flush_outbox(after_crash=True)
        finished = self.complete_intents()
        if finished:
            logger("storage").warning("finished %d erasure(s) that an earlier process committed but was stopped "
                                      "before carrying out on the files", len(finished))

    def _set_mark(self) -> None:
        if self.records_in_database:
            return  # committed with everything else: no mark needed
        last = self.hooks.last_id
        if last is not None and self.db.meta(COMMIT_MARK) != str(last):
            self.db.set_meta(COMMIT_MARK, str(last))

    # -- transactions --------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Storage]:
        """One block of changes to every track: all committed together, or none."""
        outer, began = not self.db.in_transaction, False  # began: a lock not taken undoes nothing
        appended, emptied = False, None
        try:
            with self.db.transaction():
                began = True
                with self.hooks.batch() if outer else nullcontext():
                    yield self
                appended = outer
                if outer:
                    self._set_mark()  # in the same COMMIT as everything else
                    emptied = self._empty_outbox()
        except BaseException:
            if appended:
                self.hooks.undo_last_append()  # the records went to the file, but the COMMIT failed
            if outer and began:
                self.hooks.rolled_back()  # a store that caches rows must forget those that were never committed
                self._done.clear()  # rolled back: none of it happened
                self.tracks.rolled_back()
            raise
        if outer:
            if emptied is not None and self._to_delete == emptied:
                self._to_delete = None
            try:
                self._flush_outbox()
            except (OSError, StoreError) as exc:
                # Committed: raising now would invite a retry that stores the write twice. The
                # events stay in the outbox; the next block (or the next open) appends them.
                warn(f"the change is committed, but its audit events could not be appended to the logs yet "
                     f"({exc}); they wait in the outbox and the next call or open appends them",
                     DelayedLogWarning, room="storage", stacklevel=3)

    def reading(self, scope: tuple | None = None) -> Any:
        """A read block of one ``(tenant_id, user_id)`` scope: one picture of the store, no write
        lock; the usage and audit event it records wait for this process's next write, which locks
        that scope too (``read_book.py``). None: the read does not say (that write locks the store)."""
        return self.book.reading(self, None if scope is None else scope_key(scope[1], scope[0]))

    @contextmanager
    def writing(self, *scopes: tuple) -> Iterator[Storage]:
        """A block whose write transaction touches only these ``(tenant_id, user_id)`` scopes'
        rows (and what earlier reads wait to record, of the scopes they read): on a server it locks
        those scopes and shares the store with writers of other users; without this, a write
        transaction locks the whole store. It must begin inside the block (one already open keeps
        its locks), and an erasure inside it is refused.

            with storage.writing(("acme", "ann")), storage.transaction():
                ...   # ann's rows only
        """
        previous = getattr(self._writing, "scopes", None)
        self._writing.scopes = frozenset(scope_key(user, tenant) for tenant, user in scopes)
        try:
            yield self
        finally:
            self._writing.scopes = previous

    def _lock_scopes(self) -> frozenset[str] | None:
        """What the write transaction beginning now locks (``QueryHelpers.lock_scopes``)."""
        said = getattr(self._writing, "scopes", None)
        waiting = self.book.scopes()
        return None if said is None or waiting is None else said | waiting

    # -- audit events ----------------------------------------------------------------------------
    def log(self, name: str, event: AuditEvent) -> None:
        """Queue an event for the ``writes`` or ``reads`` log; it is appended once its block commits
        (inside a read: once the read's bookkeeping is written, with the other waiting reads' events
        in one append).

        Logs that are tables of the state database take the event inside the transaction itself
        (no outbox: with several processes, one must never flush another's queued events)."""
        if self.db.reading:
            return self.book.defer_event(name, event, self._log_events)
        self._log_events(name, [event])

    def _log_events(self, name: str, events: list[AuditEvent]) -> None:
        if getattr(self.audit, "db", None) is self.db:
            with self.transaction():
                self.audit.append_events(name, events)
            return
        with self.transaction():
            # The next numbers, read inside the transaction (it holds the write lock: no one else
            # takes them), so each row is written once, holding the log line as it will be appended.
            first = self.db.last_id("outbox", "seq") + 1
            rows = []
            for seq, event in enumerate(events, first):
                event = AuditEvent(event.kind, event.time, event.user_id, event.tenant_id, event.session_id,
                                   {**event.data, "seq": seq})
                rows.append((seq, name, event.user_id, event.tenant_id, encode_event(event)))
            self.db.executemany("INSERT INTO outbox (seq, log, user_id, tenant_id, event) VALUES (?, ?, ?, ?, ?)", rows)

    def _flush_outbox(self, *, after_crash: bool = False) -> None:
        """Append the committed outbox rows the logs do not hold yet. Normally those are the rows
        after ``_logged_through``, appended as they are; after a crash every row is read, what a
        log already holds is skipped (an older release's rows get their seq), and the table emptied."""
        if not after_crash:
            if getattr(self.audit, "db", None) is self.db:
                return  # logs that are tables take their events in the transaction: no outbox
            for seq, name, line in self.db.fetchall("SELECT seq, log, event FROM outbox WHERE seq > ? ORDER BY seq",
                                                    (self._logged_through,)):
                self.audit.append_lines(name, [line])
                self._logged_through = self._to_delete = seq  # deleted by the next block's COMMIT: one commit per call
            return
        rows = self.db.fetchall("SELECT seq, log, event FROM outbox ORDER BY seq")
        # subtle: after a crash some of these may already be in the log (appended, not yet deleted here).
        present = {name: self.audit.seqs(name) for name in ("writes", "reads")} if rows else {}
        for seq, name, raw in rows:
            if seq not in present[name]:
                event = AuditEvent.from_dict(json.loads(raw))
                self.audit.append_events(name, [AuditEvent(event.kind, event.time, event.user_id, event.tenant_id,
                                                           event.session_id, {**event.data, "seq": seq})])
        if rows:
            self.db.execute("DELETE FROM outbox WHERE seq <= ?", (rows[-1][0],))
            self._logged_through = rows[-1][0]

    def _empty_outbox(self) -> int | None:
        """Inside a block: delete the rows an earlier flush appended (a crash before this COMMIT
        leaves them, and the next open skips them: their seqs are in the logs already)."""
        through = self._to_delete
        if through is not None:
            self.db.execute("DELETE FROM outbox WHERE seq <= ?", (through,))
        return through

    # -- erasure ---------------------------------------------------------------------------------
    def intend(self, op: str, user_id: str, tenant_id: str | None, record_id: int | None = None) -> None:
        """Inside a transaction: promise to remove the user's (or one record's) bytes from the files.

        Queued audit events of that user are dropped here, so no flush can bring them back. When
        the records and logs are tables of the state database (SQLite), the removal happens right
        here, inside the same transaction: no other process ever sees it half done."""
        with self.transaction():
            ReadBook.erased(self.db)  # no process writes back an earlier read's traces of it
            if op == "erase_user":
                self.db.execute("DELETE FROM outbox WHERE user_id = ? AND tenant_id IS ?", (user_id, tenant_id))
            elif record_id is not None:  # a read that quoted the record may still wait here (a failed append)
                rows = self.db.fetchall("SELECT seq, event FROM outbox WHERE user_id = ? AND tenant_id IS ?",
                                        (user_id, tenant_id))
                self.db.executemany("DELETE FROM outbox WHERE seq = ?", [
                    (seq,) for seq, raw in rows if mentions_record(AuditEvent.from_dict(json.loads(raw)), record_id)])
            # Vectors are in the state database: they go in this very transaction, on every backend.
            if op == "erase_user":
                self.vectors.erase(scope_key(user_id, tenant_id))
            elif record_id is not None and self._owned(record_id, user_id, tenant_id):
                self.vectors.forget(record_id)
            if self.records_in_database:
                self._done.append(self._carry_out(op, user_id, tenant_id, record_id))
            else:
                self.db.execute("INSERT INTO intents (op, user_id, tenant_id, record_id) VALUES (?, ?, ?, ?)",
                                (op, user_id, tenant_id, record_id))

    def _owned(self, record_id: int, user_id: str, tenant_id: str | None) -> bool:
        record = self.records.get(record_id)
        return record is not None and (record.get("tenant_id"), record["user_id"]) == (tenant_id, user_id)

    def complete_intents(self, *, replacing: int | None = None) -> list[ErasureDone]:
        """Carry out every committed intent on the record file and the logs, then forget the intent;
        return what each erasure (including those already done inside a transaction) removed.

        Then the state database is scrubbed, unless the only erasure carried out is the forget of
        ``replacing``: a value replaced, not erased (``MemoryManager.forget(scrub=False)``). An
        earlier call's erasure that waited here is always scrubbed."""
        done, self._done = self._done, []
        for intent_id, op, user_id, tenant_id, record_id in self.db.fetchall(
                "SELECT id, op, user_id, tenant_id, record_id FROM intents ORDER BY id"):
            done.append(self._carry_out(op, user_id, tenant_id, record_id))
            self.db.execute("DELETE FROM intents WHERE id = ?", (intent_id,))
        if done:
            # The erasure rewrote the logs; the outbox rows already appended to them (kept until the
            # next commit) may quote what was erased: they go now, before the scrub.
            if self._logged_through:
                self.db.execute("DELETE FROM outbox WHERE seq <= ?", (self._logged_through,))
                self._to_delete = None
            if replacing is None or any((d.op, d.record_id) != ("forget", replacing) for d in done):
                self.db.scrub()  # pages and the write-ahead log may still hold the erased rows' bytes
        return done

    def finish_erasure(self, scope: tuple, state_changed: bool) -> tuple[int, int, tuple[str, ...], tuple[str, ...]]:
        """Carry out the scope's committed ``erase_user`` intent (``complete_intents``); return what
        it removed from the files: (records, log events, every file rewritten, damaged log lines)."""
        done = [d for d in self.complete_intents() if (d.tenant_id, d.user_id) == scope]
        state_files = [str(self.state_path)] if self.state_path is not None and state_changed else []
        files = tuple(dict.fromkeys([f for d in done for f in d.store_files] + state_files
                                    + [f for d in done for f in d.log_files]))
        damaged = tuple(f"{line.path}:{line.line}" for d in done for line in d.damaged_log_lines)
        return sum(d.store for d in done), sum(d.logs for d in done), files, damaged

    def _carry_out(self, op: str, user_id: str, tenant_id: str | None, record_id: int | None) -> ErasureDone:
        before = len(self.audit.damaged)
        if op == "erase_user":
            store = self.records.erase_user(user_id, tenant_id=tenant_id)
            logs, files = self.audit.erase(user_id, tenant_id)
        else:
            record = self.records.get(record_id)
            owned = record is not None and (record.get("tenant_id"), record["user_id"]) == (tenant_id, user_id)
            store = 1 if owned and self.records.delete(record_id) is not None else 0
            logs, files = self.audit.forget(record_id, user_id, tenant_id)
        paths = tuple(str(p) for p in self.records.files()) if store else ()
        return ErasureDone(op, user_id, tenant_id, store, logs, paths, tuple(str(p) for p in files),
                           tuple(self.audit.damaged[before:]), record_id if op == "forget" else None)

    # -- the portable form (migration) -----------------------------------------------------------
    def export(self) -> Iterator[portable.Item]:
        """Everything this storage holds, as backend-neutral items (ids, sequences, rows, events)."""
        return portable.export(self)

    def import_(self, items: Iterable[portable.Item]) -> None:
        """Fill this (empty) storage with another's ``export()``, in one transaction."""
        if portable.holds_data(self):
            raise StoreInconsistentError("the target already holds data; migrate only into an empty store",
                                         path=self.hooks.path)
        self.ledger.changing(None)  # its rows are written behind the ledger's back: none kept stays true
        portable.import_(self, items)

    def counts(self) -> dict[str, int]:
        """Records, last record id, rows per state table, events per log: what a copy is checked by."""
        return portable.counts(self)

    # -- files -----------------------------------------------------------------------------------
    def files(self) -> list[Path]:
        """Every file this storage writes (records, state database, logs)."""
        return [*self.records.files(), *self.db.files(), *self.audit.files()]

    def changed_elsewhere(self) -> bool:
        """Whether another connection (another process, or another manager here) committed since
        the last call: then every cached track must be read again before use."""
        version = self.db.data_version()
        changed, self._seen_version = version != self._seen_version, version
        return changed

    # -- what the manager asks of storage, besides records, transactions and logs -----------------
    def load_tracks(self, scope: tuple) -> ScopeTracks:
        """One scope's window, summary, sessions and tasks as stored (``track_tables.py``)."""
        return self.tracks.load(scope)

    def save_tracks(self, scope: tuple, tracks: ScopeTracks) -> None:
        self.tracks.save(scope, tracks)

    def forget_tracks(self, scope: tuple) -> None:
        """Drop what this process remembers of the scope's saved rows (the next save writes them whole)."""
        self.tracks.forget(scope)

    def track_scopes(self) -> list[tuple]:
        """Every scope with saved tracks, as ``(tenant_id, user_id)``."""
        return self.tracks.scopes()

    def check_text(self, texts: Iterable[str | None]) -> None:
        """Refuse text this backend cannot store (a NUL on PostgreSQL) before anything is written."""
        self.db.check_text(texts)

    def consistent_reads(self) -> Any:
        """A block whose reads see one picture of the store while other processes write."""
        return consistent_reads(self.db)

    @property
    def state_path(self) -> Path | None:
        """The state database's file (None in memory or on a server)."""
        return self.db.path

    @property
    def where(self) -> Path | str:
        """Where the store lives: the record file, the state database, or a server's masked URL."""
        return self.hooks.path or self.db.where

    @property
    def closed_reason(self) -> str | None:
        """Why this storage was closed (by ``close()``, or a later opening of the same store), or None."""
        return self.db.closed_reason

    @property
    def closed(self) -> bool:
        return self.db.closed_reason is not None

    def close(self, reason: str = "it was closed") -> None:
        """Release the files (idempotent); later use raises ``StoreClosedError`` giving ``reason``."""
        if self.closed:
            return
        try:
            self.book.flush(self)
            if self._to_delete is not None and not self.db.read_only:
                self.db.execute("DELETE FROM outbox WHERE seq <= ?", (self._to_delete,))
                self._to_delete = None  # a clean close leaves an empty outbox: reopening reads no log
        finally:
            self.records.close()
            self.db.close(reason)
