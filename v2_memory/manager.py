"""``MemoryManager``: the article's three tracks, per user, governed, behind one small API.

    write:  add(message) ─► write policy ─► long-term store (+ ledger: trust, weight, identifiers, facts)
                                        └─► recent window (per user) ──overflow──► summary (per user)
    read:   build_context(query, user_id) = confirmed persona facts + summary + window
                                            + long-term memories the admission rules let in

Every read names a user (and optionally a tenant, session, task, domain) and draws only on that
scope's tracks; ``explain`` shows every candidate's admission with its reasons; ``erase_user``
removes the user from all tracks and every file, and returns a receipt.
"""
from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from .chat_messages import to_message
from .context import FORMATS, ContextItem, render
from .display import Displayed, Shown
from .errors import DefaultUserWarning, StoreClosedError
from .lru import DEFAULT_CACHE_USERS, check_cache_size
from .scoped import ScopedMemory
from .observe.audit import AuditEvent, AuditLog, read_event, user_hash, write_event
from .governance.admission import Explanation
from .governance.decay import DecayRates
from .governance.governor import GovernancePolicy, Governor
from .governance.persona import SINGLE_VALUED_KEYS
from .messages import Fact
from .storage.ledger import scope_key
from .text.sensitive import find_sensitive, redact
from .observe.health import HealthReport, health_report
from .governance.state import SessionInfo, TaskInfo, check_completion
from .messages import DEFAULT_USER, DOMAINS, EraseReceipt, Hit, Message, WriteResult, as_utc
from .retrieval.scorers import Scorer
from .storage import VectorStore
from .storage.audit_log import AuditLog as _AuditLog
from .storage.backends import check_store_path, open_storage
from .storage.contract import Storage
from .storage.database import StateDatabase, consistent_reads
from .storage.semantic_store import SemanticStore
from .retrieval.embedder import Embedder
from .storage.track_tables import ScopeTracks
from .text.memo import forget_texts
from .tracks.summarizer import Summarizer, Summary, SummaryTrack
from .validation import (check_query, check_record_id, check_threshold, check_top_k, require_id, require_scope,
                         require_text)
from .tracks.window import RecentWindow

__all__ = ["MemoryManager", "utc_now"]

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(timezone.utc)


