"""The numpy path (``retrieval/numpy_path.py``) held to the pure-Python reference, both in one process.

Every comparison runs the same search twice over the same vectors — ``choose_path("pure")``, then
``choose_path("numpy")`` — and asks for the same record ids in the same order and scores within
1e-6. The numpy path promises more (the reference's floating-point operations in the reference's
order, so the same bits) and the scores are also compared exactly, because a tie is only a tie
when both paths agree to the last bit.

Needs numpy: skipped, saying so, when it is not installed; ``V2_MEMORY_REQUIRE_NUMPY=1`` (CI sets
it) turns the skip into a failure. The switch's own tests run either way.
"""
from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.retrieval import numpy_path
from v2_memory.retrieval.embedder import HashingEmbedder
from v2_memory.retrieval.hybrid import Fusion
from v2_memory.retrieval.numpy_path import NumpyUnavailableError, choose_path, current_path
from v2_memory.retrieval.semantic import SemanticIndex
from v2_memory.storage.backends import json_storage
from v2_memory.storage.semantic_store import SemanticStore

REPO = Path(__file__).resolve().parent.parent
REASON = "numpy is not installed (pip install -e '.[numpy]'): the numpy path has nothing to be compared with"
try:
    import numpy  # noqa: F401  (imported, not only found: a broken install counts as missing)
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False
if not HAVE_NUMPY and os.environ.get("V2_MEMORY_REQUIRE_NUMPY") == "1":
    raise RuntimeError(f"V2_MEMORY_REQUIRE_NUMPY=1 but {REASON}")
needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason=REASON)

