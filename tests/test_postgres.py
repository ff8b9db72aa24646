"""The PostgreSQL backend beyond the shared contract: secrets, many processes, erasure residue.

These need a server (``V2_MEMORY_PG_URL``); without one they skip, and with
``V2_MEMORY_REQUIRE_POSTGRES=1`` (CI) the skip is a failure. ``mask_url`` needs none.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import re
import subprocess
import sys
import traceback
from contextlib import ExitStack

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO, PostgresSchema, postgres_url
from v2_memory import MemoryManager, Message
from v2_memory.errors import StoreError, StoreLockedError
from v2_memory.storage.backends import backend_of
from v2_memory.storage.postgres import PostgresDatabase, mask_url

SECRET = "hunter2-Pa55"


# -- the password never shows ----------------------------------------------------------------------

@pytest.mark.parametrize("url, masked", [
    ("postgresql://ann:hunter2@db:5432/mem", "postgresql://ann:***@db:5432/mem"),
    ("postgres://ann:p%40ss@db/mem?sslmode=require", "postgres://ann:***@db/mem?sslmode=require"),
    ("postgresql://ann@db/mem?password=hunter2&sslmode=require", "postgresql://ann@db/mem?password=***&sslmode=require"),
    ("postgresql:///mem?PASSWORD=x", "postgresql:///mem?PASSWORD=***"),
    ("postgresql:///v2_memory_test", "postgresql:///v2_memory_test"),  # nothing to hide: unchanged
])
def test_mask_url_hides_every_spelling_of_a_password(url, masked):
    assert mask_url(url) == masked


def test_both_url_schemes_name_the_postgres_backend():
    assert backend_of("postgresql://u@h/db") == ("postgres", "postgresql://u@h/db")
    assert backend_of("postgres://u@h/db")[0] == "postgres"


def _everything_said(error: BaseException, caplog) -> str:
    """The error as a user would see it: message, repr, the whole traceback chain, and every log line."""
    chain = "".join(traceback.format_exception(error))
    return "\n".join([str(error), repr(error), chain, caplog.text])


@pytest.mark.parametrize("where", ["user part", "query"])
def test_a_failed_connection_never_prints_the_password(where, caplog):
    """Port 1 refuses at once: the error names the server, with the password masked."""
    caplog.set_level(logging.DEBUG)
    url = (f"postgresql://ann:{SECRET}@127.0.0.1:1/mem" if where == "user part"
           else f"postgresql://ann@127.0.0.1:1/mem?password={SECRET}&connect_timeout=3")
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as caught:
        MemoryManager(store_path=url)
    said = _everything_said(caught.value, caplog)
    assert SECRET not in said and "***" in said


@pytest.fixture
def password_role(pg_schema):
    """A login role with a password that owns a fresh schema, reached over TCP (password auth)."""
    role = "v2m_test_pw"
    pg_schema.execute(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
                      f"CREATE ROLE {role} LOGIN; END IF; END $$")
    pg_schema.execute(f"ALTER ROLE {role} PASSWORD '{SECRET}'")
    pg_schema.execute(f"ALTER SCHEMA {{schema}} OWNER TO {role}")
    database = postgres_url().rsplit("/", 1)[-1].split("?")[0]
    return f"postgresql://{role}:{SECRET}@127.0.0.1/{database}?options=-csearch_path%3D{pg_schema.name}"


def test_a_working_store_never_shows_its_password(password_role, caplog):
    caplog.set_level(logging.DEBUG)
    with MemoryManager(store_path=password_role) as memory:
        memory.add(Message("user", "记忆 阈值", "ann"))
        db = memory.storage.db
        assert isinstance(db, PostgresDatabase) and SECRET not in repr(db) + repr(memory.storage) + str(vars(memory))
    with pytest.raises(StoreError, match="closed") as caught:
        memory.add(Message("user", "again", "ann"))
    assert SECRET not in _everything_said(caught.value, caplog)
    wrong = password_role.replace(SECRET, SECRET + "-wrong")
    with pytest.raises(StoreError, match="password authentication failed") as caught:
        MemoryManager(store_path=wrong)
    assert SECRET not in _everything_said(caught.value, caplog)


def test_a_url_naming_a_schema_that_does_not_exist_says_so(pg_schema):
    base = postgres_url()
    url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{pg_schema.name}_typo"
    with pytest.raises(StoreError, match=rf"no schema of the search_path \({pg_schema.name}_typo\) exists.*CREATE SCHEMA"):
        MemoryManager(store_path=url)


def test_a_schema_the_role_may_not_use_is_named_with_the_grant_it_needs(pg_schema):
    role = "v2m_test_nousage"
    pg_schema.execute(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
                      f"CREATE ROLE {role} LOGIN; END IF; END $$")
    pg_schema.execute(f"ALTER ROLE {role} PASSWORD '{SECRET}'")
    database = postgres_url().rsplit("/", 1)[-1].split("?")[0]
    url = f"postgresql://{role}:{SECRET}@127.0.0.1/{database}?options=-csearch_path%3D{pg_schema.name}"
    with pytest.raises(StoreError, match=rf"may not use schema '{pg_schema.name}': GRANT USAGE") as caught:
        MemoryManager(store_path=url)
    assert SECRET not in str(caught.value)


def test_a_nul_character_is_refused_as_input_and_nothing_is_written(pg_schema):
    from v2_memory import UnstorableTextError

    with MemoryManager(store_path=pg_schema.url) as memory:
        memory.add(Message("user", "CS201 作业 周五截止", "ann"))
        with memory.batch():  # refused before the batch's transaction is touched: the rest commits
            for message in (Message("user", "a \x00 b", "ann"), Message("user", "fine text", "bob\x00")):
                with pytest.raises(UnstorableTextError, match=r"NUL character"):
                    memory.add(message)
            memory.add(Message("user", "组会在周三", "ann"))
        assert [r["content"] for r in memory.store.records("ann")] == ["CS201 作业 周五截止", "组会在周三"]
        assert [m.content for m in memory.recent_messages("ann")] == ["CS201 作业 周五截止", "组会在周三"]
        assert memory.users() == ["ann"]


# -- many processes on one database ------------------------------------------------------------------

def _writer(url: str, name: str, count: int) -> None:
    with MemoryManager(store_path=url, window_size=3) as memory:
        for n in range(count):
            memory.add(Message("user", f"{name} 第{n}条 记忆", name))
            memory.add(Message("user", f"shared from {name} #{n} 记忆", "shared"))
            memory.build_context("记忆", "shared")


def test_several_writer_processes_lose_nothing_and_each_sees_the_others(pg_schema):
    writers, count = 4, 15
    watcher = MemoryManager(store_path=pg_schema.url, window_size=3)  # open before, reads after
    watcher.build_context("记忆", "shared")  # its caches are warm, so they must notice the writers
    spawn = multiprocessing.get_context("spawn")
    procs = [spawn.Process(target=_writer, args=(pg_schema.url, f"w{i}", count)) for i in range(writers)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0] * writers
    shared = watcher.store.records("shared")
    assert len(shared) == writers * count  # no lost write
    assert sorted(r["content"] for r in shared) == sorted(f"shared from w{i} #{n} 记忆" for i in range(writers)
                                                          for n in range(count))
    ids = [r["record_id"] for r in watcher.store.all_records()]
    assert len(ids) == len(set(ids)) == 2 * writers * count
    assert set(watcher.ledger.states(ids)) == set(ids)  # every record's ledger row committed with it
    assert len(watcher.recent_messages("shared")) == 3  # the window the last writer left, not a stale one
    assert "shared from" in watcher.build_context("shared from 记忆", "shared")
    watcher.close()


# -- writers of different users go on together -------------------------------------------------------

@pytest.fixture
def two_processes(pg_schema):
    """Two managers on one schema, as two processes would hold them; the second never waits for a
    lock (a held one raises ``StoreLockedError`` at once)."""
    first = MemoryManager(store_path=pg_schema.url, window_size=2)
    second = MemoryManager(store_path=pg_schema.url, window_size=2)
    second.storage.db.wait_for_lock = False
    yield first, second
    second.close()
    first.close()


def _holding(memory: MemoryManager, *scopes: tuple) -> ExitStack:
    """An open write transaction of ``memory`` (on ``scopes``' rows, or on the whole store), with one
    write in it, held until the stack closes."""
    stack = ExitStack()
    if scopes:
        stack.enter_context(memory.storage.writing(*scopes))
    stack.enter_context(memory.storage.transaction())
    memory.storage.db.set_meta("holder", "yes")
    return stack


def test_an_add_locks_its_user_only(two_processes):
    first, second = two_processes
    with _holding(first, (None, "ann")):
        assert second.add(Message("user", "bob likes tea", "bob")).record_id is not None  # no wait
        with pytest.raises(StoreLockedError):
            second.add(Message("user", "ann likes coffee", "ann"))  # ann's writer is at it
        with pytest.raises(StoreLockedError), second.batch():  # a batch may write anyone: the whole store
            second.add(Message("user", "bob again", "bob"))
    assert second.add(Message("user", "ann likes coffee", "ann")).record_id is not None
    assert [r["content"] for r in first.store.records("ann")] == ["ann likes coffee"]
    assert [r["content"] for r in first.store.records("bob")] == ["bob likes tea"]


def test_a_write_of_the_whole_store_stops_every_user(two_processes):
    first, second = two_processes
    with _holding(first):
        with pytest.raises(StoreLockedError):
            second.add(Message("user", "bob likes tea", "bob"))
    with _holding(first, ("acme", "ann")):  # the same user id in another tenant is another scope
        assert second.add(Message("user", "ann likes tea", "ann")).record_id is not None


def test_a_write_locks_the_users_whose_reads_it_carries(two_processes):
    first, second = two_processes
    second.add(Message("user", "carl keeps a red notebook", "carl"))
    second.build_context("red notebook", "carl")  # its usage and read event wait for a write
    assert second.storage.book.pending
    with _holding(first, (None, "carl")):
        with pytest.raises(StoreLockedError):  # it would write carl's usage while carl's writer is at it
            second.add(Message("user", "bob likes tea", "bob"))
        assert second.storage.book.pending  # rolled back: it waits again
    with _holding(first, (None, "dave")):
        second.add(Message("user", "bob likes tea", "bob"))
    assert not second.storage.book.pending
    assert [e.data.get("query") for e in first.audit.reads()] == ["red notebook"]


def test_an_erasure_in_one_process_drops_the_read_traces_another_carries(two_processes, pg_schema):
    """Reads of carl in one process wait to be written; carl is erased in another; the first
    process's next add (of bob: it locks carl too) writes none of them back."""
    first, second = two_processes
    second.storage.db.wait_for_lock = True
    second.add(Message("user", "carl's locker code is 4471", "carl"))
    for query in ("locker code", "what is carl's locker code", "4471"):
        second.build_context(query, "carl")
    assert second.storage.book.pending
    first.erase_user("carl")
    second.add(Message("user", "bob likes tea", "bob"))
    assert not second.storage.book.pending
    assert b"4471" not in pg_schema.dump() and b"locker" not in pg_schema.dump()
    assert [e.data.get("query") for e in first.audit.reads()] == []


def test_upkeep_of_the_whole_store_is_done_by_one_writer_at_a_time(two_processes):
    first, second = two_processes
    with _holding(first, (None, "ann")):
        assert first.storage.db.try_exclusive("trim writes")
        with second.storage.writing((None, "bob")), second.storage.transaction():
            assert not second.storage.db.try_exclusive("trim writes")  # skipped, not waited for
            assert second.storage.db.try_exclusive("trim reads")


def test_an_erasure_must_lock_the_whole_store(two_processes):
    first, _ = two_processes
    first.add(Message("user", "ann likes coffee", "ann"))
    with pytest.raises(StoreError, match="whole store"):
        with first.storage.writing((None, "ann")), first.storage.transaction():
            first.storage.intend("erase_user", "ann", None)
    assert first.erase_user("ann").store == 1


# -- round trips: writes nobody waits for travel together ----------------------------------------

def _round_trips(db: PostgresDatabase, monkeypatch) -> list[str]:
    """Every exchange with the server from now on: each ``_run`` is one round trip."""
    trips: list[str] = []
    original = PostgresDatabase._run

    def counted(self, action, **kw):
        trips.append(getattr(action, "__qualname__", "?"))
        return original(self, action, **kw)

    monkeypatch.setattr(PostgresDatabase, "_run", counted)
    return trips


def test_an_add_and_a_read_take_few_round_trips(pg_schema, monkeypatch):
    with MemoryManager(store_path=pg_schema.url, window_size=2) as memory:
        for n in range(6):
            memory.add(Message("user", f"第{n}条 记忆 agent memory", "ann"))
        memory.build_context("记忆 memory", "ann")
        memory.add(Message("user", "记忆 warm", "ann"))  # carries the read's bookkeeping (its first log append trims)
        trips = _round_trips(memory.storage.db, monkeypatch)
        memory.add(Message("user", "one more 记忆", "ann"))  # a window push and a summary fold too
        add = len(trips)
        trips.clear()
        memory.build_context("one more 记忆", "ann")
        read = len(trips)
    # BEGIN (with the lock and the commit counter), the record's INSERT … RETURNING id, one read of
    # ledger rows, and the COMMIT carrying every queued write: 4 (one round trip per statement was 10).
    assert add <= 4, add
    # A read takes no lock: its snapshot's BEGIN (with the meta table), the facts, the ledger rows
    # (the window's and summary's with them), the summary's records, its end; its bookkeeping
    # waits for the next write (or 64 reads), which carries it.
    assert read <= 5, read


def test_an_add_inside_a_batch_takes_two_round_trips(pg_schema, monkeypatch):
    with MemoryManager(store_path=pg_schema.url, window_size=2) as memory:
        for n in range(6):
            memory.add(Message("user", f"第{n}条 记忆 agent memory", "ann"))
        trips = _round_trips(memory.storage.db, monkeypatch)
        with memory.batch():
            for n in range(10):
                memory.add(Message("user", f"batch {n} 记忆", "ann"))
    # per add: the record's INSERT … RETURNING id and the ledger row of the message leaving the
    # window; BEGIN and the COMMIT (with every queued write) once for the batch.
    assert len(trips) <= 2 * 10 + 2, len(trips)


@pytest.mark.parametrize("pipelines", [True, False], ids=["queued", "libpq-13-sends-at-once"])
def test_queued_writes_are_seen_by_the_next_read_and_fail_the_commit(pg_schema, pipelines):
    db = PostgresDatabase(pg_schema.url)
    db._pipelines = pipelines and db._pipelines  # a libpq older than 14 has no pipeline mode
    try:
        db.ensure("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT NOT NULL);")
        with db.transaction():
            db.executemany("INSERT INTO t VALUES (?, ?)", [("a", "1"), ("b", "2")])
            db.write("UPDATE t SET v = ? WHERE k = ?", ("3", "b"))
            assert db.fetchall("SELECT k, v FROM t ORDER BY k") == [("a", "1"), ("b", "3")]  # sent first
        with pytest.raises(StoreError):
            with db.transaction():
                db.write("INSERT INTO t VALUES (?, ?)", ("c", "4"))
                db.write("INSERT INTO t VALUES (?, ?)", ("a", "dup"))  # fails only when sent, at COMMIT
        assert db.fetchall("SELECT k, v FROM t ORDER BY k") == [("a", "1"), ("b", "3")]  # c rolled back too
        with db.transaction():  # the connection is usable again, nothing left queued
            db.write("INSERT INTO t VALUES (?, ?)", ("d", "5"))
        assert db.fetchone("SELECT v FROM t WHERE k = ?", ("d",)) == ("5",)
    finally:
        db.close()


# -- erasure on a server -------------------------------------------------------------------------

content = st.text(alphabet="记忆污染阈值咖啡 agentmemory", min_size=1, max_size=12).filter(str.strip)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(writes=st.lists(st.tuples(st.sampled_from(["u1", "u10", "用户"]), content), max_size=12),
       victim=st.sampled_from(["u1", "u10", "用户"]))
def test_after_erase_no_row_holds_the_secret_and_the_tables_were_vacuumed(pg_schema, writes, victim):
    secret = "SECRET-身份证-4471"
    pg_schema.reset()
    with MemoryManager(threshold=0.0, store_path=pg_schema.url, window_size=2) as memory:
        for user, text in [*writes[:3], (victim, f"记住 {secret} 阈值"), (victim, f"我用 {secret} CS9071"), *writes[3:]]:
            memory.add(Message("user", text, user))
        memory.build_context(f"{secret} 阈值", victim)
        assert memory.erase_user(victim).store >= 2
        rows = pg_schema.dump().decode("utf-8")
        assert all(fragment not in rows for fragment in (secret, "身份证", "CS9071"))
        vacuumed = memory.storage.db.fetchall(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND last_vacuum IS NOT NULL")
        assert {"records", "audit_events", "memories", "facts", "windows"} <= {row[0] for row in vacuumed}


# -- without a server ----------------------------------------------------------------------------

@pytest.mark.parametrize("required", ["0", "1"])
def test_no_server_skips_with_a_reason_unless_required(required):
    env = {**os.environ, "V2_MEMORY_PG_URL": "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
           "V2_MEMORY_REQUIRE_POSTGRES": required}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--full",
                          "tests/test_storage_contract.py::test_forget_never_touches_another_users_events_with_the_same_text"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert "no PostgreSQL server for the tests" in run.stdout
    if required == "1":
        # a failure in the test or its fixture's setup (an error): either way the run is red, saying why
        assert run.returncode == 1 and re.search(r"\b1 (failed|error)\b", run.stdout)
        assert "V2_MEMORY_REQUIRE_POSTGRES=1" in run.stdout
    else:
        assert run.returncode == 0 and "1 skipped" in run.stdout and "2 passed" in run.stdout


def test_migrate_never_shows_a_servers_password(tmp_path, capsys):
    """A migration to or from an unreachable server fails with the URL masked, on the API and the CLI."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed (pip install -e '.[postgres]')")
    from v2_memory.cli import main
    from v2_memory.storage.migrate import migrate

    url = f"postgresql://ann:{SECRET}@127.0.0.1:1/none?connect_timeout=2"
    with MemoryManager(store_path=tmp_path / "m.sqlite3") as memory:
        memory.add(Message("user", "记忆 阈值", "ann"))
    for source, target in ((url, tmp_path / "out.sqlite3"), (tmp_path / "m.sqlite3", url)):
        with pytest.raises(StoreError) as caught:
            migrate(source, target)
        assert SECRET not in str(caught.value) and "***" in str(caught.value)
        assert main(["migrate", str(source), str(target)]) == 1
        err = capsys.readouterr().err
        assert SECRET not in err and "cannot connect" in err
    assert not (tmp_path / "out.sqlite3").exists()
