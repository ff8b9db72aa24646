"""The performance benchmark: its corpus, its reference scan, and its report. Never its timings.

The benchmark's numbers depend on the machine; these tests only check what must hold anywhere:
the corpus is deterministic, the brute-force reference agrees exactly with the store, and a tiny
run reports every field, says the results are identical, and fails loudly when they are not.
"""
from __future__ import annotations

import json

import pytest

from v2_memory import JsonVectorStore, tokenize
from v2_memory.cli import main
from v2_memory.evaluation import bench

TINY = ["bench", "--sizes", "200,500", "--users", "5", "--queries", "5", "--scan-queries", "5"]


# -- the corpus -----------------------------------------------------------------------------------
def test_same_seed_same_messages_other_seed_other_messages():
    assert bench.generate_messages(300, users=7, seed=3) == bench.generate_messages(300, users=7, seed=3)
    assert bench.generate_messages(300, users=7, seed=3) != bench.generate_messages(300, users=7, seed=4)
    assert bench.generate_queries(20, users=7, seed=3) == bench.generate_queries(20, users=7, seed=3)


def test_smaller_corpus_is_a_prefix_of_a_larger_one():
    assert bench.generate_messages(1000, seed=1)[:100] == bench.generate_messages(100, seed=1)


def test_messages_look_like_bilingual_chat():
    messages = bench.generate_messages(2000, users=10, seed=0)
    assert {user for user, _, _ in messages} == {f"user-{i:03d}" for i in range(10)}
    assert {role for _, role, _ in messages} == {"user", "assistant"}
    assert all(5 <= len(tokenize(content)) <= 30 for _, _, content in messages)
    # Chinese text is what makes the CJK bigrams matter; English words come from the same generator.
    assert sum(any("\u4e00" <= char <= "\u9fff" for char in content) for _, _, content in messages) > 500
    assert sum(content.isascii() for _, _, content in messages) > 500


# -- the reference --------------------------------------------------------------------------------
def test_brute_force_worked_example():
    """Query "a b" for alice. Record 1 "a b" and record 3 "b a" have the same counts, so cosine 1.0
    each (tie: insertion order); record 4 "c" shares nothing: 0.0, still ranked, last. Bob's record 2
    is skipped even though it matches perfectly."""
    records = [
        {"record_id": 1, "user_id": "alice", "content": "a b"},
        {"record_id": 2, "user_id": "bob", "content": "a b"},
        {"record_id": 3, "user_id": "alice", "content": "b a"},
        {"record_id": 4, "user_id": "alice", "content": "c"},
    ]
    hits = bench.brute_force_search(records, "a b", "alice", top_k=5)
    assert [record["record_id"] for _, record in hits] == [1, 3, 4]
    assert [score for score, _ in hits] == [pytest.approx(1.0), pytest.approx(1.0), 0.0]


def test_brute_force_equals_store_search_on_the_generated_corpus():
    messages = bench.generate_messages(400, users=4, seed=5)
    store = JsonVectorStore(None)
    records = [store.add(user_id, role, content) for user_id, role, content in messages]
    for user_id, query in bench.generate_queries(25, users=4, seed=5):
        # top_k 1000 exceeds every user's history: the zero-score records must come back too, in order.
        for top_k in (1, 5, 1000):
            expected = bench.brute_force_search(records, query, user_id, top_k)
            got = store.search(query, user_id, top_k=top_k)
            # Exact: the same ids in the same order, and scores equal to the last bit.
            assert [(score, record["record_id"]) for score, record in got] == [
                (score, record["record_id"]) for score, record in expected]


def test_sklearn_reference_agrees_on_scores_when_installed():
    pytest.importorskip("sklearn")
    records = [dict(record_id=i, user_id=user, content=content)
               for i, (user, _, content) in enumerate(bench.generate_messages(300, users=3, seed=2), start=1)]
    search = bench._sklearn_search(records, top_k=5)
    for user_id, query in bench.generate_queries(10, users=3, seed=2):
        expected = [score for score, _ in bench.brute_force_search(records, query, user_id, 5)]
        assert [score for score, _ in search(user_id, query)] == pytest.approx(expected)


