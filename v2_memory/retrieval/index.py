"""Exact inverted indexes, one per user: the article's cosine (``UserIndex``) and BM25 (``Bm25Index``).

The article's store re-tokenizes every record on every query. Here each record is tokenized once,
when it is added (its ``indexed_text``: the content, plus any ``index_text`` it carries); the
index keeps, per user:

    records   list[dict]            position -> record, in insertion order
    norms     array('d')            position -> |d|, the record's count-vector length (cosine)
    lengths   array('d')            position -> dl, the record's number of terms (BM25: its index
                                    text's terms count ``context_weight`` each)
    postings  dict[str, int | array('I')] term -> positions, a position repeated once per occurrence;
                                    a term seen once in the user's history keeps a bare int (BM25
                                    keeps two: one for the content, one for the index text)

A query then only touches the postings of its own terms. Repeating positions makes a term's
frequency a count: for the cosine, adding a posting ``q`` times adds ``q * count_in_record`` to that
record's dot product, exactly the brute-force sum; for BM25, ``Counter(posting)`` is each record's
``tf`` and its size is the term's ``df``. Scores are computed with the same expressions, in the same
order, as the brute-force references (``cosine_similarity``, ``Bm25Scorer.score_records``), so they
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

__all__ = ["UserIndex", "Bm25Index", "indexed_text", "record_fields"]

Posting = int | array  # a bare position (one occurrence), or positions repeated per occurrence
Pairs = list[tuple[float, dict[str, Any]]]


def record_fields(record: dict[str, Any]) -> tuple[str, str | None]:
    """``(content, index_text or None)``: the two fields BM25 weighs apart (see ``scorers.py``)."""
    extra = record.get("index_text")
    return record["content"], extra if isinstance(extra, str) and extra else None


def indexed_text(record: dict[str, Any]) -> str:
    """The text a record is found by: its content, plus its ``index_text`` when it has one.

    ``index_text`` is extra text indexed with the record (a conversation turn's neighbours, say);
    a hit still returns the record itself. The newline keeps the two apart for every tokenizer.
    """
    content, extra = record_fields(record)
    return f"{content}\n{extra}" if extra else content


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
    """One user's records, their inverted indexes (content, index text) and their BM25 statistics."""

    __slots__ = ("scorer", "records", "lengths", "total_length", "postings", "context_postings")

    def __init__(self, scorer: Bm25Scorer) -> None:
        self.scorer = scorer
        self.records: list[dict[str, Any]] = []
        self.lengths = array("d")  # position -> dl, content and index text blended (scorer.blend)
        self.total_length = 0.0  # sum of dl, added in insertion order as the reference's sum() adds
        self.postings: dict[str, Posting] = {}  # term -> positions, from the content
        self.context_postings: dict[str, Posting] = {}  # term -> positions, from the index text

    def add(self, record: dict[str, Any]) -> None:
        """Analyse the record's two fields once; post their terms; update the user's statistics."""
        content, extra = record_fields(record)
        terms = self.scorer.analyze(content)
        context = self.scorer.analyze(extra) if extra else []
        position = len(self.records)
        _post(self.postings, Counter(terms), position)
        _post(self.context_postings, Counter(context), position)
        length = self.scorer.blend(len(terms), len(context))
        self.records.append(record)
        self.lengths.append(length)
        self.total_length += length

    def _frequencies(self, term: str) -> dict[int, tuple[int, int]]:
        """position -> (tf in content, tf in index text) for one term; its size is the term's df."""
        found: dict[int, tuple[int, int]] = {}
        for field, postings in enumerate((self.postings, self.context_postings)):
            posting = postings.get(term)
            if posting is None:
                continue
            counts = {posting: 1} if type(posting) is int else Counter(posting)  # subtle: a bare int (see _post)
            for position, tf in counts.items():
                pair = found.get(position, (0, 0))
                found[position] = (tf, pair[1]) if field == 0 else (pair[0], tf)
        return found

    def search(self, query: str, top_k: int, threshold: float | None) -> Pairs:
        """The ``top_k`` best ``(score, record)`` pairs: score descending, ties in insertion order."""
        return _best(self.scores(query), self.records, top_k, threshold)

    def scores(self, query: str) -> dict[int, float]:
        """position -> normalised BM25, for the records holding a query term (the others score 0.0)."""
        scorer, documents = self.scorer, len(self.records)
        # Step 1: per query term the user ever wrote, its weight (from this user's df) and its part
        # in each record holding it; terms no record holds add nothing, not even to the bound.
        sums: dict[int, float] = {}  # position -> bm25 so far, in query-term order (as the reference adds)
        bound = 0.0
        # K = constant + slope * dl (no record holds a term when total_length is 0: nothing to score)
        constant, slope = scorer.length_factors(documents, self.total_length) if self.total_length else (0.0, 0.0)
        for term, query_count in Counter(scorer.analyze(query)).items():
            frequencies = self._frequencies(term)
            if not frequencies:
                continue
            weight = scorer.term_weight(query_count, documents, len(frequencies))
            bound += weight
            for position, (in_content, in_context) in frequencies.items():
                tf = scorer.blend(in_content, in_context)
                sums[position] = sums.get(position, 0.0) + weight * tf / (tf + (constant + slope * self.lengths[position]))
        # Step 2: normalise by the bound (see scorers.py), written as the reference writes it.
        return {position: min(total / bound, 1.0) for position, total in sums.items()}
