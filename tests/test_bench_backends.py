"""The backend benchmark at toy sizes: every field reported, targets judged, nothing lost under load.

Timings are never asserted (they depend on the machine); the shape, the counts and the shared
run's bookkeeping (acknowledged vs stored, errors) are.
"""
from __future__ import annotations

import pytest

from v2_memory.cli import main
from v2_memory.evaluation import bench_backends


@pytest.mark.slow  # a benchmark run with several processes
def test_a_tiny_run_reports_every_backend_size_and_target(tmp_path):
    report = bench_backends.run_backend_benchmark(["json", "sqlite"], [100, 200], per_user=50, queries=5,
                                                  writers=2, readers=1, seconds=1.0, chat_turns=10)
    assert [(r["backend"], r["records"], r["users"]) for r in report["sizes"]] == [
        ("json", 100, 2), ("json", 200, 4), ("sqlite", 100, 2), ("sqlite", 200, 4)]
    for row in report["sizes"]:
        for part in (row["bare"]["first_search"], row["bare"]["warm_search"], row["bare"]["add"],
                     row["governed"]["add"], row["governed"]["batch_add"], row["governed"]["build_context"]):
            assert part["n"] > 0 and 0 < part["median_ms"] <= part["p95_ms"]
    assert [(c["backend"], c["records"], c["turns"]) for c in report["chat"]] == [("json", 200, 10), ("sqlite", 200, 10)]
    assert all(c["add"]["n"] == c["build_context"]["n"] == 2 for c in report["chat"])  # the last fifth
    json_run, sqlite_run = report["shared"]
    assert (json_run["writers"], json_run["readers"], json_run["mode"]) == (1, 0, "single writer")
    assert (sqlite_run["writers"], sqlite_run["readers"]) == (2, 1)
    for run in report["shared"]:
        assert run["acknowledged"] > 0 and run["lost"] == 0 and run["errors"] == 0, run["first_errors"]
    assert sqlite_run["reads_per_s"] > 0
    names = [t["name"] for t in report["targets"]]
    assert "sqlite 200: warm per-user search median" in names and "sqlite 200: build_context vs 100" in names
    assert all(isinstance(t["passed"], bool) for t in report["targets"])
    text = bench_backends.format_backend_report(report)
    assert "one user's chat" in text and "shared run" in text and "sqlite: 2 writers + 1 readers" in text and ("PASS" in text or "FAIL" in text)


def test_lost_writes_are_counted_when_an_acknowledged_record_is_missing(tmp_path):
    """The bookkeeping itself: a writer that says it stored ids 1..3 when only 1 and 2 exist lost one."""
    from v2_memory import MemoryManager, Message

    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        ids = [memory.add(Message("user", f"记录 {n} note", "w")).record_id for n in range(2)]
    results = [{"role": "writer", "acked": ids + [99], "latencies": [0.001] * 3, "errors": []}]
    summary = bench_backends._shared_summary("sqlite", path, 1, 0, 1.0, results)
    assert (summary["acknowledged"], summary["lost"], summary["errors"]) == (3, 1, 0)


@pytest.mark.slow  # a benchmark run with several processes
def test_bench_backend_is_a_bench_option(capsys):
    assert main(["bench", "--backend", "sqlite", "--sizes", "50", "--records-per-user", "25", "--queries", "3",
                 "--writers", "1", "--readers", "1", "--load-seconds", "0.5", "--chat-turns", "5", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"shared"' in out and '"chat"' in out


@pytest.mark.server
def test_postgres_is_benchmarked_in_fresh_schemas_that_are_dropped_afterwards():
    """On the test server (see conftest): the same report for ``postgres``, nothing lost under
    several processes, and no schema left behind."""
    from conftest import postgres_url

    base = postgres_url()  # skips (saying why) before the driver is needed
    import psycopg

    def bench_schemas() -> list:
        with psycopg.connect(base) as admin:  # another benchmark may be running on the same server
            return admin.execute(r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'v2m\_bench\_100\_%'").fetchall()

    before = bench_schemas()
    report = bench_backends.run_backend_benchmark(["postgres"], [100], per_user=50, queries=5, writers=2,
                                                  readers=1, seconds=1.0, pg_url=base, chat_turns=5)
    (row,), (run,) = report["sizes"], report["shared"]
    assert (row["backend"], row["records"], row["users"]) == ("postgres", 100, 2)
    assert row["governed"]["build_context"]["n"] == 5 and "path" not in row
    assert run["acknowledged"] > 0 and run["lost"] == 0 and run["errors"] == 0, run["first_errors"]
    assert "postgres 100: store add p50" in [t["name"] for t in report["targets"]]
    assert bench_schemas() == before  # its schema was dropped


def test_bench_postgres_without_a_server_url_says_what_to_pass(monkeypatch, capsys):
    monkeypatch.delenv("V2_MEMORY_PG_URL", raising=False)
    assert main(["bench", "--backend", "postgres", "--pg-url", "", "--sizes", "50"]) != 0
    assert "--pg-url" in capsys.readouterr().err
