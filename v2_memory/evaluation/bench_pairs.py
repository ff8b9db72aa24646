"""Governed against bare, timed in one loop: what governance costs, as a ratio.

On a shared machine an absolute budget ("a read in 1.5 ms") judges the neighbours as much as the
code: a busy minute doubles every number. Two things timed *together* are slowed together, so
their ratio holds. Each round here times one bare store call and one governed call, taking turns
at going first (whatever one warms for the next helps each side as often):

    bare search: ``records.search``            vs  governed read: ``MemoryManager.build_context``
    bare add: one record, one commit           vs  governed add: ``MemoryManager.add``
    bare search of a user with 1,000 records   vs  ``MemoryManager.retrieve`` of that user

The bare calls go to the manager's own record store, in the same process: bare means without the
governance, not somewhere else. A pair reports each side's median and spread, the ratio of the
medians, and the middle half of the round-by-round ratios (how much the ratio itself wobbles):

    >>> timed = pair([0.001, 0.002, 0.001], [0.004, 0.010, 0.003])
    >>> timed["ratio"], timed["paired_p25"], timed["paired_p75"]
    (4.0, 3.0, 5.0)

``ratio_store`` builds the store the ratio targets are judged on. Unlike the bulk-loaded sizes of
``bench_backends.py``, every message goes through ``MemoryManager.add`` one by one (in batches of
``FILL_BATCH``, which save the commits, not the work), so each user's window, summary, ledger
and facts are what an agent leaves behind, and a read judges them all.
"""
from __future__ import annotations

import math
import statistics
from time import perf_counter
from typing import Any, Callable, Sequence

from ..manager import MemoryManager
from ..messages import Message
from .chat_corpus import generate_messages, generate_queries

__all__ = ["latency", "pair", "interleave", "rounds", "read_and_add", "measure_store", "fill_through_add", "ratio_store",
           "FILL_BATCH"]

FILL_BATCH = 500  # adds per memory.batch() while filling through add
BIG_USER = "big-user"  # the user whose 1,000 records retrieve is timed on


