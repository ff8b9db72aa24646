"""The semantic track inside the memory: ``MemoryManager(embedder=...)``, hybrid retrieval, governed.

The embedders here are deterministic and tiny. ``ConceptEmbedder`` knows a handful of synonyms
(one axis per concept), which is enough to prove what a lexical scorer cannot do — and that
governance still decides: identifiers, trust and thresholds mean what they meant.
"""
from __future__ import annotations

import math

import pytest

from conftest import FakeClock
from test_storage_contract import CountingEmbedder
from v2_memory import MemoryManager, Message
from v2_memory.retrieval.embedder import EmbedderMismatchError, HashingEmbedder
from v2_memory.retrieval.hybrid import Fusion
from v2_memory.storage.migrate import migrate

CONCEPTS = {"wedding": 0, "married": 0, "marry": 0, "lisbon": 1, "portugal": 1, "coffee": 2, "latte": 2,
            "train": 3, "homework": 4, "作业": 4, "cs201": 4, "cs202": 4}


class ConceptEmbedder:
    """One axis per concept; words it does not know are ignored. CS201 and CS202 are one concept on
    purpose: the embedding cannot tell them apart, the exact layer must."""

    name, dimension = "concepts-5", 5

    def __call__(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimension
            for word in text.lower().replace(".", " ").replace("?", " ").replace("'s", " ").split():
                if word in CONCEPTS:
                    vector[CONCEPTS[word]] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            vectors.append([x / norm for x in vector])
        return vectors


def _memory(**options) -> MemoryManager:
    return MemoryManager(store_path=None, threshold=0.2, clock=FakeClock(), **options)


def test_meaning_without_shared_words_is_admitted_and_explained():
    """"when will they get married" shares no content word with the wedding memory: lexical 0.
    The concept embedder gives the query (1, 0, ...) and the memory (wedding + Lisbon) (1, 1, ...)/√2:
    cosine 0.707, calibrated (0.707 - 0.2) / 0.8 = 0.634, fused 0.5 × 0 + 0.5 × 0.634 = 0.317 ≥ 0.2.
    The latte memory is orthogonal (cosine 0): not even a candidate."""
    query = "when will they get married?"
    with _memory() as lexical:
        lexical.add(Message("user", "My sister's wedding is in Lisbon.", "ann"))
        assert lexical.retrieve(query, "ann") == []
    with _memory(embedder=ConceptEmbedder()) as memory:
        memory.add(Message("user", "My sister's wedding is in Lisbon.", "ann"))
        memory.add(Message("user", "I had a latte at noon.", "ann"))
        hits = memory.retrieve(query, "ann")
        assert [round(h.score, 3) for h in hits] == [0.317] and "wedding" in hits[0].record["content"]
        (admission,) = memory.explain(query, "ann")
        parts = admission.to_dict()["components"]
        assert parts == {"lexical": 0.0, "cosine": 0.707, "semantic": 0.634, "fused": 0.317}
        assert admission.admitted and admission.similarity == pytest.approx(0.5 * 0.0 + 0.5 * admission.components["semantic"])


def test_fused_score_is_the_documented_weighted_sum():
    with _memory(embedder=HashingEmbedder(64)) as memory:
        memory.add(Message("user", "My sister's wedding is in Lisbon on September 14.", "ann"))
        memory.add(Message("user", "the train to Lisbon leaves at nine", "ann"))
        fusion = Fusion()
        for admission in memory.explain("sister wedding Lisbon", "ann"):
            parts = admission.components
            assert parts["semantic"] == pytest.approx(fusion.calibrate(parts["cosine"]))
            assert admission.similarity == pytest.approx(fusion.combine(parts["lexical"], parts["cosine"]))
            assert admission.effective == pytest.approx(admission.similarity * admission.weight)


def test_identifiers_are_decided_by_the_exact_layer_whatever_the_embedding_says():
    with _memory(embedder=ConceptEmbedder()) as memory:
        memory.add(Message("user", "CS202 作业 周三截止", "ann"))
        memory.add(Message("user", "CS201 作业 周五截止", "ann"))
        verdicts = {a.record["content"]: (a.admitted, a.reasons) for a in memory.explain("CS201 作业截止", "ann")}
        assert verdicts["CS201 作业 周五截止"] == (True, ())
        assert verdicts["CS202 作业 周三截止"] == (False, ("identifier_mismatch",))


def test_governance_still_decides_trust_and_the_threshold_keeps_its_meaning():
    with _memory(embedder=ConceptEmbedder()) as memory:
        memory.add(Message("assistant", "Your sister's wedding is in Portugal.", "ann"))  # unverified
        memory.add(Message("user", "I had a latte at noon.", "ann"))
        verdicts = {a.record["role"]: a for a in memory.explain("when will they get married", "ann")}
        assert verdicts["assistant"].reasons == ("unverified_model_output",)
        assert "user" not in verdicts  # no word and no meaning in common: not even a candidate
        assert memory.retrieve("when will they get married", "ann") == []


def test_without_an_embedder_nothing_changes():
    with _memory() as memory:
        memory.add(Message("user", "I had a latte at noon.", "ann"))
        (admission,) = memory.explain("latte", "ann")
        assert "components" not in admission.to_dict() and admission.components is None
        assert memory.semantic is None and memory.storage.vectors.count() == 0
        assert memory.storage.db.meta("embedder") is None


def test_bad_embedder_arguments_are_clear_errors(tmp_path):
    target = tmp_path / "memory_store.json"
    with pytest.raises(TypeError, match="expected an Embedder"):
        MemoryManager(store_path=target, embedder=object())
    with pytest.raises(ValueError, match="rebuild_vectors=True needs an embedder"):
        MemoryManager(store_path=target, rebuild_vectors=True)
    with MemoryManager(store_path=target) as memory:  # the failed opens released the store
        with pytest.raises(ValueError, match="no embedder"):
            memory.rebuild_vectors()


def test_migrate_copies_the_vectors_and_the_models_signature(tmp_path):
    source, target = tmp_path / "memory_store.json", tmp_path / "copy.sqlite3"
    with MemoryManager(store_path=source, embedder=CountingEmbedder()) as memory:
        memory.add(Message("user", "I had a latte at noon.", "ann"))
        memory.add(Message("user", "the train to Lisbon leaves at nine", "bob"))
        before = memory.explain("latte", "ann").to_dict()
    report = migrate(source, target)
    assert report.ok and report.counts["vectors"] == (2, 2)
    embedder = CountingEmbedder()
    with MemoryManager(store_path=target, embedder=embedder) as memory:
        assert memory.explain("latte", "ann").to_dict() == before
    assert embedder.texts == ["latte"]
    with pytest.raises(EmbedderMismatchError):
        MemoryManager(store_path=target, embedder=CountingEmbedder(32))


def test_another_process_adds_and_forgets_are_followed_without_re_embedding(tmp_path):
    target = tmp_path / "shared.sqlite3"
    reader_embedder = CountingEmbedder()
    with MemoryManager(store_path=target, embedder=CountingEmbedder()) as writer, \
            MemoryManager(store_path=target, embedder=reader_embedder) as reader:
        first = writer.add(Message("user", "I had a latte at noon.", "ann")).record_id
        assert [h.record["record_id"] for h in reader.retrieve("latte", "ann")] == [first]
        second = writer.add(Message("user", "another latte at four", "ann")).record_id
        assert {h.record["record_id"] for h in reader.retrieve("latte", "ann")} == {first, second}
        writer.forget("ann", first)
        assert [h.record["record_id"] for h in reader.retrieve("latte", "ann")] == [second]
    assert reader_embedder.texts == ["latte"]  # the query, once; the writer's vectors were read, never recomputed
