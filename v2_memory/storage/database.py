"""The state database: one SQLite connection with transactions that nest, shared by every table.

Everything the manager remembers besides the records themselves — the governance ledger, the
recent windows, the summaries, sessions and tasks, the audit outbox, pending erasures — lives in
tables of one SQLite database, so one ``COMMIT`` makes a whole ``add`` or ``erase_user`` visible at
once, and a crash before it leaves none of it. (For the JSON backend this is the sidecar file
``memory_store.governance.sqlite3``; for the SQLite backend it is the store file itself.)

    >>> db = StateDatabase(None)                  # None: in memory
    >>> with db.transaction():
    ...     with db.transaction():                # nested: commits only when the outer block ends
    ...         db.set_meta("answer", "42")
    >>> db.meta("answer")
    '42'

Errors from SQLite never escape raw: a locked, read-only or damaged database raises a
``StoreError`` naming the file, and the transaction is rolled back.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn, Sequence

from ..diagnostics import warn
from ..errors import StoreClosedError, StoreCorruptError, StoreError, StoreLockedError, UnsupportedFormatError
from ..files import open_private_append
from .writer_turns import WriterTurns, lock_path

__all__ = ["StateDatabase", "SCHEMA_VERSION", "CHUNK", "ResidueWarning", "consistent_reads"]

# 1: the ledger alone; 2: + tracks, audit outbox, intents, commit mark; 3: summary covers as rows,
# snippets with the record each shows (a release that knows only 2 would misread them: it must refuse)
SCHEMA_VERSION = 3
BUSY_SECONDS = 30.0  # how long a connection waits for another's write lock before it says so
CHUNK = 500  # values per IN (...) list: far below SQLite's variable limit, whatever the build


class ResidueWarning(UserWarning):
    """An erasure committed, but another connection kept the file busy: old bytes may remain a while."""


def consistent_reads(db: Any) -> Any:
    """A context in which ``db``'s reads see one picture of the store (its ``snapshot()``), or
    the open transaction's own when there is one."""
    snapshot = getattr(db, "snapshot", None)
    return snapshot() if snapshot is not None and not db.in_transaction else nullcontext()


