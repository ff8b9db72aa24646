"""Hybrid retrieval: the lexical score and the semantic score fused into one, each kept for explanation.

BM25 finds the memory that shares the question's rare words; an embedding finds the one that means
the same with other words ("getting married" / "wedding"). Neither alone finds both. ``Fusion``
is a **calibrated weighted sum**::

    semantic(d)  = clamp((cosine(q, d) - floor) / (1 - floor), 0, 1)
    hybrid(d)    = (1 - weight) * lexical(d) + weight * semantic(d)

``lexical`` is the store's scorer (BM25, already in [0, 1], see ``scorers.py``). The raw cosine of
sentence embeddings is not on that scale: unrelated sentences sit around 0.0–0.3, not at 0, so the
``floor`` maps "unrelated" to 0 and the rest onto [0, 1]. Both parts then read alike, and so does
their weighted mean: a threshold of 0.2 keeps its meaning — a fifth of the way from nothing in
common to the same — and a memory strong on only one part needs to be strong there. We chose a
weighted sum over reciprocal-rank fusion because RRF's scores are ranks (1/(60 + r)), which a
threshold cannot read: it would admit the top of every list, relevant or not.

``weight`` and ``floor`` were chosen on LoCoMo by leave-one-conversation-out (``evaluation/locomo.py``).

    >>> fusion = Fusion(weight=0.5, floor=0.2)
    >>> hit = fuse({7: 0.30}, {7: 0.60}, [7], fusion, top_k=1)[0]
    >>> hit.record_id, round(hit.lexical, 3), round(hit.cosine, 3), round(hit.semantic, 3), round(hit.score, 3)
    (7, 0.3, 0.6, 0.5, 0.4)

Identifiers are not decided here: CS201 against CS202 is the exact layer's call (governance's
identifier table), whatever either score says; this module only ranks.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from . import numpy_path
from .embedder import Embedder
from .semantic import SemanticIndex

__all__ = ["Fusion", "HybridHit", "fuse", "rank", "HybridRetriever"]


@dataclass(frozen=True)
class Fusion:
    """How the two scores meet: ``weight`` is the semantic share, ``floor`` the cosine that means nothing."""

    weight: float = 0.5
    floor: float = 0.2

    def __post_init__(self) -> None:
        for field, value, high in (("weight", self.weight, 1.0), ("floor", self.floor, 0.99)):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"{field} must be a number, got {type(value).__name__}")
            if not (math.isfinite(value) and 0.0 <= value <= high):
                raise ValueError(f"{field} must be within [0, {high:g}], got {value}")

    def calibrate(self, cosine: float) -> float:
        """A cosine on the lexical scale: ``floor`` and below is 0, 1 stays 1."""
        return min(max((cosine - self.floor) / (1.0 - self.floor), 0.0), 1.0)

    def combine(self, lexical: float, cosine: float) -> float:
        return (1.0 - self.weight) * lexical + self.weight * self.calibrate(cosine)

    def to_dict(self) -> dict[str, Any]:
        return {"weight": self.weight, "floor": self.floor}


@dataclass(frozen=True)
class HybridHit:
    """One fused result, with both parts: what ``explain`` shows."""

    score: float  # the fused score, in [0, 1]
    record_id: int
    lexical: float  # the store scorer's score
    cosine: float  # the raw embedding cosine (clamped to [0, 1])
    semantic: float  # the cosine, calibrated (``Fusion.calibrate``)
    record: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "record_id": self.record_id, "lexical": self.lexical, "cosine": self.cosine,
                "semantic": self.semantic}

    def parts(self) -> dict[str, float]:
        """What ``explain`` shows of it: ``{lexical, cosine, semantic, fused}``."""
        return {"lexical": self.lexical, "cosine": self.cosine, "semantic": self.semantic, "fused": self.score}


def fuse(lexical: Mapping[int, float], cosines: Mapping[int, float], order: Sequence[int], fusion: Fusion,
         top_k: int, threshold: float | None = None) -> list[HybridHit]:
    """Fuse two score maps over the records in ``order`` (insertion order: it breaks ties).

    A record missing from a map scores 0.0 there. Returns the ``top_k`` best with
    ``score >= threshold``, score descending, ties in insertion order.
    """
    hits = []
    for position, record_id in enumerate(order):
        lex, cos = lexical.get(record_id, 0.0), cosines.get(record_id, 0.0)
        score = fusion.combine(lex, cos)
        if threshold is None or score >= threshold:
            hits.append((position, HybridHit(score, record_id, lex, cos, fusion.calibrate(cos))))
    best = heapq.nsmallest(top_k, hits, key=lambda pair: (-pair[1].score, pair[0]))
    return [hit for _, hit in best]


def rank(lexical: Mapping[int, float], index: SemanticIndex, query: Sequence[float] | None, fusion: Fusion,
         top_k: int, threshold: float | None = None) -> tuple[list[HybridHit], Callable[[], dict[int, dict]]]:
    """One user's fused ``top_k`` and, when asked, every candidate's parts: ``SemanticStore.search``'s ranking.

    ``lexical`` holds the records found by words; ``query`` is the embedded query (None: no cosines).
    A candidate is a record found by words or whose calibrated cosine is above 0; the ones with
    ``score >= threshold`` are ranked, score descending, ties by record id (insertion order).
    """
    cosines = index.cosine_array(query) if query is not None and len(index) else None
    if cosines is None:  # the reference: one record at a time
        cosines = index.scores_for_vector(query) if query is not None else {}
        order = sorted(set(lexical) | {rid for rid, cos in cosines.items() if fusion.calibrate(cos) > 0})
        fused = fuse(lexical, cosines, order, fusion, len(order) or 1, threshold)
        return fused[:top_k], lambda: {hit.record_id: hit.parts() for hit in fused}
    # The numpy path: the same operations on arrays; every candidate's hit is made only if explain asks.
    columns = index.columns()
    arrays = numpy_path.fuse_arrays(columns, cosines, index.positions, lexical, fusion.weight, fusion.floor, threshold)
    best = numpy_path.best_rows(columns.np, arrays[0], arrays[1], top_k)  # by fused score, then record id
    return _hits(part[best] for part in arrays), lambda: {hit.record_id: hit.parts() for hit in _hits(arrays)}


def _hits(arrays: Any) -> list[HybridHit]:
    """``HybridHit``s from arrays in its field order (score, record_id, lexical, cosine, semantic)."""
    return [HybridHit(*fields) for fields in zip(*(part.tolist() for part in arrays))]


class HybridRetriever:
    """A lexical store and one ``SemanticIndex`` per user, searched together.

    ``store`` is anything with ``records(user_id, tenant_id=)`` and ``search(query, user_id, top_k,
    tenant_id=)`` (``JsonVectorStore``). Each user's vectors are embedded on that user's first
    search, then kept up to date: records added since are embedded on the next search.
    """

    def __init__(self, store: Any, embedder: Embedder, fusion: Fusion = Fusion(), *, embed_index_text: bool = False):
        self.store, self.embedder, self.fusion = store, embedder, fusion
        self.embed_index_text = embed_index_text
        self._indexes: dict[tuple[str | None, str], SemanticIndex] = {}  # (tenant_id, user_id) -> vectors

    def semantic_index(self, user_id: str, tenant_id: str | None = None) -> SemanticIndex:
        """This user's vectors, embedding the records that have none yet."""
        index = self._indexes.setdefault((tenant_id, user_id), SemanticIndex(self.embedder))
        missing = [record for record in self.store.records(user_id, tenant_id=tenant_id)
                   if record["record_id"] not in index]
        if missing:
            index.add_texts((record["record_id"], self._text(record)) for record in missing)
        return index

    def forget(self, user_id: str, record_id: int | None = None, tenant_id: str | None = None) -> None:
        """Drop one record's vector, or (``record_id`` None) all of a user's: call it with every erasure."""
        if record_id is None:
            self._indexes.pop((tenant_id, user_id), None)
        elif (tenant_id, user_id) in self._indexes:
            self._indexes[(tenant_id, user_id)].remove(record_id)

    def search(self, query: str, user_id: str, top_k: int = 3, threshold: float | None = None,
               *, tenant_id: str | None = None) -> list[HybridHit]:
        """The fused ``top_k``; every hit carries its record and both component scores."""
        records = self.store.records(user_id, tenant_id=tenant_id)
        if not records:
            return []
        index = self.semantic_index(user_id, tenant_id)
        lexical = {hit[1]["record_id"]: hit[0]
                   for hit in self.store.search(query, user_id, top_k=len(records), tenant_id=tenant_id)}
        by_id = {record["record_id"]: record for record in records}
        hits = fuse(lexical, index.scores(query), list(by_id), self.fusion, top_k, threshold)
        return [HybridHit(h.score, h.record_id, h.lexical, h.cosine, h.semantic, by_id[h.record_id]) for h in hits]

    def _text(self, record: dict[str, Any]) -> str:
        extra = record.get("index_text") if self.embed_index_text else None
        return f"{record['content']}\n{extra}" if isinstance(extra, str) and extra else record["content"]
