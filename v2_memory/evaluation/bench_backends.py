"""The backend benchmark behind ``python -m v2_memory bench --backend json|sqlite|postgres``.

``bench.py`` measures the record index against the article's scan; this measures the *storage*:
what each backend costs for the same work, bare and governed, alone and shared. Per size (the
same records per user at every size, so a user's own data stays the same while the store grows):

1. fill: every message as a record with its ledger row, 1,000 per transaction (a bulk load:
   filling 100,000 through the whole write policy would take longer than the rest together);
2. reopen: ``open_storage`` on the closed store, in this process;
3. bare store: a user's first search (builds that user's index), warm search, and an atomic
   ``add`` (``with storage.transaction(): records.add(...)``: one commit each);
4. governed: ``MemoryManager.add`` and ``MemoryManager.build_context`` (one commit each, read log
   and usage included), next to the bare numbers; and ``add`` inside ``memory.batch()`` (one
   commit per ``BATCH_ADDS``: each add's share of its batch).

Then, on the largest size, one user's chat: ``chat_turns`` turns of ``add`` then ``build_context``
through the manager, so the window, the summary and its covers are in play as in a real agent (the
bulk fill above leaves them empty); the last fifth is timed, with the user's history at four fifths
or more. Then a shared run on the largest size: writer and reader processes on one store for some seconds
(SQLite and PostgreSQL: several of each; JSON: one process, since a JSON store has one writer and
its files are not readable live by others). PostgreSQL runs on the server ``--pg-url`` names
(default ``$V2_MEMORY_PG_URL``): each size gets a fresh schema, dropped at the end. Each writer counts the adds it was acknowledged; at the end every
acknowledged record id must be in the store (lost writes), and every exception is an error.
"""
from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import tempfile
import os
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from time import perf_counter
from typing import Any, Callable, Iterator, Sequence

from ..errors import install_hint
from ..manager import MemoryManager
from ..messages import Message
from ..storage.backends import open_storage
from ..storage.ledger import scope_key
from ..tables import format_table
from .chat_corpus import generate_messages, generate_queries

__all__ = ["run_backend_benchmark", "format_backend_report", "add_arguments", "run_from_args", "shared_run"]

SUFFIX = {"json": "memory_store.json", "sqlite": "memory.sqlite3"}
BACKENDS = ("json", "sqlite", "postgres")
FILL_CHUNK = 1_000  # adds per transaction while filling
BATCH_ADDS = 20  # adds per memory.batch() in the governed batch timing


def _latency(seconds: Sequence[float]) -> dict[str, float]:
    """Median and 95th percentile (nearest rank) in milliseconds."""
    ordered = sorted(seconds)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return {"n": len(ordered), "median_ms": statistics.median(ordered) * 1e3, "p95_ms": p95 * 1e3}


def _timed(calls: Sequence[Any], function: Callable[[Any], Any]) -> dict[str, float]:
    seconds = []
    for call in calls:
        start = perf_counter()
        function(call)
        seconds.append(perf_counter() - start)
    return _latency(seconds)


# -- 1. fill and 2. reopen ------------------------------------------------------------------------
def _fill(path: Path | str, messages: list[tuple[str, str, str]]) -> float:
    """Bulk-load: each record with the ledger row governance gives a user's message, ``FILL_CHUNK``
    per transaction (the timed governed adds below then run the whole write policy)."""
    start = perf_counter()
    storage = open_storage(path)
    try:
        for first in range(0, len(messages), FILL_CHUNK):
            with storage.transaction():
                for user, role, content in messages[first:first + FILL_CHUNK]:
                    record = storage.records.add(user, role, content, source="user_input")
                    storage.ledger.register(record["record_id"], scope_key(user), verified=role == "user",
                                            base_weight=1.0 if role == "user" else 0.01)
    finally:
        storage.close()
    return perf_counter() - start


def _reopen(path: Path | str) -> tuple[Any, float]:
    start = perf_counter()
    storage = open_storage(path)
    return storage, perf_counter() - start


