"""``AsyncMemoryManager``: the manager's methods as coroutines, for async agents.

Agent stacks are async (the OpenAI and Anthropic async clients, LangGraph's async nodes); a
memory call that reads a file or a server must not stall their event loop. This door runs a
``MemoryManager`` on one worker thread of its own and awaits each call there:

    async with AsyncMemoryManager(store_path="memory.sqlite3") as memory:
        await memory.add(Message("user", "I moved to Lyon", user_id="ann"))
        context = await memory.build_context("where do I live?", user_id="ann")

- **The loop never blocks**: opening the store, every read and write run on the worker thread.
- **Calls run one at a time, in the order they were made**, so ``asyncio.gather`` of many calls
  is safe on every backend (a SQLite connection stays on one thread; a JSON store's lock is held
  by one writer) and an ``add`` awaited before a read is seen by it.
- The store opens on first use (or at ``async with``), so opening errors surface at the first
  ``await``. ``AsyncMemoryManager.wrap(manager)`` adopts a manager that is already open.

``batch()`` has no async form: a transaction held across ``await`` points would take in other
coroutines' calls. Load history with ``add_messages`` (one transaction) instead.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, Iterable, Mapping, TypeVar

from .governance.admission import Explanation
from .manager import MemoryManager
from .messages import DEFAULT_USER, EraseReceipt, Fact, Hit, Message, WriteResult
from .scoped import ScopedMemory

__all__ = ["AsyncMemoryManager"]

T = TypeVar("T")


class AsyncMemoryManager:
    """A ``MemoryManager`` behind coroutines; takes the same arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._open: Callable[[], MemoryManager] = partial(MemoryManager, *args, **kwargs)
        self._manager: MemoryManager | None = None
        # One worker: the manager lives on it, and calls queue there in the order they were made.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="v2_memory")
        self._closed = False

    @classmethod
    def wrap(cls, manager: MemoryManager) -> AsyncMemoryManager:
        """Async access to a manager that is already open (closing this closes it)."""
        if not isinstance(manager, MemoryManager):
            raise TypeError(f"wrap() expects a MemoryManager, got {type(manager).__name__}")
        wrapped = cls()
        wrapped._manager = manager
        return wrapped

    @property
    def manager(self) -> MemoryManager:
        """The synchronous manager underneath (opened on first use); use it from the worker only."""
        if self._manager is None:
            raise RuntimeError("the store is not open yet: await a call (or use `async with`) first")
        return self._manager

    async def _run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise RuntimeError("this AsyncMemoryManager is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, partial(self._on_worker, call, args, kwargs))

    def _on_worker(self, call: Callable[..., T], args: tuple, kwargs: dict[str, Any]) -> T:
        if self._manager is None:
            self._manager = self._open()  # a call queued before aclose() may be the one that opens it
        return call(self._manager, *args, **kwargs)

    async def open(self) -> AsyncMemoryManager:
        """Open the store now (otherwise the first call does)."""
        await self._run(lambda manager: None)
        return self

    def for_user(self, user_id: str, *, tenant_id: str | None = None, session_id: str | None = None,
                 task_id: str | None = None) -> ScopedMemory:
        """A handle fixed to one scope; its calls return awaitables: ``await alice.add("...")``."""
        return ScopedMemory(self, user_id, tenant_id=tenant_id, session_id=session_id, task_id=task_id)

    # -- the manager's methods, awaited ---------------------------------------------------------
    async def add(self, message: Message) -> WriteResult:
        return await self._run(MemoryManager.add, message)

    async def add_messages(self, messages: Iterable[Any], **scope: Any) -> list[WriteResult | None]:
        if isinstance(messages, (str, bytes, Mapping)):  # checked here: list() would take a dict's keys
            raise TypeError("add_messages() expects a list of chat messages, not a single "
                            f"{type(messages).__name__}: wrap it in a list")
        return await self._run(MemoryManager.add_messages, list(messages), **scope)

    async def retrieve(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, **read_scope: Any) -> list[Hit]:
        return await self._run(MemoryManager.retrieve, query, user_id, top_k, **read_scope)

    async def retrieve_without_threshold(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3,
                                         **scope: Any) -> list[Hit]:
        return await self._run(MemoryManager.retrieve_without_threshold, query, user_id, top_k, **scope)

    async def build_context(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, **read_scope: Any) -> Any:
        return await self._run(MemoryManager.build_context, query, user_id, top_k, **read_scope)

    async def explain(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, **read_scope: Any) -> Explanation:
        return await self._run(MemoryManager.explain, query, user_id, top_k, **read_scope)

    async def recent_messages(self, user_id: str = DEFAULT_USER, **scope: Any) -> list[Message]:
        return await self._run(MemoryManager.recent_messages, user_id, **scope)

    async def facts(self, user_id: str = DEFAULT_USER, **options: Any) -> list[Fact]:
        return await self._run(MemoryManager.facts, user_id, **options)

    async def verify(self, record_id: int, **scope: Any) -> bool:
        return await self._run(MemoryManager.verify, record_id, **scope)

    async def confirm_fact(self, user_id: str, key: str, **options: Any) -> int:
        return await self._run(MemoryManager.confirm_fact, user_id, key, **options)

    async def end_session(self, user_id: str, session_id: str, **scope: Any) -> bool:
        return await self._run(MemoryManager.end_session, user_id, session_id, **scope)

    async def start_task(self, user_id: str, task_id: str, **options: Any) -> Any:
        return await self._run(MemoryManager.start_task, user_id, task_id, **options)

    async def finish_task(self, user_id: str, task_id: str, **scope: Any) -> Any:
        return await self._run(MemoryManager.finish_task, user_id, task_id, **scope)

    async def forget(self, user_id: str, record_id: int, **options: Any) -> bool:
        return await self._run(MemoryManager.forget, user_id, record_id, **options)

    async def erase_user(self, user_id: str, **scope: Any) -> EraseReceipt:
        return await self._run(MemoryManager.erase_user, user_id, **scope)

    async def users(self, **scope: Any) -> list[str]:
        return await self._run(MemoryManager.users, **scope)

    async def health(self, user_id: str | None = None, **scope: Any) -> Any:
        return await self._run(MemoryManager.health, user_id, **scope)

    # -- closing --------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the store after every call already made, and stop the worker thread; a call
        made after this began is refused."""
        if self._closed:
            return
        self._closed = True  # first: no call queued after this one opens the store again
        loop = asyncio.get_running_loop()
        # subtle: queued behind the calls already made, one of which may be what opens the store.
        await loop.run_in_executor(self._worker, self._close_on_worker)
        self._worker.shutdown(wait=False)

    def _close_on_worker(self) -> None:
        if self._manager is not None:
            self._manager.close()

    close = aclose  # ``await memory.close()`` reads as the manager's close

    async def __aenter__(self) -> AsyncMemoryManager:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._manager is not None else "not opened yet"
        return f"AsyncMemoryManager({state})"
