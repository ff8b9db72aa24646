"""The benchmark's report: the numbers ``bench.run_benchmark`` measured, as tables or JSON.

Two tables (search latency; ingest, memory and reopening), one line on whether the index and the
brute-force scan agreed, and the targets with PASS/FAIL.
"""
from __future__ import annotations

from typing import Any

from ..tables import format_table

__all__ = ["format_report"]


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _search_rows(result: dict) -> list[list[str]]:
    rows = []
    for key, label in (("per_user", "per-user"), ("whole_store", "whole-store")):
        row = result[key]
        sklearn = _num(row["sklearn"]["median_ms"]) if row["sklearn"] else "-"
        rows.append([f"{label} {result['records']:,}", _num(row["index"]["median_ms"]), _num(row["index"]["p95_ms"]),
                     _num(row["scan"]["median_ms"], 2), _num(row["scan"]["p95_ms"], 2), f"{row['speedup']:,.0f}x",
                     sklearn, _num(row["first_search_all_users_s"])])
    return rows


def _memory_row(result: dict) -> list[str]:
    ingest, reopen = result["ingest"], result["reopen"]
    return [f"{result['records']:,}", _num(ingest["one_by_one_s"], 2), _num(ingest["batch_s"], 2),
            _num(ingest["last_to_first_tenth"], 2), _num(ingest["tracemalloc_peak_mb"], 1),
            _num(ingest["rss_growth_mb"], 1), _num(ingest["file_mb"], 1), _num(reopen["open_s"], 2),
            _num(reopen["first_search_all_users_s"], 2), _num(reopen["rss_growth_after_load_mb"], 1),
            _num(reopen["rss_growth_mb"], 1)]


def _agreement_line(agreement: dict) -> str:
    if agreement["identical"]:
        return f"identical results: yes ({agreement['queries']} scanned queries compared, per-user and whole-store, every size)"
    miss = agreement["first_mismatch"]
    return (f"identical results: NO; first mismatch ({miss['where']}, {miss['user_id']}, query {miss['query']!r}):\n"
            f"  index (score, record_id): {miss['index']}\n  scan  (score, record_id): {miss['scan']}")


def _semantic_lines(report: dict[str, Any]) -> list[str]:
    """The semantic track's table (``bench --semantic``), when it was measured."""
    rows = [[f"{r['records']:,}", r["semantic"]["embedder"], _num(r["semantic"]["ingest"]["lexical_ms_per_add"]),
             _num(r["semantic"]["ingest"]["semantic_ms_per_add"]), _num(r["semantic"]["search"]["lexical"]["median_ms"]),
             _num(r["semantic"]["search"]["hybrid"]["median_ms"]), _num(r["semantic"]["search"]["hybrid"]["p95_ms"]),
             _num(r["semantic"]["vector_bytes_per_record"], 0), _num(r["semantic"]["reopen"]["first_search_all_users_s"], 2),
             str(r["semantic"]["reopen"]["records_embedded"])] for r in report["sizes"] if "semantic" in r]
    if not rows:
        return []
    measured = [r for r in report["sizes"] if "semantic" in r]
    paths = ", ".join(f"{r['semantic'].get('path', 'pure')} at {r['records']:,}" for r in measured)
    return [""] + format_table(["semantic (SQLite)", "embedder", "add ms lexical", "add ms +vectors", "search med lexical",
                                "search med hybrid", "hybrid p95", "bytes/vector", "reopen 1st search s",
                                "re-embedded"], rows) + [
        "  add: one transaction per message, embed + store the vector; search: ms per query; reopen: a new",
        "  opening's first search per user loads that user's vectors (re-embedded: records embedded again, must be 0);",
        f"  hybrid search took the default path: {paths}."] + _paths_lines(measured)


def _paths_lines(measured: list[dict[str, Any]]) -> list[str]:
    """Hybrid search, pure-Python path against numpy path (``bench --semantic``), or why not."""
    compared = [r for r in measured if r["semantic"].get("paths", {}).get("numpy")]
    if not compared:
        return ["", 'semantic paths: numpy not installed (pip install -e ".[numpy]"): only the pure-Python path ran']
    rows = []
    for r in compared:
        for key, label in (("per_user", "per-user"), ("one_user", "one user")):
            row = r["semantic"]["paths"][key]
            rows.append([f"{label} {r['records']:,}", f"{row['records']:,.0f}", _num(row["pure_median_ms"]),
                         _num(row["numpy_median_ms"]), f"{row['ratio']:,.1f}x", "yes" if row["identical"] else "NO"])
    return [""] + format_table(["semantic paths (hybrid)", "records/user", "pure med ms", "numpy med ms", "pure/numpy",
                                "identical"], rows) + [
        "  the same store and queries on both paths, taking turns, every query once per round (3 rounds);",
        "  one user: the first 10,000 records at most, under one user, 30 queries; identical: same ids, order and scores;",
        "  the default (auto) takes the numpy path for users of 32 vectors or more, the pure one below."]


def format_report(report: dict[str, Any]) -> str:
    """The human-readable report: settings, search table, ingest and memory table, targets."""
    s = report["settings"]
    lines = [f"v2_memory bench: scorer {s['scorer']}, {s['users']} users, top_k={s['top_k']}, seed {s['seed']}, {s['queries']} queries "
             f"({s['scan_queries']} also scanned); Python {s['python']}, {s['cpus']} CPUs", report["whole_store_means"]]
    lines += [f"corpus {r['records']:,}: {r['tokens_per_message']['mean']:.1f} tokens per message "
              f"(min {r['tokens_per_message']['min']}, max {r['tokens_per_message']['max']})" for r in report["sizes"]]
    lines += [""] + format_table(
        ["search (ms)", "index med", "index p95", "scan med", "scan p95", "speedup", "sklearn med", "1st search s"],
        [row for result in report["sizes"] for row in _search_rows(result)])
    lines += [""] + format_table(
        ["records", "add 1-by-1 s", "batch s", "last/first 10%", "tracemalloc MB", "RSS +MB", "file MB",
         "reopen s", "1st search s", "loaded +MB", "indexed +MB"], [_memory_row(result) for result in report["sizes"]])
    lines += [
        "  add 1-by-1: one store.add (one file append) per message, median of 3 runs; batch: inside store.batch();",
        "  tracemalloc: peak Python allocations while adding; RSS +MB: resident growth while adding;",
        "  reopen .. indexed +MB: a fresh process opens the file, then searches once per user (building each index).",
    ]
    lines += _semantic_lines(report)
    lines += ["", _agreement_line(report["identical_results"]), ""] + format_table(
        [f"target ({report['targets_on_records']:,} records)", "value", "target", "result"],
        [[t["name"], f"{_num(t['value'], 2)} {t['unit']}", f"{t['op']} {t['limit']:g} {t['unit']}",
          "n/a" if t["passed"] is None else "PASS" if t["passed"] else "FAIL"] for t in report["targets"]])
    return "\n".join(lines)