class QueryHelpers:
    """What every state database builds on its own ``fetchall`` / ``fetchone`` (SQLite's here,
    PostgreSQL's in ``postgres.py``), and its transaction over its own ``_begin`` / ``_finish``."""

    _lock: Any  # the connection's RLock
    _depth: int  # open transaction blocks; BEGIN and COMMIT happen at depth 0
    _failed: BaseException | None  # the error that doomed the open transaction
    _reading: bool  # a read snapshot is open: nothing may be written until it ends
    _meta_seen: dict[str, str] | None  # the meta table as the open snapshot sees it (``meta``)
    epoch: int  # moves at every write and every transaction's start and end (see Ledger.states)
    # Called first inside every outermost write transaction, whoever opens it, and with whether it
    # committed when it ends (the storage sets them: what earlier reads recorded commits with the
    # next write, and waits again if that write rolls back, ``read_book.py``).
    on_begin: Callable[[], None] | None = None
    on_end: Callable[[bool], None] | None = None
    # Asked as an outermost write transaction begins: the scopes (``scope_key`` strings) it will
    # write, or None for anything in the store (``Storage.writing`` sets it). A server locks only
    # those scopes, so writers of other users go on; SQLite has one write lock whatever the answer.
    lock_scopes: Callable[[], frozenset[str] | None] | None = None

    def rows_in(self, sql: str, values: Iterable[object], *leading: object) -> list[tuple]:
        """Run ``sql`` whose ``{marks}`` is an ``IN (?, ...)`` list of ``values``, ``CHUNK`` at a time,
        so no statement grows with the number of values (none: no rows)."""
        values = list(dict.fromkeys(values))
        rows: list[tuple] = []
        for start in range(0, len(values), CHUNK):
            part = values[start:start + CHUNK]
            rows += self.fetchall(sql.format(marks=",".join("?" * len(part))), [*leading, *part])  # type: ignore[attr-defined]
        return rows

    def write_in(self, sql: str, values: Iterable[object], *leading: object) -> None:
        """Run the write statement ``sql`` (its ``{marks}`` as in ``rows_in``) over ``values``,
        ``CHUNK`` at a time: one statement per chunk, never one per value; nothing waits for an
        answer (see ``write``)."""
        values = list(dict.fromkeys(values))
        with self.transaction():  # type: ignore[attr-defined]  # every chunk or none
            for start in range(0, len(values), CHUNK):
                part = values[start:start + CHUNK]
                self.write(sql.format(marks=",".join("?" * len(part))), [*leading, *part])  # type: ignore[attr-defined]

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """All writes inside commit together when the outermost block ends, or none of them do.

        A block that raises dooms the whole transaction (``_failed`` holds its error); if the caller
        caught that error, the outermost block still rolls back and says so (``swallowed_failure``)."""
        with self._lock:
            if self._depth == 0:
                if self._reading:
                    raise StoreError("a write inside a read snapshot: a read's bookkeeping waits for the next "
                                     "write (Storage.reading)", path=self.where)  # type: ignore[attr-defined]
                self._begin()  # type: ignore[attr-defined]
                self.epoch += 1
            self._depth += 1
            clean = False
            try:
                if self._depth == 1 and self.on_begin is not None:
                    self.on_begin()
                yield self
                clean = True
            except BaseException as exc:
                self._failed = exc if self._failed is None else self._failed
                raise
            finally:
                self._depth -= 1
                if self._depth == 0:
                    swallowed = self._failed if clean else None
                    committed = clean and self._failed is None
                    self.epoch += 1
                    try:
                        self._finish()  # type: ignore[attr-defined]
                    except BaseException:
                        committed = False
                        raise
                    finally:
                        self._failed = None  # over: keep no exception (and its frames) alive
                        if self.on_end is not None:
                            self.on_end(committed)
                    if swallowed is not None:  # never report success for what was rolled back
                        raise swallowed_failure(swallowed, self.where) from swallowed  # type: ignore[attr-defined]

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """Reads inside see one picture of the store, however many statements they take, and take
        no write lock: writers go on meanwhile (SQLite's WAL keeps the picture of the first read; a
        server's ``REPEATABLE READ``). Nothing may be written inside; a snapshot inside a snapshot
        is the same one."""
        with self._lock:
            if self._reading:
                yield self
                return
            if self._depth:
                raise StoreError("a snapshot cannot start inside a transaction", path=self.where)  # type: ignore[attr-defined]
            self._meta_seen = self._begin_snapshot()  # type: ignore[attr-defined]
            self._reading = True
            self.epoch += 1  # a new picture: what was read before it may have changed
            try:
                yield self
            finally:
                self._reading, self._meta_seen = False, None
                self.epoch += 1
                self._end_snapshot()  # type: ignore[attr-defined]

    @property
    def reading(self) -> bool:
        """Whether a read snapshot is open (``snapshot``)."""
        return self._reading

    @property
    def lock(self) -> Any:
        """The connection's lock, held by a transaction from its start to its end."""
        return self._lock  # type: ignore[attr-defined]

    def meta(self, key: str) -> str | None:
        """A value of the meta table (in a snapshot: as read once at its start)."""
        if self._meta_seen is not None:
            return self._meta_seen.get(key)
        row = self.fetchone("SELECT value FROM meta WHERE key = ?", (key,))  # type: ignore[attr-defined]
        return row[0] if row else None

    def check_version(self, name: str = "schema_version", current: int = SCHEMA_VERSION,
                      what: str = "state database") -> None:
        """Refuse a database written by a newer release (read-only opens too: an inspector must
        not misread it either); stamp a new or older one with ours (older rows are read as they
        are and rewritten when saved). A version that is not a whole number is damage."""
        value = self.meta(name)
        if value is not None and not (value.isascii() and value.isdigit()):
            raise StoreCorruptError(f"{what} version {value!r} in its meta table is not a whole number; "
                                    "restore the file from a backup", path=self.where)  # type: ignore[attr-defined]
        version = None if value is None else int(value)
        if version is not None and version > current:
            raise UnsupportedFormatError(f"{what} version {version} is newer than this release understands "
                                         f"({current}); upgrade v2_memory to read it",
                                         path=self.where, version=version)  # type: ignore[attr-defined]
        if (version is None or version < current) and not self.read_only:  # type: ignore[attr-defined]
            self.set_meta(name, str(current))  # type: ignore[attr-defined]

    def check_text(self, texts: Iterable[str | None]) -> None:
        """Refuse, before anything is written, a text this database cannot hold (SQLite holds any)."""

    @property
    def holds_whole_store(self) -> bool:
        """Whether the open write transaction excludes every other writer (SQLite's always does)."""
        return True

    def try_exclusive(self, name: str) -> bool:
        """Inside a write transaction: take the lock named ``name`` until it ends if no one holds
        it, for store-wide upkeep that may be skipped when another writer is at it (trimming a
        log); True when taken. A transaction holding the whole store holds every such lock."""
        return True


