"""The per-user track cache: each scope's recent window, summary, sessions and tasks, as this
process holds them between calls, kept in step with storage.

    storage ──load: first use, or after another process committed──► cache
    cache   ──save: at the end of each change (a batch: once, at its end)──► storage

A change runs in ``changing(scope)``: one storage transaction that saves the scope's tracks when
it ends; if anything fails, the scope is dropped and read back from storage on next use, so the
cache never shows what storage rolled back. At most ``cache_users`` scopes are held; the least
recently used beyond that are dropped (storage keeps them). The window and the summary are the
article's tracks (``window.py``, ``summarizer.py``); this module only decides when they are read
and written. Sessions and tasks are governance's state (``governance/state.py``), handed in.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Hashable, Iterator, Protocol

from ..messages import Message, SessionInfo, TaskInfo
from ..text.sensitive import find_sensitive, redact
from .summarizer import Summary, SummaryTrack
from .window import RecentWindow

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

__all__ = ["ScopeTracks", "TrackCache", "record_message"]

Scope = tuple  # (tenant_id or None, user_id)


@dataclass(frozen=True)
class ScopeTracks:
    """One scope's short-term tracks, as stored."""

    window: list[tuple[int | None, Message]]
    summary: Summary
    sessions: list[SessionInfo]
    tasks: list[TaskInfo]


class TrackStorage(Protocol):
    """What the cache needs of storage (``storage/contract.py``'s ``Storage`` is one)."""

    def transaction(self) -> AbstractContextManager[Any]: ...
    def changed_elsewhere(self) -> bool: ...
    def load_tracks(self, scope: Scope) -> ScopeTracks: ...
    def save_tracks(self, scope: Scope, tracks: ScopeTracks) -> None: ...
    def forget_tracks(self, scope: Scope) -> None: ...


class ScopeState(Protocol):
    """What the cache needs of the session and task state (``governance/state.py``)."""

    def load(self, scope: Hashable, sessions: list[SessionInfo], tasks: list[TaskInfo]) -> None: ...
    def sessions(self, scope: Hashable) -> list[SessionInfo]: ...
    def tasks(self, scope: Hashable) -> list[TaskInfo]: ...


class TrackCache:
    """The window, summary and state of the scopes this process uses, saved with every change."""

    def __init__(self, window: RecentWindow, summaries: SummaryTrack, state: ScopeState, storage: TrackStorage,
                 cache_users: int) -> None:
        self.window, self.summaries, self.state, self.storage = window, summaries, state, storage
        self.cache_users = cache_users
        # scope -> None, least recently used first: the scopes whose tracks match storage
        self._fresh: dict[Scope, None] = {}
        self._unsaved: dict[Scope, None] | None = None  # in a batch: the scopes saved at its end
        # scope -> (ids shown, fold): a summary refolded for a read that may not see all it covers
        self.refolded: dict[Scope, tuple[tuple, Summary]] = {}

    @property
    def in_batch(self) -> bool:
        return self._unsaved is not None

    def unsaved(self) -> list[Scope]:
        """The scopes a batch changed and will save when it ends."""
        return list(self._unsaved or ())

    def ensure(self, scope: Scope) -> None:
        """Make the scope's tracks current: read them from storage the first time, and again
        whenever another process (or another manager on the same store) has committed since."""
        if self.storage.changed_elsewhere():  # a batch's unsaved tracks are the truth: they stay
            self.drop([s for s in self._fresh if s not in (self._unsaved or ())])
        if scope in self._fresh:
            self._fresh[scope] = self._fresh.pop(scope)  # now the most recently used
            return
        tracks = self.storage.load_tracks(scope)
        self.window.load(scope, tracks.window)
        self.summaries.load(scope, tracks.summary)
        self.state.load(scope, tracks.sessions, tracks.tasks)
        self._fresh[scope] = None
        # Over the bound: forget the least recently used scopes (never a batch's unsaved ones).
        excess = len(self._fresh) - self.cache_users
        if excess > 0:
            self.drop([s for s in self._fresh if s != scope and s not in (self._unsaved or ())][:excess])

    @contextmanager
    def changing(self, scope: Scope) -> Iterator[None]:
        """One transaction that also saves the scope's tracks; if anything fails, the transaction
        rolls back and the scope is read back from storage on next use."""
        try:
            with self.storage.transaction():
                self.ensure(scope)
                yield
                if self._unsaved is None:
                    self._save(scope)
                else:
                    self._unsaved[scope] = None  # saved once, when the batch ends
        except BaseException:
            self.drop([scope])
            raise

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Changes inside are saved once per scope, at the end, in the block's transaction; if the
        block raises, every cached scope is dropped (storage rolled all of it back)."""
        if self._unsaved is not None:
            raise RuntimeError("memory.batch() blocks do not nest")
        self._unsaved = {}
        try:
            with self.storage.transaction():
                yield
                for scope in self._unsaved:
                    self._save(scope)
        except BaseException:
            self.drop(list(self._fresh))
            raise
        finally:
            self._unsaved = None

    def drop(self, scopes: list[Scope]) -> None:
        """Forget what this process holds of these scopes' tracks; storage keeps them."""
        for scope in scopes:
            self._fresh.pop(scope, None)
            self.refolded.pop(scope, None)
            self.window.load(scope, [])
            self.summaries.load(scope, Summary())
            self.state.load(scope, [], [])
            self.storage.forget_tracks(scope)

    def _save(self, scope: Scope) -> None:
        self.storage.save_tracks(scope, ScopeTracks(self.window.entries(scope), self.summaries.get(scope),
                                                    self.state.sessions(scope), self.state.tasks(scope)))

    # -- keeping the tracks true to the store -----------------------------------------------------
    def show_splits(self, scope: Scope, superseded: set[int], store: Any) -> None:
        """A correction superseded one clause of a message whose other clauses stay true; governance
        stored those as a split record. The window and the summary show the split in its place."""
        splits = {r["metadata"]["split_from"]: r for r in store.records(scope[1], tenant_id=scope[0])
                  if isinstance(r.get("metadata"), dict) and r["metadata"].get("split_from") in superseded}
        if not splits:
            return
        self.window.load(scope, [(splits[rid]["record_id"], replace(message, content=splits[rid]["content"]))
                                 if rid in splits else (rid, message) for rid, message in self.window.entries(scope)])
        covers = [splits[rid]["record_id"] if rid in splits else rid for rid in self.summaries.get(scope).covers]
        if covers != list(self.summaries.get(scope).covers):
            self._refold(scope, covers, store)

    def remove(self, scope: Scope, record_id: int, store: Any) -> None:
        """Take one record out of the scope's window and summary (the summary refolded without it)."""
        self.refolded.pop(scope, None)
        covered = self.summaries.get(scope).covers
        if record_id in covered:
            self._refold(scope, [rid for rid in covered if rid != record_id], store)
        self.window.remove(scope, record_id)

    def _refold(self, scope: Scope, covers: list[int | None], store: Any) -> None:
        kept = [(rid, store.get(rid)) for rid in covers if rid is not None]
        self.summaries.rebuild(scope, [(rid, record_message(r)) for rid, r in kept if r is not None])


def record_message(record: dict[str, Any]) -> Message:
    """A stored record as a message for the summary; personal data redacted (an isolated record
    keeps it raw in the store, and the summary is another track)."""
    content = redact(record["content"], find_sensitive(record["content"]))
    return Message(record["role"], content, record["user_id"], tenant_id=record.get("tenant_id"))
