"""Writers of one SQLite file take turns in the kernel, not by polling (issue 23, item 2).

A waiting writer sleeps on the lock file beside the database until the holder commits, then
begins at once: one ``BEGIN IMMEDIATE``, not one a millisecond. A wait past ``BUSY_SECONDS``
is the same busy error as before, and a holder killed with ``kill -9`` frees the turn.
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.errors import StoreError, StoreLockedError
from v2_memory.storage import database
from v2_memory.storage.database import StateDatabase
from v2_memory.storage.writer_turns import lock_path

pytestmark = pytest.mark.skipif(os.name == "nt", reason="flock is POSIX; on Windows writers poll, as SQLite leaves them to")

REPO = Path(__file__).resolve().parents[1]


def _refusals(monkeypatch) -> list[int]:
    """Counts the attempts SQLite refused because another connection held the lock: each is a
    poll (try again in a millisecond)."""
    refused = [0]
    original = database._waiting

    def counting(action):
        def attempt():
            try:
                return action()
            except database.sqlite3.DatabaseError as exc:
                refused[0] += database._is_busy(exc)
                raise
        return original(attempt)

    monkeypatch.setattr(database, "_waiting", counting)
    return refused


def test_a_waiting_writer_sleeps_until_the_holder_commits_then_begins_once(tmp_path, monkeypatch):
    holder, waiter = StateDatabase(tmp_path / "s.sqlite3"), StateDatabase(tmp_path / "s.sqlite3")
    holding, done = threading.Event(), []

    def hold():
        with holder.transaction():
            holder.set_meta("holder", "1")
            holding.set()
            time.sleep(0.3)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait()
    refused = _refusals(monkeypatch)
    begun = time.monotonic()
    with waiter.transaction():
        done.append(time.monotonic() - begun)
        waiter.set_meta("waiter", "1")
    thread.join()
    assert done[0] >= 0.2  # it waited for the holder's commit
    assert refused[0] == 0  # it slept on its turn: SQLite never refused it, no polling while it waited
    assert waiter.meta("holder") == "1" and holder.meta("waiter") == "1"
    holder.close(), waiter.close()


def test_a_turn_not_waited_for_is_refused_at_once(tmp_path):
    holder, other = StateDatabase(tmp_path / "s.sqlite3"), StateDatabase(tmp_path / "s.sqlite3")
    other.wait_for_lock = False
    with holder.transaction():
        begun = time.monotonic()
        with pytest.raises(StoreLockedError):
            with other.transaction():
                pass
        assert time.monotonic() - begun < 1.0
    with other.transaction():  # the holder committed: the turn is free again
        other.set_meta("k", "v")
    holder.close(), other.close()


def test_a_wait_past_the_busy_limit_is_a_store_error_and_the_late_turn_is_given_back(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "BUSY_SECONDS", 0.2)
    holder, waiter = StateDatabase(tmp_path / "s.sqlite3"), StateDatabase(tmp_path / "s.sqlite3")
    with holder.transaction():
        with pytest.raises(StoreError, match="busy"):
            with waiter.transaction():
                pass
    time.sleep(0.1)  # the helper that still waited got the turn when the holder committed, and let go
    third = StateDatabase(tmp_path / "s.sqlite3")
    third.wait_for_lock = False
    with third.transaction():
        third.set_meta("k", "v")
    for db in (holder, waiter, third):
        db.close()


def test_a_holder_killed_mid_write_frees_the_turn(tmp_path):
    path = tmp_path / "memory.sqlite3"
    script = ("import sys, time; from v2_memory.storage.database import StateDatabase; db = StateDatabase(sys.argv[1]); "
              "t = db.transaction(); t.__enter__(); db.set_meta('half', 'done'); print('holding', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=REPO, stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert child.stdout.readline().strip() == b"holding"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        with MemoryManager(store_path=path) as memory:  # the turn and SQLite's lock went with the process
            assert memory.add(Message("user", "after the crash", "ann")).record_id is not None
            assert memory.storage.db.meta("half") is None  # its transaction never committed
    finally:
        if child.poll() is None:
            child.kill()


def test_the_lock_file_is_private_and_empty_and_listed_with_the_stores_files(tmp_path):
    with MemoryManager(store_path=tmp_path / "memory.sqlite3") as memory:
        memory.add(Message("user", "hello there, I live in Porto", "ann"))
        lock = lock_path(tmp_path / "memory.sqlite3")
        assert lock.name == ".memory.sqlite3.lock" and lock in memory.storage.files()
    assert lock.stat().st_size == 0 and stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_an_interrupted_wait_keeps_no_turn_and_one_sleeper_per_connection(tmp_path, monkeypatch):
    monkeypatch.setattr(database, "BUSY_SECONDS", 0.1)
    holder, waiter = StateDatabase(tmp_path / "s.sqlite3"), StateDatabase(tmp_path / "s.sqlite3")
    before = threading.active_count()
    with holder.transaction():
        for _ in range(20):  # twenty waits that run out: one sleeper carries on, not twenty
            with pytest.raises(StoreError, match="busy"):
                with waiter.transaction():
                    pass
        assert threading.active_count() <= before + 1

        def interrupt(signum, frame):
            raise KeyboardInterrupt

        monkeypatch.setattr(database, "BUSY_SECONDS", 5.0)
        previous = signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        try:
            with pytest.raises(KeyboardInterrupt):
                with waiter.transaction():
                    pass
        finally:
            signal.signal(signal.SIGALRM, previous)
    time.sleep(0.1)  # the holder committed: the sleeper got the lock nobody wanted, and let go
    other = StateDatabase(tmp_path / "s.sqlite3")
    other.wait_for_lock = False
    with other.transaction():
        other.set_meta("k", "v")
    waiter.wait_for_lock = False
    with waiter.transaction():
        waiter.set_meta("k", "w")
    for db in (holder, waiter, other):
        db.close()


def test_a_file_system_without_locks_falls_back_to_polling(tmp_path, monkeypatch):
    from v2_memory.storage import writer_turns

    def no_locks(fd, operation):
        raise OSError(37, "No locks available")

    db = StateDatabase(tmp_path / "s.sqlite3")
    monkeypatch.setattr(writer_turns.fcntl, "flock", no_locks)
    with db.transaction():
        db.set_meta("k", "v")
    assert db.meta("k") == "v" and not db._turns.usable
    db.close()
