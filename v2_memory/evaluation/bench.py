"""The performance benchmark behind ``python -m v2_memory bench``.

It answers one question with numbers: on a realistic bilingual chat history, does
``JsonVectorStore`` return exactly what the article's brute-force scan returns, how much faster,
and at what cost in ingest time and memory? Everything is measured in one run on one machine, so
the ratios are fair even where the absolute numbers do not travel.

Read it in order:

1. the corpus: a seeded, Zipf-like generator of English, Chinese and code-switched messages;
2. the reference: the article's brute-force scan, in its most favourable form;
3. timing and memory helpers (``perf_counter``, ``tracemalloc``, resident memory);
4. the measurements: search, ingest, and reopening the store in a fresh process;
5. the report (``bench_report.py``): two tables and the targets with PASS/FAIL, or JSON.

"Whole-store" search means a second store in which all N records belong to ONE user, searched
for that user: the worst case for a store partitioned by user, since the partition is everything.
"""
from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter
from typing import Any, Callable, Sequence

from ..retrieval.scorers import ArticleScorer, rank, resolve_scorer
from ..storage.json_store import JsonVectorStore
from ..text.tokenizer import cosine_similarity, term_counts, tokenize, vector_norm
from . import bench_backends, bench_semantic
from .bench_report import format_report
from .chat_corpus import generate_messages, generate_queries

__all__ = ["BenchSettings", "generate_messages", "generate_queries", "brute_force_search", "run_benchmark",
           "format_report"]

DEFAULT_SIZES = (1_000, 10_000, 100_000)
WHOLE_STORE_USER = "everyone"
WHOLE_STORE_MEANING = ("whole-store = a second store holding the same N records under ONE user, searched for "
                       "that user (the worst case for a per-user partition)")


@dataclass(frozen=True)
class BenchSettings:
    """What one run measures: the corpus shape, how many queries, and how many results each."""

    users: int = 100
    queries: int = 200  # timed on the index
    scan_queries: int = 50  # the first of those, also timed on the slow scan and compared exactly
    top_k: int = 5
    seed: int = 0
    sklearn: bool = True  # add scikit-learn's reference row when it happens to be installed
    scorer: str = "article"  # the store's scorer: "article" (TF cosine) or "bm25"
    semantic: str | None = None  # also measure the semantic track: "hashing" or "minilm" (bench_semantic.py)


# -- 1. the corpus: see chat_corpus.py ----------------------------------------------------------


# -- 2. the reference ---------------------------------------------------------------------------
def brute_force_search(
    records: Sequence[dict[str, Any]], query: str, user_id: str, top_k: int, scorer: str = "article"
) -> list[tuple[float, dict[str, Any]]]:
    """The article's scan, made as cheap as it honestly can be: the exact answer to compare with.

    It tokenizes the query once and skips other users' records *before* tokenizing them; every
    record of the user is tokenized and scored, then sorted by (-score, insertion order). For
    another scorer, the scorer's own reference scan over the user's records (``scoring.rank``):
    BM25 counts that user's statistics from scratch on every query.
    """
    chosen = resolve_scorer(scorer)
    if not isinstance(chosen, ArticleScorer):
        return rank(chosen, query, [record for record in records if record["user_id"] == user_id], top_k)
    query_tokens = tokenize(query)
    scored = []
    for order, record in enumerate(records):
        if record["user_id"] != user_id:
            continue
        scored.append((cosine_similarity(query_tokens, tokenize(record["content"])), order, record))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(score, record) for score, _, record in scored[:top_k]]


