"""The identifier route is linear in the number of memories that name the identifier.

A query naming ``CS201`` makes every memory naming it a candidate. Scoring each of them with its
own scan of the user's index (one ``score()`` per memory) made a read quadratic: 4,000 such
memories took seconds. The tests count the work instead of timing it: index scans per read, and
judgements per candidate, for n and 2n memories.
"""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance import governor as governor_module
from v2_memory.retrieval import index as index_module

pytestmark = pytest.mark.slow  # stores of thousands of records: `python -m pytest --full` (CI) runs them


def _manager_with(count: int) -> MemoryManager:
    memory = MemoryManager(store_path=None, audit=False)
    for i in range(count):
        memory.add(Message("user", f"CS201 第{i}条记录 note{i}", user_id="u"))
    memory.add(Message("user", "CS202 是另一门课", user_id="u"))
    return memory


def _count_work(memory: MemoryManager, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Run one read and count index scans (calls of ``scores`` on any index) and judgements."""
    counts = {"scans": 0, "judged": 0}
    for cls in (index_module.UserIndex, index_module.Bm25Index):
        original = cls.scores

        def scores(self, query, _original=original):  # type: ignore[no-untyped-def]
            counts["scans"] += 1
            return _original(self, query)
        monkeypatch.setattr(cls, "scores", scores)
    real_judge = governor_module.admit

    def judge(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["judged"] += 1
        return real_judge(*args, **kwargs)
    monkeypatch.setattr(governor_module, "admit", judge)
    explanation = memory.explain("CS201 什么时候交？", user_id="u", top_k=3)
    monkeypatch.undo()
    assert explanation.route.identifiers == ("CS201",)
    assert all("CS201" in a.record["content"] for a in explanation.admitted)
    return counts


@pytest.mark.parametrize("count", [2_000, 10_000])
def test_a_query_naming_an_identifier_scans_the_index_a_fixed_number_of_times(count, monkeypatch):
    """Whatever the number of same-identifier memories: at most 2 index scans (the lexical pool,
    then one scan that scores every named memory), and one judgement per candidate (n + the
    CS202 memory at most, which the lexical pool may hold)."""
    counts = _count_work(_manager_with(count), monkeypatch)
    assert counts["scans"] <= 2
    assert count <= counts["judged"] <= count + 1


def test_similarity_of_a_named_memory_is_the_stores_own_score():
    """The batch scoring gives each named memory the score ``search`` gives it (0.0 when it shares
    no term with the query), so ``explain`` shows the same numbers as before the change."""
    memory = MemoryManager(store_path=None, audit=False)
    for i in range(60):  # more than the lexical candidate pool (50): some enter only by identifier
        memory.add(Message("user", f"CS201 作业 第{i}周 截止", user_id="u"))
    query = "CS201 作业"
    explanation = memory.explain(query, user_id="u", top_k=3)
    store_scores = {hit.record["record_id"]: hit.score for hit in memory.store.search(query, "u", 1000, 1e-12)}
    assert len(explanation) == 60
    for admission in explanation:
        assert admission.similarity == store_scores.get(admission.record_id, 0.0)


@pytest.mark.parametrize("count", [500, 1_000])
def test_collapsing_rewordings_compares_a_bounded_number_of_pairs(count, monkeypatch):
    """Many admitted memories sharing their digits (the worst case for the rewording check) cost a
    bounded number of comparisons each, never one per pair."""
    from v2_memory.governance import rewording

    calls = {"n": 0}
    real = rewording._close

    def close(a, b):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        return real(a, b)

    monkeypatch.setattr(rewording, "_close", close)
    texts = [f"CS201 topic{i} alpha{i} beta{i} gamma{i}" for i in range(count)]
    with MemoryManager(store_path=None, audit=False, threshold=0.0) as memory:
        for text in texts:
            memory.add(Message("user", text, "u"))
        memory.explain("CS201", "u", top_k=count)
    assert calls["n"] <= rewording.MAX_COMPARED * count
