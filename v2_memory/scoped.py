"""``memory.for_user(...)``: a handle whose every call acts in one scope, so no call can forget it.

The article's API names the user on each call and falls back to ``"default"``: one forgotten
``user_id=`` pools people's memories. An agent serving many people opens one handle per request
instead; the scope (user, tenant, session, task) is fixed when the handle is made, and no call
on it may name another:

    >>> from v2_memory import MemoryManager
    >>> memory = MemoryManager(store_path=None)
    >>> alice = memory.for_user("alice", session_id="s1")
    >>> alice.add("我对花生过敏").record_id
    1
    >>> memory.for_user("bob").retrieve("花生 过敏")      # bob's handle never sees alice's memory
    []
    >>> alice.retrieve("花生 过敏")[0].record["content"]
    '我对花生过敏'

The handle holds no state of its own: it forwards to the manager it came from, with the scope
filled in. On an ``AsyncMemoryManager`` the same handle's calls return awaitables.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable

from .errors import DefaultUserWarning
from .messages import DEFAULT_USER, Message
from .validation import require_id

__all__ = ["ScopedMemory", "DefaultUserCheck"]

_SCOPE = ("user_id", "tenant_id", "session_id", "task_id")


class ScopedMemory:
    """One user's memory (optionally one tenant, session and task) behind the manager's methods."""

    def __init__(self, memory: Any, user_id: str, *, tenant_id: str | None = None,
                 session_id: str | None = None, task_id: str | None = None) -> None:
        require_id("user_id", user_id)
        for name, value in (("tenant_id", tenant_id), ("session_id", session_id), ("task_id", task_id)):
            if value is not None:
                require_id(name, value)
        self.memory = memory
        self.user_id, self.tenant_id, self.session_id, self.task_id = user_id, tenant_id, session_id, task_id

    def __repr__(self) -> str:
        scope = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SCOPE if getattr(self, name) is not None)
        return f"ScopedMemory({scope})"

    def within(self, *, session_id: str | None = None, task_id: str | None = None) -> ScopedMemory:
        """The same user (and tenant) in another session or task: ``alice.within(task_id="trip")``."""
        return ScopedMemory(self.memory, self.user_id, tenant_id=self.tenant_id,
                            session_id=session_id if session_id is not None else self.session_id,
                            task_id=task_id if task_id is not None else self.task_id)

    # -- write --------------------------------------------------------------------------------
    def add(self, content: str, role: str = "user", **fields: Any) -> Any:
        """Store one message of this scope: ``alice.add("I moved to Lyon")``, ``alice.add(reply,
        role="assistant")``. ``fields`` are the other ``Message`` fields (domain, source, metadata,
        timestamp); the scope's own fields cannot be given here."""
        _refuse_scope(fields, "add")
        if isinstance(content, Message):
            raise TypeError("a scoped handle's add() takes the text (and role=...), not a Message: "
                            "handle.add(message.content, role=message.role), or memory.add(message) for a Message")
        return self.memory.add(Message(role, content, self.user_id, session_id=self.session_id,
                                       task_id=self.task_id, tenant_id=self.tenant_id, **fields))

    def add_messages(self, messages: Iterable[Any]) -> Any:
        """Store a chat transcript (OpenAI-style dicts or LangChain messages) in this scope."""
        return self.memory.add_messages(messages, **self._scope())

    # -- read ---------------------------------------------------------------------------------
    def retrieve(self, query: str, top_k: int = 3, *, domain: str | None = None) -> Any:
        """This scope's admitted long-term memories for ``query``, best first."""
        return self.memory.retrieve(query, self.user_id, top_k, domain=domain, **self._read_scope())

    def build_context(self, query: str, top_k: int = 3, *, domain: str | None = None, format: str = "text") -> Any:
        """The prompt context for ``query`` from this scope's tracks only (``format``: "text",
        "sections" or "messages", see ``context.py``)."""
        return self.memory.build_context(query, self.user_id, top_k, domain=domain, format=format, **self._read_scope())

    def explain(self, query: str, top_k: int = 3, *, domain: str | None = None) -> Any:
        """Every candidate for ``query`` in this scope, admitted or rejected, with reasons."""
        return self.memory.explain(query, self.user_id, top_k, domain=domain, **self._read_scope())

    def recent_messages(self) -> Any:
        """This user's recent window, oldest first."""
        return self.memory.recent_messages(self.user_id, tenant_id=self.tenant_id)

    def facts(self, *, status: str | None = None) -> Any:
        """This user's persona facts (pending, confirmed, superseded unless ``status`` says)."""
        return self.memory.facts(self.user_id, status=status, tenant_id=self.tenant_id)

    # -- what the user says about their memory ------------------------------------------------
    def forget(self, record_id: int) -> Any:
        """Remove one of this user's memories from every track; False if it is not theirs."""
        return self.memory.forget(self.user_id, record_id, tenant_id=self.tenant_id)

    def verify(self, record_id: int) -> Any:
        """This user confirmed a model-written memory of theirs (False if it is not theirs)."""
        return self.memory.verify(record_id, user_id=self.user_id, tenant_id=self.tenant_id)

    def confirm_fact(self, key: str, *, value: str | None = None) -> Any:
        """This user confirmed a pending persona fact; how many were confirmed."""
        return self.memory.confirm_fact(self.user_id, key, value=value, tenant_id=self.tenant_id)

    def end_session(self) -> Any:
        """End this handle's session: its session-domain memories never enter a context again."""
        if self.session_id is None:
            raise ValueError("this handle has no session_id: make one with memory.for_user(..., session_id=...)")
        return self.memory.end_session(self.user_id, self.session_id, tenant_id=self.tenant_id)

    def erase(self) -> Any:
        """Erase this user from every track and file (all sessions and tasks); the receipt."""
        return self.memory.erase_user(self.user_id, tenant_id=self.tenant_id)

    # -- helpers ------------------------------------------------------------------------------
    def _scope(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _SCOPE}

    def _read_scope(self) -> dict[str, Any]:
        return {"tenant_id": self.tenant_id, "session_id": self.session_id, "task_id": self.task_id}


