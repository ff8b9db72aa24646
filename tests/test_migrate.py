"""``migrate``: a store copied between backends answers exactly as before, and its source is untouched.

The history below exercises every track: corrections (a superseded memory, a fact that changed),
model output verified later, sessions (one ended), tasks (one finished), a forgotten record, an
erased user (so the last ids were handed out and are gone), and reads (usage, read log).
"""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import FakeClock
from v2_memory import MemoryManager, Message
from v2_memory.cli import main
from v2_memory.errors import StoreInconsistentError, StoreLockedError, StorePathError
from v2_memory.storage.backends import open_storage
from v2_memory.storage.migrate import migrate

USERS = ["ann", "bob", "carol"]
QUERIES = ["手机 Mac", "CS201 作业", "香菜 推荐", "组会 周三", "继续"]


def _history(target: Path, clock: FakeClock) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with MemoryManager(store_path=target, clock=clock, window_size=2) as memory:
        memory.start_task("ann", "paper")
        for user, role, text, extra in [
            ("ann", "user", "我用安卓手机", {"session_id": "s1"}),
            ("ann", "user", "刚才说错了，应该是Mac", {"session_id": "s1"}),
            ("ann", "user", "记住我不吃香菜", {}),
            ("ann", "assistant", "好的，你不吃香菜，对吗？", {}),
            ("ann", "user", "CS201 作业 周五截止", {"domain": "task", "task_id": "paper"}),
            ("bob", "user", "组会在周三 记忆", {"session_id": "s2"}),
            ("bob", "user", "我的电话是 13812345678", {}),
            ("bob", "user", "别推荐咖啡", {}),
            ("carol", "user", "I use a Mac", {}),
            ("carol", "user", "CS202 作业 周三截止", {}),
            ("ann", "user", "PPT 大纲 记忆 周三", {"session_id": "s1"}),
        ]:
            memory.add(Message(role, text, user, **extra))
            clock.advance(minutes=3)
        memory.verify(4, user_id="ann")
        memory.confirm_fact("ann", "diet")
        memory.end_session("bob", "s2")
        memory.set_task_progress("ann", "paper", 0.5)
        memory.forget("bob", 8)
        for query in QUERIES:
            memory.build_context(query, "ann", session_id="s1", task_id="paper")
        memory.add(Message("user", "临时 记录 周四", "dave"))
        memory.erase_user("dave")  # the highest id is gone: the copy must not hand it out again


def _contexts(target: Path, clock: FakeClock) -> list[str]:
    with MemoryManager(store_path=target, clock=clock, window_size=2) as memory:
        return ([memory.build_context(q, u, session_id=s, task_id=t) for u in USERS for q in QUERIES
                 for s in (None, "s1", "s2") for t in (None, "paper")]
                + [memory.summary(u) for u in USERS] + [repr(memory.recent_messages(u)) for u in USERS]
                + [repr(memory.facts(u)) for u in USERS] + [str(memory.add(Message("user", "新 记录", "ann")).record_id)])


def _file_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def source(tmp_path) -> tuple[Path, FakeClock]:
    clock = FakeClock()
    target = tmp_path / "src" / "memory_store.json"
    _history(target, clock)
    return target, clock


def test_a_round_trip_json_sqlite_json_gives_identical_contexts(source, tmp_path):
    src, clock = source
    before = _file_bytes(src.parent)
    sqlite = tmp_path / "mid" / "memory.sqlite3"
    back = tmp_path / "back" / "memory_store.json"
    first, second = migrate(src, sqlite), migrate(sqlite, back)
    assert first.ok and second.ok and first.counts == second.counts
    assert first.counts["records"] == (10, 10) and first.counts["last_record_id"] == (12, 12)
    assert _file_bytes(src.parent) == before  # the source: not one byte changed, no file added
    # The source's own answers, on a copy of it (reads change usage, so each copy is read once).
    reference = tmp_path / "reference"
    shutil.copytree(src.parent, reference)
    expected = _contexts(reference / src.name, FakeClock(clock.now))
    assert expected[-1] == "13"  # the erased user's id 12 is never handed out again
    assert _contexts(sqlite, FakeClock(clock.now)) == expected
    assert _contexts(back, FakeClock(clock.now)) == expected


