"""Scorers: how a store measures a record's relevance to a query, chosen per store.

A scorer is three things that must agree: how text becomes terms, the score of a record for a
query, and an inverted index that returns exactly what a scan with that score returns. Two ship:

    ArticleScorer  "article"  the article's TF cosine over ``tokenize`` (``tokenizer.py``): the
                              default, which reproduces the article's table (0.354, 0.277, ...)
    Bm25Scorer     "bm25"     BM25 over the cleaned terms of ``analyze`` (``analyzer.py``): rare
                              terms weigh more, repeats saturate, long records do not win by length

    >>> from v2_memory import JsonVectorStore
    >>> store = JsonVectorStore(None, scorer="bm25")       # or scorer=Bm25Scorer(k1=1.5, b=0.5)
    >>> _ = store.add("mel", "user", "I painted a sunrise last week.")
    >>> _ = store.add("mel", "user", "The kids loved the museum!")
    >>> [record["content"] for _, record in store.search("When did Mel paint a sunrise?", "mel", top_k=1)]
    ['I painted a sunrise last week.']

**BM25, per user.** For a query term ``t`` seen ``qtf`` times in the query, and a record ``d`` of
``dl`` terms that holds it ``tf`` times, among the ``N`` records of *the same user* (``df`` of them
hold ``t``; their mean length is ``avgdl``)::

    idf(t)       = ln(1 + (N - df + 0.5) / (df + 0.5))            always > 0
    weight(t)    = qtf * idf(t) * (k1 + 1)
    part(t, d)   = weight(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
    bm25(q, d)   = sum of part(t, d) over the query's distinct terms, in query order

The statistics (``N``, ``df``, ``avgdl``) are the user's own: global statistics would let one
user's writes move another user's scores — a side channel across the isolation boundary.

**Normalised to [0, 1].** ``tf / (tf + K)`` is below 1 for every ``tf`` and every length ``K > 0``,
so ``part(t, d) < weight(t)`` and ``bound(q) = sum of weight(t)`` is an upper bound no record
reaches (with ``k1 = 0``, ``K = 0``: a record holding every query term reaches it, 1.0). The score
is ``min(bm25(q, d) / bound(q), 1.0)`` — the ``min`` only guards against rounding — the share of
the best conceivable score, where each query term counts by its rarity. A record of average length that holds every query term
once scores ``1 / (k1 + 1) = 0.4545`` (k1 = 1.2); thresholds keep one meaning across queries.
Query terms the user never wrote still count in the bound: a query about something this memory
does not hold scores low everywhere.

Worked example (k1 = 1.2, b = 0.75). One user's three records, as cleaned terms: "I love coffee"
→ [lov, coffee]; "Coffee, coffee!" → [coffee, coffee]; "tea time" → [tea, time]. N = 3, avgdl = 2,
so K = 1.2 for every record. Query "coffee time?" → [coffee, time]:
idf(coffee) = ln(1 + 1.5/2.5) = 0.4700, idf(time) = ln(1 + 2.5/1.5) = 0.9808,
bound = 2.2 × (0.4700 + 0.9808) = 3.1918. "tea time": 2.2 × 0.9808 × 1/2.2 = 0.9808 → 0.307;
"Coffee, coffee!": 2.2 × 0.4700 × 2/3.2 = 0.6463 → 0.202; "I love coffee": 0.4700 → 0.147.

    >>> [round(s, 3) for s in Bm25Scorer().score_texts("coffee time?", ["I love coffee", "Coffee, coffee!", "tea time"])]
    [0.147, 0.202, 0.307]

Each scorer also has ``score_texts``: the slow, obvious scan over one user's texts that the tests
hold the index against (``rank`` sorts it like a search).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ..text.analyzer import analyze
from ..text.tokenizer import cosine_similarity, tokenize
from .index import Bm25Index, UserIndex, indexed_text

__all__ = ["Scorer", "ArticleScorer", "Bm25Scorer", "resolve_scorer", "indexed_text", "rank", "SCORERS"]


@runtime_checkable
class Scorer(Protocol):
    """What a store needs from a scorer: a name, a fresh per-user index, and the reference scan."""

    name: ClassVar[str]

    def new_index(self) -> Any:
        """An empty index with ``add(record)`` and ``search(query, top_k, threshold)``."""

    def score_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        """The score of each of one user's texts for ``query``, computed the slow, obvious way."""

    def to_dict(self) -> dict[str, Any]:
        """The scorer and its parameters, for reports."""


