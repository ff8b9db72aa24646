"""Reads do not take the write lock: a read answers while another connection writes, and what it
records (usage, its audit event) waits for this process's next write (``storage/read_book.py``).

Each test holds the store's write lock from outside — a raw SQLite ``BEGIN IMMEDIATE``, or the
PostgreSQL advisory lock every writer takes — and reads meanwhile. Waiting for the lock would
take ``BUSY_SECONDS`` and then fail; here it is one second, so a read that still waited fails fast.
"""
from __future__ import annotations

import sqlite3

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.errors import StoreError
from v2_memory.storage import database
from v2_memory.storage.read_book import ReadBook


@pytest.fixture(autouse=True)
def short_busy_wait(monkeypatch):
    monkeypatch.setattr(database, "BUSY_SECONDS", 1.0)


def _held(path):
    """Another connection holding the file's write lock (until its ``rollback()``)."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def _events(memory, user):
    """The user's read events as this process sees them (its waiting ones are written first)."""
    return [e for e in memory.audit.reads() if e.user_id == user]


def _usage(memory, record_id):
    """The usage this process reads (what waits to be written applied)."""
    return memory.storage.ledger.states([record_id])[record_id].usage


def _on_disk(path, user):
    """What another connection finds in the file: the user's read events, and every usage."""
    with sqlite3.connect(path) as other:
        events = other.execute("SELECT count(*) FROM audit_events WHERE log = 'reads' AND user_id = ?", (user,))
        count = events.fetchone()[0]
        usage = dict(other.execute("SELECT record_id, usage FROM memories").fetchall())
    return count, usage


def test_a_read_answers_while_another_connection_holds_the_write_lock(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "My cat Miso is afraid of the vacuum cleaner", "ann"))
        lock = _held(path)
        try:
            context = memory.build_context("what is Miso afraid of", "ann")
            hits = memory.retrieve("what is Miso afraid of", "ann")
        finally:
            lock.rollback()
        assert "vacuum" in context and hits and "vacuum" in hits[0].record["content"]
        assert memory.storage.book.pending > 0  # its traces wait: nothing was written under the held lock


def test_what_a_read_recorded_is_written_with_the_next_write(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        kept = memory.add(Message("user", "The boiler service is every October", "ann")).record_id
        memory.storage.ledger.db.execute("UPDATE memories SET usage = 0.5 WHERE record_id = ?", (kept,))
        lock = _held(path)
        try:
            assert memory.retrieve("when is the boiler service", "ann")[0].record["record_id"] == kept
        finally:
            lock.rollback()
        assert _on_disk(path, "ann") == (0, {kept: 0.5})  # nothing written yet
        assert _usage(memory, kept) == 0.5 * 1.25  # but this process already ranks by it
        memory.add(Message("user", "Another note about the garden", "bob"))
        count, usage = _on_disk(path, "ann")
        assert count == 1 and usage[kept] == 0.5 * 1.25  # what it returned is reinforced, once
        assert _usage(memory, kept) == 0.5 * 1.25 and len(_events(memory, "ann")) == 1


def test_alone_on_a_store_reads_are_written_in_batches_and_seen_at_once(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        kept = memory.add(Message("user", "The boiler service is every October", "ann")).record_id
        memory.storage.book.max_reads = 4
        for n in range(3):
            memory.build_context("boiler service", "ann")
            assert _on_disk(path, "ann") == (0, {kept: 1.0}) and memory.storage.book.pending > 0
        memory.build_context("boiler service", "ann")  # the fourth: all four in one commit
        assert _on_disk(path, "ann")[0] == 4 and memory.storage.book.pending == 0
        memory.build_context("boiler service", "ann")
        assert len(_events(memory, "ann")) == 5  # a look at the log writes what waits first
        assert _on_disk(path, "ann")[0] == 5 and memory.storage.book.pending == 0


def test_closing_writes_what_reads_recorded(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "The boiler service is every October", "ann"))
        lock = _held(path)
        try:
            memory.build_context("boiler service", "ann")
        finally:
            lock.rollback()
    with MemoryManager(store_path=path) as again:
        assert len(_events(again, "ann")) == 1


def test_a_read_that_finds_enough_waiting_writes_them_all(tmp_path, monkeypatch):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "The boiler service is every October", "ann"))
        memory.storage.book.max_reads = 3
        lock = _held(path)
        try:
            memory.build_context("boiler service", "ann")
            memory.build_context("boiler service", "ann")
        finally:
            lock.rollback()
        assert _on_disk(path, "ann")[0] == 0
        memory.build_context("boiler service", "ann")  # the third: all three go now
        assert _on_disk(path, "ann")[0] == 3 and memory.storage.book.pending == 0


