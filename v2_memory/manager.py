"""``MemoryManager``: the article's three tracks, per user, governed, behind one small API.

    write:  add(message) ─► write policy ─► long-term store (+ ledger: trust, weight, identifiers, facts)
                                        └─► recent window (per user) ──overflow──► summary (per user)
    read:   build_context(query, user_id) = confirmed persona facts + summary + window
                                            + long-term memories the admission rules let in

Every read names a user (and optionally a tenant, session, task, domain) and draws only on that
scope's tracks; ``explain`` shows every candidate's admission with its reasons; ``erase_user``
removes the user from all tracks and every file, and returns a receipt.

The manager composes the rooms below it and decides nothing itself: the governor decides
(``governance/governor.py``), the read path orders a context (``governance/read_path.py``), the
track cache keeps each user's window and summary in step with storage (``tracks/cache.py``),
storage commits (``storage/contract.py``). Confirmations, forgetting, sessions and tasks are in
``lifecycle.py``; properties, the repr and health in ``describe.py``.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from .chat_messages import to_message
from .context import FORMATS, ContextItem, render
from .describe import Description
from .governance.admission import Explanation
from .governance.governor import GovernancePolicy, Governor
from .governance.read_path import ReadPath
from .lru import DEFAULT_CACHE_USERS, check_cache_size
from .messages import DEFAULT_USER, DOMAINS, EraseReceipt, Hit, Message, WriteResult, as_utc
from .observe.audit import AuditEvent, AuditLog, read_event, user_hash, write_event
from .retrieval.embedder import Embedder
from .retrieval.scorers import Scorer
from .scoped import DefaultUserCheck, ScopedMemory
from .storage import VectorStore
from .storage.backends import check_store_path, open_manager_storage
from .storage.contract import Storage
from .storage.semantic_store import open_semantic
from .text.memo import UserMemo, forget_texts
from .text.sensitive import find_sensitive, redact
from .tracks.cache import TrackCache
from .tracks.summarizer import Summarizer, SummaryTrack
from .tracks.window import RecentWindow
from .lifecycle import Lifecycle
from .validation import check_options, check_read, check_threshold, require_scope

__all__ = ["MemoryManager", "utc_now"]

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(timezone.utc)


class MemoryManager(Lifecycle, Description):
    """Recent window + summary + long-term store, isolated per user and governed.

    ``store_path=None`` keeps everything in memory; ``store=`` plugs in any ``VectorStore``.
    ``scorer`` chooses the default store's scorer (``"article"``, ``"bm25"`` or an instance).
    ``governance=False`` gives the article's behaviour (store and trust everything; threshold only);
    a ``GovernancePolicy`` tunes the rules. ``clock`` returns the current aware datetime.
    ``embedder`` (an ``Embedder``) adds the semantic track: vectors stored with the records, hybrid
    retrieval; ``rebuild_vectors=True`` re-embeds every record with it (after a change of model).
    A store that does not exist yet is created (``create=False``: it must exist); a path whose
    folder is missing or whose extension names no backend is an error, never an empty memory.
    ``cache_users`` bounds each per-user cache (tracks here; records, indexes and vectors in the
    database backends): the least recently used user beyond it is read back from storage on next use.
    """

    def __init__(self, window_size: int = 4, threshold: float = 0.2,
                 store_path: Path | str | None = "memory_store.json", *, store: VectorStore | None = None,
                 summarizer: Summarizer | None = None, clock: Clock | None = None, fsync: bool = False,
                 governance: GovernancePolicy | bool = True, ledger_path: Path | str | None = None,
                 audit: AuditLog | bool = True, scorer: str | Scorer | None = None, adopt_store: bool = False,
                 embedder: Embedder | None = None, rebuild_vectors: bool = False, create: bool = True,
                 cache_users: int = DEFAULT_CACHE_USERS) -> None:
        check_options(store, scorer, create, rebuild_vectors, embedder)
        check_cache_size(cache_users)
        if store is None:
            check_store_path(store_path, create=create)
        self.threshold = check_threshold(threshold, allow_none=False)
        self.window, self.summaries = RecentWindow(window_size), SummaryTrack(summarizer)
        self.clock: Clock = clock if clock is not None else utc_now
        policy = governance if isinstance(governance, GovernancePolicy) else GovernancePolicy(enabled=bool(governance))
        self.storage: Storage = open_manager_storage(store, store_path, fsync=fsync, scorer=scorer, ledger_path=ledger_path,
                                                     audit=audit, adopt_store=adopt_store, cache_users=cache_users)
        self.store: VectorStore = self.storage.records
        self.ledger = self.storage.ledger  # for inspection: the manager itself asks the governor
        # With an embedder, governance reads a store whose records carry vectors and whose scores are hybrid.
        self.semantic = open_semantic(self.storage, embedder, rebuild_vectors, cache_users)
        self.governor = Governor(self.semantic or self.store, self.storage.ledger, policy, self._now, UserMemo(cache_users))
        # The tracks each scope holds in this process (``tracks/cache.py``) and the read path over them.
        self._tracks = TrackCache(self.window, self.summaries, self.governor.state, self.storage, cache_users)
        self._reads = ReadPath(self.governor, self._tracks, self.store)
        self._logging = audit is not False
        self._lock = threading.RLock()
        self._revoked: list[tuple[str, str | None, int]] = []  # taken back inside a batch: forgotten after it
        self.cache_users = cache_users
        # Warns once when a call names no user on a store that holds named users (``scoped.py``).
        self._default_user = DefaultUserCheck(lambda tenant_id: self.users(tenant_id=tenant_id))

    # -- the article's API: write, read, erase -------------------------------------------------
    def add(self, message: Message) -> WriteResult:
        """Write ``message`` through the write policy; return what was stored where, and why."""
        if not isinstance(message, Message):
            raise TypeError(f"add() expects a Message, got {type(message).__name__}")
        self._default_user.note(message.user_id, message.tenant_id, "add()", stacklevel=3)
        with self._lock:
            ready = self._prepare(message)
            with self.storage.writing((message.tenant_id, message.user_id)):  # this user's rows only
                result = self._commit(*ready)
            if not self._tracks.in_batch:
                self._forget_revoked()
            return result

    def retrieve(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, **read_scope: Any) -> list[Hit]:
        """The user's admitted long-term memories (score = similarity), best first."""
        scope = self._check_read(query, user_id, top_k, **read_scope)
        with self._lock, self.storage.reading(scope):
            # Long-term memories only: the summary is not shown, so it is not judged.
            explanation = self.explain(query, user_id, top_k, **{**read_scope, "with_summary": False})
            self.governor.record_usage(explanation)
            self._log_read(explanation, user_id, read_scope, "retrieve", shown=[a.record_id for a in explanation.admitted])
            return [Hit(a.similarity, dict(a.record)) for a in explanation.admitted]

    def build_context(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *, format: str = "text",
                      **read_scope: Any) -> Any:
        """The prompt context: persona facts, summary, recent window, then admitted memories
        (``governance/read_path.py``). ``format="text"`` (the article's) is one item per line, each
        starting with the library's label, memory text on one line (``text/quoting.py``): stored
        text cannot start a line that looks like a fact. ``"sections"`` gives the items as dicts,
        ``"messages"`` as chat messages (``context.py``)."""
        if format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
        scope = self._check_read(query, user_id, top_k, **read_scope)
        with self._lock, self.storage.reading(scope):
            read = self._reads.context(query, scope, top_k, self.threshold, **_read_args(read_scope))
            # The read log redacts each memory text once, however often the same memory comes back.
            self._log_read(read.explanation, user_id, read_scope, "build_context", read.items, shown=read.shown)
            return render(read.items, format)

    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> EraseReceipt:
        """Remove the user from every track and every file the library wrote; return a receipt.

        All or nothing: the state database's part commits at once with an intent to rewrite the
        files; if the process dies before the files are rewritten, the next open finishes the job.
        The receipt comes back only when everything is done.
        """
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._not_in_batch("erase_user")
            with self._tracks.changing(scope):
                self._tracks.refolded.pop(scope, None)  # a refolded summary holds the user's words too
                window, summary = self.window.erase(scope), self.summaries.erase(scope)
                ledger, state = self.governor.erase(scope)
                self.storage.intend("erase_user", user_id, tenant_id)
            try:
                store, logs, files, damaged = self.storage.finish_erasure(scope, any((window, summary, ledger, state)))
            finally:
                forget_texts()  # the analysis caches are keyed by memory texts: none of the user's may stay
            receipt = EraseReceipt(user_id, window, summary, store, ledger, state, logs, files, tenant_id, damaged)
            # The log keeps that an erasure happened — a fingerprint and counts, never the content.
            self._log("erasure", None, None, user_hash=user_hash(user_id, tenant_id), removed=receipt.to_dict()["removed"])
            return receipt

    # -- writing ---------------------------------------------------------------------------------
    def add_messages(self, messages: Iterable[Any], *, user_id: str, tenant_id: str | None = None,
                     session_id: str | None = None, task_id: str | None = None) -> list[WriteResult | None]:
        """Store a chat transcript in order: OpenAI-style ``{"role", "content"}`` dicts or
        LangChain messages (see ``chat_messages``). Returns one result per message, ``None`` for
        one with nothing to store (a system prompt, a tool call without text). Every message is
        read before any is stored, and all are stored in one transaction: a bad one stores none."""
        if isinstance(messages, (str, bytes, Mapping)):
            raise TypeError("add_messages() expects a list of chat messages, not a single "
                            f"{type(messages).__name__}: wrap it in a list")
        require_scope(user_id, tenant_id)
        scope = {"user_id": user_id, "tenant_id": tenant_id, "session_id": session_id, "task_id": task_id}
        read = [to_message(chat, **scope) for chat in messages]
        self._default_user.note(user_id, tenant_id, "add_messages()", stacklevel=3)
        with self._lock:
            # Every refusal (personal data under "refuse", a NUL on PostgreSQL) before the first write,
            # so a bad message stores none of the transcript, inside a caller's batch() too.
            prepared = [self._prepare(message) if message is not None else None for message in read]
            # a caller's batch holds these too; else a batch of this user's rows only
            with nullcontext() if self._tracks.in_batch else self._batch((tenant_id, user_id)):
                return [self._commit(*ready) if ready is not None else None for ready in prepared]

    def _prepare(self, message: Message) -> tuple[Message, Any]:
        """The message stamped and checked, with the write policy's plan. Every refusal happens
        here, before any transaction is touched (a batch goes on without the refused message)."""
        if message.timestamp is None:
            message = replace(message, timestamp=self._now())
        self.storage.check_text([message.role, message.content, message.user_id, message.tenant_id,
                                 message.session_id, message.task_id])
        return message, self.governor.plan(message)

    def _commit(self, message: Message, plan: Any) -> WriteResult:
        scope = (message.tenant_id, message.user_id)
        with self._tracks.changing(scope):
            result, shown = self.governor.write(message, plan, self.window.entries(scope))
            if self._logging:
                self.storage.log("writes", write_event(shown, result))  # shown: the message as the window holds it
            # Messages pushed out of the user's window are folded into that user's summary —
            # except unverified model output, which must not come back through the summary either.
            for record_id, expired in self.window.push(scope, result.record_id, shown):
                if self.governor.view.may_summarize(record_id):
                    self.summaries.fold(scope, expired, record_id)
            if result.supersedes:
                self._tracks.show_splits(scope, set(result.supersedes), self.store)
            # What the user took back ("forget what I told you about the loan") is superseded in
            # this commit, then forgotten once it (or the batch holding it) has committed: it
            # leaves the store, the ledger and the logs.
            self._revoked.extend((message.user_id, message.tenant_id, rid) for rid in result.revoked)
            return result

    @contextmanager
    def batch(self) -> Iterator[MemoryManager]:
        """Many calls as one transaction: one commit, and each user's tracks saved once, at the end.

            with memory.batch():
                for message in history:
                    memory.add(message)

        All or nothing: if the block raises, none of it is committed (a message the write policy
        refuses is refused before it touches the batch, so catching that error keeps the rest).
        The block holds the store's write lock: keep it to a bulk load of seconds, not a
        conversation (docs/storage.md). ``erase_user`` and ``forget`` refuse to run inside.
        """
        with self._batch():
            yield self

    @contextmanager
    def _batch(self, *scopes: tuple) -> Iterator[MemoryManager]:
        """``batch``; with ``scopes`` (``(tenant_id, user_id)``), writing those users' rows only
        (``Storage.writing``): on a server, writers of other users go on meanwhile."""
        with self._lock:
            try:
                with self.storage.writing(*scopes) if scopes else nullcontext(), self._tracks.batch():
                    yield self
            except BaseException:
                if self.semantic is not None:  # vectors of ids now handed out again must not survive
                    self.semantic.rolled_back()
                if not self._tracks.in_batch:
                    self._revoked.clear()  # rolled back: nothing was taken back
                raise
            if not self._tracks.in_batch:
                self._forget_revoked()

    # -- reading ---------------------------------------------------------------------------------
    def explain(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *, tenant_id: str | None = None,
                session_id: str | None = None, task_id: str | None = None, domain: str | None = None,
                with_summary: bool = True) -> Explanation:
        """Every long-term candidate for ``query``, admitted or rejected, with reasons and numbers;
        and, in ``summary``, which of the memories the summary covers this read may see (unless
        ``with_summary=False``: ``build_context`` judges only what the summary shows)."""
        scope = self._check_read(query, user_id, top_k, tenant_id=tenant_id, session_id=session_id,
                                 task_id=task_id, domain=domain)
        with self._lock:
            return self._reads.explain(query, scope, top_k, self.threshold, session_id=session_id, task_id=task_id,
                                       domain=domain, with_summary=with_summary)

    def retrieve_without_threshold(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *,
                                   tenant_id: str | None = None) -> list[Hit]:
        """Blind top-k: always up to ``top_k`` hits, relevant or not (the article's counter-example).

        Records kept raw under the "isolate" sensitive-data policy come back redacted even here.
        """
        hits = (self.semantic or self.store).search(query, user_id=user_id, top_k=top_k, threshold=None, tenant_id=tenant_id)
        isolated = {rid for rid, state in self.governor.states(h.record["record_id"] for h in hits).items() if state.isolated}
        return [Hit(h.score, {**h.record, "content": redact(h.record["content"], find_sensitive(h.record["content"]))})
                if h.record["record_id"] in isolated else h for h in hits]

    def recent_messages(self, user_id: str = DEFAULT_USER, *, tenant_id: str | None = None) -> list[Message]:
        """The user's recent window, oldest first."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._tracks.ensure(scope)
            return self.window.messages(scope)

    def summary(self, user_id: str = DEFAULT_USER, *, tenant_id: str | None = None, session_id: str | None = None,
                task_id: str | None = None) -> str:
        """The summary of what left the user's window, as a read in this session and task may see
        it ('' if none): corrected, ended-session, other-task and unverified memories left out."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._tracks.ensure(scope)
            return self._reads.summary(scope, session_id, task_id).text

    def rebuild_vectors(self) -> int:
        """Re-embed every record with this manager's embedder (one transaction); return how many."""
        if self.semantic is None:
            raise ValueError("this MemoryManager has no embedder: pass embedder= to give it a semantic track")
        with self._lock:
            return self.semantic.rebuild()

    def for_user(self, user_id: str, *, tenant_id: str | None = None, session_id: str | None = None,
                 task_id: str | None = None) -> ScopedMemory:
        """A handle whose every call acts for this user (tenant, session, task) only:
        ``alice = memory.for_user("alice"); alice.add("I moved to Lyon"); alice.build_context(q)``."""
        return ScopedMemory(self, user_id, tenant_id=tenant_id, session_id=session_id, task_id=task_id)

    # -- checks -----------------------------------------------------------------------------------
    def _check_read(self, query: str, user_id: str, top_k: int, *, tenant_id: str | None = None,
                    session_id: str | None = None, task_id: str | None = None,
                    domain: str | None = None, with_summary: bool = True) -> tuple[str | None, str]:
        """A read's arguments, checked before any transaction opens (a bad one changes nothing,
        even inside ``batch()``); returns the scope."""
        check_read(query, top_k, session_id=session_id, task_id=task_id, domain=domain, domains=DOMAINS)
        scope = require_scope(user_id, tenant_id)
        self._default_user.note(user_id, tenant_id, "a read", stacklevel=4)
        return scope

    def _not_in_batch(self, call: str) -> None:
        if self._tracks.in_batch:
            raise RuntimeError(f"{call}() commits on its own and returns its receipt after the commit: "
                               "call it outside memory.batch()")

    # -- audit -----------------------------------------------------------------------------------
    @property
    def audit(self) -> AuditLog | None:
        """The write and read logs (None when the manager was made with ``audit=False``)."""
        return self.storage.audit if self._logging else None

    def _log(self, kind: str, user_id: str | None, tenant_id: str | None, session_id: str | None = None,
             **data: Any) -> None:
        if self._logging:
            self.storage.log("writes", AuditEvent(kind, self._now().isoformat(), user_id, tenant_id, session_id, data))

    def _log_read(self, explanation: Explanation, user_id: str, read_scope: dict[str, Any], call: str,
                  context: list[ContextItem] | None = None, *, shown: list[int]) -> None:
        """Log a read; ``shown`` lists every record whose text the result holds (window, summary,
        memories), so forgetting one record can find every log line that quotes it."""
        if self._logging:
            scope = (read_scope.get("tenant_id"), user_id)
            self.storage.log("reads", read_event(explanation, self._now().isoformat(), scope, read_scope, call, context, shown,
                                                 self.governor.memo))

    def _now(self) -> datetime:
        return as_utc(self.clock())

    def close(self) -> None:
        """Release the store's file lock and the state database's connection."""
        self.storage.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _read_args(read_scope: dict[str, Any]) -> dict[str, Any]:
    """What the read path takes of a read's scope (the tenant is in the scope already)."""
    return {name: read_scope.get(name) for name in ("session_id", "task_id", "domain")}