def _sklearn_search(records: Sequence[dict[str, Any]], top_k: int) -> Callable[[str, str], list] | None:
    """scikit-learn's TF cosine, when it happens to be installed: a reference row, never a dependency."""
    try:
        import numpy
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.preprocessing import normalize
    except ImportError:
        return None
    vectorizer = CountVectorizer(analyzer=tokenize)
    matrix = normalize(vectorizer.fit_transform([record["content"] for record in records]))  # unit rows
    rows: dict[str, list[int]] = defaultdict(list)  # user_id -> row numbers, in insertion order
    for row, record in enumerate(records):
        rows[record["user_id"]].append(row)
    blocks = {user: (matrix[numbers], numbers) for user, numbers in rows.items()}  # one row slice per user

    def search(user_id: str, query: str) -> list[tuple[float, dict[str, Any]]]:
        block, numbers = blocks[user_id]
        # transform() drops terms the corpus never saw, but they still count in the query's length.
        query_norm = vector_norm(term_counts(query)) or 1.0
        scores = (block @ vectorizer.transform([query]).T).toarray().ravel() / query_norm
        best = numpy.argsort(-scores, kind="stable")[:top_k]  # stable: ties in insertion order
        return [(float(scores[i]), records[numbers[i]]) for i in best]

    return search


def _sklearn_version() -> str | None:
    try:
        return importlib.metadata.version("scikit-learn")
    except importlib.metadata.PackageNotFoundError:
        return None