class MemoryManager(Displayed):
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

    def __init__(
        self,
        window_size: int = 4,
        threshold: float = 0.2,
        store_path: Path | str | None = "memory_store.json",
        *,
        store: VectorStore | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        fsync: bool = False,
        governance: GovernancePolicy | bool = True,
        ledger_path: Path | str | None = None,
        audit: AuditLog | bool = True,
        scorer: str | Scorer | None = None,
        adopt_store: bool = False,
        embedder: Embedder | None = None,
        rebuild_vectors: bool = False,
        create: bool = True,
        cache_users: int = DEFAULT_CACHE_USERS,
    ) -> None:
        if store is not None and scorer is not None:
            raise ValueError("pass scorer= to the store you plug in, not to the manager")
        if not isinstance(create, bool):
            raise TypeError(f"create must be True or False, got {create!r}")
        check_cache_size(cache_users)
        if store is None:
            check_store_path(store_path, create=create)
        if rebuild_vectors and embedder is None:
            raise ValueError("rebuild_vectors=True needs an embedder= to re-embed the records with")
        self.threshold = check_threshold(threshold, allow_none=False)
        self.window = RecentWindow(window_size)
        self.summaries = SummaryTrack(summarizer)
        self.clock: Clock = clock if clock is not None else utc_now
        policy = governance if isinstance(governance, GovernancePolicy) else GovernancePolicy(enabled=bool(governance))
        self.storage: Storage = _open_storage(store, store_path, fsync, scorer, ledger_path, audit, adopt_store,
                                              cache_users)
        self.store: VectorStore = self.storage.records
        self.ledger = self.storage.ledger
        # With an embedder, governance reads a store whose records carry vectors and whose scores are hybrid.
        self.semantic = _open_semantic(self.storage, embedder, rebuild_vectors, cache_users)
        self.governor = Governor(self.semantic or self.store, self.ledger, policy, self._now)
        self._logging = audit is not False
        self._lock = threading.RLock()
        # scope -> None, least recently used first: the scopes whose cached tracks match storage,
        # at most ``cache_users`` of them (an evicted scope is read back from storage on next use)
        self._fresh: dict[tuple[str | None, str], None] = {}
        self.cache_users = cache_users
        self._unsaved: dict[tuple[str | None, str], None] | None = None  # in a batch: scopes saved at its end
        self._summary_memo: dict[tuple[str | None, str], tuple[tuple, Summary]] = {}  # scope -> (ids shown, fold)
        self._named_users: dict[str | None, bool] = {}  # tenant -> holds users besides "default" (asked once)
        self._warned_default = False

    @property
    def audit(self) -> AuditLog | None:
        """The write and read logs (None when the manager was made with ``audit=False``)."""
        return self.storage.audit if self._logging else None

    @staticmethod
    def default_rates() -> DecayRates:
        """The decay rates a manager uses unless its ``GovernancePolicy`` says otherwise."""
        return GovernancePolicy().rates

    @property
    def window_size(self) -> int:
        return self.window.size

    @property
    def policy(self) -> GovernancePolicy:
        return self.governor.policy

    @property
    def backend(self) -> str:
        """Which backend holds the memory: "json", "sqlite", "postgres" (or a plugged-in store's)."""
        return self.storage.backend

    @property
    def path(self) -> Path | str:
        """The store's file, a server's URL with its password masked, or "in memory"."""
        return self._location()

    @property
    def scorer(self) -> str:
        """The long-term store's scorer ("article", "bm25", or the store's class name)."""
        return getattr(getattr(self.store, "scorer", None), "name", None) or type(self.store).__name__

    @property
    def governance(self) -> str:
        """"on" when the rules decide what enters a context, "off" for the article's behaviour."""
        return "on" if self.policy.enabled else "off"

    @property
    def closed(self) -> bool:
        """Whether the store is closed (by ``close()``, or a later opening of the same store)."""
        return self.storage.closed

    @property
    def closed_reason(self) -> str | None:
        """Why the manager is closed, in words (the repr's ``closed=...``), or None while open."""
        return (self.storage.db.closed_reason or "it was closed") if self.storage.closed else None

    def _now(self) -> datetime:
        return as_utc(self.clock())

    def for_user(self, user_id: str, *, tenant_id: str | None = None, session_id: str | None = None,
                 task_id: str | None = None) -> ScopedMemory:
        """A handle whose every call acts for this user (tenant, session, task) only:
        ``alice = memory.for_user("alice"); alice.add("I moved to Lyon"); alice.build_context(q)``."""
        return ScopedMemory(self, user_id, tenant_id=tenant_id, session_id=session_id, task_id=task_id)

    # -- write path --------------------------------------------------------------------------
    def add(self, message: Message) -> WriteResult:
        """Write ``message`` through the write policy; return what was stored where, and why."""
        if not isinstance(message, Message):
            raise TypeError(f"add() expects a Message, got {type(message).__name__}")
        self._note_user(message.user_id, message.tenant_id, "add()", stacklevel=3)
        with self._lock:
            return self._commit(*self._prepare(message))

    def _prepare(self, message: Message) -> tuple[Message, Any]:
        """The message stamped and checked, with the write policy's plan. Every refusal happens
        here, before any transaction is touched (a batch goes on without the refused message)."""
        if message.timestamp is None:
            message = replace(message, timestamp=self._now())
        self.storage.db.check_text([message.role, message.content, message.user_id, message.tenant_id,
                                    message.session_id, message.task_id])
        return message, self.governor.plan(message)

    def _commit(self, message: Message, plan: Any) -> WriteResult:
        scope = (message.tenant_id, message.user_id)
        with self._changing(scope):
            return self._write(scope, message, plan)

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
        self._note_user(user_id, tenant_id, "add_messages()", stacklevel=3)
        with self._lock:
            # Every refusal (personal data under "refuse", a NUL on PostgreSQL) before the first write,
            # so a bad message stores none of the transcript, inside a caller's batch() too.
            prepared = [self._prepare(message) if message is not None else None for message in read]
            with nullcontext() if self._unsaved is not None else self.batch():  # a caller's batch holds these too
                return [self._commit(*ready) if ready is not None else None for ready in prepared]

    def _note_user(self, user_id: str, tenant_id: str | None, call: str, *, stacklevel: int) -> None:
        """Warn when a call names no user in a tenant (or the untenanted partition) that holds named
        users: the forgotten ``user_id=`` would mix their memories (``DefaultUserWarning``). Said
        once per manager; turned into an error, it stops every such call before it writes."""
        if user_id is not DEFAULT_USER:
            if user_id != "default":
                self._named_users[tenant_id] = True
            return
        if tenant_id not in self._named_users:  # asked once; this manager's own named calls keep it true
            self._named_users[tenant_id] = any(user != "default" for user in self.users(tenant_id=tenant_id))
        if self._named_users[tenant_id] and not self._warned_default:
            warnings.warn(DefaultUserWarning(
                f"{call} named no user_id, so it used 'default', on a store whose "
                f"{'tenant ' + repr(tenant_id) if tenant_id is not None else 'untenanted users'} include named users: "
                "pass user_id= (or use memory.for_user(...)) so that no one's memories are mixed"), stacklevel=stacklevel)
            self._warned_default = True  # reached only if the warning did not raise

    def _write(self, scope: tuple[str | None, str], message: Message, plan: Any) -> WriteResult:
        result, shown = self.governor.write(message, plan)
        if self._logging:
            self.storage.log("writes", write_event(shown, result))  # shown: the message as the window holds it
        # Messages pushed out of the user's window are folded into that user's summary —
        # except unverified model output, which must not come back through the summary either.
        for record_id, expired in self.window.push(scope, result.record_id, shown):
            if self.governor.may_summarize(record_id):
                self.summaries.fold(scope, expired, record_id)
        if result.supersedes:
            self._adopt_splits(scope, set(result.supersedes))
        return result

    @contextmanager
    def batch(self) -> Iterator[MemoryManager]:
        """Many calls as one transaction: one commit, and each user's tracks saved once, at the end.

            with memory.batch():
                for message in history:
                    memory.add(message)

        All or nothing (on the built-in backends): nothing in the block is committed until it
        ends, and if it raises, none of it is (the manager reads its tracks back from storage). A
        message the write policy refuses (``SensitiveDataError``) is refused before it touches the
        batch, so catching that error inside keeps the rest; any other error inside dooms the whole
        block. Reads inside see the block's writes (the JSON backend's logs get the block's events
        when it ends); other processes see them when it ends. The block holds the store's write
        lock throughout, and this manager's lock: other writers, other processes' reads (a read
        writes its log and usage), and other threads using this manager wait until it ends. Keep
        it to a bulk load of seconds (split a big import into batches of a few hundred), not a
        conversation. ``erase_user`` and ``forget`` commit on their own and refuse to run inside.
        """
        with self._lock:
            if self._unsaved is not None:
                raise RuntimeError("memory.batch() blocks do not nest")
            self._unsaved = {}
            try:
                with self.storage.transaction():
                    yield self
                    for scope in self._unsaved:
                        self._save(scope)
            except BaseException:
                # Rolled back: every cached track is read again, and nothing derived from the
                # block's writes (refolded summaries, vectors of ids now handed out again) survives.
                self._drop_cached(list(self._fresh))
                self._summary_memo.clear()
                if self.semantic is not None:
                    self.semantic.rolled_back()
                raise
            finally:
                self._unsaved = None

    def _not_in_batch(self, call: str) -> None:
        if self._unsaved is not None:
            raise RuntimeError(f"{call}() commits on its own and returns its receipt after the commit: "
                               "call it outside memory.batch()")

    def verify(self, record_id: int, *, user_id: str | None = None, tenant_id: str | None = None) -> bool:
        """A user confirmed this (model-written) memory: it becomes verified, full weight.

        Pass ``user_id`` (and ``tenant_id``) to make sure the record is that user's; returns False
        for an unknown record or another user's.
        """
        check_record_id(record_id)
        with self._lock, self.storage.transaction():
            record = self.store.get(record_id)
            if record is None or (user_id is not None and (record.get("tenant_id"), record["user_id"]) != require_scope(user_id, tenant_id)):
                return False
            verified = self.ledger.verify(record_id)
            if verified:
                self._log("verify", record["user_id"], record.get("tenant_id"), record_id=record_id)
            return verified

    def confirm_fact(self, user_id: str, key: str, *, value: str | None = None, tenant_id: str | None = None) -> int:
        """The user confirmed a pending persona fact (``key`` like "diet"); return how many were confirmed."""
        tenant, user = require_scope(user_id, tenant_id)
        require_text("key", key)
        with self._lock, self.storage.transaction():
            return self._confirm_fact(tenant, user, key, value)

    def _confirm_fact(self, tenant: str | None, user: str, key: str, value: str | None) -> int:
        confirmed = self.ledger.confirm_fact(scope_key(user, tenant), key, value, single_valued=key in SINGLE_VALUED_KEYS)
        if confirmed:
            self._log("confirm_fact", user, tenant, key=key, value=value, confirmed=confirmed)
        return confirmed

    def facts(self, user_id: str = DEFAULT_USER, *, status: str | None = None, tenant_id: str | None = None) -> list[Fact]:
        """The user's persona facts (pending, confirmed and superseded unless ``status`` says)."""
        tenant, user = require_scope(user_id, tenant_id)
        return self.ledger.facts(scope_key(user, tenant), status=status)

    # -- sessions and tasks ------------------------------------------------------------------
    def end_session(self, user_id: str, session_id: str, *, tenant_id: str | None = None) -> bool:
        """End a session: its session-domain memories never enter a context again."""
        require_id("session_id", session_id)
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._changing(scope):
            ended = self.governor.state.end_session(scope, session_id)
            if ended:
                self._log("end_session", user_id, tenant_id, session_id)
            return ended

    def session(self, user_id: str, session_id: str, *, tenant_id: str | None = None) -> SessionInfo | None:
        """The session's state (start, last message, deadline, end), or None if never seen."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._ensure(scope)
            return next((s for s in self.governor.state.sessions(scope) if s.session_id == session_id), None)

    def start_task(self, user_id: str, task_id: str, *, ttl: timedelta | None = None, tenant_id: str | None = None) -> TaskInfo:
        """Start a task; its memories enter only reads with this ``task_id`` until the TTL runs out."""
        require_id("task_id", task_id)
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._changing(scope):
            info = self.governor.state.start_task(scope, task_id, ttl)
            self._log("start_task", user_id, tenant_id, task_id=task_id, expires_at=info.expires_at.isoformat())
            return info

    def set_task_progress(self, user_id: str, task_id: str, completion: float, *, tenant_id: str | None = None) -> TaskInfo:
        """Record how far a task is (0..1); task memories decay by (1 − completion)."""
        scope = require_scope(user_id, tenant_id)
        check_completion(completion)  # before the transaction: a bad number changes nothing
        with self._lock, self._changing(scope):
            info = self.governor.state.set_progress(scope, task_id, completion)
            self._log("task_progress", user_id, tenant_id, task_id=task_id, completion=info.completion)
            return info

    def finish_task(self, user_id: str, task_id: str, *, tenant_id: str | None = None) -> TaskInfo:
        """Mark a task done: completion 1, so its memories' weight becomes 0 (kept, never admitted)."""
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._changing(scope):
            info = self.governor.state.finish_task(scope, task_id)
            self._log("finish_task", user_id, tenant_id, task_id=task_id)
            return info

    def task(self, user_id: str, task_id: str, *, tenant_id: str | None = None) -> TaskInfo | None:
        """The task's state (deadline, completion, finished), or None if never started."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._ensure(scope)
            return self.governor.state.task(scope, task_id)

    # -- read path ---------------------------------------------------------------------------
    def explain(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *, tenant_id: str | None = None,
                session_id: str | None = None, task_id: str | None = None, domain: str | None = None,
                with_summary: bool = True) -> Explanation:
        """Every long-term candidate for ``query``, admitted or rejected, with reasons and numbers;
        and, in ``summary``, which of the memories the summary covers this read may see (unless
        ``with_summary=False``: ``build_context`` judges only what the summary shows)."""
        scope = self._check_read(query, user_id, top_k, tenant_id=tenant_id, session_id=session_id,
                                 task_id=task_id, domain=domain)
        with self._lock:
            self._ensure(scope)
            # The window's and the summary's records are judged after the candidates: their ledger
            # rows come with the candidates' (inside build_context's transaction; see Ledger.states).
            shows = self.summaries.get(scope).shows or ()
            self.ledger.want([rid for rid, _ in self.window.entries(scope) if rid is not None]
                             + [rid for rid in shows if rid is not None])
            explanation = self.governor.explain(query, scope, threshold=self.threshold, top_k=top_k,
                                                session_id=session_id, task_id=task_id, domain=domain)
            if not with_summary:
                return explanation
            entries = self.governor.summary_entries(self.summaries.get(scope).covers, scope, session_id=session_id,
                                                    task_id=task_id, domain=domain, identifiers=explanation.route.identifiers)
            return replace(explanation, summary=tuple(entries))

    def _check_read(self, query: str, user_id: str, top_k: int, *, tenant_id: str | None = None,
                    session_id: str | None = None, task_id: str | None = None,
                    domain: str | None = None, with_summary: bool = True) -> tuple[str | None, str]:
        """A read's arguments, checked before any transaction opens (a bad one changes nothing,
        even inside ``batch()``); returns the scope."""
        check_query(query)
        scope = require_scope(user_id, tenant_id)
        self._note_user(user_id, tenant_id, "a read", stacklevel=4)
        check_top_k(top_k)
        if domain is not None and domain not in DOMAINS:
            raise ValueError(f"domain must be one of {DOMAINS} or None, got {domain!r}")
        for name, value in (("session_id", session_id), ("task_id", task_id)):
            if value is not None:
                require_id(name, value)  # it is written to the read log: never personal data
        return scope

    def retrieve(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, **read_scope: Any) -> list[Hit]:
        """The user's admitted long-term memories (score = similarity), best first."""
        self._check_read(query, user_id, top_k, **read_scope)
        with self._lock, self.storage.transaction():
            explanation = self.explain(query, user_id, top_k, **read_scope)
            self.governor.record_usage(explanation)
            self._log_read(explanation, user_id, read_scope, "retrieve", shown=[a.record_id for a in explanation.admitted])
            return [Hit(a.similarity, dict(a.record)) for a in explanation.admitted]

    def retrieve_without_threshold(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *,
                                   tenant_id: str | None = None) -> list[Hit]:
        """Blind top-k: always up to ``top_k`` hits, relevant or not (the article's counter-example).

        Records kept raw under the "isolate" sensitive-data policy come back redacted even here.
        """
        hits = (self.semantic or self.store).search(query, user_id=user_id, top_k=top_k, threshold=None, tenant_id=tenant_id)
        isolated = {rid for rid, state in self.ledger.states(h.record["record_id"] for h in hits).items() if state.isolated}
        return [Hit(h.score, {**h.record, "content": redact(h.record["content"], find_sensitive(h.record["content"]))})
                if h.record["record_id"] in isolated else h for h in hits]

    def build_context(self, query: str, user_id: str = DEFAULT_USER, top_k: int = 3, *, format: str = "text",
                      **read_scope: Any) -> Any:
        """The prompt context: persona facts, summary, recent window, then admitted memories.

        Memories already shown in the recent window are not repeated. ``format="text"`` (the
        article's) is one item per line, each starting with the library's label, memory text on
        one line (``text/quoting.py``): stored text cannot start a line that looks like a fact.
        ``"sections"`` gives the items as dicts, ``"messages"`` as chat messages (``context.py``).
        """
        if format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
        self._check_read(query, user_id, top_k, **read_scope)
        with self._lock, self.storage.transaction():
            explanation = self.explain(query, user_id, top_k + self.window.size, with_summary=False, **read_scope)
            scope = (read_scope.get("tenant_id"), user_id)
            # The router sends "继续/next" to task state first: the task's progress leads the context.
            items = [ContextItem("task", line) for line in (self.governor.task_lines(scope, read_scope.get("task_id"))
                                                             if explanation.route.kind == "task" else [])]
            items += [ContextItem("persona", line) for line in self.governor.fact_lines(explanation.facts)]
            summary = self._read_summary(scope, read_scope.get("session_id"), read_scope.get("task_id"),
                                         read_scope.get("domain"), explanation.route.identifiers)
            if summary.text:
                items.append(ContextItem("summary", summary.text))
            entries = self.governor.window_for_read(self.window.entries(scope), scope, read_scope.get("session_id"),
                                                    read_scope.get("task_id"))
            items += [ContextItem("recent", message.content, message.role, rid) for rid, message in entries]
            in_window = {record_id for record_id, _ in entries}
            fresh = [a for a in explanation.admitted if a.record_id not in in_window][:top_k]
            self.governor.record_usage(explanation, returned=[a.record_id for a in fresh])
            # relevance × weight: the threshold was applied to their product, the effective score.
            items += [ContextItem("memory", a.record["content"], a.record["role"], a.record_id, a.relevance, a.weight)
                      for a in fresh]
            shown = [rid for rid, _ in entries if rid is not None] + [rid for rid in _quoted(summary) if rid is not None]
            # The read log redacts each memory text once, however often the same memory comes back.
            self._log_read(explanation, user_id, read_scope, "build_context", items,
                           shown=shown + [a.record_id for a in fresh])
            return render(items, format)

    def recent_messages(self, user_id: str = DEFAULT_USER, *, tenant_id: str | None = None) -> list[Message]:
        """The user's recent window, oldest first."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._ensure(scope)
            return self.window.messages(scope)

    def summary(self, user_id: str = DEFAULT_USER, *, tenant_id: str | None = None, session_id: str | None = None,
                task_id: str | None = None) -> str:
        """The summary of what left the user's window, as a read in this session and task may see
        it ('' if none): corrected, ended-session, other-task and unverified memories left out."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._ensure(scope)
            return self._read_summary(scope, session_id, task_id).text

    def _read_summary(self, scope: tuple[str | None, str], session_id: str | None, task_id: str | None,
                      domain: str | None = None, identifiers: tuple[str, ...] = ()) -> Summary:
        """The summary as this read may see it. When the summarizer says which records its text
        shows, those few are judged first: if this read may see them all, the stored text is the
        answer (its count still includes what it no longer shows). Only otherwise are the covered
        memories judged (the latest ``SUMMARY_HORIZON``) and the visible ones refolded."""
        stored = self.summaries.get(scope)
        judge = partial(self.governor.summary_entries, scope=scope, session_id=session_id, task_id=task_id,
                        domain=domain, identifiers=identifiers)
        if stored.shows and None not in stored.shows and all(e.shown for e in judge(stored.shows)):
            return stored
        return self._summary_for(scope, judge(stored.covers))

    def _summary_for(self, scope: tuple[str | None, str], entries: Any) -> Summary:
        """The summarizer's fold over the covered memories this read may see (the stored fold when
        it may see them all); refolded only when that set changes."""
        stored = self.summaries.get(scope)
        shown = tuple(e.record_id for e in entries if e.shown)
        if shown == stored.covers:
            return stored
        memo = self._summary_memo.get(scope)
        if memo is not None and memo[0] == shown:
            return memo[1]
        summary = Summary()
        for record_id in shown:
            record = self.store.get(record_id) if record_id is not None else None
            if record is not None:
                summary = self.summaries.summarizer.fold(summary, _as_message(record), record_id)
        self._summary_memo[scope] = (shown, summary)
        return summary

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        """Every user (under ``tenant_id``) with something in any track, in first-seen order."""
        with self._lock:
            seen = dict.fromkeys(self.store.users(tenant_id=tenant_id))  # by first stored record
            seen.update(dict.fromkeys(user for tenant, user in self.storage.tracks.scopes() if tenant == tenant_id))
            seen.update(dict.fromkeys(user for tenant, user in self._unsaved or () if tenant == tenant_id))  # saved when the batch ends
        return list(seen)

    def rebuild_vectors(self) -> int:
        """Re-embed every record with this manager's embedder (one transaction); return how many."""
        if self.semantic is None:
            raise ValueError("this MemoryManager has no embedder: pass embedder= to give it a semantic track")
        with self._lock:
            return self.semantic.rebuild()

    # -- erasure -----------------------------------------------------------------------------
    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> EraseReceipt:
        """Remove the user from every track and every file the library wrote; return a receipt.

        All or nothing: the state database's part commits at once with an intent to rewrite the
        files; if the process dies before the files are rewritten, the next open finishes the job.
        The receipt comes back only when everything is done.
        """
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._not_in_batch("erase_user")
            self._summary_memo.pop(scope, None)  # a refolded summary holds the user's words too
            with self._changing(scope):
                window, summary = self.window.erase(scope), self.summaries.erase(scope)
                state = self.governor.state.erase(scope)
                ledger = self.ledger.erase(scope_key(user_id, tenant_id))
                self.storage.intend("erase_user", user_id, tenant_id)
            try:
                done = [d for d in self.storage.complete_intents() if (d.tenant_id, d.user_id) == scope]
            finally:
                forget_texts()  # the analysis caches are keyed by memory texts: none of the user's may stay
            store, logs = sum(d.store for d in done), sum(d.logs for d in done)
            db_path = self.storage.db.path
            state_files = (str(db_path),) if db_path is not None and (ledger or window or summary or state) else ()
            files = tuple(dict.fromkeys([f for d in done for f in d.store_files] + [*state_files]
                                        + [f for d in done for f in d.log_files]))
            damaged = tuple(f"{line.path}:{line.line}" for d in done for line in d.damaged_log_lines)
            receipt = EraseReceipt(user_id, window, summary, store, ledger, state, logs, files, tenant_id, damaged)
            # The log keeps that an erasure happened — a fingerprint and counts, never the content.
            self._log("erasure", None, None, user_hash=user_hash(user_id, tenant_id), removed=receipt.to_dict()["removed"])
            return receipt

    def forget(self, user_id: str, record_id: int, *, tenant_id: str | None = None, scrub: bool = True) -> bool:
        """Remove one of the user's memories from every track (the summary is rebuilt without it).

        All or nothing, like ``erase_user``. Then the file is scrubbed: on SQLite and PostgreSQL
        that rebuilds every table (``VACUUM``), which costs what the whole store costs. A caller
        replacing a value rather than erasing it (the LangGraph store's put to an existing key)
        passes ``scrub=False``: the memory is gone from every track and log all the same, and its
        old bytes leave the file's free pages at the next scrubbing erasure."""
        if not isinstance(scrub, bool):
            raise TypeError(f"scrub must be True or False, got {scrub!r}")
        scope = require_scope(user_id, tenant_id)
        check_record_id(record_id)
        with self._lock:
            self._not_in_batch("forget")
            record = self.store.get(record_id)
            if record is None or (record.get("tenant_id"), record["user_id"]) != scope:
                return False
            self._summary_memo.pop(scope, None)
            with self._changing(scope):
                self._rebuild_summary(scope, {record_id})
                self.window.remove(scope, record_id)
                self.ledger.forget(record_id)
                self.storage.intend("forget", user_id, tenant_id, record_id)
            try:
                self.storage.complete_intents(replacing=None if scrub else record_id)
            finally:
                forget_texts()
            return True

    def _adopt_splits(self, scope: tuple[str | None, str], superseded: set[int]) -> None:
        """A correction superseded one clause of a message whose other clauses stay true; governance
        stored those as a split record. The window and the summary show the split in its place."""
        splits = {r["metadata"]["split_from"]: r for r in self.store.records(scope[1], tenant_id=scope[0])
                  if isinstance(r.get("metadata"), dict) and r["metadata"].get("split_from") in superseded}
        if not splits:
            return
        self.window.load(scope, [(splits[rid]["record_id"], replace(message, content=splits[rid]["content"]))
                                 if rid in splits else (rid, message) for rid, message in self.window.entries(scope)])
        covers = [splits[rid]["record_id"] if rid in splits else rid for rid in self.summaries.get(scope).covers]
        if covers != list(self.summaries.get(scope).covers):
            kept = [(rid, self.store.get(rid)) for rid in covers if rid is not None]
            self.summaries.rebuild(scope, [(rid, _as_message(r)) for rid, r in kept if r is not None])

    def _rebuild_summary(self, scope: tuple[str | None, str], without: set[int]) -> None:
        """Refold the scope's summary from the store, leaving out ``without`` (if it covers any)."""
        covered = self.summaries.get(scope).covers
        if without.isdisjoint(covered):
            return
        kept = [(rid, self.store.get(rid)) for rid in covered if rid not in without and rid is not None]
        self.summaries.rebuild(scope, [(rid, _as_message(r)) for rid, r in kept if r is not None])

    # -- health ------------------------------------------------------------------------------
    def health(self, user_id: str | None = None, *, tenant_id: str | None = None) -> HealthReport:
        """The memory health dashboard (pollution rate, decay efficiency, leakage, ...) right now:
        of the whole store, or, given ``user_id`` (and ``tenant_id``), of that user's memory only."""
        scope = require_scope(user_id, tenant_id) if user_id is not None else None
        with self._lock, consistent_reads(self.storage.db):  # one picture, while other processes write
            writes = self.audit.writes() if self.audit is not None else []
            reads = self.audit.reads() if self.audit is not None else []
            if scope is None:
                records, states = self.store.all_records(), self.ledger.all_states()
            else:  # only the user's records and events: another user's counts are theirs
                records = self.store.records(scope[1], tenant_id=scope[0])
                states = self.ledger.states(r["record_id"] for r in records)
                writes, reads = ([e for e in log if (e.tenant_id, e.user_id) == scope] for log in (writes, reads))
            return health_report(records, states, writes, reads, rates=self.policy.rates, now=self._now())

    # -- audit -------------------------------------------------------------------------------
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
            self.storage.log("reads", read_event(explanation, self._now().isoformat(), scope, read_scope, call, context, shown))

    # -- the tracks on disk --------------------------------------------------------------------
    @contextmanager
    def _changing(self, scope: tuple[str | None, str]) -> Iterator[None]:
        """One transaction that also saves the scope's window, summary and state; if anything
        fails, the transaction rolls back and the in-memory tracks are read back from storage."""
        try:
            with self.storage.transaction():
                self._ensure(scope)
                yield
                if self._unsaved is None:
                    self._save(scope)
                else:
                    self._unsaved[scope] = None  # saved once, when the batch ends
        except BaseException:
            self._drop_cached([scope])  # read back from storage on next use
            raise

    def _ensure(self, scope: tuple[str | None, str]) -> None:
        """Make the scope's cached tracks current: read them from storage the first time, and again
        whenever another process (or another manager on the same file) has committed since."""
        if self.storage.changed_elsewhere():  # a batch's unsaved tracks are the truth: they stay
            self._drop_cached([s for s in self._fresh if s not in (self._unsaved or ())])
        if scope in self._fresh:
            self._fresh[scope] = self._fresh.pop(scope)  # now the most recently used
            return
        self._load(scope)
        self._fresh[scope] = None
        # Over the bound: forget the least recently used scopes (never a batch's unsaved ones).
        excess = len(self._fresh) - self.cache_users
        if excess > 0:
            self._drop_cached([s for s in self._fresh if s != scope and s not in (self._unsaved or ())][:excess])

    def _drop_cached(self, scopes: list[tuple[str | None, str]]) -> None:
        """Forget what this process caches of these scopes' tracks; storage keeps them."""
        for scope in scopes:
            self._fresh.pop(scope, None)
            self._summary_memo.pop(scope, None)
            self.window.load(scope, [])
            self.summaries.load(scope, Summary())
            self.governor.state.load(scope, [], [])
            self.storage.tracks.forget(scope)

    def _save(self, scope: tuple[str | None, str]) -> None:
        state = self.governor.state
        self.storage.tracks.save(scope, ScopeTracks(self.window.entries(scope), self.summaries.get(scope),
                                                    state.sessions(scope), state.tasks(scope)))

    def _load(self, scope: tuple[str | None, str]) -> None:
        tracks = self.storage.tracks.load(scope)
        self.window.load(scope, tracks.window)
        self.summaries.load(scope, tracks.summary)
        self.governor.state.load(scope, tracks.sessions, tracks.tasks)

    def close(self) -> None:
        """Release the store's file lock and the state database's connection."""
        self.storage.close()

    # -- display -----------------------------------------------------------------------------
    _USERS_SHOWN = 10  # a store may hold thousands of users; a repr names the first few

    def _shown(self) -> Shown:
        """Where memory lives and how it reads: backend, path, users, threshold, scorer.

        Looking changes nothing: no read is logged, nothing is opened, and a closed manager says it
        is closed (and why) instead of raising."""
        fields: list[tuple[str, Any]] = [("backend", self.backend), ("path", self.path)]
        try:
            users = None if self.storage.closed else self.users()
        except StoreClosedError:  # closed by another opening between the check and the read
            users = None
        if users is None:
            fields.insert(0, ("closed", self.closed_reason or "it was closed"))
        else:
            more = len(users) - self._USERS_SHOWN
            fields.append(("users", tuple(users[:self._USERS_SHOWN]) + ((f"… and {more} more",) if more > 0 else ())))
        fields += [("threshold", self.threshold), ("scorer", self.scorer), ("window_size", self.window_size),
                   ("governance", self.governance)]
        return Shown("MemoryManager", tuple(fields))

    def _location(self) -> Path | str:
        """The store's file (a JSON store's records, else the state database), a server's URL with
        its password masked, or "in memory"."""
        path = getattr(self.store, "path", None) or self.storage.db.path
        if path is not None:
            return Path(path)
        where = getattr(self.storage.db, "where", None)  # PostgreSQL: the URL as mask_url writes it
        return str(where) if where not in (None, ":memory:") else "in memory"

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _open_storage(store: VectorStore | None, store_path: Path | str | None, fsync: bool, scorer: Any,
                  ledger_path: Path | str | None, audit: AuditLog | bool, adopt_store: bool, cache_users: int) -> Storage:
    """The storage a manager's arguments ask for: a plugged-in store (its state in memory, or at
    ``ledger_path``), or the JSON Lines backend at ``store_path`` (None: all in memory)."""
    if store is not None:
        storage = Storage(store, StateDatabase(ledger_path, fsync=fsync), _AuditLog(None), adopt_store=True)
    else:
        storage = open_storage(store_path, fsync=fsync, scorer=scorer, ledger_path=ledger_path, adopt_store=adopt_store,
                               cache_users=cache_users)
    if isinstance(audit, _AuditLog):
        storage.audit = audit
    return storage


def _open_semantic(storage: Storage, embedder: Embedder | None, rebuild: bool, cache_users: int) -> SemanticStore | None:
    """The semantic track over the storage's records (None without an embedder); a refused
    embedder (another model than the store's vectors) closes the storage before the error."""
    if embedder is None:
        return None
    try:
        return SemanticStore(storage.records, storage.vectors, embedder, rebuild=rebuild, cache_users=cache_users)
    except BaseException:
        storage.close()
        raise


def _quoted(summary: Summary) -> tuple[int | None, ...]:
    """The records whose words the summary's text holds (every covered one, if it does not say
    which record every snippet shows: an older release's snippets)."""
    return summary.covers if summary.shows is None or None in summary.shows else summary.shows


def _as_message(record: dict[str, Any]) -> Message:
    """A stored record as a message for the summary; personal data redacted (an isolated record
    keeps it raw in the store, and the summary is another track)."""
    content = redact(record["content"], find_sensitive(record["content"]))
    return Message(record["role"], content, record["user_id"], tenant_id=record.get("tenant_id"))