def test_an_erasure_elsewhere_drops_what_waited_and_nothing_comes_back(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as reader, MemoryManager(store_path=path) as eraser:
        eraser.add(Message("user", "My passport number is kept in the blue folder", "ann"))
        lock = _held(path)
        try:
            reader.build_context("where is my passport number kept", "ann")
        finally:
            lock.rollback()
        assert reader.storage.book.pending > 0
        eraser.erase_user("ann")
        reader.add(Message("user", "A note of someone else", "bob"))  # the next write: ann's read is dropped
        assert _events(reader, "ann") == [] and reader.storage.book.pending == 0
    assert b"blue folder" not in path.read_bytes() and b"passport" not in path.read_bytes()


def test_nothing_may_be_written_inside_a_read_snapshot(tmp_path):
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        db = memory.storage.db
        with db.snapshot():
            with pytest.raises(StoreError, match="read snapshot"):
                db.set_meta("x", "1")
        assert db.meta("x") is None


def test_the_book_drops_a_batch_begun_before_an_erasure():
    db = database.StateDatabase(None)
    book, written = ReadBook(db), []
    book.begin_read()
    book.defer(lambda: written.append("usage"))
    with db.transaction():
        ReadBook.erased(db)
    with db.transaction():
        book.write()
    assert written == [] and book.pending == 0
    book.begin_read()
    book.defer(lambda: written.append("usage"))
    with db.transaction():
        book.write()
    assert written == ["usage"]


@pytest.mark.server
def test_a_postgres_read_answers_while_a_writer_holds_the_store_lock(pg_schema):
    import psycopg

    from v2_memory.storage.postgres import _LOCK_CLASS

    with MemoryManager(store_path=pg_schema.url) as memory:
        memory.add(Message("user", "My cat Miso is afraid of the vacuum cleaner", "ann"))
        key = memory.storage.db._key
        with psycopg.connect(pg_schema.url, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s, %s)", (_LOCK_CLASS, key))  # what every writer waits for
            context = memory.build_context("what is Miso afraid of", "ann")
            assert "vacuum" in context and memory.storage.book.pending > 0
            other.execute("SELECT pg_advisory_unlock(%s, %s)", (_LOCK_CLASS, key))
        memory.add(Message("user", "Another note", "bob"))
        assert len(_events(memory, "ann")) == 1 and memory.storage.book.pending == 0


def test_a_user_another_process_keeps_writing_is_read_by_its_new_rows(tmp_path, monkeypatch):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as reader, MemoryManager(store_path=path) as writer:
        for n in range(5):
            writer.add(Message("user", f"training log {n}: ran {n + 3} km", "ann"))
        assert len(reader.retrieve("training log ran km", "ann", top_k=10)) == 5
        store = reader.storage.records
        monkeypatch.setattr(store, "records", lambda *a, **k: pytest.fail("read the whole user again"))
        writer.add(Message("user", "training log 5: ran 12 km in the hills", "ann"))
        assert "hills" in reader.build_context("training log hills", "ann")
        writer.forget("ann", writer.retrieve("training log 0", "ann")[0].record["record_id"])
        monkeypatch.undo()  # a delete: the user's rows are read again
        assert "training log 0" not in reader.build_context("training log ran km", "ann", top_k=10)


def test_a_write_that_rolls_back_gives_back_the_reads_it_carried(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "The boiler service is every October", "ann"))
        for _ in range(3):
            memory.build_context("boiler service", "ann")
        with pytest.raises(ZeroDivisionError):
            with memory.batch():
                memory.add(Message("user", "a note that never lands", "bob"))
                1 / 0
        assert _on_disk(path, "ann")[0] == 0 and memory.storage.book.pending > 0  # waiting again
        assert len(_events(memory, "ann")) == 3


def test_health_counts_the_reads_that_wait(tmp_path):
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        memory.add(Message("user", "The boiler service is every October", "ann"))
        for _ in range(3):
            memory.build_context("boiler service", "ann")
        memory.health("ann")
        assert memory.storage.book.pending == 0 and _on_disk(tmp_path / "memory.sqlite3", "ann")[0] == 3


def test_vectors_a_read_embedded_are_not_added_twice_after_the_write(tmp_path):
    from v2_memory.retrieval.embedder import HashingEmbedder

    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        for text in ("coffee in lisbon", "the train to porto", "coffee budget"):
            memory.add(Message("user", text, "ann"))
    with MemoryManager(store_path=path, embedder=HashingEmbedder(16)) as memory:
        first = [h.record["record_id"] for h in memory.retrieve("coffee", "ann")]
        assert [h.record["record_id"] for h in memory.retrieve("coffee", "ann")] == first
        memory.add(Message("user", "a note about tea", "ann"))  # writes the vectors the reads embedded
        assert [h.record["record_id"] for h in memory.retrieve("coffee", "ann")] == first


def test_the_events_of_waiting_reads_are_appended_together_in_read_order(tmp_path, monkeypatch):
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        memory.add(Message("user", "The boiler service is every October", "ann"))
        appended = []
        append = memory.storage.audit.append_events
        monkeypatch.setattr(memory.storage.audit, "append_events",
                            lambda name, events: (appended.append((name, len(events))), append(name, events))[1])
        queries = ["boiler service", "when is the boiler serviced", "October plans"]
        for query in queries:
            memory.build_context(query, "ann")
        memory.storage.book.flush(memory.storage)
        assert appended == [("reads", 3)]  # one append for the three reads, not one each
        assert [e.data["query"] for e in _events(memory, "ann")] == queries


def test_a_file_log_numbers_waiting_events_in_order_across_a_rollback(tmp_path):
    with MemoryManager(store_path=tmp_path / "memory.json") as memory:  # JSONL logs, through the outbox
        memory.add(Message("user", "The boiler service is every October", "ann"))
        memory.build_context("boiler service", "ann")
        with pytest.raises(ZeroDivisionError):
            with memory.batch():
                memory.add(Message("user", "a note that never lands", "bob"))
                1 / 0
        memory.build_context("October plans", "ann")  # after the rollback: waits behind the first
        memory.add(Message("user", "The boiler is a Vaillant", "ann"))
        events = _events(memory, "ann")
        assert [e.data["query"] for e in events] == ["boiler service", "October plans"]
        seqs = [e.data["seq"] for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == 2
