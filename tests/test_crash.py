"""Crash safety: kill -9 a writer at random moments; the store always loads, acknowledged adds stay.

The writer prints each record id only after ``add`` returned (the acknowledgement). It also
erases a scratch user now and then, so some kills land in the middle of an atomic rewrite.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from v2_memory import JsonVectorStore, TornRecordWarning
from v2_memory.storage.contract import UncommittedRecordWarning

pytestmark = pytest.mark.slow  # kill -9 trials of many subprocesses: `python -m pytest --full` (CI) runs them

REPO = Path(__file__).resolve().parent.parent

WRITER = r"""
import sys
from v2_memory import JsonVectorStore
store = JsonVectorStore(sys.argv[1])
filler = "记忆污染 memory " * 2000          # ~30 KB per record: big writes, more chances to tear
n = 0
while True:
    n += 1
    record = store.add("keep", "user", f"{n} {filler}")
    print(record["record_id"], flush=True)    # acknowledged
    if n % 7 == 0:
        store.add("scratch", "user", "temporary " + filler)
        store.erase_user("scratch")           # an atomic rewrite of the whole file
"""


def _run_and_kill(script: str, path, after: float) -> str:
    """Start ``script`` writing to ``path``; once it has acknowledged its first write, kill -9 it
    ``after`` seconds later (so a loaded machine cannot make the kill land before any work);
    return everything it printed."""
    writer = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    first = writer.stdout.readline()  # blocks until the first acknowledged write (or the writer died)
    time.sleep(after)
    writer.send_signal(signal.SIGKILL)
    out, _ = writer.communicate()
    return first + out


def _complete_lines(out: str) -> list[str]:
    """The lines the writer printed whole: the kill may cut the last one short ("add" without its
    id: stdout is unbuffered here), and only a whole line acknowledges anything."""
    return out.split("\n")[:-1]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX kill -9")
def test_kill_minus_nine_never_loses_an_acknowledged_add(tmp_path):
    rng = random.Random(20261130)
    path = tmp_path / "store.json"
    acknowledged: set[int] = set()
    for _ in range(12):
        out = _run_and_kill(WRITER, path, rng.uniform(0.05, 0.4))
        acknowledged.update(int(line) for line in _complete_lines(out))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TornRecordWarning)  # a torn, unacknowledged tail is allowed
            with JsonVectorStore(path) as store:
                kept = {r["record_id"] for r in store.records("keep")}
                assert acknowledged <= kept
    assert len(acknowledged) > 12  # the writers really wrote
    assert not list(tmp_path.glob(".*.tmp"))  # loading cleans up after a kill mid-rewrite


MANAGER_WRITER = r"""
import sys
from v2_memory import MemoryManager, Message
memory = MemoryManager(store_path=sys.argv[1])
n = 0
while True:
    n += 1
    result = memory.add(Message("user", f"{n} 记忆污染 阈值 " * 200, "keep", session_id="s1"))
    memory.build_context("记忆污染 阈值", "keep", session_id="s1")   # a read-log line each time too
    print(result.record_id, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX kill -9")
def test_kill_minus_nine_leaves_store_ledger_and_logs_readable(tmp_path):
    """The manager writes four files per turn; a kill at any moment leaves all of them readable."""
    from v2_memory import MemoryManager
    from v2_memory.observe.audit import TornLogLineWarning

    rng = random.Random(7)
    path = tmp_path / "memory_store.json"
    acknowledged: set[int] = set()
    for _ in range(6):
        out = _run_and_kill(MANAGER_WRITER, path, rng.uniform(0.3, 0.8))
        acknowledged.update(int(line) for line in _complete_lines(out))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (TornRecordWarning, TornLogLineWarning, UncommittedRecordWarning))
            with MemoryManager(store_path=path) as memory:
                assert acknowledged <= {r["record_id"] for r in memory.store.records("keep")}
                logged = {e.data["record_id"] for e in memory.audit.writes() if e.kind == "write"}
                assert acknowledged <= logged  # an add returns only after its write-log line is appended
                memory.audit.reads()
                memory.health()
    assert len(acknowledged) > 6


