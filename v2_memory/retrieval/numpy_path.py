"""The numpy path: the semantic track's arithmetic on arrays, and the switch that chooses it.

``semantic.py`` scores a user's records one at a time in plain Python, and ``hybrid.py`` fuses
the two scores one record at a time; those loops are the reference. This module does the same
floating-point operations in the same order, but on every record at once: each step adds one
dimension's products to every record's running dot product, then clamps, calibrates and fuses
whole arrays. The two paths therefore agree to the bit — same hits, same scores, ties in
insertion order — and the tests hold them to it. Which path runs:

    "auto"    the default: numpy if it imports (``pip install -e ".[numpy]"``) and the user has
              at least ``AUTO_MIN_ROWS`` vectors (for fewer, the loop is as fast); else pure Python
    "pure"    the reference loops, installed numpy or not
    "numpy"   numpy for every user; ``NumpyUnavailableError`` if it is not installed

``choose_path("pure")`` sets it for this process (the tests run both paths that way); until then
the environment variable ``V2_MEMORY_SEMANTIC_PATH`` decides, or "auto". numpy is imported by the
first search that uses it, never by ``import v2_memory``.

    >>> choose_path("pure")
    >>> current_path()
    'pure'
    >>> choose_path(None)  # back to V2_MEMORY_SEMANTIC_PATH, or "auto"

Why not the matrix product ``matrix @ query``: BLAS sums each row in an order of its own that
changes with the row's position, so two identical records come out a last bit apart and their
tie no longer falls in insertion order. Adding one dimension at a time costs more than BLAS but
keeps the reference's order, and still runs in a small fraction of the loop's time.
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from ..errors import V2MemoryError, install_hint

__all__ = ["PATHS", "ENV_VAR", "NumpyUnavailableError", "choose_path", "current_path", "numpy_installed",
           "numpy_module", "Columns", "fuse_arrays", "best_rows"]

PATHS = ("auto", "pure", "numpy")
ENV_VAR = "V2_MEMORY_SEMANTIC_PATH"
AUTO_MIN_ROWS = 32  # "auto" leaves smaller users to the loop: under about 20 vectors it is faster
_chosen: list[str | None] = [None]  # choose_path's choice; None: the environment variable decides
_numpy: list[Any] = []  # the numpy module, or None when it does not import; empty until first asked


class NumpyUnavailableError(V2MemoryError, ImportError):
    """The numpy path was asked for, and numpy is not installed."""


def choose_path(path: str | None) -> None:
    """Use ``path`` ("auto", "pure" or "numpy") for every search in this process; None undoes it."""
    if path is not None:
        _check(path, "choose_path")
    if path == "numpy":
        _require_numpy("choose_path('numpy')")
    _chosen[0] = path


def current_path(rows: int = AUTO_MIN_ROWS) -> str:
    """The path a search over ``rows`` vectors takes now: "pure" or "numpy" ("auto" resolved)."""
    return "numpy" if numpy_module(rows) is not None else "pure"


def numpy_installed() -> bool:
    """Whether numpy imports here (whichever path is chosen)."""
    return _import_numpy() is not None


def numpy_module(rows: int = AUTO_MIN_ROWS) -> Any:
    """numpy when a search over ``rows`` vectors takes the numpy path, else None: what search code branches on."""
    path = _chosen[0] if _chosen[0] is not None else _check(os.environ.get(ENV_VAR) or "auto", ENV_VAR)
    if path == "pure" or (path == "auto" and rows < AUTO_MIN_ROWS):
        return None
    if path == "numpy":
        return _require_numpy(f"{ENV_VAR}=numpy")
    return _import_numpy()


def _check(path: str, where: str) -> str:
    if path not in PATHS:
        raise ValueError(f"{where}: the semantic path is one of {', '.join(PATHS)}, got {path!r}")
    return path


def _import_numpy() -> Any:
    if not _numpy:
        try:
            import numpy
        except ImportError:
            numpy = None
        _numpy.append(numpy)
    return _numpy[0]


def _require_numpy(asked_by: str) -> Any:
    numpy = _import_numpy()
    if numpy is None:
        raise NumpyUnavailableError(f"{asked_by} asks for the numpy path, but numpy is not installed: "
                                    f"{install_hint('numpy', 'numpy')}")
    return numpy


class Columns:
    """One user's unit vectors for the numpy path, a row of ``values`` per dimension.

        values   float64 (dimension, room)   values[d, row]: dimension d of record ``row``
        ids      int64 (room,)               row -> record_id
        count    rows in use; the columns past it are room to grow

    Dimension-major so that each step of the dot product reads one contiguous row.
    """

    def __init__(self, numpy: Any, dimension: int) -> None:
        self.np, self.count = numpy, 0
        self.values = numpy.zeros((dimension, 0))
        self.ids = numpy.zeros(0, dtype=numpy.int64)

    def append(self, ids: Sequence[int], rows: Sequence[Sequence[float]]) -> None:
        """Add records at the end; the room grows by a quarter when it runs out, so appends cost little."""
        np, end = self.np, self.count + len(ids)
        if end > self.values.shape[1]:
            room = end + end // 4 + 16  # a quarter more: vectors stay cached per user
            values, record_ids = np.zeros((self.values.shape[0], room)), np.zeros(room, dtype=np.int64)
            values[:, :self.count], record_ids[:self.count] = self.values[:, :self.count], self.ids[:self.count]
            self.values, self.ids = values, record_ids
        if ids:
            self.values[:, self.count:end] = np.asarray(rows, dtype=np.float64).T
            self.ids[self.count:end] = ids
        self.count = end

    def cosines(self, query: Sequence[float]) -> Any:
        """Every row's dot product with the unit ``query``, clamped to [0, 1] (``SemanticIndex._cosines``)."""
        np, values = self.np, self.values[:, :self.count]
        total = np.zeros(self.count)
        step = max(8, 16384 // max(self.count, 1))  # dimensions per block: about 128 KB of products
        for start in range(0, len(query), step):
            products = values[start:start + step] * np.asarray(query[start:start + step])[:, None]
            for dimension in products:  # subtle: one dimension at a time, the order the pure loop adds in
                total += dimension
        return np.clip(total, 0.0, 1.0)


def fuse_arrays(columns: Columns, cosines: Any, positions: Mapping[int, int], lexical: Mapping[int, float],
                weight: float, floor: float, threshold: float | None) -> tuple[Any, ...]:
    """``hybrid.rank``'s candidates on arrays: ``(fused, record_ids, lexical, cosine, semantic)`` (a
    ``HybridHit``'s fields), one entry per candidate, in row order. ``cosines`` are the rows'
    (``Columns.cosines``); a candidate was found by words or has a calibrated cosine above 0; one
    whose fused score is under ``threshold`` is dropped."""
    np, rows = columns.np, columns.count
    # Each lexical hit's row; a record found by words that has no vector yet goes after the rows, cosine 0.
    where = np.fromiter([positions.get(record_id, -1) for record_id in lexical], np.int64, len(lexical))
    extra = np.asarray(list(lexical), dtype=np.int64)[where < 0]
    where[where < 0] = np.arange(rows, rows + len(extra))
    record_ids = np.concatenate([columns.ids[:rows], extra])
    lex, found = np.zeros(rows + len(extra)), np.zeros(rows + len(extra), dtype=bool)
    lex[where], found[where] = np.fromiter(lexical.values(), np.float64, len(lexical)), True
    cos = np.concatenate([cosines, np.zeros(len(extra))])
    # Fusion.calibrate and Fusion.combine, the same operations in the same order.
    semantic = np.clip((cos - floor) / (1.0 - floor), 0.0, 1.0)
    fused = (1.0 - weight) * lex + weight * semantic
    keep = found | (semantic > 0)
    if threshold is not None:
        keep &= fused >= threshold
    return tuple(part[keep] for part in (fused, record_ids, lex, cos, semantic))


def best_rows(numpy: Any, scores: Any, keys: Any, top_k: int) -> Any:
    """Indices of the ``top_k`` highest ``scores``, best first, equal scores by ascending ``keys``.

    ``partition`` finds the k-th best score without sorting everything; every score equal to it
    is kept, so the tie-break by key decides which of them make the cut, as a full sort would.
    """
    if len(scores) > top_k:
        kth = numpy.partition(scores, len(scores) - top_k)[len(scores) - top_k]
        picked = numpy.flatnonzero(scores >= kth)
    else:
        picked = numpy.arange(len(scores))
    order = numpy.lexsort((keys[picked], -scores[picked]))[:top_k]  # the last key sorts first
    return picked[order]
