"""The portable form of a storage: everything it holds as a stream of items, and back.

``migrate`` copies a store between backends through this, and nothing else: the records, the
ledger, the tracks and the audit events are the same on every backend, only their files differ.

    Item("sequence", "records", 57)               the highest record id ever handed out (ids never reused)
    Item("sequence", "outbox", 212)               the highest audit sequence number handed out
    Item("record", "records", {"record_id": 3, "user_id": "ann", ...})    in id order
    Item("row", "facts", {"scope": '[null,"ann"]', "key": "diet", ...})   every state table, in row order
    Item("meta", "embedder", '{"dimension": 384, "name": ...}')   which model made the copied vectors
    Item("event", "writes", AuditEvent(...))     every audit event, oldest first

Ids are kept exactly: the ledger, the windows, the summaries and every log event name records by
id. The two sequences make the target continue where the source stopped, so no id (and no audit
sequence number, which crash recovery compares) is ever handed out twice.

``counts`` is what a copy is checked by: rows per table and track, events per log.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from .audit_log import AuditEvent

__all__ = ["Item", "STATE_TABLES", "LOGS", "export", "import_", "counts", "holds_data"]

# The state database's tables that hold memory (meta, outbox and intents are bookkeeping: a
# storage opened for export has flushed its outbox and finished its intents).
STATE_TABLES = ("memories", "identifiers", "facts", "windows", "summaries", "summary_covers", "sessions", "tasks", "vectors")
# meta keys that describe copied rows: vectors without their model's signature could be mixed with another's
META_KEYS = ("embedder",)
LOGS = ("writes", "reads")


@dataclass(frozen=True)
class Item:
    """One piece of a storage: its part (sequence, record, row, event), where it goes, the value."""

    part: str
    name: str
    value: Any


def export(storage: Any) -> Iterator[Item]:
    """Everything ``storage`` holds, sequences first (see the module docstring for the order)."""
    yield Item("sequence", "records", storage.records.last_id)
    yield Item("sequence", "outbox", storage.db.last_id("outbox", "seq"))
    for record in storage.records.all_records():
        yield Item("record", "records", record)
    present = storage.db.tables()  # a store last written by an older release may lack newer tables
    for table in (t for t in STATE_TABLES if t in present):
        columns, rows = storage.db.table_rows(table)
        for row in rows:
            yield Item("row", table, dict(zip(columns, row)))
    for key in META_KEYS:
        value = storage.db.meta(key)
        if value is not None:
            yield Item("meta", key, value)
    for name in LOGS:
        for event in getattr(storage.audit, name)():
            yield Item("event", name, event)


def import_(storage: Any, items: Iterable[Item]) -> None:
    """Write ``items`` into an empty ``storage``, in one transaction (all or nothing where the
    backend can: SQLite commits once; the JSON record file is written just before that commit)."""
    sequences: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    rows: dict[str, list[dict[str, Any]]] = {table: [] for table in STATE_TABLES}
    events: dict[str, list[AuditEvent]] = {name: [] for name in LOGS}
    meta: dict[str, str] = {}
    for item in items:
        if item.part == "sequence":
            sequences[item.name] = item.value
        elif item.part == "record":
            records.append(item.value)
        elif item.part == "row":
            rows[item.name].append(item.value)
        elif item.part == "event":
            events[item.name].append(item.value)
        elif item.part == "meta" and item.name in META_KEYS:
            meta[item.name] = item.value
        else:
            raise ValueError(f"unknown item part {item.part!r}")
    with storage.transaction():
        for table, table_rows in rows.items():
            _insert_rows(storage.db, table, table_rows)
        for key, value in meta.items():
            storage.db.set_meta(key, value)
        storage.records.import_records(records, sequences.get("records", 0))
        for name, logged in events.items():
            storage.audit.import_events(name, logged)
        # subtle: crash recovery skips outbox events whose seq a log already holds, so new events
        # must be numbered above every copied one.
        seqs = [e.data["seq"] for logged in events.values() for e in logged if isinstance(e.data.get("seq"), int)]
        storage.db.raise_last_id("outbox", "seq", max([sequences.get("outbox", 0), *seqs]))


def counts(storage: Any) -> dict[str, int]:
    """What a copy must match: records, the last record id, rows per state table, events per log."""
    found = {"records": len(storage.records), "last_record_id": storage.records.last_id}
    present = storage.db.tables()
    for table in STATE_TABLES:
        found[table] = storage.db.fetchone(f"SELECT count(*) FROM {table}")[0] if table in present else 0
    for name in LOGS:
        found[f"{name} events"] = len(getattr(storage.audit, name)())
    return found


def holds_data(storage: Any) -> bool:
    """Whether anything was ever stored (an erased store still holds its id sequence)."""
    return any(counts(storage).values())


def _insert_rows(db: Any, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert rows by column name (the target's column order need not match the source's)."""
    for columns in dict.fromkeys(tuple(row) for row in rows):  # usually one shape per table
        marks = ", ".join("?" * len(columns))
        db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                       [tuple(row.values()) for row in rows if tuple(row) == columns])
