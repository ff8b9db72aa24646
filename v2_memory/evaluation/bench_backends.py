"""The backend benchmark behind ``python -m v2_memory bench --backend json|sqlite|postgres``.

``bench.py`` measures the record index against the article's scan; this measures the *storage*:
what each backend costs for the same work, bare and governed, alone and shared, always as ratios
of things measured together, since a shared machine cannot judge milliseconds. Per size (the same
records per user at every size, so a user's own data stays the same while the store grows):

1. fill: every message as a record with its ledger row, 1,000 per transaction (a bulk load:
   filling 100,000 through the whole write policy would take longer than the rest together);
2. reopen: ``open_storage`` on the closed store, in this process;
3. in one ``MemoryManager``: each user's first bare search (it builds that user's index), then
   bare search against ``build_context`` and a bare one-record commit against ``add``,
   interleaved round by round (``bench_pairs.py``), and ``add`` inside ``memory.batch()`` (each
   add's share of a ``BATCH_ADDS`` batch). The largest ÷ the smallest size is the growth.

Then, per backend: one user's chat on the largest size (``chat_turns`` turns of ``add`` then
``build_context``, the last fifth timed, as the window and summary grow); the ratio store, 10,000
records over 100 users (or the largest size, if 10,000 is not one) filled through ``add`` so every
track is real, where the ratio targets are judged (``bench_pairs.ratio_store``); runs of 1, 2, 4
and 8 processes on the largest size (``bench_scaling.py``); and one process reading thousands of
users (``bench_cache.py``). PostgreSQL runs on the server ``--pg-url`` names (default
``$V2_MEMORY_PG_URL``): each store gets a fresh schema, dropped at the end. The targets and the
tables are in ``bench_targets.py``.
"""
from __future__ import annotations

import argparse
import os
import tempfile
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
from .bench_cache import cache_memory
from .bench_pairs import latency, measure_store, ratio_store, rounds
from .bench_scaling import scaling
from .bench_targets import format_backend_report, targets
from .chat_corpus import generate_messages, generate_queries

__all__ = ["run_backend_benchmark", "format_backend_report", "add_arguments", "run_from_args"]

SUFFIX = {"json": "memory_store.json", "sqlite": "memory.sqlite3"}
BACKENDS = ("json", "sqlite", "postgres")
FILL_CHUNK = 1_000  # adds per transaction while filling
BATCH_ADDS = 20  # adds per memory.batch() in the governed batch timing
RATIO_RECORDS = 10_000  # the ratio store's size, when it is one of the sizes


def _timed(calls: Sequence[Any], function: Callable[[Any], Any]) -> dict[str, float]:
    seconds = []
    for call in calls:
        start = perf_counter()
        function(call)
        seconds.append(perf_counter() - start)
    return latency(seconds)


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


def _reopen(path: Path | str) -> float:
    start = perf_counter()
    open_storage(path).close()
    return perf_counter() - start


# -- 3. bare and governed, in one manager ---------------------------------------------------------
def _batched(memory: MemoryManager, adds: list[tuple[str, str, str]]) -> dict[str, float]:
    """Each add's share of a ``BATCH_ADDS``-add ``memory.batch()`` (one commit per batch)."""
    def batch(first: int) -> None:
        with memory.batch():
            for user, role, content in adds[first:first + BATCH_ADDS]:
                memory.add(Message(role, content, user))

    starts = range(0, len(adds) - BATCH_ADDS + 1, BATCH_ADDS)
    shares = _timed(starts, batch)  # per batch; below, each add's share of it
    return {**shares, "n": len(starts) * BATCH_ADDS,
            **{k: v / BATCH_ADDS for k, v in shares.items() if k.endswith("_ms")}}


