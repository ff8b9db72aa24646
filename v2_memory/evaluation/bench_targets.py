"""The backend benchmark's targets and tables: what ``bench --backend`` measured, judged and printed.

Every target is a ratio or a count, never a time: on a shared, noisy machine a budget in
milliseconds judges the neighbours, while two things timed together in one loop are slowed
together (``bench_pairs.py``). The targets (issue 23), on each backend measured:

    build_context ÷ bare search          <= 10    the store filled through add, interleaved
    governed add ÷ bare add              <= 4     same store, interleaved
    retrieve ÷ bare search (1,000 records of one user)  <= 10
    growth, largest ÷ smallest size      <= 1.5   build_context and bare search medians
    n processes ÷ 1 process, ops/s       >= 1     the largest run (4 writers + 4 readers by default)
    lost writes, errors, cross-user reads == 0    every multi-process run
    memory after all users ÷ after half  <= 1.2  each cache_users setting (``bench_cache.py``)

    >>> target("lost writes", 0, "", "<=", 0)["passed"], target("speed-up", 0.8, "x", ">=", 1)["passed"]
    (True, False)
"""
from __future__ import annotations

from typing import Any

from ..tables import format_table

__all__ = ["target", "targets", "format_backend_report", "LIMITS"]

LIMITS = {"read": 10.0, "add": 4.0, "retrieve": 10.0, "growth": 1.5, "scaling": 1.0, "cache": 1.2}


def target(name: str, value: float, unit: str, op: str, limit: float) -> dict[str, Any]:
    """One judged number: ``op`` is ``"<="`` (at most) or ``">="`` (at least)."""
    return {"name": name, "value": value, "unit": unit, "op": op, "limit": limit,
            "passed": value <= limit if op == "<=" else value >= limit}


def _backend_targets(backend: str, sizes: list[dict], ratio: dict | None, runs: list[dict],
                     caches: list[dict]) -> list[dict[str, Any]]:
    found = []
    if ratio is not None:
        at = f"{backend} {ratio['records']:,} through add"
        found.append(target(f"{at}: build_context ÷ bare search", ratio["read"]["ratio"], "x", "<=", LIMITS["read"]))
        found.append(target(f"{at}: governed add ÷ bare add", ratio["add"]["ratio"], "x", "<=", LIMITS["add"]))
        found.append(target(f"{backend}: retrieve ÷ bare search, one user with {ratio['big_user']:,} records",
                            ratio["retrieve"]["ratio"], "x", "<=", LIMITS["retrieve"]))
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        span = f"{backend} {large['records']:,} ÷ {small['records']:,}"
        for part, label in (("governed", "build_context"), ("bare", "bare search")):
            growth = large["read"][part]["median_ms"] / small["read"][part]["median_ms"]
            found.append(target(f"{span}: {label} growth", growth, "x", "<=", LIMITS["growth"]))
    shared = [run for run in runs if run["processes"] > 1]
    if shared:
        largest = max(shared, key=lambda run: run["processes"])
        found.append(target(f"{backend}: {largest['mode']} ÷ 1 process, ops/s", largest["vs_one"], "x", ">=",
                            LIMITS["scaling"]))
    for key, label in (("lost", "lost writes"), ("errors", "errors"), ("cross_user", "cross-user reads")):
        found.append(target(f"{backend}, every run: {label}", sum(run[key] for run in runs), "", "<=", 0))
    for row in caches:
        found.append(target(f"{backend} cache_users={row['cache_users']}: memory after {row['users']:,} users "
                            f"÷ after {row['half']:,}", row["ratio"], "x", "<=", LIMITS["cache"]))
    return found


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of a report, backend by backend."""
    found = []
    for backend in report["settings"]["backends"]:
        def mine(part: str) -> list[dict]:
            return [row for row in report[part] if row["backend"] == backend]

        sizes = sorted(mine("sizes"), key=lambda row: row["records"])
        ratio = next(iter(mine("ratios")), None)
        found += _backend_targets(backend, sizes, ratio, mine("shared"), mine("caches"))
    return found


def _ms(part: dict | None) -> str:
    return "-" if part is None else f"{part['median_ms']:.3f} / {part['p95_ms']:.3f}"


def _times(pair: dict) -> str:
    """A pair's ratio with the middle half of its round-by-round ratios: ``4.1x (3.2–5.0)``."""
    return f"{pair['ratio']:.1f}x ({pair['paired_p25']:.1f}–{pair['paired_p75']:.1f})"


