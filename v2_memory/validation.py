"""Argument checks shared by every public entry point.

Bad input must fail loudly *before* anything changes, with a message that names the argument.
"""
from __future__ import annotations

import math

# Personal-data detection is text analysis (layer 1, below the values): argument checks may use it.
from .text.sensitive import check_not_personal

__all__ = ["require_text", "require_id", "require_scope", "check_top_k", "check_threshold", "check_record_id",
           "check_query", "check_read", "check_json", "check_options", "MAX_RECORD_ID", "MAX_JSON_DEPTH"]

MAX_RECORD_ID = 2**63 - 1  # the largest id any backend stores (a signed 64-bit integer)
MAX_JSON_DEPTH = 32  # how deep metadata may nest: deeper is a mistake (or an attack), not data


def require_text(name: str, value: object) -> str:
    """Return ``value`` if it is a non-blank string, else raise TypeError / ValueError."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    require_valid_unicode(name, value)  # a lone surrogate would fail later, half-way through a write
    return value


def require_id(name: str, value: object) -> str:
    """An id (user, tenant, session, task): non-blank text that holds no personal data.

    Ids are written as they are to the store, the ledger and every log line, so a phone number or
    an e-mail address used as a user id would sit raw on disk. It is refused with a ValueError
    naming the field and the kind of data, never the value.
    """
    require_text(name, value)
    check_not_personal(name, value)
    return value  # type: ignore[return-value]


def require_scope(user_id: object, tenant_id: object = None) -> tuple[str | None, str]:
    """The boundary of a read or write: ``(tenant_id, user_id)``.

    An empty or missing user id fails closed — it never means "all users".
    """
    require_id("user_id", user_id)
    if tenant_id is not None:
        require_id("tenant_id", tenant_id)
    return (tenant_id, user_id)  # type: ignore[return-value]


def check_record_id(record_id: object) -> int:
    """A record id as the stores hand them out: a whole number from 1 to ``MAX_RECORD_ID``."""
    if not isinstance(record_id, int) or isinstance(record_id, bool):
        raise TypeError(f"record_id must be an int, got {type(record_id).__name__}")
    if not 1 <= record_id <= MAX_RECORD_ID:
        raise ValueError("record_id must be a whole number from 1 to 2**63 - 1 (ids start at 1)")
    return record_id


def check_query(query: object) -> str:
    """A query: any string (an empty one asks for nothing), but valid Unicode text."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no store or log could hold it
        raise ValueError(f"query is not valid Unicode text ({exc.reason} at {exc.start})") from exc
    return query


def check_json(name: str, value: object) -> None:
    """Refuse what JSON cannot hold, before anything is written: a value of another type, a key
    that is not text, NaN or an infinity, nesting deeper than ``MAX_JSON_DEPTH``, a value that
    contains itself. One pass with an explicit stack: no recursion to run out of.

    >>> check_json("metadata", {"tags": ["a", {"b": float("nan")}]})
    Traceback (most recent call last):
    ...
    ValueError: metadata['tags'][1]['b'] is NaN or infinite: JSON cannot hold it
    """
    stack: list[tuple[object, str, int, frozenset[int]]] = [(value, name, 0, frozenset())]
    while stack:
        item, path, depth, holders = stack.pop()
        if isinstance(item, (str, bool, int)) or item is None:
            if isinstance(item, str):
                require_valid_unicode(path, item)
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"{path} is NaN or infinite: JSON cannot hold it")
            continue
        if not isinstance(item, (dict, list, tuple)) and not hasattr(item, "items"):
            raise TypeError(f"{path} is a {type(item).__name__}: JSON holds text, numbers, true/false, "
                            "null, lists and mappings")
        if id(item) in holders:
            raise ValueError(f"{path} contains itself: JSON cannot hold a value that refers to itself")
        if depth >= MAX_JSON_DEPTH:
            raise ValueError(f"{path} nests deeper than {MAX_JSON_DEPTH} levels")
        inner = holders | {id(item)}
        if isinstance(item, (list, tuple)):
            stack.extend((child, _within(path, str(i)), depth + 1, inner) for i, child in enumerate(item))
            continue
        for key, child in item.items():  # type: ignore[union-attr]
            if not isinstance(key, str):
                raise TypeError(f"{path} has a key of type {type(key).__name__}: JSON keys are text")
            require_valid_unicode(f"{path} key", key)
            stack.append((child, _within(path, repr(key if len(key) <= 24 else key[:20] + "…")), depth + 1, inner))


def _within(path: str, step: str) -> str:
    """``path[step]``, the middle cut when it grows long (an error names where, briefly)."""
    full = f"{path}[{step}]"
    return full if len(full) <= 100 else full[:40] + "…" + full[-50:]


def require_valid_unicode(name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{name} is not valid Unicode text ({exc.reason} at {exc.start})") from exc


def check_options(store: object, scorer: object, create: object, rebuild_vectors: object, embedder: object) -> None:
    """The manager's options that only make sense together, checked before anything opens."""
    if store is not None and scorer is not None:
        raise ValueError("pass scorer= to the store you plug in, not to the manager")
    if not isinstance(create, bool):
        raise TypeError(f"create must be True or False, got {create!r}")
    if rebuild_vectors and embedder is None:
        raise ValueError("rebuild_vectors=True needs an embedder= to re-embed the records with")


def check_read(query: object, top_k: object, *, session_id: object, task_id: object, domain: object,
               domains: tuple[str, ...]) -> None:
    """A read's arguments besides its scope: the query, ``top_k``, a known domain (or None), and
    session and task ids (written to the read log, so never personal data)."""
    check_query(query)
    check_top_k(top_k)
    if domain is not None and domain not in domains:
        raise ValueError(f"domain must be one of {domains} or None, got {domain!r}")
    for name, value in (("session_id", session_id), ("task_id", task_id)):
        if value is not None:
            require_id(name, value)


def check_top_k(top_k: object) -> int:
    """``top_k`` must be an int >= 1 (``True`` is not a number of results)."""
    if not isinstance(top_k, int) or isinstance(top_k, bool):
        raise TypeError(f"top_k must be an int, got {type(top_k).__name__}")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    return top_k


def check_threshold(threshold: object, *, allow_none: bool = True) -> float | None:
    """A similarity threshold: a real number in [0, 1] (NaN would silently admit nothing)."""
    if threshold is None and allow_none:
        return None
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise TypeError(f"threshold must be a number, got {type(threshold).__name__}")
    if math.isnan(threshold) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within [0, 1], got {threshold}")
    return float(threshold)