def _bench_size(backend: str, count: int, per_user: int, queries: int, top_k: int, seed: int,
                place: Callable[[str, str], Any], progress: Callable[[str], None]) -> dict:
    users = max(1, count // per_user)
    path = place(backend, str(count))
    progress(f"{backend} {count:,} records ({users} users): fill")
    fill_s = _fill(path, generate_messages(count, users, seed))
    progress(f"{backend} {count:,}: reopen, bare against governed")
    reopen_s = _reopen(path)
    batched = [(user, "user", f"{query} 批量") for user, query in rounds(max(queries, BATCH_ADDS), users, seed + 5, 1)[0]]
    with MemoryManager(store_path=path) as memory:
        # every user's first search builds that user's index (the generator names users user-000...)
        first = _timed([f"user-{n:03d}" for n in range(users)],
                       lambda user: memory.store.search("first 首次", user, top_k=top_k))
        measured = measure_store(memory, users, queries, top_k, seed)
        batch_add = _batched(memory, batched)
    return {"backend": backend, "records": count, "users": users, "fill_s": fill_s, "reopen_s": reopen_s,
            "first_search": first, **measured, "batch_add": batch_add, "path": str(path)}


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
    return {"turns": turns, "add": latency(adds), "build_context": latency(reads)}


# -- the run -------------------------------------------------------------------------------------
def run_backend_benchmark(backends: Sequence[str], sizes: Sequence[int], *, per_user: int = 100, queries: int = 200,
                          top_k: int = 3, seed: int = 0, processes: Sequence[int] = (1, 2, 4, 8),
                          seconds: float = 10.0, progress: Callable[[str], None] = lambda line: None,
                          pg_url: str | None = None, chat_turns: int = 1_000, big_user: int = 1_000,
                          touch_users: int = 2_000) -> dict[str, Any]:
    """Every size on every backend, then per backend: the chat and the process runs on the
    largest size, the ratio store, and the cache memory (database backends; ``touch_users=0``: none)."""
    if chat_turns < 0 or touch_users < 0:
        raise ValueError(f"chat_turns and touch_users count turns and users: 0 or more, got {chat_turns} and {touch_users}")
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        raise ValueError(f"unknown backend(s) {unknown}; choose from {list(BACKENDS)}")
    ratio_records = RATIO_RECORDS if RATIO_RECORDS in sizes else max(sizes)
    report: dict[str, Any] = {"sizes": [], "chat": [], "ratios": [], "shared": [], "caches": []}
    with tempfile.TemporaryDirectory(prefix="v2_memory_bench_backends_") as folder, \
            _server_schemas(pg_url if "postgres" in backends else None) as schema_url:
        def place(backend: str, label: str) -> Path | str:
            if backend == "postgres":
                return schema_url(label)
            (Path(folder) / backend / label).mkdir(parents=True)
            return Path(folder) / backend / label / SUFFIX[backend]

        for backend in backends:
            results = [_bench_size(backend, count, per_user, queries, top_k, seed, place, progress) for count in sizes]
            report["sizes"] += results
            largest = max(results, key=lambda r: r["records"])
            if chat_turns:
                progress(f"{backend}: one user's chat, {chat_turns:,} turns")
                report["chat"].append({"backend": backend, "records": largest["records"],
                                       **_chat(largest["path"], chat_turns, seed)})
            report["ratios"].append({"backend": backend, **ratio_store(
                place(backend, f"ratio{ratio_records}"), ratio_records, per_user, queries, top_k, seed, big_user,
                lambda line: progress(f"{backend} {line}"))})
            users = sorted({user for user, _ in generate_queries(queries, largest["users"], seed)})
            texts = [query for _, query in generate_queries(20, largest["users"], seed)]
            report["shared"] += scaling(backend, largest["path"], processes, seconds, users, texts, progress)
            if backend != "json" and touch_users:
                report["caches"] += [{"backend": backend, **row} for row in cache_memory(
                    place(backend, "cache"), touch_users, seed, progress=lambda line: progress(f"{backend} {line}"))]
    for row in report["sizes"]:
        row.pop("path")
    report["settings"] = {"backends": list(backends), "sizes": list(sizes), "records_per_user": per_user,
                          "queries": queries, "top_k": top_k, "seed": seed, "fsync": False,
                          "ratio_records": ratio_records, "big_user": big_user, "processes": list(processes),
                          "seconds": seconds, "touch_users": touch_users}
    report["targets"] = targets(report)
    return report


@contextmanager
def _server_schemas(base_url: str | None) -> Iterator[Callable[[str], str]]:
    """Fresh schemas on a PostgreSQL server, one per store (``schema_url(label)`` makes one and
    returns a store URL inside it); every one is dropped at the end, whatever happened."""
    if base_url is None:
        yield lambda label: ""
        return
    try:
        import psycopg
    except ImportError as exc:
        raise ValueError("bench --backend postgres needs psycopg 3: "
                         + install_hint("postgres", "'psycopg[binary]>=3.1'")) from exc
    admin, made = psycopg.connect(base_url, autocommit=True), []

    def schema_url(label: str) -> str:
        name = f"v2m_bench_{label}_{uuid.uuid4().hex[:8]}"  # ours, not input: safe to name in SQL
        admin.execute(f"CREATE SCHEMA {name}")
        made.append(name)
        return f"{base_url}{'&' if '?' in base_url else '?'}options=-csearch_path%3D{name}"

    try:
        yield schema_url
    finally:
        for name in made:
            admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin.close()


# -- the command (``bench --backend``; bench.py hands over here) ----------------------------------
def _counts(text: str) -> list[int]:
    """``"1,2,4,8"`` -> ``[1, 2, 4, 8]``: process counts, each at least 1."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated process counts, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("every process count must be at least 1")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", action="append", choices=list(BACKENDS),
                        help="benchmark this storage backend instead (repeat for several): governed against bare, "
                             "growth, process scaling and cache memory, as ratios "
                             "(example: bench --backend sqlite --sizes 1000,10000)")
    parser.add_argument("--pg-url", default=os.environ.get("V2_MEMORY_PG_URL"),
                        help="with --backend postgres: a database the benchmark may create (and drop) schemas in "
                             "(default: $V2_MEMORY_PG_URL)")
    parser.add_argument("--records-per-user", type=int, default=100, help="with --backend: user size (default: 100)")
    parser.add_argument("--load-seconds", type=float, default=10.0,
                        help="with --backend: seconds of each multi-process run (default: 10)")
    parser.add_argument("--processes", type=_counts, default=[1, 2, 4, 8],
                        help="with --backend: process counts of the runs on one store, half writers and half "
                             "readers; 1 is one process alone, alternating add and build_context (default: 1,2,4,8)")
    parser.add_argument("--chat-turns", type=int, default=1_000,
                        help="with --backend: turns of one user's chat on the largest store; 0 skips it (default: 1000)")
    parser.add_argument("--big-user", type=int, default=1_000,
                        help="with --backend: records of the one user retrieve is timed on (default: 1000)")
    parser.add_argument("--touch-users", type=int, default=2_000,
                        help="with --backend: users one process reads for the cache memory; 0 skips it (default: 2000)")


def run_from_args(args: argparse.Namespace) -> int:
    """``bench --backend ...``: the report on stdout (JSON with --json), progress on stderr."""
    import json
    import sys

    if "postgres" in args.backend and not args.pg_url:
        raise ValueError("bench --backend postgres needs a server: --pg-url postgresql://... (or set V2_MEMORY_PG_URL)")
    report = run_backend_benchmark(args.backend, args.sizes, per_user=args.records_per_user, queries=args.queries,
                                   top_k=args.top_k, seed=args.seed, processes=args.processes,
                                   seconds=args.load_seconds, pg_url=args.pg_url, chat_turns=args.chat_turns,
                                   big_user=args.big_user, touch_users=args.touch_users,
                                   progress=lambda line: print(f"bench: {line}", file=sys.stderr, flush=True))
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_backend_report(report))
    failed = any(not t["passed"] for t in report["targets"])
    broken = any(run["lost"] or run["errors"] or run["cross_user"] for run in report["shared"])
    return 1 if broken or (args.strict and failed) else 0
