"""The semantic track's cost in ``bench --semantic``: what vectors add to ingest, search and reopening.

Beside ``bench.py``'s lexical numbers, one SQLite store per size is filled twice — with and
without an embedder (``storage/semantic_store.py``) — through the same transaction per add, and
then searched with the same queries. Reported per size:

    ingest     ms per add, lexical only and with the embedder (embed + store the vector)
    search     median and p95 ms of the lexical search and of the hybrid search
    reopen     a new opening's first search per user (vectors loaded, not embedded) and how many
               texts it embedded: only the queries, never a stored record
    bytes      the vectors table's size per record (float32: 4 bytes per dimension)

    paths      hybrid search on the pure-Python path against the numpy path (``retrieval/numpy_path.py``),
               same store, same queries: per user, and one user holding up to 10,000 of the records.
               The paths take turns, each running every query once per round, and the ratio is of
               the medians; their answers are compared too. Without numpy: "numpy not installed"

``HashingEmbedder`` (no model) by default; ``--semantic minilm`` uses all-MiniLM-L6-v2 from the
``dense`` extra. Timings are this machine's; the embedded-text count is what must hold anywhere.
"""
from __future__ import annotations

import statistics
from pathlib import Path
from time import perf_counter
from typing import Any, Sequence

from ..retrieval.embedder import HashingEmbedder, SentenceTransformerEmbedder
from ..retrieval.numpy_path import choose_path, current_path, numpy_installed
from ..storage.backends import sqlite_storage
from ..storage.semantic_store import SemanticStore

__all__ = ["measure_semantic", "compare_paths", "make_embedder", "CountingEmbedder"]

ONE_USER = "everyone"
ONE_USER_RECORDS = 10_000  # at most: the pure path's search costs records x dimension, and is timed many times
ONE_USER_QUERIES = 30  # of the run's queries, the first ones
PATH_ROUNDS = 3  # each query runs this many times on each path


