"""The governance ledger: the mutable side of memory, in SQLite (standard library ``sqlite3``).

Records in the store never change; what governance learns about them does. One table each:

    memories      record_id -> verified, base weight, usage and conflict factors, miss streak,
                  superseded_by, isolated (sensitive data kept but never admitted), quoted (it
                  instructs the assistant: shown only as quoted words)
    identifiers   (scope, identifier) -> record_id: exact matching for CS201 vs CS202
    facts         (scope, key, value) -> polarity, pending | confirmed | superseded

A scope is one user under one tenant. Erasure deletes the scope's rows with
``secure_delete`` on, so freed pages are zeroed and the erased text is not left in the file.
"""
from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable

from ..messages import Declaration, Fact, MemoryState
from .database import StateDatabase

__all__ = ["Ledger", "MemoryState", "Fact", "scope_key", "LEDGER_VERSION"]

LEDGER_VERSION = 2  # 2: memories.quoted
KEPT_ROWS = 50_000  # committed rows a ledger keeps between reads (about 11 MB when full)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    record_id INTEGER PRIMARY KEY, scope TEXT NOT NULL, verified INTEGER NOT NULL,
    base_weight REAL NOT NULL, usage REAL NOT NULL DEFAULT 1.0, conflict REAL NOT NULL DEFAULT 1.0,
    miss_streak INTEGER NOT NULL DEFAULT 0, superseded_by INTEGER, isolated INTEGER NOT NULL DEFAULT 0,
    quoted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS memories_scope ON memories (scope);
CREATE INDEX IF NOT EXISTS memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE TABLE IF NOT EXISTS identifiers (
    record_id INTEGER NOT NULL, scope TEXT NOT NULL, identifier TEXT NOT NULL,
    PRIMARY KEY (record_id, identifier));
CREATE INDEX IF NOT EXISTS identifiers_lookup ON identifiers (scope, identifier);
CREATE TABLE IF NOT EXISTS facts (
    scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, polarity INTEGER NOT NULL,
    status TEXT NOT NULL, record_id INTEGER, created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key, value));