# A small vocabulary: texts share words (lexical hits), repeat (ties) and collide in few buckets.
WORDS = ["coffee", "latte", "wedding", "lisbon", "train", "budget", "the", "my", "咖啡", "婚礼", "预算", "CS201"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@pytest.fixture(autouse=True)
def _path_restored():
    """Each test leaves the switch unset: the environment's choice, or "auto"."""
    yield
    choose_path(None)


def on_both_paths(search):
    """``search()`` on the pure path, then on the numpy path: (pure's answer, numpy's answer)."""
    answers = []
    for path in ("pure", "numpy"):
        choose_path(path)
        answers.append(search())
    return answers


def assert_same_ranking(pure, fast):
    """The same ids in the same order, scores within 1e-6 — and in fact equal."""
    assert [record_id for _, record_id in fast] == [record_id for _, record_id in pure]
    assert [score for score, _ in fast] == pytest.approx([score for score, _ in pure], abs=1e-6)
    assert fast == pure


def store_ranking(store, query, user_id, top_k, threshold):
    hits = store.search(query, user_id, top_k, threshold)
    return [(hit.score, hit.record["record_id"]) for hit in hits], store.components(query, user_id)


# -- the switch: no numpy needed ----------------------------------------------------------------------
def test_the_path_is_chosen_in_code_or_by_the_environment(monkeypatch):
    monkeypatch.setenv(numpy_path.ENV_VAR, "pure")
    assert current_path() == "pure"
    choose_path("auto")  # the code's choice wins over the environment's
    assert current_path() == ("numpy" if HAVE_NUMPY else "pure")
    choose_path(None)
    monkeypatch.setenv(numpy_path.ENV_VAR, "fast")
    with pytest.raises(ValueError, match="V2_MEMORY_SEMANTIC_PATH: the semantic path is one of auto, pure, numpy"):
        current_path()
    with pytest.raises(ValueError, match="choose_path"):
        choose_path("fast")


def test_without_numpy_auto_is_pure_and_numpy_is_refused_with_the_install_line(monkeypatch):
    """As on a machine without numpy: "auto" quietly takes the reference, an explicit "numpy" says what to install."""
    monkeypatch.setattr(numpy_path, "_numpy", [None])
    assert current_path() == "pure"
    with pytest.raises(NumpyUnavailableError, match=r'pip install -e "\.\[numpy\]"'):
        choose_path("numpy")
    monkeypatch.setenv(numpy_path.ENV_VAR, "numpy")
    index = SemanticIndex(HashingEmbedder(8))
    index.add_texts([(1, "coffee")])
    with pytest.raises(NumpyUnavailableError, match="V2_MEMORY_SEMANTIC_PATH=numpy"):
        index.search("coffee")
    monkeypatch.setenv(numpy_path.ENV_VAR, "auto")
    assert index.search("coffee") == [(1.0, 1)]


def _imports_numpy(path: str, memories: int) -> bool:
    """Whether a fresh interpreter, on ``path``, imports numpy while a memory with vectors adds and explains."""
    code = ("import sys\nfrom v2_memory import MemoryManager, Message\n"
            "from v2_memory.retrieval.embedder import HashingEmbedder\n"
            "with MemoryManager(store_path=None, embedder=HashingEmbedder(32)) as memory:\n"
            f"    for n in range({memories}):\n"
            "        memory.add(Message('user', f'my coffee order number {n} is a latte', 'ann'))\n"
            "    assert memory.explain('coffee', 'ann')[0].admitted\n"
            "print('numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, numpy_path.ENV_VAR: path})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1].lower())


def test_numpy_is_imported_by_the_first_search_that_uses_it_and_never_on_the_pure_path():
    """"auto" takes the numpy path for a user with AUTO_MIN_ROWS vectors or more, the loop below that."""
    assert _imports_numpy("pure", numpy_path.AUTO_MIN_ROWS) is False
    assert _imports_numpy("auto", numpy_path.AUTO_MIN_ROWS - 1) is False
    assert _imports_numpy("auto", numpy_path.AUTO_MIN_ROWS) is HAVE_NUMPY


def test_auto_leaves_small_users_to_the_loop_and_numpy_takes_every_user(monkeypatch):
    monkeypatch.setattr(numpy_path, "_numpy", [object()])  # as if numpy were installed: nothing is computed
    for rows, auto in ((0, "pure"), (numpy_path.AUTO_MIN_ROWS - 1, "pure"), (numpy_path.AUTO_MIN_ROWS, "numpy")):
        choose_path("auto")
        assert current_path(rows) == auto
        choose_path("numpy")
        assert current_path(rows) == "numpy"


# -- the same answers on both paths ------------------------------------------------------------------
@needs_numpy
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vectors=st.lists(st.lists(st.sampled_from([0.0, 1.0, -1.0, 0.5, 0.1, 3.0]) | st.floats(-1, 1),
                                 min_size=4, max_size=4), min_size=1, max_size=40),
       ids=st.permutations(range(40)), query=st.lists(st.floats(-1, 1), min_size=4, max_size=4),
       top_k=st.integers(1, 45), threshold=st.none() | st.floats(0, 1))
def test_semantic_index_ranks_the_same_on_both_paths(vectors, ids, query, top_k, threshold):
    """Random vectors, many repeated (ties), under ids in any order (ties fall in insertion order, not id order)."""
    index = SemanticIndex(FixedQuery(query))
    index.add_vectors(zip(ids, vectors))
    pure, fast = on_both_paths(lambda: index.search("the query", top_k, threshold))
    assert_same_ranking(pure, fast)
    pure, fast = on_both_paths(lambda: index.scores_for_vector(query))
    assert list(fast.items()) == list(pure.items())


@needs_numpy
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents=st.lists(texts, min_size=1, max_size=30), query=texts, top_k=st.integers(1, 35),
       threshold=st.none() | st.floats(0, 1), weight=st.floats(0, 1), floor=st.floats(0, 0.99),
       dimension=st.sampled_from([8, 16, 256]))