class StateDatabase(QueryHelpers):
    """One SQLite database, opened once, used by many tables under one lock.

    ``path=None`` keeps it in memory. ``read_only=True`` opens an existing file so that nothing can
    be written (inspection tools); a missing file then reads as empty.
    """

    def __init__(self, path: Path | str | None = None, *, read_only: bool = False, fsync: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.read_only = read_only
        self.created = False  # True when this open made a new, empty database
        self._lock = threading.RLock()
        self._depth = 0  # open transaction blocks; SQLite's BEGIN/COMMIT happen at depth 0
        self._failed: BaseException | None = None  # the error that doomed the open transaction
        self._reading, self._meta_seen = False, None
        self.wait_for_lock = True  # False: a transaction whose lock is held raises StoreLockedError at once
        self.epoch = 0  # moves at every write and every transaction's start and end (see Ledger.states)
        self.closed_reason: str | None = None  # why this database was closed, once it is
        self._turns: WriterTurns | None = None  # this connection's place among the file's writers
        try:
            self._db = self._connect(fsync)
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise StoreError(f"the state database stayed locked by another process for {BUSY_SECONDS:g} s "
                                 f"({exc})", path=self._where) from exc
            raise StoreCorruptError(f"not a readable v2_memory state database ({exc})", path=self._where) from exc
        if not self.read_only and self.path is not None:
            self._turns = WriterTurns(self.path)

    @property
    def where(self) -> Path | str:
        """What error messages name: the file, or ``:memory:``."""
        return self.path if self.path is not None else ":memory:"

    _where = where

    def _connect(self, fsync: bool) -> sqlite3.Connection:
        if self.read_only:
            if self.path is None or not self.path.exists():
                return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            real = self.path.resolve()
            uri = f"{real.as_uri()}?mode=ro"
            # subtle: a file a writer left in WAL mode without its -wal file (it exited without
            # close()) holds every commit, but a read-only open would still create -wal and -shm
            # beside it, or fail where the folder is not writable. Nothing is pending: read it as it is.
            if _in_wal_mode(real) and not real.with_name(real.name + "-wal").exists():
                uri += "&immutable=1"
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=0)
            _waiting(lambda: db.execute("SELECT count(*) FROM sqlite_master").fetchone())
            return db
        if self.path is not None and (not self.path.exists() or self.path.stat().st_size == 0):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            open_private_append(self.path).close()  # 0600, like every memory file; SQLite fills it in
            self.created = True
        elif self.path is None:
            self.created = True
        # isolation_level=None: we issue BEGIN and COMMIT ourselves, so blocks can nest. timeout=0:
        # this connection waits for locks itself (``_waiting``: every millisecond).
        db = sqlite3.connect(str(self.path) if self.path else ":memory:", check_same_thread=False,
                             isolation_level=None, timeout=0)
        db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed: erased text leaves the file
        # WAL: readers never block the writer, and a commit is an append (no flush unless fsync=True;
        # like the record file, a kill -9 loses nothing committed, a power cut may lose the last commits).
        # subtle: several processes opening a file left in rollback mode all switch it at once; SQLite
        # answers all but one "locked" without calling any busy handler (it would deadlock), so wait here.
        _waiting(lambda: db.execute("PRAGMA journal_mode = WAL"))
        db.execute(f"PRAGMA synchronous = {'FULL' if fsync else 'NORMAL'}")
        _waiting(lambda: db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
        return db

    # -- schema --------------------------------------------------------------------------------
    def ensure(self, schema: str) -> None:
        """Create a table group's tables if missing (a no-op when read-only)."""
        if self.read_only and self.path is not None and self.path.exists():
            return
        with self._lock:
            self._translate(lambda: self._db.executescript(schema))

    # -- transactions ----------------------------------------------------------------------------
    def _begin(self) -> None:
        """The outermost block starts (``QueryHelpers.transaction``)."""
        self._require_writable()
        self._begin_immediate()
        self._failed = None

    def _begin_immediate(self) -> None:
        """``BEGIN IMMEDIATE``: take the write lock now — first this connection's turn among the
        file's writers (``writer_turns.py``: a waiter sleeps until the holder commits), then
        SQLite's lock (``_translate`` waits while another program holds it); with
        ``wait_for_lock`` off, a held lock raises ``StoreLockedError`` at once."""
        if self._turns is not None and not self._turns.take(wait=self.wait_for_lock, seconds=BUSY_SECONDS):
            if not self.wait_for_lock:
                raise StoreLockedError("another connection is writing", path=self._where)
            raise StoreError(f"the state database is busy: another process held it for {BUSY_SECONDS:g} s",
                             path=self._where)
        try:
            if self.wait_for_lock:
                self._translate(lambda: self._db.execute("BEGIN IMMEDIATE"))
                return
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _is_busy(exc):
                    raise StoreLockedError("another connection is writing", path=self._where) from None
                self._raise(exc)
        except BaseException:
            self._give_turn_back()
            raise

    def _finish(self) -> None:
        try:
            if self._failed is not None:
                self._db.rollback()
                return
            try:
                self._translate(lambda: self._db.execute("COMMIT"))
            except BaseException:
                self._db.rollback()
                raise
        finally:
            self._give_turn_back()

    def _give_turn_back(self) -> None:
        if self._turns is not None:
            self._turns.give_back()

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def _begin_snapshot(self) -> dict[str, str]:
        """A read transaction, which WAL keeps to the moment of its first read (``snapshot``): the
        meta table's, read at once."""
        self._translate(lambda: self._db.execute("BEGIN DEFERRED"))
        self._version_seen: int | None = None  # data_version, asked once per snapshot
        try:
            return dict(self._translate(lambda: self._db.execute("SELECT key, value FROM meta").fetchall()))
        except BaseException:
            self._db.rollback()
            raise

    def _end_snapshot(self) -> None:
        self._db.rollback()

    # -- statements ----------------------------------------------------------------------------
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one write statement inside a transaction; return the rows it changed."""
        return self._write(lambda: self._db.execute(sql, args).rowcount)

    def write(self, sql: str, args: Sequence[Any] = ()) -> None:
        """A write whose answer nobody needs (on a server it waits for the next round trip)."""
        self.execute(sql, args)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows or not self._depth:  # no rows inside an open block: no statement (SQLite would still prepare it)
            self._write(lambda: self._db.executemany(sql, rows))

    def insert_id(self, sql: str, column: str, args: Sequence[Any] = ()) -> int:
        """Run one ``INSERT`` into a table whose ``column`` numbers its rows; return the new number."""
        return self._write(lambda: self._db.execute(sql, args).lastrowid)

    def _write(self, action: Any) -> Any:
        """A write joins the open block (a failure dooms it), or runs in a block of its own."""
        with self._lock:
            self.epoch += 1
            if self._depth:  # the common case, a dozen times per add: no block to open
                try:
                    return self._translate(action)
                except BaseException as exc:
                    self._failed = exc if self._failed is None else self._failed
                    raise
        with self.transaction():
            return self._translate(action)

    def last_id(self, table: str, column: str) -> int:
        """The highest number ``table``'s ``column`` has handed out (0 for none), even if since deleted."""
        row = self.fetchone("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))
        return row[0] if row else 0

    def raise_last_id(self, table: str, column: str, value: int) -> None:
        """Make ``table``'s numbering continue above ``value`` (a migration copied rows with their
        numbers); never lowers it, so a number once handed out is never handed out again."""
        if value > self.last_id(table, column) and not self.execute(
                "UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (value, table)):
            self.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, value))

    def table_rows(self, table: str) -> tuple[list[str], list[tuple]]:
        """Every row of ``table`` in insertion order, with its column names (a migration's export)."""
        columns = [row[1] for row in self.fetchall(f"PRAGMA table_info({table})")]
        return columns, self.fetchall(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")

    def fetchall(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._translate(lambda: self._db.execute(sql, args).fetchall())

    def fetchone(self, sql: str, args: Sequence[Any] = ()) -> tuple | None:
        with self._lock:
            return self._translate(lambda: self._db.execute(sql, args).fetchone())


    def set_meta(self, key: str, value: str) -> None:
        self.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     (key, value))

    def data_version(self) -> int:
        """SQLite's counter of commits made by *other* connections (ours do not move it); one
        snapshot sees one picture, so it is asked once per snapshot."""
        if not self._reading:
            return self.fetchone("PRAGMA data_version")[0]
        if self._version_seen is None:
            self._version_seen = self.fetchone("PRAGMA data_version")[0]
        return self._version_seen

    def tables(self) -> set[str]:
        return {row[0] for row in self.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def scrub(self) -> None:
        """After an erasure: leave no byte of the deleted rows in the files.

        ``secure_delete`` zeroes a row where it is deleted, but not an older copy that a page split
        left in a page's unused space: on SQLite 3.40 an erased message stayed readable in the file
        after its ``DELETE`` and a checkpoint (``tests/test_storage_contract.py`` shows it). So
        ``VACUUM`` rebuilds every page from the live rows (about 0.25 s for 100,000 records), and the
        checkpoint copies them into the file and empties the write-ahead log — retried while another
        connection's read still holds the old pages. The rows are gone already (committed); if
        another connection keeps the file busy past ``BUSY_SECONDS``, a ``ResidueWarning`` says so
        and the next erasure (or closing the last connection) finishes the job."""
        with self._lock:
            if self.path is None or self.read_only or self._depth:
                return
            deadline = time.monotonic() + BUSY_SECONDS
            try:
                self._translate(lambda: self._db.execute("VACUUM"))
                while True:
                    busy, frames, copied = self._translate(
                        lambda: self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
                    if not busy and frames == copied:
                        return
                    if time.monotonic() > deadline:
                        raise StoreError("another connection kept reading the old pages", path=self._where)
                    time.sleep(0.001)
            except StoreError as exc:
                warn(f"{self._where}: the erased rows are deleted, but their old bytes may stay in the "
                     f"file until the next erasure or until every connection closes ({exc})",
                     ResidueWarning, room="storage", stacklevel=4)

    def _translate(self, action: Any) -> Any:
        """Run ``action``; while another connection holds the lock it needs, try again every
        millisecond for up to ``BUSY_SECONDS``; SQLite's errors become ``StoreError``s.

        (SQLite's own busy handler sleeps longer and longer between tries, up to 100 ms, so with
        several writers a waiter slept through most moments the lock was free: one slow add made
        the others wait seconds. Trying often is cheap, no I/O, and hands the lock on at once.
        What can meet a busy lock is a ``BEGIN IMMEDIATE``, a read, a schema script of ``IF NOT
        EXISTS`` statements or a checkpoint: inside our transactions we hold the write lock
        already, so every retried action is one that did nothing, or nothing twice.)"""
        if self.closed_reason is not None:
            raise StoreClosedError(f"this memory is closed: {self.closed_reason}", path=self._where)
        try:
            return _waiting(action)
        except sqlite3.DatabaseError as exc:
            self._raise(exc)

    def _raise(self, exc: sqlite3.DatabaseError) -> NoReturn:
        message = str(exc)
        if _is_busy(exc):
            raise StoreError(f"the state database is busy ({message}); another process holds it too long",
                             path=self._where) from exc
        if "readonly" in message or "read-only" in message:
            raise StoreError(f"the state database cannot be written ({message})", path=self._where) from exc
        raise StoreError(f"state database error: {message}", path=self._where) from exc

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError("opened read-only", path=self._where)

    def files(self) -> list[Path]:
        if self.path is None:
            return []
        return [p for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"), Path(f"{self.path}-journal"),
                            lock_path(self.path))
                if p.exists()]

    def close(self, reason: str = "it was closed") -> None:
        with self._lock:
            if self.closed_reason is not None:
                return
            self.closed_reason = reason
            if not self.read_only and self.path is not None:
                try:
                    # Leave a plain file behind (no -wal/-shm beside it), so a read-only look later
                    # creates nothing. With other connections still open this quietly stays WAL.
                    self._db.execute("PRAGMA journal_mode = DELETE").fetchall()
                except sqlite3.DatabaseError:
                    pass
            self._db.close()
            if self._turns is not None:
                self._turns.close()


def swallowed_failure(cause: BaseException, path: Any) -> StoreError:
    """The error for a transaction that rolled back because a block inside failed and the caller
    caught that block's error: it names the error, so the caller can find the call."""
    return StoreError(f"a block inside this transaction failed ({type(cause).__name__}: {cause}) and its error was "
                      "caught: nothing in the transaction was committed", path=path)


def _in_wal_mode(path: Path) -> bool:
    """Whether the database file's header says WAL (its read and write versions, bytes 18-19, are 2)."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"


def _waiting(action: Any) -> Any:
    """Run ``action``, again every millisecond while another connection holds the lock it needs
    (for up to ``BUSY_SECONDS``); any other error, or the last busy one, is raised as it is."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            return action()
        except sqlite3.DatabaseError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.001)


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite refused because another connection holds a lock (SQLITE_BUSY: worth waiting
    for; not SQLITE_LOCKED, a conflict inside one connection that no wait resolves)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_BUSY
    return "database is locked" in str(exc) or "busy" in str(exc)