@pytest.mark.slow  # a benchmark run
# -- the command ----------------------------------------------------------------------------------
def test_tiny_run_reports_every_field_as_json(capsys):
    assert main(TINY + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["identical_results"] == {"identical": True, "queries": 2 * 2 * 5, "first_mismatch": None}
    assert "ONE user" in report["whole_store_means"]
    assert [size["records"] for size in report["sizes"]] == [200, 500]
    for size in report["sizes"]:
        for mode in ("per_user", "whole_store"):
            assert set(size[mode]) >= {"index", "scan", "speedup", "sklearn", "first_search_all_users_s"}
            assert size[mode]["index"]["queries"] == 5 and size[mode]["index"]["median_ms"] > 0
            assert set(size[mode]["scan"]) == {"queries", "median_ms", "p95_ms"}
        assert set(size["ingest"]) == {"one_by_one_s", "batch_s", "last_to_first_tenth", "last_to_first_tenth_runs",
                                       "tracemalloc_peak_mb", "rss_growth_mb", "file_mb"}
        assert len(size["ingest"]["last_to_first_tenth_runs"]) == 3
        assert size["reopen"]["records"] == size["records"]
        assert set(size["reopen"]) >= {"open_s", "first_search_all_users_s", "rss_growth_mb"}
    assert report["targets_on_records"] == 500
    assert [target["name"] for target in report["targets"]] == [
        "per-user search median", "per-user speedup vs scan", "ingest last/first 10 % (per add)",
        "RSS growth, loaded + indexed", "reopen time"]


@pytest.mark.slow  # a benchmark run
def test_tiny_run_prints_tables_and_writes_json(capsys, tmp_path):
    out = tmp_path / "bench.json"
    assert main(TINY + ["--no-sklearn", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "identical results: yes (20 scanned queries compared" in captured.out
    assert "whole-store = " in captured.out and "per-user 500" in captured.out
    assert captured.out.count("PASS") + captured.out.count("FAIL") + captured.out.count("n/a") >= 5
    assert "bench: 500 records:" in captured.err  # progress goes to stderr
    assert json.loads(out.read_text(encoding="utf-8"))["identical_results"]["identical"] is True


@pytest.mark.slow  # a benchmark run
def test_a_disagreement_is_reported_and_fails_the_run(capsys, monkeypatch):
    honest = bench.brute_force_search
    monkeypatch.setattr(bench, "brute_force_search", lambda *args: list(reversed(honest(*args))))
    assert main(TINY + ["--no-sklearn"]) == 1
    assert "identical results: NO; first mismatch (per-user, 200 records" in capsys.readouterr().out


def test_help_ends_with_an_example():
    assert bench.EPILOG.splitlines()[-1].startswith("example: python -m v2_memory bench ")


@pytest.mark.slow  # a benchmark run
def test_semantic_track_cost_is_measured_and_a_reopen_embeds_no_record(capsys):
    """``--semantic``: ingest with and without vectors, lexical vs hybrid search, and a reopen that
    loads every user's vectors: the one count that must hold anywhere is 0 records re-embedded."""
    assert main(["bench", "--sizes", "200", "--users", "5", "--queries", "5", "--scan-queries", "5", "--no-sklearn",
                 "--semantic", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    semantic = report["sizes"][0]["semantic"]
    assert semantic["embedder"] == "hashing-256" and semantic["vector_bytes_per_record"] == 4 * 256
    assert semantic["reopen"]["records_embedded"] == 0
    assert semantic["ingest"]["semantic_ms_per_add"] > 0 and semantic["search"]["hybrid"]["median_ms"] > 0
    assert report["targets"][-1]["name"] == "semantic reopen: records re-embedded" and report["targets"][-1]["passed"]
    assert main(["bench", "--sizes", "200", "--users", "5", "--queries", "5", "--scan-queries", "5", "--no-sklearn",
                 "--semantic"]) == 0
    out = capsys.readouterr().out
    assert "semantic (SQLite)" in out and "semantic paths" in out  # pure against numpy, or "numpy not installed"
