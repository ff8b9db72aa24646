"""Exact vector search for one user: ``SemanticIndex``, the semantic track's index.

Where ``index.py`` finds records by the words they share with a query, this finds them by the
angle between their embeddings (``embedder.py``). It is exact — every one of the user's vectors
is compared with the query, no approximate neighbour graph — because one user's memory is small
(thousands of records, not millions) and exactness keeps every ranking explainable and testable.

    records   dict[int, int]         record_id -> row, in insertion order
    rows      list[list[float]]      row -> the record's unit vector
    ids       list[int]              row -> record_id

A search scores every row by the dot product of unit vectors (their cosine), clamps it to
[0, 1] (an opposite direction is no more relevant than an unrelated one), and returns the
``top_k`` best ``(score, record_id)`` pairs with ``score >= threshold``, score descending, ties
in insertion order. The plain loops below are the reference; with numpy installed (the ``numpy``
extra, or ``dense``) the same sums run on every record at once (``numpy_path.py``: the switch,
and why the results are identical to the bit).

    >>> from v2_memory.retrieval.embedder import HashingEmbedder
    >>> index = SemanticIndex(HashingEmbedder(dimension=64))
    >>> index.add_texts([(1, "coffee with Anna"), (2, "the train to Paris")])
    >>> index.search("Anna's coffee", top_k=2)
    [(1.0, 1), (0.0, 2)]

``remove(record_id)`` forgets one record (an erasure); ``vector(record_id)`` gives the stored
vector back, for a store that persists vectors with its records.
"""
from __future__ import annotations

import heapq
import math
from typing import Any, Iterable, Sequence

from . import numpy_path
from .embedder import Embedder, EmbedderError, embed, signature

__all__ = ["SemanticIndex"]


class SemanticIndex:
    """One user's record vectors and exact cosine search over them."""

    __slots__ = ("embedder", "rows", "ids", "positions", "_columns")

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        signature(embedder)  # a clear TypeError now, not on the first add
        self.rows: list[list[float]] = []
        self.ids: list[int] = []
        self.positions: dict[int, int] = {}  # record_id -> row
        self._columns: numpy_path.Columns | None = None  # the numpy path's copy, made by its first search

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.positions

    def add_texts(self, items: Iterable[tuple[int, str]]) -> None:
        """Embed ``(record_id, text)`` pairs in one call to the embedder and add them."""
        items = list(items)
        vectors = embed(self.embedder, [text for _, text in items])
        self.add_vectors((record_id, vector) for (record_id, _), vector in zip(items, vectors))

    def add_vectors(self, items: Iterable[tuple[int, Sequence[float]]]) -> None:
        """Add ``(record_id, vector)`` pairs (vectors a store kept); each is checked and made unit length."""
        checked = [(self._require_id(record_id), self._unit(vector)) for record_id, vector in items]
        ids = [record_id for record_id, _ in checked]
        if len(set(ids)) != len(ids) or any(record_id in self.positions for record_id in ids):
            raise ValueError("a record_id may have one vector: remove it before adding it again")
        for record_id, vector in checked:
            self.positions[record_id] = len(self.rows)
            self.ids.append(record_id)
            self.rows.append(vector)
        if self._columns is not None:
            self._columns.append(ids, [vector for _, vector in checked])

    def remove(self, record_id: int) -> bool:
        """Forget one record's vector; False if it had none."""
        row = self.positions.pop(record_id, None)
        if row is None:
            return False
        del self.rows[row], self.ids[row]
        for later in self.ids[row:]:
            self.positions[later] -= 1
        self._columns = None  # made again by the next numpy search
        return True

    def vector(self, record_id: int) -> list[float] | None:
        row = self.positions.get(record_id)
        return None if row is None else list(self.rows[row])

    def scores(self, query: str) -> dict[int, float]:
        """record_id -> cosine clamped to [0, 1], for every record of this user."""
        if not self.rows:
            return {}
        return self.scores_for_vector(embed(self.embedder, [query])[0])

    def scores_for_vector(self, vector: Sequence[float]) -> dict[int, float]:
        """The same for a query already embedded (many queries embedded in one call, say)."""
        return dict(zip(self.ids, self._cosines(vector))) if self.rows else {}

    def search(self, query: str, top_k: int = 3, threshold: float | None = None) -> list[tuple[float, int]]:
        """The ``top_k`` best ``(score, record_id)``: score descending, ties in insertion order."""
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise ValueError(f"top_k must be a positive int, got {top_k!r}")
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within [0, 1], got {threshold!r}")
        if not self.rows:
            return []
        scores = self.cosine_array(embed(self.embedder, [query])[0])
        if scores is not None:  # the numpy path: the same scores, ranked the same way
            np = self._columns.np
            best = numpy_path.best_rows(np, scores, np.arange(len(scores)), top_k)
            # The scores that pass the threshold are a prefix of the ranking: cutting after ranking is the same.
            return [(score, self.ids[row]) for score, row in zip(scores[best].tolist(), best.tolist())
                    if threshold is None or score >= threshold]
        scored = [(score, row) for row, score in enumerate(self.scores(query).values())
                  if threshold is None or score >= threshold]
        best = heapq.nsmallest(top_k, scored, key=lambda pair: (-pair[0], pair[1]))
        return [(score, self.ids[row]) for score, row in best]

    def columns(self) -> numpy_path.Columns | None:
        """The vectors as numpy columns when a search takes the numpy path (made at its first use), else None."""
        np = numpy_path.numpy_module(len(self))
        if np is None:
            return None
        if self._columns is None:
            self._columns = numpy_path.Columns(np, self.embedder.dimension)
            self._columns.append(self.ids, self.rows)
        return self._columns

    def cosine_array(self, vector: Sequence[float]) -> Any:
        """The numpy path's cosines, a numpy array in row order; None on the pure path."""
        columns = self.columns()
        return None if columns is None else columns.cosines(self._unit(vector))

    def _cosines(self, query: Sequence[float]) -> list[float]:
        cosines = self.cosine_array(query)
        if cosines is not None:
            return cosines.tolist()
        query = self._unit(query)
        dots = []
        for row in self.rows:
            dot = 0.0
            for a, b in zip(row, query):  # subtle: not sum(), which since Python 3.12 compensates rounding
                dot += a * b
            dots.append(dot)
        return [min(max(dot, 0.0), 1.0) for dot in dots]

    def _unit(self, vector: Sequence[float]) -> list[float]:
        values = [float(x) for x in vector]
        if len(values) != self.embedder.dimension or not all(math.isfinite(x) for x in values):
            raise EmbedderError(f"expected {self.embedder.dimension} finite numbers for {self.embedder.name!r}")
        norm = math.hypot(*values)  # scaled: squares of tiny values (1e-159) would underflow to a wrong norm
        return [x / norm for x in values] if norm else values

    @staticmethod
    def _require_id(record_id: object) -> int:
        if not isinstance(record_id, int) or isinstance(record_id, bool):
            raise TypeError(f"record_id must be an int, got {type(record_id).__name__}")
        return record_id
