"""The backend benchmark at toy sizes: every field reported, targets judged, nothing lost under load.

Timings are never asserted (they depend on the machine); the shape, the counts and the shared
run's bookkeeping (acknowledged vs stored, errors) are.
"""
from __future__ import annotations

import pytest

from v2_memory.cli import main
from v2_memory.evaluation import bench_backends, bench_pairs
from v2_memory.evaluation import bench_scaling as scaling
from v2_memory.evaluation.bench_targets import targets


TINY = dict(per_user=50, queries=5, processes=[1, 2], seconds=1.0, chat_turns=10, big_user=20, touch_users=30)


@pytest.mark.slow  # a benchmark run with several processes
def test_a_tiny_run_reports_every_part_and_its_ratios_come_from_its_own_numbers():
    report = bench_backends.run_backend_benchmark(["json", "sqlite"], [100, 200], **TINY)
    assert [(r["backend"], r["records"], r["users"]) for r in report["sizes"]] == [
        ("json", 100, 2), ("json", 200, 4), ("sqlite", 100, 2), ("sqlite", 200, 4)]
    pairs = [row[key] for row in report["sizes"] + report["ratios"] for key in ("read", "add")]
    pairs += [row["retrieve"] for row in report["ratios"]]
    for pair in pairs:
        for side in (pair["bare"], pair["governed"]):
            assert side["n"] == 5 and 0 < side["p25_ms"] <= side["median_ms"] <= side["p75_ms"] <= side["p95_ms"]
        assert pair["ratio"] == pair["governed"]["median_ms"] / pair["bare"]["median_ms"]
        assert pair["paired_p25"] <= pair["paired_p75"]
    assert all(row["first_search"]["n"] == row["users"] and row["batch_add"]["n"] == 20 for row in report["sizes"])
    assert [(c["backend"], c["records"], c["turns"]) for c in report["chat"]] == [("json", 200, 10), ("sqlite", 200, 10)]
    assert [(r["backend"], r["records"], r["users"], r["big_user"]) for r in report["ratios"]] == [
        ("json", 200, 4, 20), ("sqlite", 200, 4, 20)]  # 10,000 is not a size: the largest one
    # the runs: JSON alone only (one writer process), SQLite alone then 1 writer + 1 reader
    assert [(r["backend"], r["processes"], r["writers"], r["readers"]) for r in report["shared"]] == [
        ("json", 1, 0, 0), ("sqlite", 1, 0, 0), ("sqlite", 2, 1, 1)]
    alone = {r["backend"]: r["ops_per_s"] for r in report["shared"] if r["processes"] == 1}
    for run in report["shared"]:
        assert run["acknowledged"] > 0 and run["lost"] == run["errors"] == run["cross_user"] == 0, run["first_errors"]
        assert run["ids_checked"] > 0 and run["vs_one"] == run["ops_per_s"] / alone[run["backend"]]
        assert run["ops_per_s"] == run["adds_per_s"] + run["reads_per_s"] > 0
    assert [(c["backend"], c["cache_users"], c["users"], c["half"]) for c in report["caches"]] == [
        ("sqlite", 256, 30, 15), ("sqlite", 16, 30, 15)]  # not JSON: it holds every record by design
    assert all(c["ratio"] == c["mb_at_all"] / c["mb_at_half"] for c in report["caches"])
    names = [t["name"] for t in report["targets"]]
    assert "sqlite 200 through add: build_context ÷ bare search" in names and "sqlite 200 ÷ 100: build_context growth" in names
    assert "sqlite: 1 writer + 1 reader ÷ 1 process, ops/s" in names and "json, every run: lost writes" in names
    assert not any("÷ 1 process" in name for name in names if name.startswith("json"))
    assert all(isinstance(t["passed"], bool) for t in report["targets"])
    text = bench_backends.format_backend_report(report)
    for heading in ("one user's chat", "filled through add", "processes", "cache memory", "target"):
        assert heading in text
    assert "sqlite: 1 writer + 1 reader" in text and ("PASS" in text or "FAIL" in text)