def test_a_store_an_older_release_wrote_migrates_with_its_summaries(source, tmp_path):
    """The previous release had no summary_covers table and kept covers as a JSON list; a read-only
    source is never upgraded, so migrate reads that form as it is."""
    src, clock = source
    sqlite = tmp_path / "old" / "memory.sqlite3"
    migrate(src, sqlite)
    db = sqlite3.connect(sqlite)
    with db:
        for (scope,) in db.execute("SELECT scope FROM summaries").fetchall():
            covers = [r[0] for r in db.execute("SELECT record_id FROM summary_covers WHERE scope = ? ORDER BY position", (scope,))]
            db.execute("UPDATE summaries SET covers = ? WHERE scope = ?", (json.dumps(covers), scope))
        db.execute("DROP TABLE summary_covers")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    db.close()
    target = tmp_path / "new" / "memory_store.json"
    report = migrate(sqlite, target)
    assert report.ok
    reference = tmp_path / "reference"
    shutil.copytree(src.parent, reference)
    assert _contexts(target, FakeClock(clock.now)) == _contexts(reference / src.name, FakeClock(clock.now))


def test_ids_logs_and_ledger_are_copied_exactly(source, tmp_path):
    src, _ = source
    target = tmp_path / "copy.sqlite3"
    migrate(src, target)
    original, copy = open_storage(src), open_storage(target)
    try:
        assert copy.records.all_records() == original.records.all_records()
        assert copy.audit.writes() == original.audit.writes() and copy.audit.reads() == original.audit.reads()
        assert copy.ledger.all_states() == original.ledger.all_states()
        assert copy.ledger.facts('[null,"ann"]') == original.ledger.facts('[null,"ann"]')
        assert copy.counts() == original.counts()
    finally:
        original.close()
        copy.close()


def test_new_audit_events_in_a_json_copy_are_numbered_above_the_copied_ones(source, tmp_path):
    """A JSON store's events leave through an outbox numbered by ``seq``, and crash recovery skips an
    outbox event whose seq a log already holds: a copy restarting at 1 would drop new events."""
    src, clock = source
    middle, target = tmp_path / "mid.sqlite3", tmp_path / "copy" / "memory_store.json"
    migrate(src, middle)
    migrate(middle, target)
    with MemoryManager(store_path=target, clock=clock) as memory:
        copied = [e.data["seq"] for e in memory.audit.writes() if "seq" in e.data]
        memory.add(Message("user", "再 一条", "ann"))
        assert copied and memory.audit.writes()[-1].data["seq"] > max(copied)


def test_migrate_refuses_a_target_that_holds_data_and_changes_neither(source, tmp_path):
    src, clock = source
    target = tmp_path / "full.sqlite3"
    with MemoryManager(store_path=target, clock=clock) as memory:
        memory.add(Message("user", "已有 数据", "zed"))
    before = target.read_bytes()
    with pytest.raises(StoreInconsistentError, match="already holds data"):
        migrate(src, target)
    with MemoryManager(store_path=target, clock=clock) as memory:
        assert [r["content"] for r in memory.store.all_records()] == ["已有 数据"]
    assert len(before) > 0


def test_migrate_refuses_a_missing_source_and_the_source_as_target(source, tmp_path):
    src, _ = source
    with pytest.raises(StorePathError, match="no store"):
        migrate(tmp_path / "nothing.json", tmp_path / "x.sqlite3")
    with pytest.raises(StorePathError, match="is the source"):
        migrate(src, src)
    assert not (tmp_path / "x.sqlite3").exists()


def test_a_failed_copy_leaves_no_target_behind(source, tmp_path, monkeypatch):
    src, _ = source
    from v2_memory.storage import sqlite_store

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sqlite_store.SqliteAuditLog, "import_events", boom)
    target = tmp_path / "new.sqlite3"
    with pytest.raises(OSError, match="No space"):
        migrate(src, target)
    assert list(tmp_path.glob("new.sqlite3*")) == []


