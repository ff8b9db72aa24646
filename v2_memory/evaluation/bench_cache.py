"""Memory that stays flat: one process reads every one of thousands of users in turn.

Each per-user cache (a user's records and index, window and summary, vectors, the readings of
their memories) keeps only the ``cache_users`` most recently used users (``lru.py``), and each
process-wide text cache a bounded number of texts (``text/memo.py``), so a worker that serves every
user of a large store must not grow with the number of users it has served. This checks it. A store gets
``users`` users with ``RECORDS_PER_USER`` records each, every one through ``MemoryManager.add``
(so each user has a window and a summary to cache too). Then, per ``cache_users`` setting, a fresh
process opens the store, reads one user (whatever is built once per process is built now), starts
``tracemalloc`` and calls ``build_context`` for every user in turn. Python's live memory (after a
garbage collection) is taken after the first half of the users and after all of them.

The first half fills every bound (1,000 users: more than the default 256 users, and 3,000 memory
texts, more than any text cache keeps), so the second half must add nothing: flat means their
ratio (all ÷ first half) stays near 1; the target allows 1.2×. A cache without a bound doubles.
The JSON backend holds every record in memory by design (one file read at open), so it is not
measured.
"""
from __future__ import annotations

import gc
import multiprocessing
import tracemalloc
from typing import Any, Callable, Sequence

from ..lru import DEFAULT_CACHE_USERS
from ..manager import MemoryManager
from .bench_pairs import fill_through_add
from .bench_scaling import collect
from .chat_corpus import generate_messages

__all__ = ["cache_memory", "touch_users", "RECORDS_PER_USER", "SMALL_CACHE"]

RECORDS_PER_USER = 3
SMALL_CACHE = 16  # the second setting: a cache far smaller than the users touched


def _user(n: int) -> str:
    return f"cache-{n:05d}"


def _live() -> int:
    """Python's live traced bytes, after a garbage collection."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _short(filename: str) -> str:
    """A traced file's name from its package on: ``.../v2_memory/text/analyzer.py`` -> ``v2_memory/text/analyzer.py``."""
    parts = filename.replace("\\", "/").split("/")
    return "/".join(parts[-3:]) if "v2_memory" not in parts else "/".join(parts[parts.index("v2_memory"):])


def touch_users(path: str, cache_users: int, users: int, out: Any = None) -> dict[str, Any]:
    """In this process: read every user once; Python's live memory after half and after all
    (bytes, counted from just before the first timed read)."""
    half = max(1, users // 2)
    with MemoryManager(store_path=path, cache_users=cache_users) as memory:
        memory.build_context("warm 预热", _user(users - 1))  # lazily built once per process: not counted
        gc.collect()
        tracemalloc.start()
        try:
            for n in range(users):
                memory.build_context(f"what do you remember 记得 {n}", _user(n))
                if n + 1 == half:
                    at_half = _live()
            at_all = _live()
            # where the live memory is, by file (taken last: a snapshot is itself memory)
            largest = tracemalloc.take_snapshot().statistics("filename")[:3]
        finally:
            tracemalloc.stop()
    result = {"cache_users": cache_users, "users": users, "half": half, "mb_at_half": at_half / 2**20,
              "mb_at_all": at_all / 2**20, "ratio": at_all / at_half if at_half > 0 else float("inf"),
              "largest": [(_short(stat.traceback[0].filename), stat.size / 2**20) for stat in largest]}
    if out is not None:
        out.put(result)
    return result


def cache_memory(path: Any, users: int, seed: int, settings: Sequence[int] = (DEFAULT_CACHE_USERS, SMALL_CACHE),
                 progress: Callable[[str], None] = lambda line: None) -> list[dict[str, Any]]:
    """Fill ``users`` users through ``add``, then ``touch_users`` in a fresh process per setting."""
    texts = generate_messages(users * RECORDS_PER_USER, 1, seed + 11)
    messages = [(_user(n % users), role, text) for n, (_, role, text) in enumerate(texts)]
    progress(f"cache memory: {users:,} users × {RECORDS_PER_USER} records through add")
    with MemoryManager(store_path=path) as memory:
        fill_through_add(memory, messages)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: its memory is the reads' alone
    rows = []
    for cache_users in settings:
        progress(f"cache memory: one process reads {users:,} users with cache_users={cache_users}")
        out = context.Queue()
        rows += collect([context.Process(target=touch_users, args=(str(path), cache_users, users, out))], out)
    return rows
