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

**BM25, per user.** A record has two fields: its ``content`` and the optional ``index_text``
(the words it should also be found by, a turn's neighbours say), which count ``context_weight``
times as much. For a query term ``t`` seen ``qtf`` times in the query, and a record ``d`` that
holds it ``tf_c`` times in its content and ``tf_x`` times in its index text (``dl_c`` and
``dl_x`` terms in all), among the ``N`` records of *the same user* (``df`` of them hold ``t``;
their mean length is ``avgdl``)::

    tf(t, d)     = tf_c + context_weight * tf_x          dl(d) = dl_c + context_weight * dl_x
    idf(t)       = ln(1 + (N - df + 0.5) / (df + 0.5))            always > 0
    weight(t)    = qtf * idf(t) * (k1 + 1)
    part(t, d)   = weight(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
    bm25(q, d)   = sum of part(t, d) over the query's distinct terms, in query order

The statistics (``N``, ``df``, ``avgdl``) are the user's own: global statistics would let one
user's writes move another user's scores — a side channel across the isolation boundary.

**Normalised to [0, 1], against what the query can match.** ``tf / (tf + K)`` is below 1 for
every ``tf`` and every length ``K > 0``, so ``part(t, d) < weight(t)``, and ``bound(q)`` — the sum
of ``weight(t)`` over the query terms *this user has ever written* (``df > 0``) — is an upper bound
no record reaches (with ``k1 = 0``, ``K = 0``: a record holding every such term reaches it, 1.0).
The score is ``min(bm25(q, d) / bound(q), 1.0)`` — the ``min`` only guards against rounding — the
share of the best score this user's memory could give, each query term counting by its rarity. A
record of average length that holds every matchable query term once scores ``1 / (k1 + 1) =
0.4545`` (k1 = 1.2); thresholds keep one meaning across queries.

Why leave out the words the user never wrote: a natural question is mostly words no memory holds
("where is my sister getting *married*" against "My sister's wedding is in Lisbon"). Counting
them in the bound punished every memory for the question's phrasing, not for what it lacks: no
record *could* hold them. A query that shares nothing with the user still scores 0.0 everywhere;
one that shares only question words shares nothing (``analyze`` drops them).

Worked example (k1 = 1.2, b = 0.75). One user's three records, as cleaned terms: "I love coffee"
→ [love, coffee]; "Coffee, coffee!" → [coffee, coffee]; "tea time" → [tea, time]. N = 3, avgdl = 2,
so K = 1.2 for every record. Query "coffee time?" → [coffee, time]:
idf(coffee) = ln(1 + 1.5/2.5) = 0.4700, idf(time) = ln(1 + 2.5/1.5) = 0.9808,
bound = 2.2 × (0.4700 + 0.9808) = 3.1918. "tea time": 2.2 × 0.9808 × 1/2.2 = 0.9808 → 0.307;
"Coffee, coffee!": 2.2 × 0.4700 × 2/3.2 = 0.6463 → 0.202; "I love coffee": 0.4700 → 0.147.
Asking "coffee time on Mars?" gives the same three scores: no record could hold "mars".

    >>> [round(s, 3) for s in Bm25Scorer().score_texts("coffee time?", ["I love coffee", "Coffee, coffee!", "tea time"])]
    [0.147, 0.202, 0.307]

Each scorer also has ``score_records``: the slow, obvious scan over one user's records that the
tests hold the index against (``rank`` sorts it like a search); ``score_texts`` is the same for
bare texts.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ..text.analyzer import analyze
from ..text.tokenizer import cosine_similarity, tokenize
from .index import Bm25Index, UserIndex, indexed_text, record_fields

__all__ = ["Scorer", "ArticleScorer", "Bm25Scorer", "resolve_scorer", "indexed_text", "record_fields", "rank", "SCORERS"]


@runtime_checkable
class Scorer(Protocol):
    """What a store needs from a scorer: a name, a fresh per-user index, and the reference scan."""

    name: ClassVar[str]

    def new_index(self) -> Any:
        """An empty index with ``add(record)``, ``scores(query)`` and ``search(query, top_k, threshold)``."""

    def score_records(self, query: str, records: Sequence[dict[str, Any]]) -> list[float]:
        """The score of each of one user's records for ``query``, computed the slow, obvious way."""

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

    def score_records(self, query: str, records: Sequence[dict[str, Any]]) -> list[float]:
        """The article has one field: content and index text are read as one text."""
        return self.score_texts(query, [indexed_text(record) for record in records])

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name}


@dataclass(frozen=True)
class Bm25Scorer:
    """BM25 over ``analyze``'s cleaned terms, per-user statistics, normalised to [0, 1].

    ``k1`` sets how fast repeats of a term saturate (0: a term counts once however often it
    occurs); ``b`` how much a record's length is held against it (0: not at all, 1: fully);
    ``context_weight`` how much a term of the record's ``index_text`` counts against one of its
    content (1: the same; the default 0.5 was chosen on LoCoMo, see ``evaluation/locomo.py``).
    """

    k1: float = 1.2
    b: float = 0.75
    context_weight: float = 0.5
    name: ClassVar[str] = "bm25"

    def __post_init__(self) -> None:
        for field, value, low, high in (("k1", self.k1, 0.0, math.inf), ("b", self.b, 0.0, 1.0),
                                        ("context_weight", self.context_weight, 0.0, 1.0)):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"{field} must be a number, got {type(value).__name__}")
            if not low <= value <= high or value == math.inf or (field == "context_weight" and value == 0.0):
                interval = "(0, 1]" if field == "context_weight" else f"[0, {high:g}]"
                raise ValueError(f"{field} must be within {interval}, got {value}")

    @staticmethod
    def analyze(text: str) -> list[str]:
        return analyze(text)

    def new_index(self) -> Any:
        return Bm25Index(self)

    def term_weight(self, query_count: int, documents: int, frequency: int) -> float:
        """``qtf * idf * (k1 + 1)``: what a query term adds to the bound, and at most to a record."""
        idf = math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))
        return query_count * idf * (self.k1 + 1.0)

    def blend(self, in_content: int, in_context: int) -> float:
        """A term frequency (or a length) over both fields: ``content + context_weight * context``."""
        return in_content + self.context_weight * in_context

    def length_factors(self, documents: int, total_length: float) -> tuple[float, float]:
        """``(k1 * (1 - b), k1 * b / avgdl)``: a record of ``dl`` terms has ``K = first + second * dl``."""
        return self.k1 * (1.0 - self.b), self.k1 * self.b * documents / total_length

    def score_texts(self, query: str, texts: Sequence[str]) -> list[float]:
        """The reference for bare texts: each text is a record's content, without index text."""
        return self.score_records(query, [{"content": text} for text in texts])

    def score_records(self, query: str, records: Sequence[dict[str, Any]]) -> list[float]:
        """The reference: analyse every record, count the statistics, score each record term by term."""
        fields = [(Counter(self.analyze(content)), Counter(self.analyze(extra)) if extra else Counter())
                  for content, extra in map(record_fields, records)]
        lengths = [self.blend(sum(content.values()), sum(extra.values())) for content, extra in fields]
        total_length = 0.0
        for length in lengths:  # added one by one, as the index adds them (sum() may compensate rounding)
            total_length += length
        frequency = Counter(term for content, extra in fields for term in content.keys() | extra.keys())  # df
        # The bound counts only the query terms this user ever wrote (df > 0): see the module docstring.
        weights = [(term, self.term_weight(count, len(fields), frequency[term]))
                   for term, count in Counter(self.analyze(query)).items() if frequency[term]]
        bound = sum(weight for _, weight in weights)
        constant, slope = self.length_factors(len(fields), total_length) if total_length else (0.0, 0.0)
        scores = []
        for (content, extra), length in zip(fields, lengths):
            score = 0.0
            for term, weight in weights:
                tf = self.blend(content.get(term, 0), extra.get(term, 0))
                if tf:
                    score += weight * tf / (tf + (constant + slope * length))
            scores.append(min(score / bound, 1.0) if score else 0.0)
        return scores

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "k1": self.k1, "b": self.b, "context_weight": self.context_weight}


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

    Score every record (``score_records``), keep ``score >= threshold`` (all when None), sort by
    score descending then insertion order, cut to ``top_k``.
    """
    scores = scorer.score_records(query, records)
    kept = [(score, order) for order, score in enumerate(scores) if threshold is None or score >= threshold]
    kept.sort(key=lambda pair: (-pair[0], pair[1]))
    return [(score, records[order]) for score, order in kept[:top_k]]