@dataclass(frozen=True)
class ArticleScorer:
    """The article's term-frequency cosine over ``tokenize``: the default, exactly as before."""

    name: ClassVar[str] = "article"

    def new_index(self) -> Any:
        return UserIndex()

    def score_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        query_tokens = tokenize(query)
        return [cosine_similarity(query_tokens, tokenize(text)) for text in texts]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name}


@dataclass(frozen=True)
class Bm25Scorer:
    """BM25 over ``analyze``'s cleaned terms, per-user statistics, normalised to [0, 1].

    ``k1`` sets how fast repeats of a term saturate (0: a term counts once however often it
    occurs); ``b`` how much a record's length is held against it (0: not at all, 1: fully).
    """

    k1: float = 1.2
    b: float = 0.75
    name: ClassVar[str] = "bm25"

    def __post_init__(self) -> None:
        for field, value, high in (("k1", self.k1, math.inf), ("b", self.b, 1.0)):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"{field} must be a number, got {type(value).__name__}")
            if not 0.0 <= value <= high or (field == "k1" and value == math.inf):
                raise ValueError(f"{field} must be within [0, {high:g}], got {value}")

    @staticmethod
    def analyze(text: str) -> list[str]:
        return analyze(text)

    def new_index(self) -> Any:
        return Bm25Index(self)

    def term_weight(self, query_count: int, documents: int, frequency: int) -> float:
        """``qtf * idf * (k1 + 1)``: what a query term adds to the bound, and at most to a record."""
        idf = math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))
        return query_count * idf * (self.k1 + 1.0)

    def length_factors(self, documents: int, total_length: int) -> tuple[float, float]:
        """``(k1 * (1 - b), k1 * b / avgdl)``: a record of ``dl`` terms has ``K = first + second * dl``."""
        return self.k1 * (1.0 - self.b), self.k1 * self.b * documents / total_length

    def score_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        """The reference: analyse every text, count the statistics, score each text term by term."""
        documents = [Counter(self.analyze(text)) for text in texts]
        total_length = sum(sum(counts.values()) for counts in documents)
        frequency = Counter(term for counts in documents for term in counts)  # df: records holding the term
        weights = [(term, self.term_weight(count, len(documents), frequency[term]))
                   for term, count in Counter(self.analyze(query)).items()]
        bound = sum(weight for _, weight in weights)
        constant, slope = self.length_factors(len(documents), total_length) if total_length else (0.0, 0.0)
        scores = []
        for counts in documents:
            score = 0.0
            for term, weight in weights:
                tf = counts.get(term)
                if tf:
                    score += weight * tf / (tf + (constant + slope * sum(counts.values())))
            scores.append(min(score / bound, 1.0) if score else 0.0)
        return scores

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "k1": self.k1, "b": self.b}


SCORERS = {"article": ArticleScorer, "bm25": Bm25Scorer}


def resolve_scorer(scorer: str | Scorer | None) -> Scorer:
    """A scorer from a name (``"article"``, ``"bm25"``), an instance, or None (the article's)."""
    if scorer is None:
        return ArticleScorer()
    if isinstance(scorer, str):
        if scorer not in SCORERS:
            raise ValueError(f"unknown scorer {scorer!r}; expected one of {sorted(SCORERS)} or a Scorer instance")
        return SCORERS[scorer]()
    if not isinstance(scorer, Scorer):
        raise TypeError(f"scorer must be a name or a Scorer, got {type(scorer).__name__}")
    return scorer


def rank(scorer: Scorer, query: str, records: Sequence[dict[str, Any]], top_k: int,
         threshold: float | None = None) -> list[tuple[float, dict[str, Any]]]:
    """The brute-force search over ONE user's records: what the index must return, exactly.

    Score every record's ``indexed_text``, keep ``score >= threshold`` (all when None), sort by
    score descending then insertion order, cut to ``top_k``.
    """
    scores = scorer.score_texts(query, [indexed_text(record) for record in records])
    kept = [(score, order) for order, score in enumerate(scores) if threshold is None or score >= threshold]
    kept.sort(key=lambda pair: (-pair[0], pair[1]))
    return [(score, records[order]) for score, order in kept[:top_k]]