ERASING_WRITER = r"""
import sys
from v2_memory import MemoryManager, Message
memory = MemoryManager(store_path=sys.argv[1], window_size=2)
k = memory.store.last_id * 10  # a fresh range of victims per run (ids only grow)
while True:
    k += 1
    for n in range(3):
        memory.add(Message("user", f"v{k} secret-v{k}-xyzzy {n} " + "记忆污染 " * 300, f"v{k}", session_id="s"))
    memory.build_context("记忆污染", f"v{k}", session_id="s")
    doomed = memory.add(Message("user", f"forgotten-{k}-plugh " + "阈值 " * 300, "keep")).record_id
    kept = memory.add(Message("user", f"kept-{k} 阈值", "keep")).record_id
    print("add", kept, flush=True)
    memory.build_context("阈值", "keep")
    memory.forget("keep", doomed)
    print("forgot", k, flush=True)
    memory.erase_user(f"v{k}")
    print("erased", k, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX kill -9")
@pytest.mark.parametrize("store_name", ["memory_store.json", "memory.sqlite3", "postgresql"])
def test_kill_minus_nine_never_half_applies_an_add_an_erase_or_a_forget(tmp_path, store_name, request):
    """Killed at any moment, then reopened: every acknowledged add is there, every acknowledged
    erasure and forget is complete on disk (on a server: in no row), and no track disagrees with another."""
    from v2_memory import MemoryManager
    from v2_memory.observe.audit import TornLogLineWarning

    rng = random.Random(11)
    server = request.getfixturevalue("pg_schema") if store_name == "postgresql" else None
    path = server.url if server is not None else tmp_path / store_name
    added, forgot, erased = set(), set(), set()
    for run in range(20):  # at least 8 kills, more until the writers got far enough (a busy machine is slow)
        if run >= 8 and len(erased) >= 3 and len(forgot) >= 3:
            break
        out = _run_and_kill(ERASING_WRITER, path, rng.uniform(0.0, 0.6))
        for kind, value in (line.split() for line in _complete_lines(out)):
            {"add": added, "forgot": forgot, "erased": erased}[kind].add(int(value))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (TornRecordWarning, TornLogLineWarning, UncommittedRecordWarning))
            with MemoryManager(store_path=path, window_size=2) as memory:
                records = {r["record_id"]: r for r in memory.store.all_records()}
                assert added <= set(records)
                registered = {row[0] for row in memory.storage.db.fetchall("SELECT record_id FROM memories")}
                assert registered == set(records)  # no record without its ledger row, no row without its record
                assert memory.storage.db.fetchall("SELECT id FROM intents") == []
                assert memory.storage.db.fetchall("SELECT seq FROM outbox") == []
                for user in memory.users():
                    assert all(rid in records for rid, _ in memory.window.entries((None, user)) if rid is not None)
                memory.audit.writes(), memory.audit.reads()
        files = ({"rows on the server": server.dump()} if server is not None else
                 {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()})
        for secret in [f"secret-v{k}-xyzzy" for k in erased] + [f"forgotten-{k}-plugh" for k in forgot]:
            holding = [name for name, data in files.items() if secret.encode() in data]
            assert not holding, f"{secret} (acknowledged gone) is still in {holding}; the writer printed {out[-300:]!r}"
    assert len(erased) >= 3 and len(forgot) >= 3  # the writers really got that far


BATCH_WRITER = r"""
import sys
from v2_memory import MemoryManager, Message
memory = MemoryManager(store_path=sys.argv[1], window_size=2)
k = memory.store.last_id * 10  # a fresh user per batch (ids only grow)
while True:
    k += 1
    with memory.batch():
        for n in range(4):
            memory.add(Message("user", f"b{k} note {n} " + "记忆污染 " * 200, f"b{k}", session_id="s"))
    print("batch", k, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX kill -9")
@pytest.mark.parametrize("store_name", ["memory_store.json", "memory.sqlite3", "postgresql"])
def test_kill_minus_nine_keeps_a_batch_whole_or_not_at_all(tmp_path, store_name, request):
    """Killed at any moment: every acknowledged batch is all there, in every track; an
    unacknowledged one is all there or not there at all, never some of its adds."""
    from v2_memory import MemoryManager
    from v2_memory.observe.audit import TornLogLineWarning

    rng = random.Random(5)
    server = request.getfixturevalue("pg_schema") if store_name == "postgresql" else None
    path = server.url if server is not None else tmp_path / store_name
    acknowledged: set[int] = set()
    for _ in range(6):
        out = _run_and_kill(BATCH_WRITER, path, rng.uniform(0.0, 0.5))
        acknowledged.update(int(line.split()[1]) for line in _complete_lines(out))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (TornRecordWarning, TornLogLineWarning, UncommittedRecordWarning))
            with MemoryManager(store_path=path, window_size=2) as memory:
                records = memory.store.all_records()
                per_user: dict[str, int] = {}
                for record in records:
                    per_user[record["user_id"]] = per_user.get(record["user_id"], 0) + 1
                assert set(per_user.values()) <= {4}, per_user  # never part of a batch
                assert {f"b{k}" for k in acknowledged} <= set(per_user)
                registered = {row[0] for row in memory.storage.db.fetchall("SELECT record_id FROM memories")}
                assert registered == {r["record_id"] for r in records}
                logged: dict[str, int] = {}
                for event in memory.audit.writes():
                    logged[event.user_id] = logged.get(event.user_id, 0) + (event.kind == "write")
                assert logged == per_user  # each add's write event once, with its record
                for user in per_user:
                    assert len(memory.recent_messages(user)) == 2 and memory.summary(user)
    assert len(acknowledged) >= 6
