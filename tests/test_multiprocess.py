"""Several processes on one SQLite store: no lost writes, no errors, isolation holds, and each
process sees the others' writes on its next read."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # many processes on one store: `python -m pytest --full` (CI) runs them

REPO = Path(__file__).resolve().parent.parent

WRITER = r"""
import json, sys
from v2_memory import MemoryManager, Message
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
acknowledged = []
with MemoryManager(store_path=path, window_size=3) as memory:
    for n in range(count):
        result = memory.add(Message("user", f"{name} note {n} 记忆污染 阈值 secret-{name}", name, session_id="s"))
        acknowledged.append(result.record_id)
        memory.add(Message("user", f"shared line from {name} #{n} 记忆", "shared"))
        memory.build_context("记忆污染 阈值", name, session_id="s")
print(json.dumps(acknowledged))
"""

READER = r"""
import json, sys, time
from v2_memory import MemoryManager
path, writers = sys.argv[1], sys.argv[2].split(",")
leaks = 0
with MemoryManager(store_path=path) as memory:
    deadline = time.time() + 60
    while time.time() < deadline:
        for name in writers:
            context = memory.build_context("记忆污染 阈值 secret", name, session_id="s", top_k=50)
            leaks += sum(f"secret-{other}" in context for other in writers if other != name)
        if all(len(memory.store.records(name)) >= int(sys.argv[3]) for name in writers):
            break
    final = {name: len(memory.store.records(name)) for name in writers}
print(json.dumps({"leaks": leaks, "final": final}))
"""


def _spawn(script: str, *args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_writers_and_readers_share_one_sqlite_store(tmp_path):
    path, count, names = tmp_path / "memory.sqlite3", 40, ["alice", "bob", "carol"]
    writers = [_spawn(WRITER, path, name, count) for name in names]
    readers = [_spawn(READER, path, ",".join(names), count) for _ in range(2)]
    results = [(p, *p.communicate(timeout=300)) for p in writers + readers]
    for process, out, err in results:
        assert process.returncode == 0, err[-2000:]  # no process hit an error
    acknowledged = {name: json.loads(out) for name, (_, out, _) in zip(names, results)}
    for _, out, _ in results[len(names):]:
        report = json.loads(out)
        assert report["leaks"] == 0
        assert report["final"] == {name: count for name in names}  # a reader saw every writer's adds
    from v2_memory import MemoryManager

    with MemoryManager(store_path=path) as memory:
        for name in names:
            stored = [r["record_id"] for r in memory.store.records(name)]
            assert stored == acknowledged[name]  # nothing lost, nothing doubled
            assert len(memory.recent_messages(name)) == 3
        assert len(memory.store.records("shared")) == count * len(names)
        assert len({r["record_id"] for r in memory.store.all_records()}) == 2 * count * len(names)
        events = [e for e in memory.audit.writes() if e.kind == "write"]
        assert len(events) == 2 * count * len(names)  # every add logged exactly once


def test_a_process_opening_a_new_sqlite_store_while_another_fills_it_is_not_refused(tmp_path):
    """Process A finds the file empty; before A reads it, process B creates the tables and adds a
    record. A must open normally: records and ledger live in one file and cannot go missing apart."""
    from v2_memory import MemoryManager, Message
    from v2_memory.storage.contract import Storage
    from v2_memory.storage.database import StateDatabase
    from v2_memory.storage.sqlite_store import SqliteAuditLog, SqliteVectorStore

    path = tmp_path / "memory.sqlite3"
    early = StateDatabase(path)  # A: the file did not exist, so this open "created" it
    assert early.created
    with MemoryManager(store_path=path) as other:  # B fills it meanwhile
        other.add(Message("user", "我周五下午有空", "alice"))
    storage = Storage(SqliteVectorStore(early, scorer=None), early, SqliteAuditLog(early))  # type: ignore[arg-type]
    assert [r["content"] for r in storage.records.records("alice")] == ["我周五下午有空"]
    storage.close()