def test_hybrid_search_ranks_and_explains_the_same_on_both_paths(contents, query, top_k, threshold, weight, floor,
                                                                 dimension):
    """SemanticStore.search (lexical + cosine fused) and its parts for explain, random texts and fusions."""
    storage = json_storage(None)
    try:
        store = SemanticStore(storage.records, storage.vectors, HashingEmbedder(dimension), Fusion(weight, floor))
        for content in contents:
            store.add("ann", "user", content)
        (pure, pure_parts), (fast, fast_parts) = on_both_paths(lambda: store_ranking(store, query, "ann", top_k,
                                                                                      threshold))
        assert_same_ranking(pure, fast)
        assert fast_parts == pure_parts
    finally:
        storage.close()


class FixedQuery(HashingEmbedder):
    """Embeds every text as one given vector: the query, when the records are given as vectors."""

    def __init__(self, vector):
        super().__init__(len(vector))
        self.vector = vector

    def __call__(self, texts):
        return [self.vector for _ in texts]


@needs_numpy
def test_identical_records_tie_in_insertion_order_wherever_they_sit():
    """Copies of one dense 256-dimension vector at every second and third row, stores of 2 to 40 rows:
    each copy gets the same score, and the copies come out in insertion order.

    ``matrix @ query`` (BLAS) scores such copies a last bit apart depending on their row, and they
    then come out in another order; the numpy path adds in the reference's order."""
    copy = [math.sin(d + 1.0) for d in range(256)]
    for rows in range(2, 41):
        index = SemanticIndex(FixedQuery([math.cos(0.5 * d) for d in range(256)]))
        index.add_vectors((n, copy if n % 3 else [math.sin(n * d) for d in range(256)]) for n in range(rows))
        pure, fast = on_both_paths(lambda: index.search("the query", top_k=rows))
        assert_same_ranking(pure, fast)
        copies = [(score, rid) for score, rid in fast if rid % 3]
        assert len({score for score, _ in copies}) == 1
        assert [rid for _, rid in copies] == sorted(rid for _, rid in copies)


@needs_numpy
def test_a_record_found_by_words_before_it_has_a_vector_ranks_the_same():
    """A record written past the semantic store (no vector yet) is a lexical hit with cosine 0 on both paths."""
    storage = json_storage(None)
    try:
        store = SemanticStore(storage.records, storage.vectors, HashingEmbedder(16))
        for content in ["coffee in lisbon", "the train", "coffee budget"]:
            store.add("ann", "user", content)
        store.search("coffee", "ann")  # the user's vectors are now cached
        storage.records.add("ann", "user", "coffee coffee")  # beside the semantic store: no vector
        (pure, pure_parts), (fast, fast_parts) = on_both_paths(lambda: store_ranking(store, "coffee", "ann", 5, None))
        assert_same_ranking(pure, fast)
        assert fast_parts == pure_parts and fast_parts[4]["cosine"] == 0.0
    finally:
        storage.close()


@needs_numpy
def test_vectors_added_and_removed_between_searches_keep_both_paths_equal():
    """The numpy columns grow in place on an add and are made again after a removal."""
    index = SemanticIndex(HashingEmbedder(16))
    choose_path("numpy")
    for step, text in enumerate(["coffee", "latte", "my coffee", "train", "coffee latte", "budget"] * 5, start=1):
        index.add_texts([(step, text)])
        if step % 7 == 0:
            index.remove(step - 3)
        pure, fast = on_both_paths(lambda: index.search("coffee latte", top_k=10))
        assert_same_ranking(pure, fast)
    assert index.columns().count == len(index)


@needs_numpy
def test_explain_admits_the_same_memories_on_both_paths():
    with MemoryManager(store_path=None, embedder=HashingEmbedder(64), threshold=0.2) as memory:
        for content in ["My sister's wedding is in Lisbon.", "I had a latte at noon.", "My coffee budget is 5 euros.",
                        "The wedding budget is tight.", "I had a latte at noon."]:
            memory.add(Message("user", content, "ann"))
        pure, fast = on_both_paths(lambda: [a.to_dict() for a in memory.explain("wedding budget latte", "ann")])
        assert fast == pure and any(a["admitted"] for a in fast)


