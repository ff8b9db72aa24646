"""The semantic layer: the Embedder protocol, exact per-user vector search, the model check, hybrid fusion.

Everything here runs with a deterministic embedder written for the test (no model). The real
model's tests are in ``test_dense.py`` and skip without the ``dense`` extra.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from v2_memory import JsonVectorStore
from v2_memory.retrieval.embedder import (EmbedderError, EmbedderMismatchError, HashingEmbedder, check_embedder, embed,
                                          signature)
from v2_memory.retrieval.hybrid import Fusion, HybridRetriever, fuse
from v2_memory.retrieval.semantic import SemanticIndex


class TopicEmbedder:
    """A fake model that knows synonyms: each text is the unit vector of the topics it mentions."""

    name, dimension = "topics-3", 3
    TOPICS = {"wedding": 0, "married": 0, "marry": 0, "coffee": 1, "latte": 1, "train": 2, "rail": 2}

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, texts):
        self.calls += 1
        vectors = []
        for text in texts:
            v = [0.0] * 3
            for word in text.lower().replace("'", " ").split():
                if word.strip("?.!,") in self.TOPICS:
                    v[self.TOPICS[word.strip("?.!,")]] += 1.0
            vectors.append(v)
        return vectors


def test_an_embedder_is_any_callable_with_a_name_and_a_dimension():
    assert signature(TopicEmbedder()) == {"name": "topics-3", "dimension": 3}
    assert embed(TopicEmbedder(), ["a latte"]) == [[0.0, 1.0, 0.0]]
    with pytest.raises(TypeError):
        signature(lambda texts: texts)  # no name, no dimension


def test_bad_vectors_are_refused_before_anything_is_stored():
    class Broken(TopicEmbedder):
        def __call__(self, texts):
            return [[1.0, math.nan, 0.0] for _ in texts]

    index = SemanticIndex(Broken())
    with pytest.raises(EmbedderError):
        index.add_texts([(1, "coffee")])
    assert len(index) == 0
    with pytest.raises(EmbedderError):
        SemanticIndex(TopicEmbedder()).add_vectors([(1, [1.0, 0.0])])  # wrong dimension


def test_a_changed_model_is_refused_with_a_clear_error():
    recorded = signature(HashingEmbedder(64))
    check_embedder(HashingEmbedder(64), recorded)  # the same model: fine
    check_embedder(HashingEmbedder(64), None)  # nothing recorded yet: fine
    with pytest.raises(EmbedderMismatchError, match="re-embed every record") as caught:
        check_embedder(TopicEmbedder(), recorded)
    assert caught.value.recorded == recorded and caught.value.given == {"name": "topics-3", "dimension": 3}
    with pytest.raises(EmbedderError):
        check_embedder(TopicEmbedder(), {"name": "x"})  # a malformed record


def test_semantic_search_finds_a_synonym_the_words_do_not_share():
    index = SemanticIndex(TopicEmbedder())
    index.add_texts([(1, "My sister's wedding is in Lisbon"), (2, "a latte please"), (3, "the train was late")])
    assert index.search("where is my sister getting married", top_k=1) == [(1.0, 1)]
    assert index.search("coffee", top_k=3, threshold=0.5) == [(1.0, 2)]


def test_search_order_ties_and_removal():
    index = SemanticIndex(TopicEmbedder())
    index.add_vectors([(10, [1, 0, 0]), (11, [0, 1, 0]), (12, [1, 0, 0])])
    assert index.search("wedding", top_k=3) == [(1.0, 10), (1.0, 12), (0.0, 11)]  # ties: insertion order
    assert index.remove(10) and not index.remove(10)
    assert index.search("wedding", top_k=3) == [(1.0, 12), (0.0, 11)]
    assert index.vector(12) == [1.0, 0.0, 0.0] and index.vector(10) is None
    with pytest.raises(ValueError):
        index.add_vectors([(12, [0, 0, 1])])  # one vector per record
    with pytest.raises(ValueError):
        index.search("x", top_k=0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vectors=st.lists(st.lists(st.floats(-1, 1), min_size=3, max_size=3), min_size=1, max_size=20),
       query=st.lists(st.floats(-1, 1), min_size=3, max_size=3), top_k=st.integers(1, 25),
       threshold=st.one_of(st.none(), st.floats(0, 1)))
def test_search_is_exact_brute_force_cosine(vectors, query, top_k, threshold):
    """Every record is compared: the result is the obvious scan's, sorted, to rounding."""
    embedder = TopicEmbedder()
    index = SemanticIndex(embedder)
    index.add_vectors(list(enumerate(vectors)))

    def cosine(a, b):
        na, nb = math.hypot(*a), math.hypot(*b)  # scaled: a 1e-207 component's square would underflow
        return min(max(sum((x / na) * (y / nb) for x, y in zip(a, b)), 0.0), 1.0) if na and nb else 0.0  # na * nb may underflow

    got = index.scores_for_vector(query)
    assert all(got[i] == pytest.approx(cosine(v, query), abs=1e-9) for i, v in enumerate(vectors))
    # search: the same scores, filtered, sorted by score then insertion order, cut to top_k
    expected = sorted(((s, i) for i, s in got.items() if threshold is None or s >= threshold),
                      key=lambda pair: (-pair[0], pair[1]))[:top_k]
    index.embedder = type("Fixed", (TopicEmbedder,), {"__call__": lambda self, texts: [query for _ in texts]})()
    assert index.search("the query", top_k, threshold) == expected