# -- 3. the bare store and 4. the governed path ---------------------------------------------------
def _bare(storage: Any, calls: list[tuple[str, str]], adds: list[tuple[str, str, str]], top_k: int) -> dict:
    records = storage.records
    first_users = list(dict.fromkeys(user for user, _ in calls))  # every queried user: warm means warm
    first = _timed(first_users, lambda user: records.search(calls[0][1], user, top_k=top_k))
    warm = _timed(calls, lambda call: records.search(call[1], call[0], top_k=top_k))

    def add(message: tuple[str, str, str]) -> None:
        with storage.transaction():
            records.add(message[0], message[1], message[2])

    return {"first_search": first, "warm_search": warm, "add": _timed(adds, add)}


def _governed(path: Path | str, calls: list[tuple[str, str]], adds: list[tuple[str, str, str]], top_k: int,
              warm_queries: list[str], batched_adds: list[tuple[str, str, str]]) -> dict:
    """Warm means every queried user's index and tracks are loaded, with *other* queries: a timed
    query or add text is never one the process has read before (no text cache answers it)."""
    with MemoryManager(store_path=path) as memory:
        for (user, _), query in zip(calls, warm_queries):
            memory.build_context(query, user, top_k=top_k)
        context = _timed(calls, lambda call: memory.build_context(call[1], call[0], top_k=top_k))
        add = _timed(adds, lambda m: memory.add(Message(m[1], m[2], m[0])))

        def batch(first: int) -> None:
            with memory.batch():
                for user, role, content in batched_adds[first:first + BATCH_ADDS]:
                    memory.add(Message(role, content, user))

        starts = range(0, len(batched_adds) - BATCH_ADDS + 1, BATCH_ADDS)
        shares = _timed(starts, batch)  # per batch; below, each add's share of it
        batched = {"n": len(starts) * BATCH_ADDS, **{k: shares[k] / BATCH_ADDS for k in ("median_ms", "p95_ms")}}
    return {"build_context": context, "add": add, "batch_add": batched}


