"""The state database on a PostgreSQL server: ``StateDatabase``'s methods over psycopg 3.

The tables are the SQLite backend's (records, audit events, ledger, tracks, outbox, intents, meta),
written once in SQLite's SQL and translated here where the two dialects differ:

    ?                       -> %s (psycopg's parameters; every value is still a parameter)
    col IS ?                -> col IS NOT DISTINCT FROM %s (NULL-safe equality)
    INTEGER PRIMARY KEY AUTOINCREMENT -> BIGINT identity (ids never reused, like SQLite's)
    REAL                    -> DOUBLE PRECISION (SQLite's REAL is 8 bytes; PostgreSQL's is 4)
    ORDER BY rowid          -> a ``rowid`` identity column added to tables without an integer key

How SQLite's guarantees are mirrored:
- **Writers take turns**: each transaction starts with ``pg_advisory_xact_lock`` on a key of this
  store (its schema), as SQLite's ``BEGIN IMMEDIATE`` takes the write lock; under READ COMMITTED
  every statement after the lock sees every earlier writer's commit, so no write is lost.
- **Change detection**: every write transaction bumps a ``commit_count`` row in ``meta``; the count
  minus this connection's own commits is ``data_version`` (SQLite's ``PRAGMA data_version``
  counts other connections' commits the same way).
- **Erasure**: rows are deleted in one transaction, then the tables are ``VACUUM``ed outside it.

A connection string's password never leaves this module: errors and ``repr`` show the URL masked.

    >>> mask_url("postgresql://ann:s3cret@db.example/memory")
    'postgresql://ann:***@db.example/memory'
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..errors import StoreClosedError, StoreCorruptError, StoreError, StorePathError, UnstorableTextError, install_hint
from .database import QueryHelpers

__all__ = ["PostgresDatabase", "mask_url", "URL_SCHEMES"]

URL_SCHEMES = ("postgresql://", "postgres://")
_LOCK_CLASS = 0x76326D  # "v2m": the first half of every advisory lock key this library takes
_NUL_REFUSED = ("PostgreSQL cannot store the NUL character (\\x00) in text: remove it from the message or id "
                "(the JSON and SQLite backends keep it)")
_COMMITS = "commit_count"
_SECRET_KEYS = {"password", "passfile", "sslpassword"}
_SECRET_PARAM = re.compile(r"(?i)([?&](?:password|passfile|sslpassword))=[^&#]*")
_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def mask_url(url: str) -> str:
    """The URL with its password (in the user part or a ``password=`` parameter) replaced by ``***``.

    The user part ends at the *last* "@": a password holding an unencoded "/" or "@" (which libpq
    would misread) is masked whole all the same.

        >>> mask_url("postgresql://ann:se/cr@t@db.example:5432/mem")
        'postgresql://ann:***@db.example:5432/mem'
    """
    scheme, sep, rest = url.partition("://")
    user, at, after = rest.rpartition("@")
    if at and ":" in user:  # userinfo with a password, however it is spelled
        rest = user.split(":", 1)[0] + ":***@" + after
    authority, slash, tail = rest.partition("/")
    # [^&#]* is one pass, no backtracking: linear in the URL.
    tail = _SECRET_PARAM.sub(lambda m: m.group(1) + "=***", tail)
    return scheme + sep + authority + slash + tail


def check_userinfo(url: str) -> None:
    """Refuse a password (or user) holding "/", "@", "?" or "#" unencoded: libpq would read part of
    it as the host and quote it in its errors. Said with the URL masked, before any connection."""
    user, at, _ = url.partition("://")[2].rpartition("@")
    if at and ":" in user and any(c in user for c in "/@?#"):
        raise StorePathError("the user or password in the URL holds '/', '@', '?' or '#' unencoded: write them "
                             "percent-encoded (%2F, %40, %3F, %23)", path=mask_url(url))


def _secrets(url: str) -> list[str]:
    """Every spelling of the password the URL carries (raw and percent-decoded), to scrub from messages."""
    parts = urlsplit(url)
    found = [parts.password or ""] + [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_KEYS]
    spellings = {s for value in found if value for s in (value, unquote(value), quote(value, safe=""))}
    return sorted(spellings, key=len, reverse=True)


@lru_cache(maxsize=512)
def _translate_sql(sql: str) -> str:
    """SQLite's SQL as PostgreSQL's: ``%`` escaped, ``IS ?`` NULL-safe, ``?`` -> ``%s``."""
    sql = sql.replace("%", "%%")
    sql = re.sub(r"\bIS \?", "IS NOT DISTINCT FROM ?", sql)
    return sql.replace("?", "%s")


def _translate_schema(schema: str) -> list[str]:
    """SQLite ``CREATE`` statements as PostgreSQL's, one per list item."""
    statements = []
    for statement in (s.strip() for s in schema.split(";")):
        if not statement:
            continue
        statement = statement.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
        statement = re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)
        statement = re.sub(r"\bBLOB\b", "BYTEA", statement)  # the vectors table's packed floats
        if statement.startswith("CREATE TABLE") and "INTEGER PRIMARY KEY" not in statement and "IDENTITY" not in statement:
            # subtle: SQLite gives every such table a hidden rowid, in insertion order; the tracks sort by it.
            # Last, so ``INSERT INTO t VALUES (...)`` without it still fills the same columns.
            statement = statement[:statement.rindex(")")] + ", rowid BIGINT GENERATED ALWAYS AS IDENTITY)"
        statements.append(statement)
    return statements