"""


def scope_key(user_id: str, tenant_id: str | None = None) -> str:
    """One string per (tenant, user), unambiguous whatever characters the ids contain.

    >>> scope_key("u1"), scope_key("u1", "acme")
    ('[null,"u1"]', '["acme","u1"]')
    """
    return _compact_json([tenant_id, user_id])


def _hit(factor: float, usage: float, streak: int) -> tuple[float, int]:
    return usage * factor, 0


def _miss(factor: float, streak_limit: int, usage: float, streak: int) -> tuple[float, int]:
    """One more miss: the ``streak_limit``-th in a row costs ×``factor`` and starts over."""
    return (usage * factor, 0) if streak + 1 >= streak_limit else (usage, streak + 1)


def _reinforce(factor: float, cap: float, usage: float, streak: int) -> tuple[float, int]:
    return (usage * factor if usage * factor < cap else cap), 0


def _state(row: tuple) -> MemoryState:
    """A ``memories`` row (record_id first) as a ``MemoryState``."""
    return MemoryState(bool(row[1]), row[2], row[3], row[4], row[5], row[6], bool(row[7]), bool(row[8]))


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once: called on every call


class Ledger:
    """Governance state in tables of a ``StateDatabase`` (its own, in memory, when given a path of None)."""

    def __init__(self, db: StateDatabase | Path | str | None = None, *, read_only: bool = False,
                 ids_reused: bool = True) -> None:
        # A path (or None) opens a state database of its own; anything else is one already open (SQLite or PostgreSQL).
        self.db = StateDatabase(db, read_only=read_only) if db is None or isinstance(db, (str, Path)) else db
        # False when the records are rows of this database: an id comes back only if the insert that
        # took it rolled back, and then this ledger row rolled back with it.
        self.ids_reused = ids_reused
        self.path = self.db.path
        # Rows read in the open transaction, valid until it writes or ends (``states``), and ids
        # wanted soon, fetched with the next query (``want``).
        self._known: dict[int, MemoryState | None] = {}
        self._known_epoch: int | None = None
        self._wanted: list[int] = []
        # Rows as committed, kept across reads while no other connection commits (``_kept_rows``):
        # a row this ledger changes leaves it at the change; rows enter it only from a read
        # snapshot, which sees committed rows alone.
        self._kept: dict[int, MemoryState | None] = {}
        self._kept_version: int | None = None
        # Where a read's usage goes while its snapshot holds no write lock (``Storage`` sets it:
        # ``read_book.py``); None writes at once. What waits there is applied to the states this
        # ledger returns meanwhile: record_id -> the usage steps, in order (``_waiting_usage``).
        self.defer: Callable[..., None] | None = None
        self._usage_waits: dict[int, list[Callable[[float, int], tuple[float, int]]]] = {}
        old = self.db.meta("version") if "meta" in self.db.tables() else None  # before check_version stamps it
        self.db.ensure(_SCHEMA)
        self.db.check_version("version", LEDGER_VERSION, "ledger")
        # A version 1 ledger gains its ``quoted`` column (every old row: not quoted). A read-only
        # open cannot add it: its rows are read without it.
        self._quoted = "quoted"
        if old is not None and old.isdigit() and int(old) < 2:
            if self.db.read_only:
                self._quoted = "0"
            else:
                with self.db.transaction():
                    self.db.execute("ALTER TABLE memories ADD COLUMN quoted INTEGER NOT NULL DEFAULT 0")

    def _rows_in(self, sql: str, values: Iterable[object], *leading: object) -> list[tuple]:
        return self.db.rows_in(sql, values, *leading)

    # -- memories --------------------------------------------------------------------------------
    def register(self, record_id: int, scope: str, *, verified: bool, base_weight: float, isolated: bool = False,
                 quoted: bool = False) -> None:
        """Start a new record's row. A row left under the same id (a store that lost its tail in a
        power cut reuses ids) is wiped first, with its identifiers and facts: they were another record's."""
        self.changing([record_id])
        with self.db.transaction():
            for table in ("identifiers", "facts") if self.ids_reused else ():
                self.db.execute(f"DELETE FROM {table} WHERE record_id = ?", (record_id,))
            # An upsert that resets every column (SQLite's INSERT OR REPLACE, in SQL PostgreSQL speaks too).
            self.db.write(
                "INSERT INTO memories (record_id, scope, verified, base_weight, isolated, quoted) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (record_id) DO UPDATE SET scope = excluded.scope, verified = excluded.verified, "
                "base_weight = excluded.base_weight, isolated = excluded.isolated, quoted = excluded.quoted, usage = 1.0, "
                "conflict = 1.0, miss_streak = 0, superseded_by = NULL",
                (record_id, scope, int(verified), base_weight, int(isolated), int(quoted)),
            )

    def states(self, record_ids: Iterable[int]) -> dict[int, MemoryState]:
        """Governance state of each id; ids never registered are absent (treat as defaults).

        Inside a transaction (which holds the store's write lock: no one else writes meanwhile)
        or a read snapshot (one picture of the store), rows already read are not read again until the transaction writes or ends, and the ids
        ``want`` named come with the first query: a read that judges its candidates, then its
        summary, then its window asks once, not three times (three round trips on a server).
        Rows a snapshot read are kept for later reads too (at most ``KEPT_ROWS``): a user read
        again costs the rows that changed since, and none while nobody wrote. A row this ledger
        changes leaves them as it changes; a commit by another connection (``data_version``)
        empties them."""
        ids = list(dict.fromkeys(record_ids))
        # subtle: the lock, so another thread waits for the transaction (and never sees its rows) as before.
        with self.db.lock:
            if not (self.db.in_transaction or self.db.reading):
                return self._waiting_usage(self._read_states(ids))
            known = self._current()
            missing = [rid for rid in ids if rid not in known]
            if missing:
                kept = self._kept_rows()
                known.update((rid, kept[rid]) for rid in missing if rid in kept)
                fetch = list(dict.fromkeys([rid for rid in missing + self._wanted if rid not in known]))
                self._wanted = []
                if fetch:
                    rows = self._read_states(fetch)
                    known.update((rid, rows.get(rid)) for rid in fetch)
                    if self.db.reading:
                        self._keep({rid: rows.get(rid) for rid in fetch})
            return self._waiting_usage({rid: state for rid in ids if (state := known[rid]) is not None})

    def _kept_rows(self) -> dict[int, MemoryState | None]:
        """The committed rows kept from earlier reads; emptied when another connection committed."""
        version = self.db.data_version()
        if version != self._kept_version:
            self._kept, self._kept_version = {}, version
        return self._kept

    def _keep(self, rows: dict[int, MemoryState | None]) -> None:
        self._kept.update(rows)
        excess = len(self._kept) - KEPT_ROWS
        if excess > 0:  # the oldest go, and half the bound with them: trimmed now and then, not at every read
            for rid in list(islice(self._kept, excess + KEPT_ROWS // 2)):
                del self._kept[rid]

    def changing(self, record_ids: Iterable[int] | None) -> None:
        """Rows about to change (None: any row, or rows written by someone other than this ledger)
        leave the kept rows, whether or not the change commits."""
        with self.db.lock:
            if record_ids is None:
                self._kept = {}
            else:
                for rid in record_ids:
                    self._kept.pop(rid, None)

    def _waiting_usage(self, states: dict[int, MemoryState]) -> dict[int, MemoryState]:
        """``states`` with the usage steps that wait to be written applied, in order: a read sees
        the usage of the reads before it, written or not."""
        if self._usage_waits:
            for rid, state in states.items():
                steps = self._usage_waits.get(rid)
                if steps:
                    usage, streak = state.usage, state.miss_streak
                    for step in steps:
                        usage, streak = step(usage, streak)
                    states[rid] = replace(state, usage=usage, miss_streak=streak)
        return states

    def _wait(self, write: Callable[[], None], steps: Iterable[tuple[Iterable[int], Callable[[float, int], tuple[float, int]]]]) -> None:
        """Defer ``write``; until it is written (or dropped) its ``steps`` apply to the states read."""
        assert self.defer is not None
        for record_ids, step in steps:
            for rid in dict.fromkeys(record_ids):  # once each, as the write (``write_in``) applies it
                self._usage_waits.setdefault(rid, []).append(step)
        self.defer(write, self._usage_waits.clear)

    def want(self, record_ids: Iterable[int]) -> None:
        """Ids this transaction will ask ``states`` about soon: they ride along with its next query."""
        with self.db.lock:
            if self.db.in_transaction or self.db.reading:
                self._current()
                self._wanted += record_ids

    def _current(self) -> dict[int, MemoryState | None]:
        """The rows read in this transaction since its last write (emptied when that changes)."""
        if self._known_epoch != self.db.epoch:
            self._known, self._known_epoch, self._wanted = {}, self.db.epoch, []
        return self._known

    def _read_states(self, record_ids: list[int]) -> dict[int, MemoryState]:
        rows = self._rows_in("SELECT record_id, verified, base_weight, usage, conflict, miss_streak, superseded_by, "
                             f"isolated, {self._quoted} FROM memories WHERE record_id IN ({{marks}})", record_ids)
        return {row[0]: _state(row) for row in rows}

    def replaced_by(self, record_ids: Iterable[int]) -> dict[int, list[int]]:
        """Of ``record_ids``, each one that superseded memories, and those memories (an index of
        the superseded rows only: the cost of the answer, not of the table)."""
        found: dict[int, list[int]] = {}
        for old, successor in self._rows_in("SELECT record_id, superseded_by FROM memories WHERE superseded_by IN ({marks})",
                                            record_ids):
            found.setdefault(successor, []).append(old)
        return found

    def verify(self, record_id: int) -> bool:
        """A user confirmed this memory: it becomes verified with full base weight."""
        self.changing([record_id])
        with self.db.transaction():
            changed = self.db.execute(
                "UPDATE memories SET verified = 1, base_weight = 1.0 WHERE record_id = ?", (record_id,))
        return bool(changed)

    def supersede(self, record_id: int, by_record_id: int, rate: float) -> None:
        """Conflict decay: the corrected memory keeps its row, loses weight, and points at its successor."""
        self.changing([record_id])
        with self.db.transaction():
            self.db.execute(
                "UPDATE memories SET conflict = conflict * ?, superseded_by = ? WHERE record_id = ?",
                (rate, by_record_id, record_id))

    def record_usage(self, admitted: Iterable[int], missed: Iterable[int], *, hit: float, miss: float,
                     streak: int) -> None:
        """Usage decay after a retrieval: ×``hit`` for what it returned; ×``miss`` after ``streak`` misses in a row.
        Inside a read snapshot it waits for the next write (``defer``)."""
        if self.db.reading and self.defer is not None:
            admitted, missed = list(admitted), list(missed)
            self._wait(partial(self.record_usage, admitted, missed, hit=hit, miss=miss, streak=streak),
                       [(admitted, partial(_hit, hit)), (missed, partial(_miss, miss, streak))])
            return
        admitted, missed = list(admitted), list(missed)
        self.changing(admitted + missed)
        with self.db.transaction():
            self.db.write_in("UPDATE memories SET usage = usage * ?, miss_streak = 0 WHERE record_id IN ({marks})",
                             admitted, hit)
            # Only the rows this read touched: a read costs what its candidates cost, never the whole table.
            # One statement per chunk of ids: the streak counts this miss, and the ``streak``-th costs ×``miss``
            # (every right-hand side reads the row as it was, so both test ``miss_streak + 1``).
            self.db.write_in("UPDATE memories SET usage = CASE WHEN miss_streak + 1 >= ? THEN usage * ? ELSE usage END, "
                             "miss_streak = CASE WHEN miss_streak + 1 >= ? THEN 0 ELSE miss_streak + 1 END "
                             "WHERE record_id IN ({marks})", missed, streak, miss, streak)

    def weights(self, scope: str | None = None) -> list[float]:
        """Base × usage × conflict of every registered memory (of one scope, or all)."""
        sql = ("SELECT record_id, verified, base_weight, usage, conflict, miss_streak, superseded_by, isolated, "
               f"{self._quoted} FROM memories")
        rows = self.db.fetchall(sql + " WHERE scope = ?", (scope,)) if scope else self.db.fetchall(sql)
        return [state.weight for state in self._waiting_usage({row[0]: _state(row) for row in rows}).values()]

    # -- identifiers -----------------------------------------------------------------------------
    def index_identifiers(self, record_id: int, scope: str, identifiers: Iterable[str]) -> None:
        """Remember which identifiers (CS201, v2.3.1, ...) a record names, for exact matching."""
        with self.db.transaction():
            self.db.executemany("INSERT INTO identifiers VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                 [(record_id, scope, ident) for ident in identifiers])

    def identifiers_of(self, record_ids: Iterable[int]) -> dict[int, set[str]]:
        """record_id -> the identifiers it names (an empty set for none)."""
        ids = list(record_ids)
        found: dict[int, set[str]] = {rid: set() for rid in ids}
        for rid, ident in self._rows_in("SELECT record_id, identifier FROM identifiers WHERE record_id IN ({marks})", ids):
            found[rid].add(ident)
        return found

    def records_with(self, scope: str, identifiers: Iterable[str]) -> list[int]:
        """Record ids of the scope naming any of ``identifiers`` exactly, oldest first."""
        rows = self._rows_in("SELECT DISTINCT record_id FROM identifiers WHERE scope = ? AND identifier IN ({marks}) "
                             "ORDER BY record_id", identifiers, scope)
        return [row[0] for row in rows]

    # -- persona facts ---------------------------------------------------------------------------
    def put_fact(self, scope: str, declaration: Declaration, record_id: int | None, now: str) -> Fact:
        """Store a declaration as a *pending* fact.

        Saying the same thing again keeps a confirmed fact confirmed; flipping its polarity
        ("我喜欢猫" → "我不喜欢猫") or reviving a superseded value makes it pending again.
        """
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO facts VALUES (?, ?, ?, ?, 'pending', ?, ?) "
                "ON CONFLICT (scope, key, value) DO UPDATE SET record_id = excluded.record_id, "
                "status = CASE WHEN facts.status = 'superseded' OR facts.polarity != excluded.polarity THEN 'pending' "
                "ELSE facts.status END, "
                "polarity = excluded.polarity",
                (scope, declaration.key, declaration.value, declaration.polarity, record_id, now))
            row = self.db.fetchone("SELECT key, value, polarity, status, record_id, created_at FROM facts "
                                   "WHERE scope = ? AND key = ? AND value = ?",
                                   (scope, declaration.key, declaration.value))
        return Fact(*row)

    def confirm_fact(self, scope: str, key: str, value: str | None = None, *, single_valued: bool = False) -> int:
        """Confirm the scope's pending facts under ``key`` (or just ``value``); return how many.

        For a ``single_valued`` key (one device, one name: governance says which) only the newest pending value is confirmed,
        and it supersedes every other value of that key.
        """
        sql = "SELECT value FROM facts WHERE scope = ? AND key = ? AND status = 'pending'"
        args: list[object] = [scope, key]
        if value is not None:
            sql, args = sql + " AND value = ?", args + [value]
        with self.db.transaction():
            values = [row[0] for row in self.db.fetchall(sql + " ORDER BY created_at, rowid", args)]
            if single_valued and values:
                values = values[-1:]
                self.db.execute("UPDATE facts SET status = 'superseded' WHERE scope = ? AND key = ? AND value != ?",
                                 (scope, key, values[0]))
            self.db.executemany("UPDATE facts SET status = 'confirmed' WHERE scope = ? AND key = ? AND value = ?",
                                 [(scope, key, v) for v in values])
        return len(values)

    def supersede_facts_of(self, record_id: int) -> list[Fact]:
        """Mark the facts a (now corrected) record declared as superseded; return them."""
        with self.db.transaction():
            rows = self.db.fetchall(
                "SELECT key, value, polarity, status, record_id, created_at FROM facts WHERE record_id = ?",
                (record_id,))
            self.db.execute("UPDATE facts SET status = 'superseded' WHERE record_id = ?", (record_id,))
        return [Fact(*row) for row in rows]

    def fact(self, scope: str, key: str, value: str) -> Fact | None:
        """The scope's fact for (key, value), if any."""
        row = self.db.fetchone("SELECT key, value, polarity, status, record_id, created_at FROM facts "
                               "WHERE scope = ? AND key = ? AND value = ?", (scope, key, value))
        return Fact(*row) if row else None

    def facts(self, scope: str, *, key: str | None = None, status: str | None = None) -> list[Fact]:
        sql = "SELECT key, value, polarity, status, record_id, created_at FROM facts WHERE scope = ?"
        args: list[object] = [scope]
        if key is not None:
            sql, args = sql + " AND key = ?", args + [key]
        if status is not None:
            sql, args = sql + " AND status = ?", args + [status]
        return [Fact(*row) for row in self.db.fetchall(sql + " ORDER BY created_at, key, value", args)]

    # -- erasure ---------------------------------------------------------------------------------
    def erase(self, scope: str) -> int:
        """Delete every row of the scope (zeroed on disk); return how many rows went."""
        self.changing(None)
        with self.db.transaction():
            removed = sum(self.db.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))
                          for table in ("memories", "identifiers", "facts"))
        return removed

    def forget(self, record_id: int) -> None:
        """Delete one record's rows (zeroed on disk, like erasure)."""
        self.changing([record_id])
        with self.db.transaction():
            for table in ("memories", "identifiers", "facts"):
                self.db.execute(f"DELETE FROM {table} WHERE record_id = ?", (record_id,))

    def all_states(self) -> dict[int, MemoryState]:
        """Every registered memory's state, in one scan (health reports; never per record parameters)."""
        rows = self.db.fetchall("SELECT record_id, verified, base_weight, usage, conflict, miss_streak, superseded_by, "
                                f"isolated, {self._quoted} FROM memories")
        return self._waiting_usage({row[0]: _state(row) for row in rows})

    # -- sentence-level governance: several facts per record, and usage that can recover -----------
    def facts_by_record(self, record_ids: Iterable[int]) -> dict[int, list[Fact]]:
        """record_id -> every fact that record declared (a message may declare several)."""
        found: dict[int, list[Fact]] = {}
        for row in self._rows_in("SELECT key, value, polarity, status, record_id, created_at FROM facts "
                                 "WHERE record_id IN ({marks}) ORDER BY rowid", record_ids):
            found.setdefault(row[4], []).append(Fact(*row))
        return found

    def set_fact_status(self, scope: str, key: str, value: str, status: str) -> None:
        """Set one fact's status (an update superseded it, a reply confirmed it)."""
        if status not in ("pending", "confirmed", "superseded"):
            raise ValueError(f"unknown fact status {status!r}")
        with self.db.transaction():
            self.db.execute("UPDATE facts SET status = ? WHERE scope = ? AND key = ? AND value = ?",
                             (status, scope, key, value))

    def reinforce(self, record_ids: Iterable[int], factor: float, cap: float = 1.0) -> None:
        """Usage reinforcement: a memory a context used regains weight, ×``factor`` up to ``cap``
        (inside a read snapshot: at the next write, as ``record_usage``)."""
        if self.db.reading and self.defer is not None:
            record_ids = list(record_ids)
            self._wait(partial(self.reinforce, record_ids, factor, cap), [(record_ids, partial(_reinforce, factor, cap))])
            return
        record_ids = list(record_ids)
        self.changing(record_ids)
        self.db.write_in("UPDATE memories SET usage = CASE WHEN usage * ? < ? THEN usage * ? ELSE ? END, "
                         "miss_streak = 0 WHERE record_id IN ({marks})",  # min(usage × factor, cap), in any SQL
                         record_ids, factor, cap, factor, cap)

    def files(self) -> list[Path]:
        return self.db.files()

    def close(self) -> None:
        self.db.close()