def _rank(ordered: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of sorted values: ``_rank([1, 2, 3, 4], 0.75) == 3``."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def latency(seconds: Sequence[float]) -> dict[str, Any]:
    """Median, quartiles and 95th percentile (nearest rank) in milliseconds."""
    ordered = sorted(seconds)
    return {"n": len(ordered), "median_ms": statistics.median(ordered) * 1e3, "p25_ms": _rank(ordered, 0.25) * 1e3,
            "p75_ms": _rank(ordered, 0.75) * 1e3, "p95_ms": _rank(ordered, 0.95) * 1e3}


def pair(bare: Sequence[float], governed: Sequence[float]) -> dict[str, Any]:
    """Both sides' latencies, governed median ÷ bare median, and the quartiles of the per-round ratios."""
    rounds = sorted(g / b for b, g in zip(bare, governed) if b > 0)
    bare_ms, governed_ms = latency(bare), latency(governed)
    return {"bare": bare_ms, "governed": governed_ms, "ratio": governed_ms["median_ms"] / bare_ms["median_ms"],
            "paired_p25": _rank(rounds, 0.25), "paired_p75": _rank(rounds, 0.75)}


def interleave(bare_calls: Sequence[Any], governed_calls: Sequence[Any], bare: Callable[[Any], Any],
               governed: Callable[[Any], Any]) -> dict[str, Any]:
    """Round n times ``bare(bare_calls[n])`` and ``governed(governed_calls[n])``: bare first on
    even rounds, governed first on odd ones. Returns their ``pair``."""
    bare_s: list[float] = []
    governed_s: list[float] = []
    for n, (bare_call, governed_call) in enumerate(zip(bare_calls, governed_calls)):
        steps = [(bare, bare_call, bare_s), (governed, governed_call, governed_s)]
        for function, call, seconds in steps if n % 2 == 0 else reversed(steps):
            start = perf_counter()
            function(call)
            seconds.append(perf_counter() - start)
    return pair(bare_s, governed_s)


def read_and_add(memory: MemoryManager, searches: Sequence[tuple[str, str]], reads: Sequence[tuple[str, str]],
                 bare_adds: Sequence[tuple[str, str, str]], governed_adds: Sequence[tuple[str, str, str]],
                 top_k: int) -> dict[str, Any]:
    """Search against ``build_context`` (calls are ``(user, query)``), then a one-record commit
    against ``add`` (``(user, role, text)``), each pair interleaved."""
    store = memory.store

    def bare_add(message: tuple[str, str, str]) -> None:
        with memory.storage.transaction():  # atomic, like a governed add: one commit each
            store.add(*message)

    read = interleave(searches, reads, lambda call: store.search(call[1], call[0], top_k=top_k),
                      lambda call: memory.build_context(call[1], call[0], top_k=top_k))
    add = interleave(bare_adds, governed_adds, bare_add, lambda m: memory.add(Message(m[1], m[2], m[0])))
    return {"read": read, "add": add}


def fill_through_add(memory: MemoryManager, messages: Sequence[tuple[str, str, str]]) -> float:
    """Every ``(user, role, text)`` through ``memory.add``, ``FILL_BATCH`` per batch; the seconds it took."""
    start = perf_counter()
    for first in range(0, len(messages), FILL_BATCH):
        with memory.batch():
            for user, role, content in messages[first:first + FILL_BATCH]:
                memory.add(Message(role, content, user))
    return perf_counter() - start


def rounds(count: int, users: int, seed: int, sides: int) -> list[list[tuple[str, str]]]:
    """``sides`` lists of ``count`` calls ``(user, query)``: round n names the same user in every
    list, each with its own query, all from the corpus's vocabulary for ``seed``.

    >>> reads, searches = rounds(3, 10, 0, 2)
    >>> [u for u, _ in reads] == [u for u, _ in searches], reads[0][1] != searches[0][1]
    (True, True)
    """
    drawn = generate_queries(count * sides, users, seed)
    named = [user for user, _ in drawn[::sides]]
    return [[(user, query) for user, (_, query) in zip(named, drawn[side::sides])] for side in range(sides)]


def _as_adds(calls: Sequence[tuple[str, str]], suffix: str) -> list[tuple[str, str, str]]:
    """Calls as new user messages ``(user, "user", text)``, each text one the store does not hold."""
    return [(user, "user", f"{query} {suffix}") for user, query in calls]


def measure_store(memory: MemoryManager, users: int, queries: int, top_k: int, seed: int) -> dict[str, Any]:
    """The read and add pairs on ``queries`` rounds over ``users`` users (``user-000``...), warm as
    in an agent: each queried user is read first with other queries, and no timed text was read
    before (no text cache answers it)."""
    searches, reads, warm, bare_adds, governed_adds = rounds(queries, users, seed, 5)
    for user, query in warm:
        memory.build_context(query, user, top_k=top_k)  # loads the user's index and tracks
    return read_and_add(memory, searches, reads, _as_adds(bare_adds, "新增"), _as_adds(governed_adds, "又记"), top_k)


def ratio_store(path: Any, count: int, per_user: int, queries: int, top_k: int, seed: int, big_user: int,
                progress: Callable[[str], None]) -> dict[str, Any]:
    """Fill a store through ``add`` (``count`` records over ``count // per_user`` users, and one
    more user with ``big_user`` records), then time the three pairs on it."""
    users = max(1, count // per_user)
    big = [(BIG_USER, role, text) for _, role, text in generate_messages(big_user, 1, seed + 7)]
    big_searches, big_reads, big_warm = ([(BIG_USER, q) for _, q in side] for side in rounds(queries, 1, seed + 7, 3))
    with MemoryManager(store_path=path) as memory:
        progress(f"{count:,} records over {users} users, and {big_user:,} for one user, through add")
        fill_s = fill_through_add(memory, generate_messages(count, users, seed) + big)
        progress(f"{count:,} through add: governed against bare, interleaved")
        measured = measure_store(memory, users, queries, top_k, seed)
        for user, query in big_warm:
            memory.retrieve(query, user, top_k=top_k)
        retrieve = interleave(big_searches, big_reads, lambda call: memory.store.search(call[1], call[0], top_k=top_k),
                              lambda call: memory.retrieve(call[1], call[0], top_k=top_k))
    return {"records": count, "users": users, "big_user": big_user, "fill_s": fill_s, **measured, "retrieve": retrieve}