def _pair(bare_ms: float, governed_ms: float) -> dict:
    side = lambda ms: {"n": 1, "median_ms": ms, "p25_ms": ms, "p75_ms": ms, "p95_ms": ms}  # noqa: E731
    return {"bare": side(bare_ms), "governed": side(governed_ms), "ratio": governed_ms / bare_ms,
            "paired_p25": governed_ms / bare_ms, "paired_p75": governed_ms / bare_ms}


def _run(processes: int, ops: float, vs_one: float, lost: int = 0, cross: int = 0) -> dict:
    writers = processes // 2 if processes > 1 else 0
    return {"backend": "sqlite", "processes": processes, "mode": "1 process alone" if processes == 1 else
            f"{writers} writers + {processes - writers} readers", "ops_per_s": ops, "vs_one": vs_one,
            "lost": lost, "errors": 0, "cross_user": cross}


def test_the_targets_are_ratios_and_counts_judged_from_the_report():
    """By hand: reads cost 30/2 = 15x a bare search (over 10: FAIL), adds 1.2/0.4 = 3x (PASS),
    retrieve 4/0.5 = 8x (PASS); the store grew 100x and build_context 3.0/2.0 = 1.5x (at the
    limit: PASS), the bare search 0.3/0.1 = 3x (FAIL); 8 processes did 0.9x of one (FAIL), and of
    the runs' 0 + 2 lost writes and 1 cross-user read none is allowed; memory grew 1.2x (PASS)."""
    report = {"settings": {"backends": ["sqlite"]},
              "sizes": [{"backend": "sqlite", "records": 100_000, "read": _pair(0.3, 3.0)},
                        {"backend": "sqlite", "records": 1_000, "read": _pair(0.1, 2.0)}],
              "ratios": [{"backend": "sqlite", "records": 10_000, "big_user": 1_000, "read": _pair(2.0, 30.0),
                          "add": _pair(0.4, 1.2), "retrieve": _pair(0.5, 4.0)}],
              "shared": [_run(1, 100, 1.0), _run(2, 120, 1.2, lost=2), _run(8, 90, 0.9, cross=1)],
              "caches": [{"backend": "sqlite", "cache_users": 16, "users": 2_000, "half": 1_000, "ratio": 1.3}]}
    judged = {t["name"]: (round(t["value"], 6), t["op"], t["limit"], t["passed"]) for t in targets(report)}
    assert judged == {
        "sqlite 10,000 through add: build_context ÷ bare search": (15.0, "<=", 10.0, False),
        "sqlite 10,000 through add: governed add ÷ bare add": (3.0, "<=", 4.0, True),
        "sqlite: retrieve ÷ bare search, one user with 1,000 records": (8.0, "<=", 10.0, True),
        "sqlite 100,000 ÷ 1,000: build_context growth": (1.5, "<=", 1.5, True),
        "sqlite 100,000 ÷ 1,000: bare search growth": (3.0, "<=", 1.5, False),
        "sqlite: 4 writers + 4 readers ÷ 1 process, ops/s": (0.9, ">=", 1.0, False),
        "sqlite, every run: lost writes": (2, "<=", 0, False),
        "sqlite, every run: errors": (0, "<=", 0, True),
        "sqlite, every run: cross-user reads": (1, "<=", 0, False),
        "sqlite cache_users=16: memory after 2,000 users ÷ after 1,000": (1.3, "<=", 1.2, False),
    }


def test_a_pair_is_timed_in_turns_and_its_ratio_is_of_the_medians():
    """Round 0 runs bare first, round 1 governed first; the ratio is governed median ÷ bare median."""
    order = []
    pair = bench_pairs.interleave([1, 2, 3], ["a", "b", "c"], order.append, order.append)
    assert order == [1, "a", "b", 2, 3, "c"]
    assert pair["bare"]["n"] == pair["governed"]["n"] == 3
    assert pair["ratio"] == pair["governed"]["median_ms"] / pair["bare"]["median_ms"]


def test_process_roles_half_write_half_read_and_one_process_does_both():
    assert scaling.roles(1) == ["alone"]
    assert scaling.roles(2) == ["writer", "reader"]
    assert scaling.roles(8) == ["writer"] * 4 + ["reader"] * 4
    with pytest.raises(ValueError):
        scaling.roles(0)


