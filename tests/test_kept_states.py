"""The ledger keeps the governance rows its reads fetched (``Ledger.states``), across reads: a read
of a user asks the database only for the rows it has not seen since the last change. A change
made here drops the rows it touches; a commit by another connection drops them all; whatever
is kept is bounded. Each test states a change a stale row would hide.
"""
from __future__ import annotations

import pytest

from conftest import PostgresSchema
from v2_memory import MemoryManager, Message
from v2_memory.storage import ledger as ledger_module


@pytest.fixture(params=["json", "sqlite", "postgres"])
def target(request, tmp_path):
    if request.param == "postgres":
        schema = PostgresSchema()
        yield schema.url
        schema.drop()
    else:
        yield tmp_path / {"json": "memory_store.json", "sqlite": "memory.sqlite3"}[request.param]


def _fill(memory):
    ids = [memory.add(Message("user", text, "ann")).record_id for text in (
        "My cat Miso is afraid of the vacuum cleaner", "Miso eats salmon kibble twice a day",
        "Our dog Pepper likes the beach")]
    memory.build_context("what does Miso eat", "ann")
    return ids


def _counting(memory, monkeypatch):
    """The record ids each ledger query fetches, in order."""
    fetched: list[list[int]] = []
    read = memory.storage.ledger._read_states

    def counted(record_ids):
        fetched.append(list(record_ids))
        return read(record_ids)

    monkeypatch.setattr(memory.storage.ledger, "_read_states", counted)
    return fetched


def test_a_read_again_fetches_no_row_it_has_kept(target, monkeypatch):
    with MemoryManager(store_path=target) as memory:
        ids = _fill(memory)
        fetched = _counting(memory, monkeypatch)
        memory.storage.ledger.changing(None)  # nothing kept: the first read fetches every row it judges
        memory.build_context("what does Miso eat", "ann")
        first = sum(len(ids) for ids in fetched)
        memory.build_context("what does Miso eat", "ann")
        second = sum(len(ids) for ids in fetched) - first
        # the second read fetches at most the rows whose usage the first one's bookkeeping wrote
        assert first >= 3 and second < first
        with memory.storage.reading():
            before = len(fetched)
            memory.storage.ledger.states(ids)
            memory.storage.ledger.states(ids)
            assert len(fetched) <= before + 1  # asked once at most, then kept
        with memory.storage.reading():
            memory.storage.ledger.states(ids)
            assert len(fetched) <= before + 1  # and kept across reads


def test_a_change_made_here_is_read_at_once(target):
    with MemoryManager(store_path=target) as memory:
        cat, food, _ = _fill(memory)
        assert "salmon" in memory.build_context("what does Miso eat", "ann")
        with memory.storage.transaction():
            memory.storage.ledger.supersede(food, cat, 0.1)
        assert "salmon" not in memory.build_context("what does Miso eat", "ann")
        state = memory.storage.ledger.states([food])[food]
        assert state.superseded_by == cat


def test_a_change_rolled_back_leaves_the_row_as_committed(target):
    with MemoryManager(store_path=target) as memory:
        cat, food, _ = _fill(memory)
        with pytest.raises(RuntimeError):
            with memory.storage.transaction():
                memory.storage.ledger.supersede(food, cat, 0.1)
                assert memory.storage.ledger.states([food])[food].superseded_by == cat  # seen inside
                raise RuntimeError("the caller changed its mind")
        assert memory.storage.ledger.states([food])[food].superseded_by is None
        assert "salmon" in memory.build_context("what does Miso eat", "ann")


def test_usage_written_here_is_read_at_once(target):
    with MemoryManager(store_path=target) as memory:
        _, food, _ = _fill(memory)
        with memory.storage.reading():
            before = memory.storage.ledger.states([food])[food].usage
        with memory.storage.transaction():
            memory.storage.ledger.record_usage([], [food], hit=1.1, miss=0.5, streak=1)
        with memory.storage.reading():
            assert memory.storage.ledger.states([food])[food].usage == pytest.approx(before * 0.5)


def test_a_change_another_connection_commits_is_read_by_this_one(target):
    if str(target).endswith(".json"):
        pytest.skip("a JSON store has one writer process at a time: no second connection to change it")
    with MemoryManager(store_path=target) as memory:
        cat, food, _ = _fill(memory)
        assert "salmon" in memory.build_context("what does Miso eat", "ann")  # its rows kept
        with MemoryManager(store_path=target) as other:
            with other.storage.transaction():
                other.storage.ledger.supersede(food, cat, 0.1)
        assert "salmon" not in memory.build_context("what does Miso eat", "ann")


def test_the_rows_kept_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(ledger_module, "KEPT_ROWS", 8)
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        with memory.batch():
            for n in range(40):
                memory.add(Message("user", f"note {n} about the garden shed", f"user{n % 4}"))
        for n in range(4):
            memory.build_context("the garden shed", f"user{n}")
            assert len(memory.storage.ledger._kept) <= 8
        assert memory.storage.ledger._kept  # it keeps some: the bound, not nothing


def test_erasing_a_user_keeps_no_row_of_theirs(tmp_path):
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        ids = _fill(memory)
        assert set(ids) & set(memory.storage.ledger._kept)
        memory.erase_user("ann")
        assert not set(ids) & set(memory.storage.ledger._kept)