def test_fusion_is_a_calibrated_weighted_sum_by_hand():
    """weight 0.4, floor 0.2: cosine 0.6 → (0.6 - 0.2) / 0.8 = 0.5; hybrid = 0.6 × 0.3 + 0.4 × 0.5 = 0.38."""
    fusion = Fusion(weight=0.4, floor=0.2)
    assert fusion.calibrate(0.6) == pytest.approx(0.5) and fusion.calibrate(0.1) == 0.0 and fusion.calibrate(1.0) == 1.0
    assert fusion.combine(0.3, 0.6) == pytest.approx(0.38)
    hits = fuse({1: 0.3, 2: 0.0}, {1: 0.6, 2: 0.2, 3: 0.6}, [1, 2, 3], fusion, top_k=3)
    assert [(h.record_id, round(h.score, 3), h.lexical, h.cosine) for h in hits] == [
        (1, 0.38, 0.3, 0.6), (3, 0.2, 0.0, 0.6), (2, 0.0, 0.0, 0.2)]
    assert [h.record_id for h in fuse({1: 0.3}, {1: 0.6, 3: 0.6}, [1, 2, 3], fusion, top_k=3, threshold=0.19)] == [1, 3]
    for bad in ({"weight": 1.5}, {"floor": 1.0}, {"weight": math.nan}):
        with pytest.raises(ValueError):
            Fusion(**bad)


def test_thresholds_keep_their_meaning_at_the_ends():
    """All weight on one part gives that part's score exactly: 0.2 means what it meant there."""
    assert Fusion(weight=0.0).combine(0.2, 0.9) == 0.2
    assert Fusion(weight=1.0, floor=0.0).combine(0.9, 0.2) == 0.2


def test_hybrid_retriever_shows_both_parts_and_stays_per_user():
    store = JsonVectorStore(None, scorer="bm25")
    store.add("ann", "user", "My sister's wedding is in Lisbon on September 14.")
    store.add("ann", "user", "I had a latte at noon.")
    store.add("bob", "user", "My sister got married in Rome.")
    embedder = TopicEmbedder()
    retriever = HybridRetriever(store, embedder, Fusion(weight=0.5, floor=0.0))
    hits = retriever.search("where is my sister getting married", "ann", top_k=2)
    assert hits[0].record["content"].startswith("My sister's wedding")
    assert hits[0].lexical > 0 and hits[0].cosine == 1.0 and hits[0].score == pytest.approx(0.5 * hits[0].lexical + 0.5)
    assert all(hit.record["user_id"] == "ann" for hit in hits)  # bob's married sister never appears
    calls = embedder.calls
    retriever.search("coffee", "ann")
    assert embedder.calls == calls + 1  # records are embedded once; only the query is new
    store.add("ann", "user", "The train to Porto leaves at nine.")
    assert retriever.search("rail", "ann", top_k=1)[0].record["content"].startswith("The train")
    retriever.forget("ann", 2)
    assert 2 not in retriever._indexes[(None, "ann")] and 1 in retriever._indexes[(None, "ann")]
    retriever.forget("ann")  # the whole user, as erase_user does
    assert (None, "ann") not in retriever._indexes