def _bench_size(backend: str, count: int, per_user: int, queries: int, top_k: int, seed: int,
                place: Callable[[str, int], Any], progress: Callable[[str], None]) -> dict:
    users = max(1, count // per_user)
    messages = generate_messages(count, users, seed)
    calls = generate_queries(queries, users, seed)
    adds = [(user, "user", f"{query} 新增") for user, query in generate_queries(queries, users, seed + 1)]
    governed_adds = [(user, "user", f"{query} 又记") for user, query in generate_queries(queries, users, seed + 2)]
    warm_queries = [query for _, query in generate_queries(queries, users, seed + 3)]
    batched_adds = [(user, "user", f"{query} 批量") for user, query in generate_queries(max(queries, BATCH_ADDS), users, seed + 5)]
    path = place(backend, count)
    progress(f"{backend} {count:,} records ({users} users): fill")
    fill_s = _fill(path, messages)
    progress(f"{backend} {count:,}: reopen, bare store, governed path")
    storage, reopen_s = _reopen(path)
    try:
        bare = _bare(storage, calls, adds, top_k)
    finally:
        storage.close()
    governed = _governed(path, calls, governed_adds, top_k, warm_queries, batched_adds)
    return {"backend": backend, "records": count, "users": users, "fill_s": fill_s, "reopen_s": reopen_s,
            "bare": bare, "governed": governed, "path": str(path)}


def _chat(path: Path | str, turns: int, seed: int) -> dict:
    """One new user's conversation in a full store; each turn's add and read timed, the last fifth kept."""
    texts = [query for _, query in generate_queries(turns, 1, seed + 4)]
    adds, reads = [], []
    with MemoryManager(store_path=path) as memory:
        for n, text in enumerate(texts):
            start = perf_counter()
            memory.add(Message("user", text, "chat-user"))
            added = perf_counter()
            memory.build_context(text, "chat-user")
            if n >= turns * 4 // 5:
                adds.append(added - start)
                reads.append(perf_counter() - added)
    return {"turns": turns, "add": _latency(adds), "build_context": _latency(reads)}


# -- the shared run -----------------------------------------------------------------------------
def _writer(path: str, user: str, ready: Any, seconds: float, out: Any) -> None:
    acked, latencies, errors = [], [], []
    with MemoryManager(store_path=path) as memory:
        end = _start_together(ready, seconds)
        n = 0
        while time.time() < end:
            n += 1
            begin = perf_counter()
            try:
                result = memory.add(Message("user", f"写入 {n} 记录 note {n}", user))
                if result.record_id is not None:
                    acked.append(result.record_id)
            except Exception as exc:  # every failure is counted, none stops the run
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append(perf_counter() - begin)
    out.put({"role": "writer", "user": user, "acked": acked, "latencies": latencies, "errors": errors})


def _reader(path: str, users: list[str], queries: list[str], ready: Any, seconds: float, out: Any) -> None:
    latencies, errors = [], []
    with MemoryManager(store_path=path) as memory:
        end = _start_together(ready, seconds)
        n = 0
        while time.time() < end:
            begin = perf_counter()
            try:
                memory.build_context(queries[n % len(queries)], users[n % len(users)])
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append(perf_counter() - begin)
            n += 1
    out.put({"role": "reader", "latencies": latencies, "errors": errors})


def _start_together(ready: Any, seconds: float) -> float:
    """Wait until every process has opened the store (a busy machine may take seconds to start
    one), then run for ``seconds``: the clock starts for all of them at once."""
    ready.wait(timeout=300)  # a process that died while opening breaks the wait instead of hanging it
    return time.time() + seconds


def shared_run(backend: str, path: Path | str, writers: int, readers: int, seconds: float,
               users: list[str], queries: list[str]) -> dict:
    """Writer and reader processes on one store (JSON: one writer, no readers; see the docstring)."""
    if backend == "json":
        writers, readers = 1, 0
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each: no inherited connection
    out = context.Queue()
    ready = context.Barrier(writers + readers)
    processes = [context.Process(target=_writer, args=(str(path), f"writer-{i}", ready, seconds, out))
                 for i in range(writers)]
    processes += [context.Process(target=_reader, args=(str(path), users, queries, ready, seconds, out))
                  for _ in range(readers)]
    for process in processes:
        process.start()
    results = [out.get(timeout=seconds + 120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
    return _shared_summary(backend, path, writers, readers, seconds, results)


def _shared_summary(backend: str, path: Path | str, writers: int, readers: int, seconds: float, results: list) -> dict:
    storage = open_storage(path)
    try:
        acked = [rid for r in results if r["role"] == "writer" for rid in r["acked"]]
        lost = sum(1 for rid in acked if storage.records.get(rid) is None)
    finally:
        storage.close()
    add_s = [s for r in results if r["role"] == "writer" for s in r["latencies"]]
    read_s = [s for r in results if r["role"] == "reader" for s in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    return {"backend": backend, "writers": writers, "readers": readers, "seconds": seconds,
            "mode": "single writer" if backend == "json" else f"{writers} writers + {readers} readers",
            "acknowledged": len(acked), "lost": lost, "errors": len(errors), "first_errors": errors[:3],
            "adds_per_s": len(add_s) / seconds, "reads_per_s": len(read_s) / seconds,
            "add": _latency(add_s) if add_s else None, "read": _latency(read_s) if read_s else None}


# -- the run, its targets and its report ----------------------------------------------------------
def run_backend_benchmark(backends: Sequence[str], sizes: Sequence[int], *, per_user: int = 100, queries: int = 200,
                          top_k: int = 3, seed: int = 0, writers: int = 4, readers: int = 4, seconds: float = 10.0,
                          progress: Callable[[str], None] = lambda line: None,
                          pg_url: str | None = None, chat_turns: int = 1_000) -> dict[str, Any]:
    """Every size on every backend, then the chat and the shared run on the largest size of each."""
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        raise ValueError(f"unknown backend(s) {unknown}; choose from {list(BACKENDS)}")
    rows, chats, shared = [], [], []
    with tempfile.TemporaryDirectory(prefix="v2_memory_bench_backends_") as folder, \
            _server_schemas(pg_url if "postgres" in backends else None) as schema_url:
        def place(backend: str, count: int) -> Path | str:
            return schema_url(count) if backend == "postgres" else Path(folder) / backend / f"{count}" / SUFFIX[backend]

        for backend in backends:
            results = [_bench_size(backend, count, per_user, queries, top_k, seed, place, progress) for count in sizes]
            rows += results
            largest = max(results, key=lambda r: r["records"])
            progress(f"{backend}: one user's chat, {chat_turns:,} turns")
            chats.append({"backend": backend, "records": largest["records"], **_chat(largest["path"], chat_turns, seed)})
            users = sorted({user for user, _ in generate_queries(queries, largest["users"], seed)})
            progress(f"{backend}: shared run for {seconds:g} s")
            shared.append(shared_run(backend, largest["path"], writers, readers, seconds, users,
                                     [query for _, query in generate_queries(20, largest["users"], seed)]))
    for row in rows:
        row.pop("path")
    settings = {"backends": list(backends), "sizes": list(sizes), "records_per_user": per_user, "queries": queries,
                "top_k": top_k, "seed": seed, "fsync": False}
    return {"settings": settings, "sizes": rows, "chat": chats, "shared": shared, "targets": _targets(rows, shared)}


@contextmanager
def _server_schemas(base_url: str | None) -> Iterator[Callable[[int], str]]:
    """Fresh schemas on a PostgreSQL server, one per size (``schema_url(count)`` makes one and
    returns a store URL inside it); every one is dropped at the end, whatever happened."""
    if base_url is None:
        yield lambda count: ""
        return
    try:
        import psycopg
    except ImportError as exc:
        raise ValueError("bench --backend postgres needs psycopg 3: "
                         + install_hint("postgres", "'psycopg[binary]>=3.1'")) from exc
    admin, made = psycopg.connect(base_url, autocommit=True), []

    def schema_url(count: int) -> str:
        name = f"v2m_bench_{count}_{uuid.uuid4().hex[:8]}"  # ours, not input: safe to name in SQL
        admin.execute(f"CREATE SCHEMA {name}")
        made.append(name)
        return f"{base_url}{'&' if '?' in base_url else '?'}options=-csearch_path%3D{name}"

    try:
        yield schema_url
    finally:
        for name in made:
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin.close()


def _targets(rows: list[dict], shared: list[dict]) -> list[dict[str, Any]]:
    """The issue's targets, on the largest size of each backend (those that name one backend, on it)."""
    def target(name: str, value: float, unit: str, limit: float) -> dict[str, Any]:
        return {"name": name, "value": value, "unit": unit, "op": "<=", "limit": limit, "passed": value <= limit}

    found = []
    for backend in dict.fromkeys(r["backend"] for r in rows):
        mine = sorted((r for r in rows if r["backend"] == backend), key=lambda r: r["records"])
        small, large = mine[0], mine[-1]
        at = f"{backend} {large['records']:,}"
        if backend != "json":  # the targets for a database store (a server answers over a socket)
            search_ms = 5.0 if backend == "postgres" else 2.0
            found.append(target(f"{at}: warm per-user search median", large["bare"]["warm_search"]["median_ms"], "ms", search_ms))
            found.append(target(f"{at}: store add p50", large["bare"]["add"]["median_ms"], "ms", 2.0))
        found.append(target(f"{at}: reopen", large["reopen_s"], "s", 3.0))
        context = large["governed"]["build_context"]["median_ms"]
        found.append(target(f"{at}: governed build_context median", context, "ms", 1.5))
        if len(mine) > 1:
            ratio = context / small["governed"]["build_context"]["median_ms"]
            found.append(target(f"{at}: build_context vs {small['records']:,}", ratio, "x", 1.5))
        found.append(target(f"{at}: governed add median (no fsync)", large["governed"]["add"]["median_ms"], "ms", 0.3))
        found.append(target(f"{at}: governed add in a batch median", large["governed"]["batch_add"]["median_ms"], "ms", 0.3))
    for run in shared:
        found.append(target(f"{run['backend']} shared ({run['mode']}): lost writes", run["lost"], "", 0))
        found.append(target(f"{run['backend']} shared ({run['mode']}): errors", run["errors"], "", 0))
    return found


def _ms(part: dict | None) -> str:
    return "-" if part is None else f"{part['median_ms']:.3f} / {part['p95_ms']:.3f}"


def format_backend_report(report: dict[str, Any]) -> str:
    """Three tables (per size; shared run; targets), medians / p95 in milliseconds."""
    s = report["settings"]
    lines = [f"v2_memory bench --backend: {s['records_per_user']} records per user, {s['queries']} queries, "
             f"top_k={s['top_k']}, seed {s['seed']}, fsync off; cells are median / p95 ms", ""]
    lines += format_table(
        ["backend", "records", "reopen s", "1st search", "warm search", "store add", "governed add", "in a batch",
         "build_context"],
        [[r["backend"], f"{r['records']:,}", f"{r['reopen_s']:.3f}", _ms(r["bare"]["first_search"]),
          _ms(r["bare"]["warm_search"]), _ms(r["bare"]["add"]), _ms(r["governed"]["add"]),
          _ms(r["governed"].get("batch_add")), _ms(r["governed"]["build_context"])] for r in report["sizes"]],
        "lrrrrrrrr")
    lines += [""] + format_table(
        ["one user's chat", "store records", "turns", "add (last fifth)", "build_context (last fifth)"],
        [[r["backend"], f"{r['records']:,}", f"{r['turns']:,}", _ms(r["add"]), _ms(r["build_context"])]
         for r in report.get("chat", [])], "lrrrr")
    lines += [""] + format_table(
        ["shared run", "seconds", "adds/s", "reads/s", "add ms", "read ms", "acked", "lost", "errors"],
        [[f"{r['backend']}: {r['mode']}", f"{r['seconds']:g}", f"{r['adds_per_s']:.0f}", f"{r['reads_per_s']:.0f}",
          _ms(r["add"]), _ms(r["read"]), str(r["acknowledged"]), str(r["lost"]), str(r["errors"])]
         for r in report["shared"]], "lrrrrrrrr")
    lines += [""] + format_table(["target", "value", "target", "result"],
                                 [[t["name"], f"{t['value']:.2f} {t['unit']}".strip(), f"<= {t['limit']:g} {t['unit']}".strip(),
                                   "PASS" if t["passed"] else "FAIL"] for t in report["targets"]], "lrrl")
    return "\n".join(lines)


# -- the command (``bench --backend``; bench.py hands over here) ----------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", action="append", choices=list(BACKENDS),
                        help="benchmark this storage backend instead (repeat for several): bare vs governed, "
                             "reopen, and a multi-process run (example: bench --backend sqlite --sizes 1000,10000)")
    parser.add_argument("--pg-url", default=os.environ.get("V2_MEMORY_PG_URL"),
                        help="with --backend postgres: a database the benchmark may create (and drop) schemas in "
                             "(default: $V2_MEMORY_PG_URL)")
    parser.add_argument("--records-per-user", type=int, default=100, help="with --backend: user size (default: 100)")
    parser.add_argument("--load-seconds", type=float, default=10.0, help="with --backend: shared run length (default: 10)")
    parser.add_argument("--chat-turns", type=int, default=1_000,
                        help="with --backend: turns of one user's chat on the largest store (default: 1000)")
    parser.add_argument("--writers", type=int, default=4, help="with --backend: writer processes on SQLite (default: 4)")
    parser.add_argument("--readers", type=int, default=4, help="with --backend: reader processes on SQLite (default: 4)")


def run_from_args(args: argparse.Namespace) -> int:
    """``bench --backend ...``: the report on stdout (JSON with --json), progress on stderr."""
    import json
    import sys

    if "postgres" in args.backend and not args.pg_url:
        raise ValueError("bench --backend postgres needs a server: --pg-url postgresql://... (or set V2_MEMORY_PG_URL)")
    report = run_backend_benchmark(args.backend, args.sizes, per_user=args.records_per_user, queries=args.queries,
                                   top_k=args.top_k, seed=args.seed, writers=args.writers, readers=args.readers,
                                   seconds=args.load_seconds, pg_url=args.pg_url, chat_turns=args.chat_turns,
                                   progress=lambda line: print(f"bench: {line}", file=sys.stderr, flush=True))
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_backend_report(report))
    failed = any(not t["passed"] for t in report["targets"])
    lost = any(run["lost"] or run["errors"] for run in report["shared"])
    return 1 if lost or (args.strict and failed) else 0
