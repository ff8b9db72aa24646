"""Argument checks shared by every public entry point.

Bad input must fail loudly *before* anything changes, with a message that names the argument.
"""
from __future__ import annotations

import math

# Personal-data detection is text analysis (layer 1, below the values): argument checks may use it.
from .text.sensitive import check_not_personal

__all__ = ["require_text", "require_id", "require_scope", "check_top_k", "check_threshold"]


def require_text(name: str, value: object) -> str:
    """Return ``value`` if it is a non-blank string, else raise TypeError / ValueError."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate would fail later, half-way through a write
        raise ValueError(f"{name} is not valid Unicode text ({exc.reason} at {exc.start})") from exc
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
