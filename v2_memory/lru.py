"""A cache that keeps its most recently used entries, up to a limit: what "caches evict" means here.

Per-user caches (a user's records and index, their vectors, their window and summary) grow with
every user a process touches; a long-lived worker that sees every user of a large store would hold
all of them. An ``LruCache`` keeps the newest ``limit`` entries and forgets the least recently used
one when a new one arrives; a forgotten user is read back from storage on next use.

    >>> cache = LruCache(2)
    >>> cache["ann"], cache["bob"] = 1, 2
    >>> cache.get("ann")       # ann is used: bob is now the least recent
    1
    >>> cache["cy"] = 3        # over the limit: bob goes
    >>> sorted(cache)
    ['ann', 'cy']
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Hashable, Iterator, TypeVar

__all__ = ["LruCache", "DEFAULT_CACHE_USERS", "check_cache_size"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_CACHE_USERS = 256  # users a process keeps cached per cache (about 1 MB per 1,000 records each)


def check_cache_size(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"a cache size must be a whole number of users >= 1, got {limit!r}")
    return limit


class LruCache(Generic[K, V]):
    """A mapping of at most ``limit`` entries; reading an entry (``get``) counts as using it."""

    def __init__(self, limit: int = DEFAULT_CACHE_USERS) -> None:
        self.limit = check_cache_size(limit)
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, default: V | None = None) -> V | None:
        if key not in self._items:
            return default
        self._items.move_to_end(key)
        return self._items[key]

    def __setitem__(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def pop(self, key: K, default: V | None = None) -> V | None:
        return self._items.pop(key, default)

    def clear(self) -> None:
        self._items.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
