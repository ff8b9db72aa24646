"""An exact inverted index for the article's cosine, one per user.

The article's store re-tokenizes every record on every query. Here each record is tokenized once,
when it is added; the index keeps, per user:

    records   list[dict]            position -> record, in insertion order
    norms     array('d')            position -> |d|, the record's count-vector length
    postings  dict[str, int | array('I')] term -> positions, a position repeated once per occurrence;
                                    a term seen once in the user's history keeps a bare int

A query then only touches the postings of its own terms. Repeating positions makes the dot
product a count: for a query term seen ``q`` times, adding its posting ``q`` times adds
``q * count_in_record`` to that record's dot product, exactly the brute-force sum. Scores are
computed with the same expression as ``cosine_similarity``, so they are equal to the last bit.
"""
from __future__ import annotations

import heapq
import sys
from array import array
from collections import Counter
from typing import Any

from ..tokenizer import term_counts, vector_norm

__all__ = ["UserIndex"]


class UserIndex:
    """One user's records and their inverted index."""

    __slots__ = ("records", "norms", "postings")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.norms = array("d")
        self.postings: dict[str, array] = {}

    def add(self, record: dict[str, Any]) -> None:
        """Tokenize ``record["content"]`` once and post each term under the record's position."""
        position = len(self.records)
        counts = term_counts(record["content"])
        self.records.append(record)
        self.norms.append(vector_norm(counts))
        for term, count in counts.items():
            posting = self.postings.get(term)
            if posting is None and count == 1:
                # Most terms occur once in a user's history: a bare position, not an 80-byte array.
                # sys.intern: the same word in 100 users' indexes is stored once.
                self.postings[sys.intern(term)] = position
                continue
            if posting is None:
                posting = self.postings[sys.intern(term)] = array("I")
            elif type(posting) is int:
                posting = self.postings[term] = array("I", [posting])  # its second occurrence
            posting.extend([position] * count)

    def search(
        self, query_counts: Counter[str], query_norm: float, top_k: int, threshold: float | None
    ) -> list[tuple[float, dict[str, Any]]]:
        """The ``top_k`` best ``(score, record)`` pairs: score descending, ties in insertion order."""
        # Step 1: dot products, touching only records that share a term with the query.
        dots: Counter[int] = Counter()
        for term, query_count in query_counts.items():
            posting = self.postings.get(term)
            if posting is None:
                continue
            if type(posting) is int:  # subtle: a single occurrence, stored bare (see add)
                dots[posting] += query_count
            else:
                for _ in range(query_count):
                    dots.update(posting)
        # Step 2: cosine, written exactly as cosine_similarity writes it; keep what passes.
        scored = []
        for position, dot in dots.items():
            score = min(dot / (query_norm * self.norms[position]), 1.0)
            if threshold is None or score >= threshold:
                scored.append((score, position))
        best = heapq.nsmallest(top_k, scored, key=lambda pair: (-pair[0], pair[1]))
        # Step 3: brute force also ranks records sharing no term (score 0.0), after all others.
        if len(best) < top_k and (threshold is None or threshold <= 0.0):
            for position in range(len(self.records)):
                if len(best) >= top_k:
                    break
                if position not in dots:
                    best.append((0.0, position))
        return [(score, self.records[position]) for score, position in best]
