"""Processes sharing one store: throughput as processes are added, and nothing lost or crossed.

``bench_pairs.py`` asks what governance costs one process; this asks what sharing a store costs.
A run starts its processes (``spawn``: fresh interpreters, no inherited connection), waits until
every one has opened the store, then lets them all work for the same seconds:

- 1 process: one process alone, taking turns at ``add`` and ``build_context`` on its user (an agent);
- n processes: n/2 writers (``add`` on their own user) and n/2 readers, each reading one writer's
  user with ``build_context``, so every read races a write.

Then this process counts, per run: operations per second and their ratio to the one-process run;
lost writes (record ids a writer was acknowledged that the store does not hold); errors (every
exception a process caught: none stops a run); and cross-user reads (a record id in a reader's
context that belongs to another user: each ``format="sections"`` item names its ``record_id``).
Each run works on users no earlier run wrote, so one run's history does not slow the next. A JSON
store has one writer process (its files are not shared live): it gets the one-process run only.
"""
from __future__ import annotations

import multiprocessing
import queue
import time
from pathlib import Path
from time import perf_counter
from typing import Any, Callable, Sequence

from ..manager import MemoryManager
from ..messages import Message
from ..storage.backends import open_storage
from ..storage.vector_store import hooks_of
from .bench_pairs import latency

__all__ = ["roles", "collect", "shared_run", "summary", "scaling"]


def roles(processes: int) -> list[str]:
    """What each process does: ``roles(1) == ["alone"]``, ``roles(4) == ["writer", "writer", "reader", "reader"]``."""
    if processes < 1:
        raise ValueError(f"a run needs at least one process, got {processes}")
    writers = processes // 2
    return ["alone"] if processes == 1 else ["writer"] * writers + ["reader"] * (processes - writers)


def _start_together(ready: Any, seconds: float) -> float:
    """Wait until every process has opened the store (a busy machine may take seconds to start
    one), then run for ``seconds``: the clock starts for all of them at once."""
    ready.wait(timeout=300)  # a process that died while opening breaks the wait instead of hanging it
    return time.time() + seconds


def _step(seconds: list[float], errors: list[str], call: Callable[[], Any]) -> None:
    """One timed operation; an exception is counted, never raised (the run goes on)."""
    begin = perf_counter()
    try:
        call()
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    seconds.append(perf_counter() - begin)


def _worker(role: str, path: str, user: str, queries: list[str], ready: Any, seconds: float, out: Any) -> None:
    """One process of a run: writes (``writer``), reads (``reader``) or both in turn (``alone``),
    always on ``user``; puts what it did on ``out``."""
    acked: list[int] = []
    seen: set[int] = set()  # record ids of every context item this process was shown
    adds: list[float] = []
    reads: list[float] = []
    errors: list[str] = []

    def write(n: int) -> None:
        record_id = memory.add(Message("user", f"写入 {n} 记录 note {n}", user)).record_id
        if record_id is not None:
            acked.append(record_id)

    def read(n: int) -> None:
        items = memory.build_context(queries[n % len(queries)], user, format="sections")
        seen.update(item["record_id"] for item in items if item["record_id"] is not None)

    with MemoryManager(store_path=path) as memory:
        end = _start_together(ready, seconds)
        n = 0
        while time.time() < end:
            n += 1
            if role != "reader":
                _step(adds, errors, lambda: write(n))
            if role != "writer":
                _step(reads, errors, lambda: read(n))
    out.put({"role": role, "user": user, "acked": acked, "seen": sorted(seen), "adds": adds, "reads": reads,
             "errors": errors})


def shared_run(backend: str, path: Path | str, processes: int, seconds: float, users: Sequence[str],
               queries: list[str]) -> dict[str, Any]:
    """One run of ``processes`` processes on one store (``roles``); the run's ``summary``."""
    jobs = roles(processes)
    writers = jobs.count("writer")
    # writer k and reader k work on users[k]; a lone process on users[0]
    mine = [users[(n - writers if role == "reader" else n) % len(users)] for n, role in enumerate(jobs)]
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each: no inherited connection
    out = context.Queue()
    ready = context.Barrier(len(jobs))
    started = [context.Process(target=_worker, args=(role, str(path), user, queries, ready, seconds, out))
               for role, user in zip(jobs, mine)]
    results = collect(started, out)
    return summary(backend, path, seconds, results)


def collect(processes: Sequence[Any], out: Any) -> list[Any]:
    """Start ``processes`` and gather one result each from ``out``; a process that ends without
    one (it died opening the store, say) is an error now, not a wait for a timeout."""
    for process in processes:
        process.start()
    results = []
    while len(results) < len(processes):
        try:
            results.append(out.get(timeout=1.0))
        except queue.Empty:
            # subtle: a process may put its result and exit between the get and this check
            if sum(p.exitcode is not None for p in processes) > len(results) and out.empty():
                time.sleep(1.0)
                if out.empty():
                    codes = [p.exitcode for p in processes]
                    raise RuntimeError(f"a benchmark process ended without its result (exit codes {codes})") from None
    for process in processes:
        process.join(timeout=30)
    return results


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def summary(backend: str, path: Path | str, seconds: float, results: list[dict[str, Any]]) -> dict[str, Any]:
    """A run's numbers from its processes' results, checked against the store they shared."""
    acked = [rid for r in results for rid in r["acked"]]
    storage = open_storage(path)
    try:  # record id -> its user, in as few statements as the backend allows
        owner = {rid: record["user_id"] for rid, record in hooks_of(storage.records).get_many(
            set(acked).union(*(r["seen"] for r in results))).items()}
    finally:
        storage.close()
    lost = sum(1 for rid in acked if rid not in owner)
    crossed = sum(owner.get(rid) != r["user"] for r in results for rid in r["seen"])
    adds = [s for r in results for s in r["adds"]]
    reads = [s for r in results for s in r["reads"]]
    errors = [e for r in results for e in r["errors"]]
    writers, readers = (sum(r["role"] == role for r in results) for role in ("writer", "reader"))
    return {"backend": backend, "processes": len(results), "writers": writers, "readers": readers, "seconds": seconds,
            "mode": f"{_count(writers, 'writer')} + {_count(readers, 'reader')}" if writers + readers else "1 process alone",
            "ops_per_s": (len(adds) + len(reads)) / seconds, "adds_per_s": len(adds) / seconds,
            "reads_per_s": len(reads) / seconds, "add": latency(adds) if adds else None,
            "read": latency(reads) if reads else None, "acknowledged": len(acked), "lost": lost,
            "errors": len(errors), "first_errors": errors[:3], "cross_user": crossed,
            "ids_checked": sum(len(r["seen"]) for r in results)}


def scaling(backend: str, path: Path | str, counts: Sequence[int], seconds: float, users: Sequence[str],
            queries: list[str], progress: Callable[[str], None] = lambda line: None) -> list[dict[str, Any]]:
    """One run per process count (1 always first: the others are measured against it), each on
    users no earlier run wrote; ``vs_one`` is a run's operations per second ÷ the lone process's."""
    counts = [1] if backend == "json" else list(dict.fromkeys([1, *counts]))
    runs, first = [], 0
    for processes in counts:
        mine = [users[(first + i) % len(users)] for i in range(max(1, processes // 2))]
        first += len(mine)
        progress(f"{backend}: {processes} process(es) on one store for {seconds:g} s")
        runs.append(shared_run(backend, path, processes, seconds, mine, queries))
    alone = runs[0]["ops_per_s"]
    for run in runs:
        run["vs_one"] = run["ops_per_s"] / alone if alone else 0.0
    return runs