def _size_lines(report: dict[str, Any]) -> list[str]:
    return format_table(
        ["backend", "records", "reopen s", "1st search", "warm search", "build_context", "ratio", "store add",
         "governed add", "ratio", "in a batch"],
        [[r["backend"], f"{r['records']:,}", f"{r['reopen_s']:.3f}", _ms(r["first_search"]), _ms(r["read"]["bare"]),
          _ms(r["read"]["governed"]), _times(r["read"]), _ms(r["add"]["bare"]), _ms(r["add"]["governed"]),
          _times(r["add"]), _ms(r["batch_add"])] for r in report["sizes"]], "lrrrrrrrrrr")


def _ratio_lines(report: dict[str, Any]) -> list[str]:
    rows = []
    for r in report["ratios"]:
        where = f"{r['backend']} {r['records']:,} / {r['users']} users"
        for key, bare, governed in (("read", "search", "build_context"), ("add", "add", "add"),
                                    ("retrieve", f"search ({r['big_user']:,}-record user)", "retrieve")):
            rows.append([where, f"{bare} vs {governed}", _ms(r[key]["bare"]), _ms(r[key]["governed"]),
                         _times(r[key]), f"<= {LIMITS[key]:g}x"])
    return format_table(["filled through add", "bare vs governed", "bare ms", "governed ms", "ratio (p25–p75)",
                         "target"], rows, "llrrrr")


def _scaling_lines(report: dict[str, Any]) -> list[str]:
    return format_table(
        ["processes", "seconds", "ops/s", "÷ 1 process", "adds/s", "reads/s", "add ms", "read ms", "acked", "lost",
         "errors", "cross-user"],
        [[f"{r['backend']}: {r['mode']}", f"{r['seconds']:g}", f"{r['ops_per_s']:.0f}", f"{r['vs_one']:.2f}x",
          f"{r['adds_per_s']:.0f}", f"{r['reads_per_s']:.0f}", _ms(r["add"]), _ms(r["read"]), str(r["acknowledged"]),
          str(r["lost"]), str(r["errors"]), f"{r['cross_user']} of {r['ids_checked']}"] for r in report["shared"]],
        "lrrrrrrrrrrr")


def _cache_lines(report: dict[str, Any]) -> list[str]:
    if not report["caches"]:
        return []
    return [""] + format_table(
        ["cache memory", "cache_users", "users read", "MB after half", "MB after all", "ratio", "most memory in"],
        [[r["backend"], str(r["cache_users"]), f"{r['users']:,}", f"{r['mb_at_half']:.2f}", f"{r['mb_at_all']:.2f}",
          f"{r['ratio']:.2f}x", ", ".join(f"{name} {mb:.1f}" for name, mb in r["largest"][:2])]
         for r in report["caches"]], "lrrrrrl") + [
        "  MB: Python's live memory (tracemalloc) grown since the first read; half: the first half of the users."]


def format_backend_report(report: dict[str, Any]) -> str:
    """The tables (per size; filled through add; processes; cache memory; targets), times as
    median / p95 ms, ratios as governed ÷ bare median with the quartiles of the per-round ratios."""
    s = report["settings"]
    lines = [f"v2_memory bench --backend: {s['records_per_user']} records per user, {s['queries']} queries, "
             f"top_k={s['top_k']}, seed {s['seed']}, fsync off; times are median / p95 ms, bare and governed "
             "interleaved in one process", ""]
    lines += _size_lines(report)
    if report.get("chat"):  # --chat-turns 0: none
        lines += [""] + format_table(
            ["one user's chat", "store records", "turns", "add (last fifth)", "build_context (last fifth)"],
            [[r["backend"], f"{r['records']:,}", f"{r['turns']:,}", _ms(r["add"]), _ms(r["build_context"])]
             for r in report["chat"]], "lrrrr")
    lines += [""] + _ratio_lines(report) + [""] + _scaling_lines(report) + _cache_lines(report)
    lines += [""] + format_table(["target", "value", "target", "result"],
                                 [[t["name"], f"{t['value']:.2f} {t['unit']}" if t["unit"] else f"{t['value']:g}",
                                   f"{t['op']} {t['limit']:g} {t['unit']}".strip(), "PASS" if t["passed"] else "FAIL"]
                                  for t in report["targets"]], "lrrl")
    return "\n".join(lines)