# -- vectors live and leave with their user ------------------------------------------------------------
@needs_numpy
def test_vectors_are_loaded_per_user_and_evicted_with_the_users_cache():
    """cache_users=2: searching a third user evicts the least recent one's index, numpy columns and all;
    its next search reads its vectors back and answers the same."""
    storage = json_storage(None)
    try:
        store = SemanticStore(storage.records, storage.vectors, HashingEmbedder(16), cache_users=2)
        for user in ("ann", "bob", "cy"):
            for content in ["coffee in lisbon", f"{user}'s train", "coffee budget"]:
                store.add(user, "user", content)
        choose_path("numpy")
        first = store.search("coffee", "ann")
        columns = store._indexes.get((None, "ann"))[1].columns()
        assert sorted(columns.ids[:columns.count].tolist()) == [1, 2, 3]  # ann's records only
        gone = weakref.ref(columns)
        store.search("coffee", "bob")
        store.search("coffee", "cy")
        del columns
        gc.collect()
        assert (None, "ann") not in store._indexes and gone() is None
        assert store.search("coffee", "ann") == first
    finally:
        storage.close()


# -- the benchmark's comparison (bench --semantic): its answers, never its timings ----------------------
def _bench_semantic(monkeypatch, tmp_path, numpy_installed: bool) -> tuple[dict, str]:
    """``bench --semantic``'s measurement on a tiny corpus, and its report lines."""
    from v2_memory.evaluation import bench_report, bench_semantic
    from v2_memory.evaluation.chat_corpus import generate_messages, generate_queries

    if not numpy_installed:
        monkeypatch.setattr(numpy_path, "_numpy", [None])
    monkeypatch.setattr(bench_semantic, "PATH_ROUNDS", 2)
    messages, calls = generate_messages(120, users=2), generate_queries(4, users=2)
    result = bench_semantic.measure_semantic(messages, calls, 3, tmp_path)
    return result, "\n".join(bench_report._semantic_lines({"sizes": [{"records": 120, "semantic": result}]}))


@needs_numpy
def test_the_bench_times_both_paths_on_the_same_vectors_and_compares_their_answers(monkeypatch, tmp_path):
    result, report = _bench_semantic(monkeypatch, tmp_path, numpy_installed=True)
    paths = result["paths"]
    assert paths["per_user"]["records"] == 60 and paths["one_user"]["records"] == 120
    for row in (paths["per_user"], paths["one_user"]):
        assert row["identical"] is True and row["rounds"] == 2
        assert row["ratio"] == row["pure_median_ms"] / row["numpy_median_ms"]
    assert "semantic paths (hybrid)" in report and "one user 120" in report
    assert numpy_path._chosen == [None]  # the bench gives the switch back


@needs_numpy
def test_the_bench_reports_answers_that_differ(monkeypatch):
    from v2_memory.evaluation.bench_semantic import compare_paths

    storage = json_storage(None)
    try:
        store = SemanticStore(storage.records, storage.vectors, HashingEmbedder(16))
        for content in ["coffee in lisbon", "the train", "coffee budget", "my coffee"]:
            store.add("ann", "user", content)
        monkeypatch.setattr(numpy_path, "best_rows", lambda np, scores, keys, top_k: np.arange(len(scores))[:top_k])
        assert compare_paths(store, [("ann", "coffee budget")], 3, rounds=1)["identical"] is False
    finally:
        storage.close()


def test_without_numpy_the_bench_says_so(monkeypatch, tmp_path):
    result, report = _bench_semantic(monkeypatch, tmp_path, numpy_installed=False)
    assert result["paths"] == {"numpy": False} and result["path"] == "pure"
    assert 'semantic paths: numpy not installed (pip install -e ".[numpy]")' in report
