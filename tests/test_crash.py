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


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX kill -9")
def test_kill_minus_nine_never_loses_an_acknowledged_add(tmp_path):
    rng = random.Random(20261130)
    path = tmp_path / "store.json"
    acknowledged: set[int] = set()
    for _ in range(12):
        out = _run_and_kill(WRITER, path, rng.uniform(0.05, 0.4))
        acknowledged.update(int(line) for line in out.split())
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
        acknowledged.update(int(line) for line in out.split())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (TornRecordWarning, TornLogLineWarning, UncommittedRecordWarning))
            with MemoryManager(store_path=path) as memory:
                assert acknowledged <= {r["record_id"] for r in memory.store.records("keep")}
                logged = {e.data["record_id"] for e in memory.audit.writes() if e.kind == "write"}
                assert acknowledged <= logged  # an add returns only after its write-log line is appended
                memory.audit.reads()
                memory.health()
    assert len(acknowledged) > 6