def test_the_migrate_command_reports_counts_and_fails_in_one_line(source, tmp_path, capsys):
    src, _ = source
    target = tmp_path / "cli.sqlite3"
    assert main(["migrate", str(src), str(target), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["counts"]["records"] == {"source": 10, "target": 10}
    assert main(["migrate", str(src), str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "already holds data" in err and len(err.strip().splitlines()) == 1


# -- PostgreSQL: the same copy to and from a server (needs V2_MEMORY_PG_URL; see conftest) ---------
def test_a_round_trip_through_postgres_gives_identical_contexts(source, tmp_path, pg_schema):
    src, clock = source
    back = tmp_path / "back" / "memory.sqlite3"
    first = migrate(src, pg_schema.url)
    server_before = pg_schema.dump()
    second = migrate(pg_schema.url, back)
    assert first.ok and second.ok and first.counts == second.counts
    assert first.counts["last_record_id"] == (12, 12)
    assert pg_schema.dump() == server_before  # reading the server source changed no row
    reference = tmp_path / "reference"
    shutil.copytree(src.parent, reference)
    expected = _contexts(reference / src.name, FakeClock(clock.now))
    assert _contexts(back, FakeClock(clock.now)) == expected
    assert _contexts(pg_schema.url, FakeClock(clock.now)) == expected  # the server copy answers the same


def test_migrate_into_postgres_refuses_data_and_rolls_back_a_failed_copy(source, pg_schema, monkeypatch):
    src, clock = source
    from v2_memory.storage import sqlite_store

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sqlite_store.SqliteAuditLog, "import_events", boom)
    with pytest.raises(OSError, match="No space"):
        migrate(src, pg_schema.url)
    monkeypatch.undo()
    with MemoryManager(store_path=pg_schema.url, clock=clock) as memory:
        assert memory.store.all_records() == []  # the one import transaction rolled back
        memory.add(Message("user", "已有 数据", "zed"))
    with pytest.raises(StoreInconsistentError, match="already holds data"):
        migrate(src, pg_schema.url)
    with pytest.raises(StorePathError, match="is the source"):
        migrate(pg_schema.url, pg_schema.url)


def test_migrate_from_an_empty_postgres_schema_says_there_is_no_store(pg_schema, tmp_path):
    with pytest.raises(StorePathError, match="no store"):
        migrate(pg_schema.url, tmp_path / "x.sqlite3")
    assert not (tmp_path / "x.sqlite3").exists()


def test_a_json_store_a_writer_has_open_is_refused_and_copied_once_closed(tmp_path, monkeypatch):
    """A JSON store was copied file by file while its writer went on: an add between the copies
    left a copy whose log named a record it lacked, and a forget between them left the forgotten
    text in the copy's log. The copy is now taken holding the writer's lock."""
    import v2_memory.storage.migrate as migration

    source, target = tmp_path / "live.json", tmp_path / "copy.sqlite3"
    with MemoryManager(store_path=source) as live:
        live.add(Message("user", "第一条 记忆 阈值", "ann"))
        live.add(Message("user", "walrus-42 记忆 笔记", "ann"))
        with pytest.raises(StoreLockedError, match="a writer has this JSON store open.*migrate again"):
            migrate(source, target)
        assert not target.exists()
    backup = migration._backup
    refused = []

    def state_copied_then_a_writer_tries(path, copy):
        backup(path, copy)
        with pytest.raises(StoreLockedError):  # no writer can start while the copy is taken
            MemoryManager(store_path=source)
        refused.append(True)

    monkeypatch.setattr(migration, "_backup", state_copied_then_a_writer_tries)
    report = migrate(source, target)
    assert refused == [True]
    assert report.ok
    with MemoryManager(store_path=target) as copy:
        assert [r["content"] for r in copy.store.records("ann")] == ["第一条 记忆 阈值", "walrus-42 记忆 笔记"]


def test_a_json_store_on_a_read_only_medium_is_still_migrated(tmp_path, monkeypatch):
    """Taking the writer's lock opened the lock file for appending, which a read-only mount (a
    backup) refuses: migrate failed with a raw OSError where it used to copy."""
    import v2_memory.files as files

    source = tmp_path / "backup" / "memory_store.json"
    source.parent.mkdir()
    with MemoryManager(store_path=source) as memory:
        memory.add(Message("user", "第一条 记忆 阈值", "ann"))
    writable = files.open_private_append

    def read_only_medium(path):
        if Path(path).parent == source.parent:
            raise OSError(30, "Read-only file system", str(path))
        return writable(path)

    monkeypatch.setattr(files, "open_private_append", read_only_medium)
    assert migrate(source, tmp_path / "copy.sqlite3").ok
