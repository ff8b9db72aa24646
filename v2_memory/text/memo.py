"""Memoised text analysis: a text is analysed once, and erasure empties every cache.

A read analyses each candidate memory's text — its terms (does it share a content word with the
query?) and its sensitive values (what the read log may show). The same memories come back read
after read, so the same work was done again on every call. Each function decorated here keeps its
recent answers in a bounded least-recently-used cache keyed by the text.

The keys are memory texts, so they are memory too: ``forget_texts()`` empties every cache, and
``MemoryManager.erase_user`` and ``forget`` call it — no erased text stays behind in the process.

    >>> @text_cache(maxsize=2)
    ... def shout(text): return text.upper()
    >>> shout("记忆 memory"), shout.cache_info().currsize
    ('记忆 MEMORY', 1)
    >>> forget_texts(); shout.cache_info().currsize
    0
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

__all__ = ["text_cache", "forget_texts"]

F = TypeVar("F", bound=Callable[..., Any])
_CACHES: list[Any] = []  # every cache made here, for forget_texts()


def text_cache(maxsize: int) -> Callable[[F], F]:
    """Memoise a pure function of hashable text arguments (its answers must be immutable)."""
    def wrap(function: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _CACHES.append(cached)
        return cached  # type: ignore[return-value]
    return wrap


def forget_texts() -> None:
    """Empty every text cache (after an erasure: the keys are the erased texts)."""
    for cache in _CACHES:
        cache.cache_clear()
