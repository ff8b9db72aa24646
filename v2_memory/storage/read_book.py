"""Read bookkeeping: what a read records, kept by this process and written with its next write.

A read (``build_context``, ``retrieve``) changes nothing the agent sees, but it leaves two traces:
the usage of the memories it judged (reinforcement and misses, ``governance/decay.py``) and its
event in the ``reads`` audit log. Written at once, every read would take the store's write lock
and pay a commit of its own: readers in many processes would queue behind one another and
behind every writer, and a process alone would spend a third of each read committing. So a read
runs in a snapshot that takes no lock (``Storage.reading``), and its traces wait here until

- this process's next write transaction, which commits them with its own changes, or
- ``MAX_READS`` reads or ``MAX_AGE`` seconds have gathered (then the read that finds them due
  writes them all in one transaction: at once if the write lock is free, else after waiting), or
- this process reads them: its audit log's ``reads()`` writes them first, and the usage that
  waits is applied to the memories' states it reads (``Ledger.states``), so the next read
  ranks as if it had been written, or
- the store is closed.

    >>> book = ReadBook(StateDatabase(None))
    >>> book.begin_read(); book.defer(lambda: print("usage written"), lambda: print("overlay cleared"))
    >>> book.pending
    1
    >>> book.write()                      # inside a write transaction
    usage written
    overlay cleared

What this costs: a ``kill -9`` loses at most the last ``MAX_READS`` reads' bookkeeping, never a
write (``MAX_AGE`` is checked when a read ends: a process that reads once and then idles keeps
that read's until its next call or ``close()``). A write transaction that rolls back gives back
what it carried (``ended``): it waits for the next one. And nothing erased comes back: every
erasure or forget, in any process, counts itself in the ``erasures`` meta key (``erased``), and a
batch of bookkeeping begun under another count is dropped, not written. The write that carries
what waits also locks the scopes it was read in (``scopes``: on a server, writers of other users
go on meanwhile), or the whole store when a read did not say its scope.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from ..diagnostics import warn
from ..errors import StoreError, StoreLockedError
from .database import StateDatabase

__all__ = ["ReadBook", "MAX_READS", "MAX_AGE"]

MAX_READS = 64  # reads whose bookkeeping one write takes at most
MAX_AGE = 1.0  # seconds a read's bookkeeping waits at most (checked when the next read ends)
_ERASURES = "erasures"  # meta key: erasures and forgets so far, in every process


class ReadBook:
    """The reads of this process whose usage and audit events are not written yet."""

    def __init__(self, db: StateDatabase | Any, *, max_reads: int = MAX_READS, max_age: float = MAX_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db, self.max_reads, self.max_age, self.clock = db, max_reads, max_age, clock
        self._writes: list[Callable[[], None]] = []
        self._events: dict[str, list[Any]] = {}  # log -> the waiting events, appended by one of the writes
        self._settled: list[Callable[[], None]] = []  # told when what waits is written or dropped
        self._reads = 0
        self._since: float | None = None  # when the oldest waiting read began
        self._erasures: str | None = None  # the erasure count the oldest waiting read saw
        self._scopes: set[str] | None = set()  # the scopes the waiting reads read (None: one is not known)
        self._carried: tuple[list[Callable[[], None]], str | None, int, float | None, set[str] | None] | None = None

    @contextmanager
    def reading(self, storage: Any, scope: str | None = None) -> Iterator[Any]:
        """``storage``'s read block (``Storage.reading``) of one ``scope`` (None: not said): a
        snapshot, then a write of what waits when it is due. Inside a transaction the read joins it
        and writes at once, as does a read on a read-only store (whose transaction says it cannot
        write)."""
        db = storage.db
        if db.in_transaction or db.reading or db.read_only:
            with storage.transaction() if not db.reading else db.snapshot():
                yield storage
            return
        with db.snapshot():
            self.begin_read(scope)
            yield storage
        if self._writes and self.due() and not self._write_if_free(storage):
            self.flush(storage)

    def _write_if_free(self, storage: Any) -> bool:
        """Write what waits now if no one holds the write lock; never wait for it."""
        with storage.db.lock:
            storage.db.wait_for_lock = False
            try:
                with storage.writing(), storage.transaction():  # which begins with ``write``
                    pass
            except StoreLockedError:
                return False
            finally:
                storage.db.wait_for_lock = True
        return True

    def flush(self, storage: Any) -> None:
        """Write what waits in a transaction of its own; if that fails, say so and drop it (a
        read never fails for its bookkeeping, and nothing waits without bound)."""
        with storage.db.lock:  # one thread at a time touches what waits
            self._flush(storage)

    def _flush(self, storage: Any) -> None:
        if not self._writes or storage.db.read_only:
            self.drop()
            return
        try:
            with storage.writing(), storage.transaction():  # which begins with ``write``
                pass
        except StoreError as exc:
            self.drop()
            warn(f"the usage and read events of recent reads were not written ({exc})", room="storage")

    @property
    def pending(self) -> int:
        """Writes waiting (each read defers one or a few)."""
        return len(self._writes)

    def begin_read(self, scope: str | None = None) -> None:
        """Inside a read's snapshot of ``scope`` (None: not said): the first read of a batch
        remembers the erasure count it sees."""
        if self._since is None:
            self._erasures = self.db.meta(_ERASURES)
            self._since = self.clock()
        self._reads += 1
        if scope is None:
            self._scopes = None
        elif self._scopes is not None:
            self._scopes.add(scope)

    def scopes(self) -> frozenset[str] | None:
        """The scopes whose rows what waits would write (None: a read did not say its scope):
        the write that carries it locks them too."""
        return None if self._scopes is None else frozenset(self._scopes)

    def defer(self, write: Callable[[], None], settled: Callable[[], None] | None = None) -> None:
        """Keep ``write`` (a ledger update, an audit event) for the next write transaction;
        ``settled`` is called once it is written or dropped (whoever shows it meanwhile stops)."""
        self._writes.append(write)
        if settled is not None:
            self._settled.append(settled)

    def defer_event(self, log: str, event: Any, append: Callable[[str, list[Any]], None]) -> None:
        """Keep an audit event for the next write: the waiting events of one log are appended
        together, ``append(log, events)`` once (one statement, not one per read)."""
        events = self._events.get(log)
        if events is None:
            events = self._events[log] = []
            self.defer(lambda: append(log, events))
        events.append(event)

    def settle(self, storage: Any) -> None:
        """Write what waits now, outside any read or transaction (before this process reads its
        own read log); inside one, what waits is written with it or is written already."""
        db = storage.db
        with db.lock:
            if self._writes and not (db.reading or db.in_transaction or db.read_only):
                self._flush(storage)

    def due(self) -> bool:
        """Whether enough reads, or enough time, gathered for a write of their own."""
        return self._since is not None and (self._reads >= self.max_reads
                                            or self.clock() - self._since >= self.max_age)

    def write(self) -> None:
        """Inside a write transaction: carry out what waits, unless something was erased since
        the first waiting read (then drop it all: it may quote or count what is gone)."""
        writes, erasures, settled = self._writes, self._erasures, self._settled
        self._carried = (writes, erasures, self._reads, self._since, self._scopes)  # until the transaction ends
        self._writes, self._reads, self._since, self._erasures, self._settled = [], 0, None, None, []
        self._scopes = set()
        self._events = {}  # the lists the writes append stay theirs; later events start new ones
        try:
            if writes and self.db.meta(_ERASURES) == erasures:
                for write in writes:
                    write()
        finally:
            for done in settled:
                done()

    def ended(self, committed: bool) -> None:
        """The write transaction that carried what waited ended: if it rolled back, what it
        carried waits again (its usage is applied again once written, not meanwhile)."""
        carried, self._carried = self._carried, None
        if committed or carried is None or not carried[0]:
            return
        writes, erasures, reads, since, scopes = carried
        self._writes, self._reads = writes + self._writes, reads + self._reads
        self._since, self._erasures = since, erasures  # the oldest waiting read is the carried one's
        self._scopes = None if scopes is None or self._scopes is None else scopes | self._scopes

    def drop(self) -> int:
        """Forget what waits (a store closing after its last write failed); return how much."""
        dropped, settled = len(self._writes), self._settled
        self._writes, self._reads, self._since, self._erasures, self._settled = [], 0, None, None, []
        self._events, self._scopes = {}, set()
        for done in settled:
            done()
        return dropped

    @staticmethod
    def erased(db: StateDatabase | Any) -> None:
        """Inside an erasing transaction: count it, so no process writes back an older read's
        traces. It must hold the whole store: a writer of another scope could be carrying them."""
        if not db.holds_whole_store:
            raise StoreError("an erasure must lock the whole store, not some users' scopes (Storage.writing)",
                             path=db.where)
        db.set_meta(_ERASURES, str(int(db.meta(_ERASURES) or 0) + 1))