def _refuse_scope(fields: dict[str, Any], call: str) -> None:
    named = sorted(set(fields) & set(_SCOPE))
    if named:
        raise TypeError(f"{call}() on a scoped handle cannot name {', '.join(named)}: the handle's scope is fixed "
                        "(make another handle with memory.for_user(...) or handle.within(...))")


class DefaultUserCheck:
    """The article's API falls back to ``"default"`` when a call names no user; on a store that
    holds named users that pools people's memories. This says so, once per manager."""

    def __init__(self, users: Callable[[str | None], list[str]]) -> None:
        self._users = users  # tenant_id -> the users stored under it
        self._named: dict[str | None, bool] = {}  # tenant -> holds users besides "default" (asked once)
        self._warned = False

    def note(self, user_id: str, tenant_id: str | None, call: str, *, stacklevel: int) -> None:
        """Warn when a call names no user in a tenant (or the untenanted partition) that holds named
        users: the forgotten ``user_id=`` would mix their memories (``DefaultUserWarning``). Said
        once per manager; turned into an error, it stops every such call before it writes."""
        if user_id is not DEFAULT_USER:
            if user_id != "default":
                self._named[tenant_id] = True
            return
        if tenant_id not in self._named:  # asked once; this manager's own named calls keep it true
            self._named[tenant_id] = any(user != "default" for user in self._users(tenant_id))
        if self._named[tenant_id] and not self._warned:
            warnings.warn(DefaultUserWarning(
                f"{call} named no user_id, so it used 'default', on a store whose "
                f"{'tenant ' + repr(tenant_id) if tenant_id is not None else 'untenanted users'} include named users: "
                "pass user_id= (or use memory.for_user(...)) so that no one's memories are mixed"), stacklevel=stacklevel)
            self._warned = True  # reached only if the warning did not raise