# -- 3. timing and memory -----------------------------------------------------------------------
def _rss_bytes() -> int | None:
    """Resident memory now (Linux ``/proc/self/statm``), else peak RSS (``getrusage``), else None."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:
        return None  # Windows: the standard library cannot read RSS
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _growth_mb(before: int | None, after: int | None) -> float | None:
    return None if before is None or after is None else (after - before) / 2**20


def _time_calls(function: Callable[[str, str], Any], calls: Sequence[tuple[str, str]]) -> tuple[list, list]:
    """Time each ``function(user_id, query)`` on its own; return the seconds and the results."""
    seconds, results = [], []
    for user_id, query in calls:
        start = perf_counter()
        results.append(function(user_id, query))
        seconds.append(perf_counter() - start)
    return seconds, results


def _latency(seconds: Sequence[float]) -> dict[str, Any]:
    """Median and 95th percentile (nearest rank) in milliseconds."""
    ordered = sorted(seconds)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return {"queries": len(ordered), "median_ms": statistics.median(ordered) * 1e3, "p95_ms": p95 * 1e3}


class _Agreement:
    """Counts index-vs-scan comparisons and keeps the first mismatch, if any."""

    def __init__(self) -> None:
        self.compared = 0
        self.first_mismatch: dict[str, Any] | None = None

    def check(self, where: str, call: tuple[str, str], index_hits: list, scan_hits: list) -> None:
        self.compared += 1
        # Exact: the same record ids in the same order, and scores equal to the last bit.
        got = [(score, record["record_id"]) for score, record in index_hits]
        expected = [(score, record["record_id"]) for score, record in scan_hits]
        if got != expected and self.first_mismatch is None:
            self.first_mismatch = {"where": where, "user_id": call[0], "query": call[1], "index": got, "scan": expected}

    def as_dict(self) -> dict[str, Any]:
        identical = self.first_mismatch is None
        return {"identical": identical, "queries": self.compared, "first_mismatch": self.first_mismatch}


# -- 4. the measurements ------------------------------------------------------------------------
def _search_row(
    store: JsonVectorStore, records: list, calls: list, settings: BenchSettings, agreement: _Agreement, where: str
) -> dict:
    """Index vs scan (vs scikit-learn) latency for one store and a list of ``(user_id, query)``."""
    # The index is built lazily on a user's first search: pay (and report) that cost up front.
    start = perf_counter()
    for user_id in store.users():
        store.search(calls[0][1], user_id, top_k=settings.top_k)
    row: dict[str, Any] = {"first_search_all_users_s": perf_counter() - start, "sklearn": None}
    top_k, scan_calls = settings.top_k, calls[: settings.scan_queries]
    index_s, index_hits = _time_calls(lambda user, query: store.search(query, user, top_k=top_k), calls)
    scan_s, scan_hits = _time_calls(lambda user, query: brute_force_search(records, query, user, top_k, settings.scorer),
                                    scan_calls)
    for call, got, expected in zip(scan_calls, index_hits, scan_hits):
        agreement.check(where, call, got, expected)
    row.update(index=_latency(index_s), scan=_latency(scan_s))
    row["speedup"] = row["scan"]["median_ms"] / row["index"]["median_ms"]
    sklearn = _sklearn_search(records, settings.top_k) if settings.sklearn and settings.scorer == "article" else None
    if sklearn is not None:
        row["sklearn"] = _latency(_time_calls(sklearn, calls)[0])
    return row


def _ingest_one_by_one(path: Path, messages: list, scorer: str, repeats: int = 3) -> tuple[JsonVectorStore, dict]:
    """Ingest with one ``store.add`` per message, ``repeats`` times into fresh files; report medians.

    Why repeat: a tenth of the adds takes well under a second, so one run's ratio of two tenths
    is at the mercy of a noisy neighbour on the machine. The first run's store is kept for search.
    """
    store, first = _timed_ingest(path, messages, scorer)
    runs = [first]
    for run in range(1, repeats):
        again, timing = _timed_ingest(path.with_name(f"{path.stem}-again-{run}.json"), messages, scorer)
        again.close()
        runs.append(timing)
    return store, {
        "one_by_one_s": statistics.median(run["total_s"] for run in runs),
        "last_to_first_tenth": statistics.median(run["ratio"] for run in runs),
        "last_to_first_tenth_runs": [run["ratio"] for run in runs],
        "rss_growth_mb": first["rss_growth_mb"],  # only the first run starts from memory never used before
        "file_mb": path.stat().st_size / 2**20,
    }


def _timed_ingest(path: Path, messages: list, scorer: str) -> tuple[JsonVectorStore, dict]:
    """One ingest, one ``store.add`` (one file append) per message, timing each tenth."""
    bounds = [len(messages) * tenth // 10 for tenth in range(11)]
    gc.collect()  # start clean: a collection owed for earlier garbage must not land in the first tenth
    rss_before = _rss_bytes()
    store = JsonVectorStore(path, scorer=scorer)
    tenths = []  # seconds for each tenth of the adds
    for start, stop in zip(bounds, bounds[1:]):
        begin = perf_counter()
        for user_id, role, content in messages[start:stop]:
            store.add(user_id, role, content)
        tenths.append(perf_counter() - begin)
    # Per add, since the tenths of a count not divisible by ten differ by one add.
    ratio = (tenths[-1] / (bounds[10] - bounds[9])) / (tenths[0] / bounds[1])
    return store, {"total_s": sum(tenths), "ratio": ratio, "rss_growth_mb": _growth_mb(rss_before, _rss_bytes())}


def _ingest_batch(path: Path, messages: list) -> float:
    """Seconds to add everything inside ``store.batch()``: one write when the block ends."""
    start = perf_counter()
    with JsonVectorStore(path) as store, store.batch():
        for user_id, role, content in messages:
            store.add(user_id, role, content)
    return perf_counter() - start


def _ingest_peak_mb(path: Path, messages: list) -> float:
    """Peak Python memory allocated while adding one by one (the caller's message strings excluded).

    A separate, untimed run: tracemalloc slows down every allocation.
    """
    tracemalloc.start()
    try:
        with JsonVectorStore(path) as store:
            for user_id, role, content in messages:
                store.add(user_id, role, content)
            return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# Run in a fresh interpreter, so the memory it reports is the loaded store's and nothing else's.
_PROBE = ("import sys; from v2_memory.evaluation.bench import _probe_reopen; "
          "_probe_reopen(sys.argv[1], sys.argv[2], sys.argv[3])")


def _probe_reopen(path: str, query: str, scorer: str = "article") -> None:
    """Open the store, then search once per user (building every index); print what it cost."""
    before = _rss_bytes()
    start = perf_counter()
    store = JsonVectorStore(path, scorer=scorer)
    opened = perf_counter()
    loaded = _rss_bytes()
    for user_id in store.users():
        store.search(query, user_id)
    indexed = _rss_bytes()
    print(json.dumps({
        "open_s": opened - start, "first_search_all_users_s": perf_counter() - opened, "records": len(store),
        "rss_growth_after_load_mb": _growth_mb(before, loaded), "rss_growth_mb": _growth_mb(before, indexed),
    }))


def _reopen_in_subprocess(path: Path, query: str, scorer: str) -> dict:
    package_parent = str(Path(__file__).resolve().parents[2])  # so the child imports this very copy
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _PROBE, str(path), query, scorer], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        last_line = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"reopening {path} in a fresh process failed: {last_line}")
    return json.loads(done.stdout)


def _whole_store(messages: list, records: list, calls: list, scorer: str) -> tuple[JsonVectorStore, list, list]:
    """The same messages, records and queries, all moved to one user (see the module docstring).

    Record ids still match: both stores number their records from 1 in the same order.
    """
    store = JsonVectorStore(None, scorer=scorer)
    with store.batch():
        for _, role, content in messages:
            store.add(WHOLE_STORE_USER, role, content)
    return (store, [dict(record, user_id=WHOLE_STORE_USER) for record in records],
            [(WHOLE_STORE_USER, query) for _, query in calls])


def _bench_size(count: int, settings: BenchSettings, workdir: Path, agreement: _Agreement, progress: Callable) -> dict:
    """Every measurement for one corpus size."""
    messages = generate_messages(count, settings.users, settings.seed)
    calls = generate_queries(settings.queries, settings.users, settings.seed)
    lengths = [len(tokenize(content)) for _, _, content in messages]
    result: dict[str, Any] = {"records": count, "tokens_per_message": {
        "mean": statistics.fmean(lengths), "min": min(lengths), "max": max(lengths)}}
    progress(f"{count:,} records: ingest one by one, in a batch, under tracemalloc")
    path = workdir / f"store-{count}.json"
    store, result["ingest"] = _ingest_one_by_one(path, messages, settings.scorer)
    result["ingest"]["batch_s"] = _ingest_batch(workdir / f"batch-{count}.json", messages)
    result["ingest"]["tracemalloc_peak_mb"] = _ingest_peak_mb(workdir / f"traced-{count}.json", messages)
    progress(f"{count:,} records: per-user search, index vs scan")
    records = [store.get(record_id) for record_id in range(1, count + 1)]  # the scan's list, in insertion order
    result["per_user"] = _search_row(store, records, calls, settings, agreement, f"per-user, {count} records")
    store.close()
    progress(f"{count:,} records: reopen in a fresh process")
    result["reopen"] = _reopen_in_subprocess(path, calls[0][1], settings.scorer)
    progress(f"{count:,} records: whole-store search, index vs scan")
    whole = _whole_store(messages, records, calls, settings.scorer)
    result["whole_store"] = _search_row(*whole, settings, agreement, f"whole-store, {count} records")
    if settings.semantic:
        progress(f"{count:,} records: the semantic track ({settings.semantic}), SQLite, with and without vectors")
        result["semantic"] = bench_semantic.measure_semantic(messages, calls, settings.top_k, workdir, settings.semantic)
    return result


def run_benchmark(
    sizes: Sequence[int] = DEFAULT_SIZES, settings: BenchSettings = BenchSettings(),
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Run every measurement for every size; the targets are checked on the largest size."""
    agreement = _Agreement()
    with tempfile.TemporaryDirectory(prefix="v2_memory_bench_") as workdir:
        results = [_bench_size(count, settings, Path(workdir), agreement, progress) for count in sizes]
    largest = max(results, key=lambda result: result["records"])
    return {
        "settings": {**asdict(settings), "sizes": list(sizes), "python": platform.python_version(),
                     "platform": platform.platform(), "cpus": os.cpu_count(),
                     "sklearn_version": _sklearn_version() if settings.sklearn else None},
        "whole_store_means": WHOLE_STORE_MEANING,
        "sizes": results,
        "identical_results": agreement.as_dict(),
        "targets_on_records": largest["records"],
        "targets": _targets(largest),
    }


def _targets(result: dict) -> list[dict[str, Any]]:
    """The issue's targets, checked on one size's results."""
    def target(name: str, value: float | None, unit: str, op: str, limit: float) -> dict[str, Any]:
        passed = None if value is None else (value <= limit if op == "<=" else value >= limit)
        return {"name": name, "value": value, "unit": unit, "op": op, "limit": limit, "passed": passed}

    return [
        target("per-user search median", result["per_user"]["index"]["median_ms"], "ms", "<=", 1.0),
        target("per-user speedup vs scan", result["per_user"]["speedup"], "x", ">=", 30.0),
        target("ingest last/first 10 % (per add)", result["ingest"]["last_to_first_tenth"], "x", "<=", 1.5),
        target("RSS growth, loaded + indexed", result["reopen"]["rss_growth_mb"], "MB", "<=", 150.0),
        target("reopen time", result["reopen"]["open_s"], "s", "<=", 3.0),
    ] + ([target("semantic reopen: records re-embedded", result["semantic"]["reopen"]["records_embedded"], "",
                 "<=", 0)] if "semantic" in result else [])


# -- the command --------------------------------------------------------------------------------
DESCRIPTION = "Benchmark JsonVectorStore against the article's brute-force scan."
EPILOG = (
    "Measures per-user and whole-store search (index vs brute-force scan, results compared exactly),\n"
    "ingest time and memory, and reopening the store in a fresh process. Progress goes to stderr.\n"
    "Exit status: 0; 1 when the index and the scan disagree (or, with --strict, a target fails).\n\n"
    "example: python -m v2_memory bench --sizes 1000,10000 --queries 100 --json --out bench.json"
)


def _sizes(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 10:
        raise argparse.ArgumentTypeError("every size must be an integer >= 10 (ingest is timed in tenths)")
    return values


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # keep the epilog's lines as written
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES),
                        help="comma-separated record counts (default: 1000,10000,100000)")
    parser.add_argument("--users", type=_positive_int, default=100, help="users sharing the records (default: 100)")
    parser.add_argument("--queries", type=_positive_int, default=200, help="queries timed on the index (default: 200)")
    parser.add_argument("--scan-queries", type=_positive_int, default=50,
                        help="of those, how many also run the slow scan and are compared (default: 50)")
    parser.add_argument("--top-k", type=_positive_int, default=5, help="results per search (default: 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the corpus and the queries (default: 0)")
    parser.add_argument("--scorer", choices=["article", "bm25"], default="article",
                        help="the store's scorer, checked against its own brute-force scan (default: article)")
    parser.add_argument("--semantic", nargs="?", const="hashing", choices=["hashing", "minilm"],
                        help="also measure the semantic track's ingest, search and reopen (default embedder: hashing; "
                             "minilm needs the dense extra)")
    parser.add_argument("--no-sklearn", dest="sklearn", action="store_false",
                        help="skip the scikit-learn reference row even when it is installed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the tables")
    parser.add_argument("--out", type=Path, help="also write the JSON results to this file")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any target fails")
    bench_backends.add_arguments(parser)


def run_from_args(args: argparse.Namespace) -> int:
    """Run the benchmark for parsed arguments; the report on stdout, progress on stderr."""
    if args.out is not None and not args.out.parent.is_dir():  # fail now, not after minutes of work
        print(f"error: folder for --out does not exist: {args.out.parent}", file=sys.stderr)
        return 2
    if args.backend:
        return bench_backends.run_from_args(args)
    settings = BenchSettings(users=args.users, queries=args.queries, scan_queries=min(args.scan_queries, args.queries),
                             top_k=args.top_k, seed=args.seed, sklearn=args.sklearn, scorer=args.scorer,
                             semantic=args.semantic)
    try:
        report = run_benchmark(args.sizes, settings, lambda line: print(f"bench: {line}", file=sys.stderr, flush=True))
        if args.out is not None:
            args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except (OSError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
    failed = args.strict and any(target["passed"] is False for target in report["targets"])
    return 0 if report["identical_results"]["identical"] and not failed else 1
