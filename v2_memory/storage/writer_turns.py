"""Writers of one SQLite file take turns in the kernel, not by polling.

SQLite refuses a second writer at once ("database is locked") and leaves the waiting to the
caller. Polling for the lock wakes every waiting process again and again, and hands the lock to
whichever wakes first, not to the one that waited longest. So a write transaction first takes
an operating-system lock (``flock``) on a small hidden file beside the database (``.<name>.lock``,
empty, 0600, as a JSON store's writer lock) and holds it until it commits or rolls back:

- a waiting writer sleeps until the holder lets go, and wakes at once;
- a holder killed with ``kill -9`` lets go with its process: no stale lock, nothing to clean up;
- an uncontended writer pays an ``open`` and one system call (a free lock is taken at once);
- a writer that waits longer than ``BUSY_SECONDS`` gets the same busy error as before.

Each turn is taken on a handle of its own (its own open file description, so its lock is its
own) and closed when the turn ends. A timed wait sleeps in a helper thread on such a handle; if
the wait runs out or is interrupted (Ctrl-C), the helper closes its handle as soon as it gets
the lock, so a turn nobody waits for is never kept. A connection has at most one such helper:
its next wait takes over the one still sleeping.

Readers never take it (WAL: readers do not block the writer). Where ``fcntl`` is missing
(Windows), the file cannot be made, or its file system has no locks (some network mounts),
writers fall back to SQLite's own refusal and the database's polling (``database._waiting``);
so does any other program writing the same file.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> turns = WriterTurns(folder / "memory.sqlite3")
    >>> turns.take(wait=True)
    True
    >>> WriterTurns(folder / "memory.sqlite3").take(wait=False)
    False
    >>> turns.give_back()
    >>> WriterTurns(folder / "memory.sqlite3").take(wait=False)
    True
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import BinaryIO

from ..files import open_private_append

__all__ = ["WriterTurns", "lock_path"]

try:
    import fcntl
except ImportError:  # Windows: no flock; writers poll, as SQLite leaves them to
    fcntl = None  # type: ignore[assignment]


def lock_path(database: Path) -> Path:
    """The lock file of ``database``'s writers: ``.memory.sqlite3.lock`` for ``memory.sqlite3``."""
    return database.with_name(f".{database.name}.lock")


class WriterTurns:
    """One connection's place in the queue of writers of ``database``."""

    def __init__(self, database: Path) -> None:
        self.path = lock_path(database)
        self.usable = fcntl is not None  # False: no kernel queue here, SQLite's refusal guards writes
        self._turn: BinaryIO | None = None  # the handle holding this connection's turn
        self._sleeper: _Sleeper | None = None  # a timed wait still sleeping in the kernel
        if self.usable:  # can the lock file be made here? (a read-only folder: no queue)
            probe = self._open()
            if probe is None:
                self.usable = False
            else:
                probe.close()

    @property
    def holding(self) -> bool:
        return self._turn is not None

    def take(self, *, wait: bool, seconds: float | None = None) -> bool:
        """Take this connection's turn: at once when no one holds it; else, with ``wait``, sleep
        until the holder lets go (at most ``seconds``). False: not taken (another holds it, or the
        wait ran out). Where there is no kernel queue every turn is "taken"."""
        if not self.usable:
            return True
        handle = self._open()
        if handle is None:
            return True
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass
        except OSError:  # a file system without locks (ENOLCK): fall back for good
            handle.close()
            self.usable = False
            return True
        else:
            self._turn = handle
            return True
        if not wait:
            handle.close()
            return False
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            sleeper = self._sleeper
            if sleeper is None or not sleeper.sleeping():
                sleeper = self._sleeper = _Sleeper(handle if handle is not None else self._open())
            elif handle is not None:
                handle.close()  # the sleeper already waits on a handle of its own
            handle = None
            if sleeper.handle is None:  # could not open the file again: fall back
                self._sleeper = None
                return True
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if sleeper.claim(left):
                self._sleeper, self._turn = None, sleeper.handle
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False  # the sleeper stays, given up: it lets go of the lock when it gets it

    def give_back(self) -> None:
        """End this connection's turn (after its COMMIT or ROLLBACK): closing the handle lets go."""
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.close()

    def close(self) -> None:
        self.give_back()
        if self._sleeper is not None:
            self._sleeper.give_up()
            self._sleeper = None

    def _open(self) -> BinaryIO | None:
        try:
            return open_private_append(self.path)
        except OSError:
            return None


class _Sleeper:
    """A helper thread sleeping in ``flock`` on a handle of its own. Whoever ends up with the lock
    closes the handle: the claimant when it takes the turn, the thread itself when nobody wants it."""

    def __init__(self, handle: BinaryIO | None) -> None:
        self.handle = handle
        self._guard = threading.Lock()
        self._done = threading.Event()  # the thread is over: it got the lock, or failed
        self._got = False
        self._wanted = True
        if handle is not None:
            threading.Thread(target=self._sleep, name="v2_memory-writer-turn", daemon=True).start()

    def sleeping(self) -> bool:
        return self.handle is not None and not self._done.is_set()

    def _sleep(self) -> None:
        try:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)  # type: ignore[union-attr]
            got = True
        except OSError:
            got = False
        with self._guard:
            if got and self._wanted:
                self._got = True
            else:
                self.handle.close()  # type: ignore[union-attr]  # nobody waits for it: let go at once
            self._done.set()

    def claim(self, seconds: float | None) -> bool:
        """Wait up to ``seconds`` for the lock; True: the caller holds it now (and owns the handle)."""
        with self._guard:
            if self._done.is_set():
                return self._got
            self._wanted = True
        try:
            self._done.wait(seconds)
        except BaseException:  # interrupted (Ctrl-C): a turn taken meanwhile is let go
            self.give_up()
            raise
        with self._guard:
            if self._got:
                return True
            self._wanted = False
            return False

    def give_up(self) -> None:
        with self._guard:
            self._wanted = False
            if self._got:
                self._got = False
                self.handle.close()  # type: ignore[union-attr]
