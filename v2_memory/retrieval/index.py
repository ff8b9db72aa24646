"""Exact inverted indexes, one per user: the article's cosine (``UserIndex``) and BM25 (``Bm25Index``).

The article's store re-tokenizes every record on every query. Here each record is tokenized once,
when it is added (its ``indexed_text``: the content, plus any ``index_text`` it carries); the
index keeps, per user:

    records   list[dict]            position -> record, in insertion order
    norms     array('d')            position -> |d|, the record's count-vector length (cosine)
    lengths   array('I')            position -> dl, the record's number of terms (BM25)
    postings  dict[str, int | array('I')] term -> positions, a position repeated once per occurrence;
                                    a term seen once in the user's history keeps a bare int

A query then only touches the postings of its own terms. Repeating positions makes a term's
frequency a count: for the cosine, adding a posting ``q`` times adds ``q * count_in_record`` to that
record's dot product, exactly the brute-force sum; for BM25, ``Counter(posting)`` is each record's
``tf`` and its size is the term's ``df``. Scores are computed with the same expressions, in the same
order, as the brute-force references (``cosine_similarity``, ``Bm25Scorer.score_texts``), so they
are equal to the last bit, and so are the rankings (ties in insertion order).

The BM25 statistics — record count, document frequencies, total length — are this user's alone,
kept up to date on every add: another user's records cannot move these scores.
"""
from __future__ import annotations

import heapq
import sys
from array import array
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..text.tokenizer import term_counts, vector_norm

if TYPE_CHECKING:
    from .scorers import Bm25Scorer

__all__ = ["UserIndex", "Bm25Index", "indexed_text"]

Posting = int | array  # a bare position (one occurrence), or positions repeated per occurrence
Pairs = list[tuple[float, dict[str, Any]]]


def indexed_text(record: dict[str, Any]) -> str:
    """The text a record is found by: its content, plus its ``index_text`` when it has one.

    ``index_text`` is extra text indexed with the record (a conversation turn's neighbours, say);
    a hit still returns the record itself. The newline keeps the two apart for every tokenizer.
    """
    extra = record.get("index_text")
    return f"{record['content']}\n{extra}" if isinstance(extra, str) and extra else record["content"]


def _post(postings: dict[str, Posting], counts: Counter[str], position: int) -> None:
    """Post each term of one record under its position, once per occurrence."""
    for term, count in counts.items():
        posting = postings.get(term)
        if posting is None and count == 1:
            # Most terms occur once in a user's history: a bare position, not an 80-byte array.
            # sys.intern: the same word in 100 users' indexes is stored once.
            postings[sys.intern(term)] = position
            continue
        if posting is None:
            posting = postings[sys.intern(term)] = array("I")
        elif type(posting) is int:
            posting = postings[term] = array("I", [posting])  # its second occurrence
        posting.extend([position] * count)


def _best(scores: dict[int, float], records: list, top_k: int, threshold: float | None) -> Pairs:
    """The ``top_k`` records with ``score >= threshold``: score descending, ties in insertion order.

    ``scores`` holds the records that share a term with the query. Brute force also ranks the
    others (score 0.0), after all of them: a blind search (no threshold, or 0) fills up with them
    in insertion order.
    """
    passing = scores.items() if threshold is None else [item for item in scores.items() if item[1] >= threshold]
    best = heapq.nsmallest(top_k, passing, key=lambda item: (-item[1], item[0]))  # item: (position, score)
    if len(best) < top_k and (threshold is None or threshold <= 0.0):
        for position in range(len(records)):
            if len(best) >= top_k:
                break
            if position not in scores:
                best.append((position, 0.0))
    return [(score, records[position]) for position, score in best]


class UserIndex:
    """One user's records and their inverted index, for the article's cosine."""

    __slots__ = ("records", "norms", "postings")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.norms = array("d")
        self.postings: dict[str, Posting] = {}

    def add(self, record: dict[str, Any]) -> None:
        """Tokenize the record's indexed text once and post each term under its position."""
        counts = term_counts(indexed_text(record))
        _post(self.postings, counts, len(self.records))
        self.records.append(record)
        self.norms.append(vector_norm(counts))

    def search(self, query: str, top_k: int, threshold: float | None) -> Pairs:
        """The ``top_k`` best ``(score, record)`` pairs: score descending, ties in insertion order."""
        return _best(self.scores(query), self.records, top_k, threshold)

    def scores(self, query: str) -> dict[int, float]:
        """position -> cosine, for the records sharing a term with ``query`` (the others score 0.0)."""
        query_counts = term_counts(query)
        query_norm = vector_norm(query_counts)
        # Step 1: dot products, touching only records that share a term with the query.
        dots: Counter[int] = Counter()
        for term, query_count in query_counts.items():
            posting = self.postings.get(term)
            if posting is None:
                continue
            if type(posting) is int:  # subtle: a single occurrence, stored bare (see _post)
                dots[posting] += query_count
            else:
                for _ in range(query_count):
                    dots.update(posting)
        # Step 2: cosine, written exactly as cosine_similarity writes it.
        return {position: min(dot / (query_norm * self.norms[position]), 1.0) for position, dot in dots.items()}


class Bm25Index:
    """One user's records, their inverted index and their BM25 statistics."""

    __slots__ = ("scorer", "records", "lengths", "total_length", "postings")

    def __init__(self, scorer: Bm25Scorer) -> None:
        self.scorer = scorer
        self.records: list[dict[str, Any]] = []
        self.lengths = array("I")  # position -> dl
        self.total_length = 0  # sum of dl: avgdl = total_length / len(records), exact in integers
        self.postings: dict[str, Posting] = {}

    def add(self, record: dict[str, Any]) -> None:
        """Analyse the record's indexed text once; post its terms; update the user's statistics."""
        terms = self.scorer.analyze(indexed_text(record))
        _post(self.postings, Counter(terms), len(self.records))
        self.records.append(record)
        self.lengths.append(len(terms))
        self.total_length += len(terms)

    def _frequencies(self, term: str) -> dict[int, int]:
        """position -> tf for one term; its size is the term's df."""
        posting = self.postings.get(term)
        if posting is None:
            return {}
        return {posting: 1} if type(posting) is int else Counter(posting)

    def search(self, query: str, top_k: int, threshold: float | None) -> Pairs:
        """The ``top_k`` best ``(score, record)`` pairs: score descending, ties in insertion order."""
        return _best(self.scores(query), self.records, top_k, threshold)

    def scores(self, query: str) -> dict[int, float]:
        """position -> normalised BM25, for the records holding a query term (the others score 0.0)."""
        scorer, documents = self.scorer, len(self.records)
        # Step 1: per query term, its weight (from this user's df) and its part in each record holding it.
        sums: dict[int, float] = {}  # position -> bm25 so far, in query-term order (as the reference adds)
        bound = 0.0
        # K = constant + slope * dl (no record holds a term when total_length is 0: nothing to score)
        constant, slope = scorer.length_factors(documents, self.total_length) if self.total_length else (0.0, 0.0)
        for term, query_count in Counter(scorer.analyze(query)).items():
            frequencies = self._frequencies(term)
            weight = scorer.term_weight(query_count, documents, len(frequencies))
            bound += weight
            for position, tf in frequencies.items():
                sums[position] = sums.get(position, 0.0) + weight * tf / (tf + (constant + slope * self.lengths[position]))
        # Step 2: normalise by the bound (see scorers.py), written as the reference writes it.
        return {position: min(total / bound, 1.0) for position, total in sums.items()}