class PostgresDatabase(QueryHelpers):
    """One PostgreSQL connection with transactions that nest; the same methods as ``StateDatabase``.

    The URL is libpq's (``postgresql://user:pass@host:port/db``, ``postgresql:///db`` for the local
    socket); ``?options=-csearch_path%3Dname`` keeps a store in its own schema.
    """

    path = None  # no file: nothing for erasure to list, nothing beside it on disk

    def __init__(self, url: str, *, read_only: bool = False, fsync: bool = False) -> None:
        check_userinfo(url)
        self._url = url
        self.where = mask_url(url)
        self.read_only = read_only
        self.created = False
        self._lock = threading.RLock()
        self._depth = 0
        self._failed: BaseException | None = None  # the error that doomed the open transaction
        self._has_meta = False
        self._own_commits = 0  # commits this connection made: data_version leaves them out
        self._commits_at_begin: int | None = None  # the commit counter, as the open transaction began
        self._pending: list[tuple[str, list]] = []  # executemany rows not sent yet (see executemany)
        self.epoch = 0  # moves at every write and every transaction's start and end (see Ledger.states)
        self.closed_reason: str | None = None
        self._db = self._connect(fsync)
        self.ensure(_META)

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.where!r})"

    def _connect(self, fsync: bool) -> Any:
        try:
            import psycopg
        except ImportError as exc:
            raise StoreError("the PostgreSQL backend needs psycopg 3: " + install_hint("postgres", "'psycopg[binary]>=3.1'")) from exc
        try:
            db = psycopg.connect(self._url, autocommit=True)  # we issue BEGIN and COMMIT ourselves
        except psycopg.Error as exc:
            # from None: libpq's message may quote the connection string; the scrubbed text is kept.
            raise StoreError(f"cannot connect to PostgreSQL ({self._scrub(exc)})", path=self.where) from None
        self._psycopg = psycopg
        self._pipelines = psycopg.Pipeline.is_supported()  # libpq 14+; else every write is sent at once
        self._key = db.execute("SELECT hashtext(current_schema())").fetchone()[0]  # one lock per store
        if self._key is None:  # no schema on the search_path is there for us: nothing could be created or read
            search_path = db.execute("SHOW search_path").fetchone()[0]
            names = [name.strip().strip('"') for name in search_path.split(",") if name.strip() != '"$user"']
            unusable = [row[0] for row in db.execute("SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", (names,))]
            db.close()
            if unusable:  # it exists, but this role may not use it
                raise StorePathError(f"this role may not use schema {unusable[0]!r}: GRANT USAGE, CREATE ON SCHEMA "
                                     f"{unusable[0]} TO the role, or connect as its owner", path=self.where)
            raise StorePathError(f"no schema of the search_path ({search_path}) exists in this database: create it "
                                 "(CREATE SCHEMA name) or fix options=-csearch_path in the URL", path=self.where)
        # Without fsync a commit returns before the server flushes its WAL: a client killed at any
        # moment loses nothing committed, a server crash may lose the last commits (SQLite's NORMAL).
        db.execute(f"SET synchronous_commit = {'on' if fsync else 'off'}")
        if self.read_only:
            db.execute("SET default_transaction_read_only = on")
        elif db.execute("SELECT to_regclass('meta') IS NULL").fetchone()[0]:
            self.created = True
        return db

    # -- schema --------------------------------------------------------------------------------
    def ensure(self, schema: str) -> None:
        """Create a table group's tables if missing (under the store's lock: two processes may open at once)."""
        if self.read_only:
            return
        script = ";\n".join(_translate_schema(schema))  # no parameters: one round trip for the lot
        with self.transaction():
            self._run(lambda: self._db.execute(script))

    # -- transactions (``QueryHelpers.transaction``, over ``_begin`` and ``_finish`` here) ------------
    @contextmanager
    def snapshot(self) -> Iterator[PostgresDatabase]:
        """Reads inside see one picture of the store, however many statements they take (a
        migration's export while other clients keep writing): ``REPEATABLE READ``, read only."""
        with self._lock:
            if self._depth:
                raise StoreError("a snapshot cannot start inside a transaction", path=self.where)
            self._run(lambda: self._db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
            try:
                yield self
            finally:
                self._run(lambda: self._db.execute("ROLLBACK"))

    def _begin(self) -> None:
        if self.read_only:
            raise StoreError("opened read-only", path=self.where)
        try:
            # The store's write lock, held to COMMIT: writers take turns, as with BEGIN IMMEDIATE.
            # (Two integers of ours, not input: one round trip instead of two.) Holding it, no one
            # else commits until we do: the commit counter read now stays true to our COMMIT.
            begin = f"BEGIN; SELECT pg_advisory_xact_lock({_LOCK_CLASS}, {int(self._key)})"
            if self._has_meta:
                cursor = self._run(lambda: self._db.execute(f"{begin}; SELECT value FROM meta WHERE key = '{_COMMITS}'"))
                while cursor.nextset():  # the last statement's rows
                    pass
                row = cursor.fetchone()
                self._commits_at_begin = int(row[0]) if row else 0
            else:
                self._run(lambda: self._db.execute(begin))
        except BaseException:
            self._rollback()
            raise
        self._failed = None

    def _finish(self) -> None:
        self._commits_at_begin = None
        if self._failed is not None:
            self._rollback()
            return
        try:
            self._run(self._commit, send_pending=False)  # the commit takes the pending rows itself
        except BaseException:
            self._rollback()
            raise
        self._own_commits += 1

    def _commit(self) -> None:
        """Send the pending rows, count the commit (for other connections' change detection) and
        commit: one pipeline, one round trip."""
        # meta may not exist yet in the very first transaction (the one creating it): then nothing to count.
        if not self._has_meta:
            self._has_meta = self._db.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]
        count = (f"INSERT INTO meta (key, value) VALUES ('{_COMMITS}', '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = (meta.value::bigint + 1)::text")
        if not self._pipelines:  # nothing is ever queued then; one string, one round trip
            self._db.execute(f"{count}; COMMIT" if self._has_meta else "COMMIT")
            return
        with self._db.pipeline():
            self._queue_pending()
            if self._has_meta:
                self._db.execute(count)
            self._db.execute("COMMIT")

    def _queue_pending(self) -> None:
        """Inside a pipeline: queue every pending ``executemany`` (sent when the pipeline syncs)."""
        pending, self._pending = self._pending, []
        cursor = self._db.cursor()
        for sql, rows in pending:
            cursor.executemany(sql, rows)

    def _rollback(self) -> None:
        self._pending.clear()
        try:
            self._db.execute("ROLLBACK")
        except self._psycopg.Error:
            pass  # a broken connection has nothing left to roll back

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -- statements ----------------------------------------------------------------------------
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one write statement inside a transaction; return the rows it changed."""
        with self.transaction():
            self.epoch += 1
            return self._ask(_translate_sql(sql), args, lambda cursor: cursor.rowcount)

    def write(self, sql: str, args: Sequence[Any] = ()) -> None:
        """A write whose answer nobody needs: queued like ``executemany``'s rows."""
        self.executemany(sql, [args])

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Queue rows to write; nothing waits for their answer, so they travel with the next
        statement that needs one, or with the ``COMMIT``: one round trip for all of them (a round
        trip costs more than the rows). An error in them fails that statement or the commit, and
        the whole transaction rolls back, as always."""
        rows = list(rows)
        if rows:
            with self.transaction():
                self.epoch += 1
                if self._pipelines:
                    self._pending.append((_translate_sql(sql), rows))
                else:
                    self._run(lambda: self._db.cursor().executemany(_translate_sql(sql), rows))

    def _ask(self, sql: str, args: Sequence[Any], answer: Any) -> Any:
        """Run one statement and read ``answer(cursor)``; queued writes go first, in the same round trip."""
        def run() -> Any:
            if not self._pending:
                return answer(self._db.execute(sql, args))
            with self._db.pipeline() as pipeline:
                self._queue_pending()
                cursor = self._db.execute(sql, args)
                pipeline.sync()
            return answer(cursor)
        return self._run(run, send_pending=False)

    def insert_id(self, sql: str, column: str, args: Sequence[Any] = ()) -> int:
        """Run one ``INSERT``; return the number ``column`` gave the new row (``RETURNING``)."""
        with self.transaction():
            self.epoch += 1
            return self._ask(_translate_sql(sql) + f" RETURNING {column}", args, lambda cursor: cursor.fetchone()[0])

    def last_id(self, table: str, column: str) -> int:
        """The highest number ``table``'s ``column`` has handed out (0 for none), even if since deleted."""
        row = self.fetchone("SELECT pg_sequence_last_value(pg_get_serial_sequence(?, ?))", (table, column))
        return row[0] if row and row[0] is not None else 0

    def raise_last_id(self, table: str, column: str, value: int) -> None:
        """Make ``table``'s identity continue above ``value``; never lowers it."""
        if value > self.last_id(table, column):
            self.fetchone("SELECT setval(pg_get_serial_sequence(?, ?), ?)", (table, column, value))

    def table_rows(self, table: str) -> tuple[list[str], list[tuple]]:
        """Every row of ``table`` in insertion order, with its column names; the ``rowid`` this
        module adds stands for SQLite's hidden one: it orders the rows and is not exported."""
        columns = [row[0] for row in self.fetchall(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position", (table,))]
        order = "rowid" if "rowid" in columns else columns[0]  # else the table's integer key
        columns = [c for c in columns if c != "rowid"]
        return columns, self.fetchall(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")

    def fetchall(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._ask(_translate_sql(sql), args, lambda cursor: cursor.fetchall())

    def fetchone(self, sql: str, args: Sequence[Any] = ()) -> tuple | None:
        with self._lock:
            return self._ask(_translate_sql(sql), args, lambda cursor: cursor.fetchone())


    def set_meta(self, key: str, value: str) -> None:
        self.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                     (key, value))

    def data_version(self) -> int:
        """Commits made by *other* connections to this store, so far (ours do not move it)."""
        # Inside a transaction the counter read with BEGIN is still the current one: every writer
        # takes the store's lock first, and we hold it until our COMMIT.
        if self._depth and self._commits_at_begin is not None:
            return self._commits_at_begin - self._own_commits
        return int(self.meta(_COMMITS) or 0) - self._own_commits

    def tables(self) -> set[str]:
        return {row[0] for row in self.fetchall(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}

    def scrub(self) -> None:
        """After erasure: ``VACUUM`` every table, so the deleted rows' space is reclaimed (and their
        bytes overwritten as new rows arrive); what the server may still keep is in the README."""
        with self._lock:
            if not self.read_only and self._depth == 0:
                names = ", ".join(f'"{name}"' for name in sorted(self.tables()))  # our own table names, quoted
                if names:
                    self._run(lambda: self._db.execute(f"VACUUM {names}"))

    # -- errors ----------------------------------------------------------------------------------
    def _run(self, action: Any, *, send_pending: bool = True) -> Any:
        if self.closed_reason is not None:
            raise StoreClosedError(f"this memory is closed: {self.closed_reason}", path=self.where)
        try:
            if send_pending and self._pending:  # queued rows first: the statement may read them
                with self._db.pipeline():
                    self._queue_pending()
            return action()
        except self._psycopg.Error as exc:
            if isinstance(exc, self._psycopg.errors.ReadOnlySqlTransaction):
                raise StoreError(f"the state database cannot be written ({self._scrub(exc)})", path=self.where) from exc
            if isinstance(exc, self._psycopg.DataError) and "NUL (0x00)" in str(exc):  # input, not damage
                raise UnstorableTextError(_NUL_REFUSED, path=self.where) from exc
            if isinstance(exc, self._psycopg.errors.DataError):
                raise StoreCorruptError(f"unreadable data ({self._scrub(exc)})", path=self.where) from exc
            raise StoreError(f"state database error: {self._scrub(exc)}", path=self.where) from exc

    def check_text(self, texts: Iterable[str | None]) -> None:
        """Refuse, before anything is written, a text PostgreSQL cannot hold: one with a NUL."""
        if any(text and "\x00" in text for text in texts):
            raise UnstorableTextError(_NUL_REFUSED, path=self.where)

    def _scrub(self, exc: BaseException) -> str:
        message = str(exc).strip()
        for secret in _secrets(self._url):
            message = message.replace(secret, "***")
        return message

    def files(self) -> list:
        return []  # on a server: nothing of ours on this machine's disk

    def close(self, reason: str = "it was closed") -> None:
        with self._lock:
            if self.closed_reason is not None:
                return
            self.closed_reason = reason
            self._db.close()