def test_lost_writes_and_cross_user_reads_are_counted_against_the_store(tmp_path):
    """The bookkeeping itself: a writer that says it stored ids 1, 2 and 99 when only 1 and 2 exist
    lost one; a reader of ``w`` shown record 3, which is ``v``'s, read across users once."""
    from v2_memory import MemoryManager, Message

    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        ids = [memory.add(Message("user", f"记录 {n} note", "w")).record_id for n in range(2)]
        other = memory.add(Message("user", "别人的 note", "v")).record_id
    results = [{"role": "writer", "user": "w", "acked": ids + [99], "seen": [], "adds": [0.001] * 3, "reads": [],
                "errors": []},
               {"role": "reader", "user": "w", "acked": [], "seen": ids + [other], "adds": [], "reads": [0.002] * 4,
                "errors": ["StoreError: x"]}]
    summary = scaling.summary("sqlite", path, 2.0, results)
    assert (summary["acknowledged"], summary["lost"], summary["cross_user"], summary["errors"]) == (3, 1, 1, 1)
    assert (summary["mode"], summary["ops_per_s"], summary["ids_checked"]) == ("1 writer + 1 reader", 3.5, 3)


@pytest.mark.slow  # a benchmark run with several processes
def test_no_chat_turns_and_no_touched_users_skip_those_parts():
    report = bench_backends.run_backend_benchmark(["sqlite"], [50], **{**TINY, "processes": [1], "chat_turns": 0, "touch_users": 0})
    assert report["chat"] == [] and report["caches"] == [] and report["shared"]
    assert "one user's chat" not in bench_backends.format_backend_report(report)
    with pytest.raises(ValueError, match="0 or more"):
        bench_backends.run_backend_benchmark(["sqlite"], [50], **{**TINY, "chat_turns": -1})


@pytest.mark.slow  # a benchmark run with several processes
def test_bench_backend_is_a_bench_option(capsys):
    assert main(["bench", "--backend", "sqlite", "--sizes", "50", "--records-per-user", "25", "--queries", "3",
                 "--processes", "1,2", "--load-seconds", "0.5", "--chat-turns", "5", "--big-user", "10",
                 "--touch-users", "20", "--json"]) == 0
    out = capsys.readouterr().out
    for part in ('"shared"', '"chat"', '"ratios"', '"caches"', '"targets"'):
        assert part in out


@pytest.mark.server
def test_postgres_is_benchmarked_in_fresh_schemas_that_are_dropped_afterwards():
    """On the test server (see conftest): the same report for ``postgres``, nothing lost under
    several processes, and no schema left behind."""
    from conftest import postgres_url

    base = postgres_url()  # skips (saying why) before the driver is needed
    import psycopg

    def bench_schemas() -> list:
        with psycopg.connect(base) as admin:  # another benchmark may be running on the same server
            return admin.execute("SELECT nspname FROM pg_namespace WHERE nspname ~ '^v2m_bench_(100|ratio100|cache)_'").fetchall()

    before = bench_schemas()
    report = bench_backends.run_backend_benchmark(["postgres"], [100], per_user=50, queries=5, processes=[1, 2],
                                                  seconds=1.0, pg_url=base, chat_turns=5, big_user=10, touch_users=20)
    (row,), (ratio,) = report["sizes"], report["ratios"]
    assert (row["backend"], row["records"], row["users"]) == ("postgres", 100, 2)
    assert row["read"]["governed"]["n"] == 5 and "path" not in row and ratio["retrieve"]["governed"]["n"] == 5
    assert [run["processes"] for run in report["shared"]] == [1, 2] and len(report["caches"]) == 2
    for run in report["shared"]:
        assert run["acknowledged"] > 0 and run["lost"] == run["errors"] == run["cross_user"] == 0, run["first_errors"]
    assert "postgres: 1 writer + 1 reader ÷ 1 process, ops/s" in [t["name"] for t in report["targets"]]
    assert bench_schemas() == before  # its schema was dropped


def test_bench_postgres_without_a_server_url_says_what_to_pass(monkeypatch, capsys):
    monkeypatch.delenv("V2_MEMORY_PG_URL", raising=False)
    assert main(["bench", "--backend", "postgres", "--pg-url", "", "--sizes", "50"]) != 0
    assert "--pg-url" in capsys.readouterr().err
