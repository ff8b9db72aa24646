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
    >>> len(shout("长" * 5_000)), shout.cache_info().currsize  # longer than max_chars: computed, not kept
    (5000, 0)
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

__all__ = ["text_cache", "forget_texts"]

F = TypeVar("F", bound=Callable[..., Any])
_CACHES: list[Any] = []  # every cache made here, for forget_texts()


def text_cache(maxsize: int, max_chars: int = 4_000) -> Callable[[F], F]:
    """Memoise a pure function of hashable text arguments (its answers must be immutable).

    A call with a text longer than ``max_chars`` is computed, not kept: the cache holds at most
    ``maxsize × max_chars`` characters however long the messages it sees."""
    def wrap(function: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _CACHES.append(cached)

        @functools.wraps(function)
        def call(*args: Any) -> Any:
            for arg in args:
                if isinstance(arg, str) and len(arg) > max_chars:
                    return function(*args)
            return cached(*args)

        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


def forget_texts() -> None:
    """Empty every text cache (after an erasure: the keys are the erased texts)."""
    for cache in _CACHES:
        cache.cache_clear()