class CountingEmbedder:
    """An embedder wrapped to count the texts it embeds (a reopen must embed none of the records)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dimension, self.texts = inner, inner.name, inner.dimension, 0

    def __call__(self, texts: list[str]) -> Sequence[Sequence[float]]:
        self.texts += len(texts)
        return self.inner(texts)


def make_embedder(kind: str) -> Any:
    """``"hashing"`` (256 dimensions, standard library) or ``"minilm"`` (the ``dense`` extra)."""
    return SentenceTransformerEmbedder() if kind == "minilm" else HashingEmbedder(256)


def _ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"median_ms": statistics.median(ordered) * 1000, "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000}


def _fill(path: Path, messages: list, embedder: Any | None) -> tuple[float, Any, Any]:
    """Add every message in its own transaction; return (seconds per add, storage, searcher)."""
    storage = sqlite_storage(path)
    store = SemanticStore(storage.records, storage.vectors, embedder) if embedder is not None else storage.records
    started = perf_counter()
    for user_id, role, content in messages:
        with storage.transaction():
            store.add(user_id, role, content)
    return (perf_counter() - started) / len(messages), storage, store


def _time_searches(store: Any, calls: list, top_k: int) -> list[float]:
    seconds = []
    for user_id, query in calls:
        started = perf_counter()
        store.search(query, user_id, top_k)
        seconds.append(perf_counter() - started)
    return seconds


def measure_semantic(messages: list, calls: list, top_k: int, workdir: Path, kind: str = "hashing") -> dict[str, Any]:
    """The semantic track's numbers for one corpus (see the module docstring)."""
    embedder = CountingEmbedder(make_embedder(kind))
    lexical_add, lexical_storage, lexical = _fill(workdir / f"lexical-{len(messages)}.sqlite3", messages, None)
    semantic_add, storage, semantic = _fill(workdir / f"semantic-{len(messages)}.sqlite3", messages, embedder)
    for store in (lexical, semantic):
        _time_searches(store, [(user, calls[0][1]) for user in dict.fromkeys(u for u, _, _ in messages)], top_k)  # warm
    result = {"embedder": embedder.name, "dimension": embedder.dimension,
              "ingest": {"lexical_ms_per_add": lexical_add * 1000, "semantic_ms_per_add": semantic_add * 1000},
              "search": {"lexical": _ms(_time_searches(lexical, calls, top_k)),
                         "hybrid": _ms(_time_searches(semantic, calls, top_k))},
              "vector_bytes_per_record": storage.db.fetchone("SELECT avg(length(vector)) FROM vectors")[0],
              "path": current_path(len(messages) // len({user for user, _, _ in messages}))}  # the per-user searches
    result["paths"] = _paths(semantic, calls, messages, top_k, workdir, embedder.inner)
    path = storage.db.path
    for opened in (lexical_storage, storage):
        opened.close()
    result["reopen"] = _reopen(path, embedder, messages, top_k)
    return result


def _paths(store: SemanticStore, calls: list, messages: list, top_k: int, workdir: Path, embedder: Any) -> dict:
    """The pure path against the numpy path: per user on ``store``, and on one user's store."""
    if not numpy_installed():
        return {"numpy": False}
    records = min(len(messages), ONE_USER_RECORDS)
    storage = sqlite_storage(workdir / f"one-user-{len(messages)}.sqlite3")
    try:
        with storage.transaction():  # records only: the first search embeds them in batches
            for _, role, content in messages[:records]:
                storage.records.add(ONE_USER, role, content)
        one_user = SemanticStore(storage.records, storage.vectors, embedder)
        one_user.search(calls[0][1], ONE_USER, top_k)  # embeds and stores every record's vector, in batches
        users = len({user for user, _, _ in messages})
        one_user_calls = [(ONE_USER, query) for _, query in calls[:ONE_USER_QUERIES]]
        return {"numpy": True,
                "per_user": {"records": len(messages) / users, **compare_paths(store, calls, top_k, PATH_ROUNDS)},
                "one_user": {"records": records, **compare_paths(one_user, one_user_calls, top_k, PATH_ROUNDS)}}
    finally:
        storage.close()


def compare_paths(store: Any, calls: list, top_k: int, rounds: int = PATH_ROUNDS) -> dict[str, Any]:
    """Hybrid search on the pure and the numpy path, same store and queries: medians, their ratio,
    and whether every answer was the same. The paths take turns, every query once per round."""
    seconds: dict[str, list[float]] = {"pure": [], "numpy": []}
    answers: dict[str, list] = {"pure": [], "numpy": []}
    try:
        for path in seconds:  # untimed: each path's first search of a user builds what it keeps
            choose_path(path)
            for user in dict.fromkeys(user for user, _ in calls):
                store.search(calls[0][1], user, top_k)
        for round_ in range(rounds):
            for path in (("pure", "numpy") if round_ % 2 == 0 else ("numpy", "pure")):
                choose_path(path)
                for user, query in calls:
                    started = perf_counter()
                    hits = store.search(query, user, top_k)
                    seconds[path].append(perf_counter() - started)
                    answers[path].append([(hit.score, hit.record["record_id"]) for hit in hits])
    finally:
        choose_path(None)
    pure, fast = statistics.median(seconds["pure"]), statistics.median(seconds["numpy"])
    return {"pure_median_ms": pure * 1000, "numpy_median_ms": fast * 1000, "ratio": pure / fast,
            "queries": len(calls), "rounds": rounds, "identical": answers["pure"] == answers["numpy"]}


def _reopen(path: Path, embedder: CountingEmbedder, messages: list, top_k: int) -> dict[str, Any]:
    """A new opening: the first search of every user loads that user's vectors from the table."""
    storage = sqlite_storage(path)
    try:
        store, before = SemanticStore(storage.records, storage.vectors, embedder), embedder.texts
        users = list(dict.fromkeys(user for user, _, _ in messages))
        started = perf_counter()
        for user in users:
            store.search(f"reopen {user}", user, top_k)  # one query each: each embedded once
        return {"first_search_all_users_s": perf_counter() - started,
                "records_embedded": embedder.texts - before - len(users)}  # minus one query per user
    finally:
        storage.close()
