"""Memoised text analysis: a text is analysed once, the caches stay bounded, and erasure empties them.

A read analyses each candidate memory's text — its terms (does it share a content word with the
query?), its sensitive values (what the read log may show), whether it tells a passing happening.
The same memories come back read after read, so the same work was done again on every call.
Two kinds of cache keep the answers:

- ``text_cache``, process-wide, keyed by the text, for what is read again whoever asks (queries,
  new messages, words). Each keeps at most ``maxsize`` answers *and* ``max_total`` characters of
  text, the least recently used going first: however long the messages, its size has a bound in
  bytes, not only in entries.
- ``UserMemo``, per user: the readings of that user's stored memories, kept for the
  ``cache_users`` most recently used users and evicted with them, like the user's records and
  index. A worker that reads every user of a large store stays flat; a user read again finds
  every reading still there.

The keys are memory texts, so they are memory too: ``forget_texts()`` empties every cache of
both kinds, and ``MemoryManager.erase_user`` and ``forget`` call it — no erased text stays behind
in the process.

    >>> @text_cache(maxsize=2)
    ... def shout(text): return text.upper()
    >>> shout("记忆 memory"), shout.cache_info().currsize
    ('记忆 MEMORY', 1)
    >>> forget_texts(); shout.cache_info().currsize
    0
    >>> len(shout("长" * 5_000)), shout.cache_info().currsize  # longer than max_chars: computed, not kept
    (5000, 0)
    >>> memo = UserMemo(users=1)
    >>> memo.reading(("t", "ann"), "shout", "hi", shout), memo.reading(("t", "bob"), "shout", "yo", shout)
    ('HI', 'YO')
    >>> memo.users()                     # one user kept: ann, the least recently used, went
    [('t', 'bob')]
"""
from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable, NamedTuple, TypeVar

from ..lru import DEFAULT_CACHE_USERS, LruCache

__all__ = ["text_cache", "forget_texts", "UserMemo", "UserReadings", "CacheInfo", "MAX_TOTAL_CHARS"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

MAX_TOTAL_CHARS = 262_144  # characters of text one process-wide cache keeps at most (with their answers)
_CACHES: list[Any] = []  # every process-wide cache made here, for forget_texts()
_USER_MEMOS: weakref.WeakSet[UserMemo] = weakref.WeakSet()  # every live per-user memo, likewise


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int
    chars: int  # characters of the texts kept


class _TextMemo:
    """A least-recently-used cache of ``function``'s answers, bounded by entries and by characters."""

    def __init__(self, function: Callable[..., Any], maxsize: int, max_chars: int, max_total: int) -> None:
        self.function, self.maxsize, self.max_chars, self.max_total = function, maxsize, max_chars, max_total
        self._answers: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()  # args -> (answer, characters)
        self._chars = self._hits = self._misses = 0
        self._generation = 0  # moves at every clear: an answer computed across one is not kept
        self._lock = threading.Lock()

    def __call__(self, *args: Any) -> Any:
        with self._lock:
            kept = self._answers.get(args)
            if kept is not None:
                self._answers.move_to_end(args)
                self._hits += 1
                return kept[0]
            self._misses += 1
            generation = self._generation
        answer = self.function(*args)
        size = sum(len(arg) for arg in args if isinstance(arg, str))
        if size > self.max_chars:
            return answer  # a long text is computed, not kept
        with self._lock:
            # subtle: an erasure's clear may have come while this answer was computed; its text is
            # then one the erasure removed, and must not come back into the cache.
            if generation == self._generation and args not in self._answers:
                self._answers[args] = (answer, size)
                self._chars += size
                while len(self._answers) > self.maxsize or self._chars > self.max_total:
                    self._chars -= self._answers.popitem(last=False)[1][1]
        return answer

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.maxsize, len(self._answers), self._chars)

    def cache_clear(self) -> None:
        with self._lock:
            self._answers.clear()
            self._chars = self._hits = self._misses = 0
            self._generation += 1


def text_cache(maxsize: int, max_chars: int = 4_000, max_total: int = MAX_TOTAL_CHARS) -> Callable[[F], F]:
    """Memoise a pure function of hashable text arguments (its answers must be immutable).

    A call with more than ``max_chars`` characters of text is computed, not kept; the cache keeps
    at most ``maxsize`` answers and ``max_total`` characters of text (the oldest go first)."""
    def wrap(function: F) -> F:
        memo = _TextMemo(function, maxsize, max_chars, max_total)
        _CACHES.append(memo)

        @functools.wraps(function)
        def call(*args: Any) -> Any:
            return memo(*args)

        call.cache_info = memo.cache_info  # type: ignore[attr-defined]
        call.cache_clear = memo.cache_clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


class UserMemo:
    """Readings of stored memories' texts, per user: ``reading(scope, kind, text, read)`` is
    ``read(text)``, computed once while the user stays among the ``users`` most recently used.

    A user's readings grow with what of the user is read (at most a few per memory), as the
    user's cached records do; ``forget_texts()`` empties it."""

    def __init__(self, users: int = DEFAULT_CACHE_USERS) -> None:
        self._users: LruCache[Hashable, dict[tuple[str, str], Any]] = LruCache(users)
        self._generation = 0  # moves at every clear, as in the text caches
        self._lock = threading.Lock()
        _USER_MEMOS.add(self)

    def reading(self, scope: Hashable, kind: str, text: str, read: Callable[[str], T]) -> T:
        key = (kind, text)
        with self._lock:
            readings = self._users.get(scope)
            if readings is None:
                readings = self._users[scope] = {}
            elif key in readings:
                return readings[key]
            generation = self._generation
        answer = read(text)
        with self._lock:
            if generation == self._generation:
                readings[key] = answer
        return answer

    def of(self, scope: Hashable) -> UserReadings:
        """One user's readings for a stretch of work (a read): the user is looked up (and marked
        recently used) once, and each reading after that is a dictionary lookup."""
        with self._lock:
            readings = self._users.get(scope)
            if readings is None:
                readings = self._users[scope] = {}
            return UserReadings(self, scope, readings, self._generation)

    def users(self) -> list[Hashable]:
        """The users whose readings are kept, least recently used first."""
        with self._lock:
            return list(self._users)

    def cache_clear(self) -> None:
        with self._lock:
            self._generation += 1
            for scope in list(self._users):  # emptied too: a UserReadings still holding one finds nothing
                readings = self._users.pop(scope)
                if readings is not None:
                    readings.clear()
            self._users.clear()


class UserReadings:
    """``UserMemo.of``'s answer: ``reading(kind, text, read)`` as ``UserMemo.reading`` for one user,
    a dictionary lookup when the answer is kept. After a clear (an erasure) it asks the memo again,
    so no reading of an erased text is answered from the dictionary it held."""

    __slots__ = ("_memo", "_scope", "_readings", "_generation")

    def __init__(self, memo: UserMemo, scope: Hashable, readings: dict[tuple[str, str], Any], generation: int) -> None:
        self._memo, self._scope, self._readings, self._generation = memo, scope, readings, generation

    def reading(self, kind: str, text: str, read: Callable[[str], T]) -> T:
        if self._memo._generation == self._generation:
            found = self._readings.get((kind, text), _MISSING)
            if found is not _MISSING:
                return found  # type: ignore[no-any-return]
        return self._memo.reading(self._scope, kind, text, read)


_MISSING = object()


def forget_texts() -> None:
    """Empty every text cache, process-wide and per user (after an erasure: the keys are the erased texts)."""
    for cache in _CACHES:
        cache.cache_clear()
    for memo in list(_USER_MEMOS):
        memo.cache_clear()
