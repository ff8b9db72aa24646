"""The governor: the write policy and the admission rules, applied to a store and a ledger.

``MemoryManager`` owns the tracks; the governor decides. On the write path it plans the message
(``write.py``), stores what may be stored, registers trust and weight in the ledger, indexes
identifiers, records persona facts as pending, and applies corrections. On the read path it routes
the query, gathers candidates (lexical hits, plus exact identifier matches), judges each one
(``admission.py``), collapses duplicates, optionally re-ranks by MMR, and cuts to ``top_k``.

With ``GovernancePolicy(enabled=False)`` it behaves like the article: everything is stored and
trusted, and the threshold on similarity is the only rule.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Sequence

from ..messages import Message, WriteResult
from ..storage import VectorStore
from ..text.analyzer import analyze
from ..text.memo import UserMemo
from .admission import Admission, Explanation, ReadContext, collapse_duplicates, cut_to_top_k, admit, mmr_order
from .decay import DecayRates
from ..messages import Fact, MemoryState, SessionInfo, TaskInfo
from ..storage.ledger import Ledger, scope_key
from .confirmation import question_for
from .identifiers import extract_identifiers, version_candidates
from .judge import Judge
from .persona import SINGLE_VALUED_KEYS, render_fact
from .reply import asks, chosen_option, reply_to
from .answers import question_clauses
from .resolve import Resolver
from .revocation import detect_revocations
from .rewording import collapse_rewordings
from .policy import default_source, is_trusted
from .router import Route, route
from .state import StateTracker
from .track_view import SUMMARY_HORIZON, TrackView
from .write import WritePlan, plan_write

__all__ = ["GovernancePolicy", "Governor", "Scope", "SUMMARY_HORIZON"]

Scope = tuple  # (tenant_id or None, user_id)

_SCORE_REASONS = {"below_threshold", "decayed", "beyond_top_k"}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def default_state(record: dict[str, Any], rates: DecayRates) -> MemoryState:
    """Governance state for a record the ledger has no row for (written without governance, or
    before a crash between the store and the ledger): trust follows its source, never more."""
    trusted = is_trusted(record.get("source") or default_source(record.get("role", "")))
    return MemoryState(verified=trusted, base_weight=1.0 if trusted else rates.unverified_weight)


@dataclass(frozen=True)
class GovernancePolicy:
    """The knobs of governance, with the manual's defaults."""

    enabled: bool = True
    rates: DecayRates = field(default_factory=DecayRates)
    sensitive_policy: str = "redact"  # redact | refuse | isolate
    session_ttl: timedelta = timedelta(minutes=30)
    task_ttl: timedelta = timedelta(hours=24)
    dedup: bool = True
    mmr_lambda: float | None = None  # e.g. 0.7 to trade a little relevance for diversity
    candidate_pool: int = 50  # lexical candidates judged per query (at least 5 × top_k)
    judge: Judge | None = None  # a model that reads sentences instead of the rules (validated by them)

    def __post_init__(self) -> None:
        if self.mmr_lambda is not None and not 0.0 <= self.mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must be within [0, 1], got {self.mmr_lambda}")
        if self.candidate_pool < 1:
            raise ValueError("candidate_pool must be >= 1")


class Governor:
    """Applies a ``GovernancePolicy`` to one store and one ledger."""

    def __init__(self, store: VectorStore, ledger: Ledger, policy: GovernancePolicy, clock: Callable[[], datetime],
                 memo: UserMemo | None = None) -> None:
        self.store = store
        # What reads learn from each user's memory texts, kept with the user (``text/memo.py``).
        self.memo = memo if memo is not None else UserMemo()
        self.ledger = ledger
        self.policy = policy
        self.clock = clock
        self.state = StateTracker(clock, policy.session_ttl, policy.task_ttl)
        # What a read may see of the window, the summary and the task line (``track_view.py``).
        self.view = TrackView(store, ledger, self.state, policy, clock, lambda record: default_state(record, policy.rates),
                              self.memo)

    # -- write path --------------------------------------------------------------------------
    def write(self, message: Message, plan: WritePlan | None = None,
              recent: Sequence[tuple[int | None, Message]] = ()) -> tuple[WriteResult, Message]:
        """Store ``message`` as policy says (``plan``: this message's ``plan``, if made already;
        ``recent``: the user's window before it, which a pronoun may point back to); return the
        result and the message the window should show."""
        scope = (message.tenant_id, message.user_id)
        plan = plan if plan is not None else self.plan(message)
        # "for this session only, …": the user's words give the message its domain, when its
        # session (or task) is there to hold it.
        if plan.scope is not None and message.domain is None and getattr(message, f"{plan.scope}_id") is not None:
            message = replace(message, domain=plan.scope)
        # The conversation this message continues: the window's turns of its session and task.
        # A pointer, a pronoun or a "yes" reaches back only that far, never into another session.
        here = [turn for turn in recent if (turn[1].session_id, turn[1].task_id) == (message.session_id, message.task_id)]
        before = here[-1] if here and here[-1] is recent[-1] else None  # the turn just before this one
        # Whether the assistant's turn just before asked or offered something, which this message answers.
        asked = self.policy.enabled and before is not None and before[1].role == "assistant" and asks(before[1].content)
        record_id = self._store(message, plan, replies=asked) if plan.embed else None  # may refuse: nothing changed yet
        if message.session_id is not None:
            self.state.touch_session(scope, message.session_id)
        mine = [rid for rid, said in reversed(here) if rid is not None and said.role == "user"]
        # Governance reads what is kept: never words the user asked not to store ("don't store this: …").
        read = replace(message, content=plan.window_text)
        # The user's turns in the window that ask something (their texts were read when written:
        # cached), which an answer in this message may take out.
        asking = [rid for rid, said in reversed(here) if rid is not None and said.role == "user" and question_clauses(said.content)]
        # A decision answers the user's last turn of this task, even one of an earlier session.
        across = [rid for rid, said in reversed(recent) if rid is not None and said.role == "user" and said.task_id == message.task_id]
        previous = next((rid for rid, said in reversed(here) if said.role == "user"), None)  # the user's last turn
        supersedes, reasons, facts, revoked = self._resolve(read, plan, record_id, mine, before, asking, across, previous)
        answered, kept_one = self._answer(read, plan, record_id, before, asked)
        reasons, supersedes = reasons + answered, supersedes + kept_one
        # The summary later folds what leaves the window, except unverified model output (see may_summarize).
        stored_in = ("window", "summary") if plan.verified else ("window",)
        stored_in += ("long_term",) if record_id is not None else ()
        stored_in += ("persona_facts",) if facts else ()
        fact_dicts = tuple(f.to_dict() for f in facts)
        question = question_for(facts, render_fact, bool(_CJK.search(message.content))) if facts else None
        result = WriteResult(record_id, stored_in, plan.source, message.domain, plan.verified, plan.base_weight,
                             plan.reasons + reasons, tuple(f.to_dict() for f in plan.sensitive),
                             fact_dicts[0] if fact_dicts else None, supersedes, fact_dicts, question, revoked)
        shown = replace(message, content=plan.window_text)
        if (plan.claims or plan.lasting) and message.task_id is not None and message.domain is None:  # the user's, not the task's
            shown = replace(shown, metadata={**(message.metadata or {}), "about_user": True})
        return result, shown

    def _answer(self, message: Message, plan: WritePlan, record_id: int | None,
                last: tuple[int | None, Message] | None, asked: bool) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The user's reply to the assistant message right before it (``reply.py``): a yes
        verifies it, a no supersedes it; picking one of the options it laid out ("the first one",
        a yes to "… I'd lean Alma. Book Alma?") verifies that option, and the others leave with
        the message (a split keeps the rest: returned as superseded). Only the user's own words,
        never the model's. Returns (reasons, superseded ids)."""
        if (not self.policy.enabled or plan.source != "user_input" or plan.quoted or last is None
                or last[0] is None or last[1].role != "assistant"):
            return (), ()
        answer = reply_to(message.content, asked=asked, offer=last[1].content)
        choice = chosen_option(message.content, last[1].content, answer == "accept") if answer != "deny" else None
        if choice is not None and record_id is not None and self.ledger.verify(last[0]):
            resolver = Resolver(self.store, self.ledger, self.policy.rates, _iso)
            resolver.supersede_spans(message, last[0], choice[1], record_id)
            return ("verified_previous_reply", "chose_option"), (last[0],)
        if answer == "accept" and self.ledger.verify(last[0]):
            return ("verified_previous_reply",), ()
        if answer == "deny" and record_id is not None:
            self.ledger.supersede(last[0], record_id, self.policy.rates.conflict)
            return ("rejected_previous_reply",), ()
        return (), ()

    def _resolve(self, message: Message, plan: WritePlan, record_id: int | None, recent: Sequence[int] = (),
                 before: tuple[int | None, Message] | None = None,
                 asking: Sequence[int] = (), across: Sequence[int] = (),
                 previous: int | None = None) -> tuple[tuple[int, ...], tuple[str, ...], list[Fact], tuple[int, ...]]:
        """Conflicts of this write (``resolve.py``): a reply confirming facts, a correction, a
        revocation, updates. Returns (superseded ids, reasons, facts, revoked ids)."""
        if not self.policy.enabled or plan.source != "user_input" or plan.quoted:
            return (), (), [], ()  # a quoted instruction confirms, corrects and updates nothing
        resolver = Resolver(self.store, self.ledger, self.policy.rates, _iso)
        reasons: tuple[str, ...] = ()
        if plan.affirmation and resolver.confirm_reply(message, record_id):
            reasons += ("confirmed_previous_facts",)
        supersedes: tuple[int, ...] = ()
        revoked: tuple[int, ...] = ()
        if plan.revocations:
            previous = _pointed(before, recent, own=any(r.own for r in plan.revocations))
            taken, found, forget = resolver.revoke(message, plan.revocations, record_id, recent, previous)
            supersedes, revoked, reasons = taken, taken if forget else (), reasons + found
        # Both a correction and a take-back may speak ("it's on Tuesday, not Monday. And forget my
        # locker code"); but a correction whose new words are themselves a take-back ("actually,
        # please forget my address") is that take-back, not a correction of one of its clauses.
        if plan.correction and not (supersedes and detect_revocations(plan.correction.new_value)):
            corrected, found = resolver.correct(message, plan.correction, record_id)
            supersedes, reasons = supersedes + tuple(r for r in corrected if r not in supersedes), reasons + found
        facts: list[Fact] = []
        # A correction may state facts too ("不对，我用的是iPhone"); and "I like coffee, not tea"
        # corrects nothing if nothing said tea, but still says the user likes coffee.
        if plan.claims:
            facts, replaced = resolver.declare(message, plan.claims, record_id)
            supersedes += tuple(r for r in replaced if r not in supersedes)
        if not plan.correction:
            supersedes += tuple(r for r in resolver.person_updates(message, record_id) if r not in supersedes)
        if not supersedes:  # nothing said it changed: the same thing said again with a new when
            supersedes += resolver.restatements(message, record_id, recent)
        if not supersedes:  # what the user decided settles what they were only considering
            settled = resolver.decisions(message, record_id, across)
            supersedes, reasons = supersedes + settled, reasons + (("decision",) if settled else ())
        answered = resolver.answered(message, record_id, asking, previous)  # a question asked earlier is no longer memory
        if answered:
            supersedes, reasons = supersedes + tuple(r for r in answered if r not in supersedes), reasons + ("answered_question",)
        if plan.correction and record_id is not None:
            facts += [f for f in self.ledger.facts_by_record([record_id]).get(record_id, []) if f not in facts]
        return supersedes, reasons, facts, revoked

    def plan(self, message: Message) -> WritePlan:
        """What the write policy decides for ``message``, before anything is stored (it may refuse)."""
        if self.policy.enabled:
            return plan_write(message, sensitive_policy=self.policy.sensitive_policy, rates=self.policy.rates,
                              judge=self.policy.judge)
        # The article's policy: store everything, trust everything.
        source = message.source or ("llm_response" if message.role == "assistant" else "user_input")
        return WritePlan(source=source, verified=True, base_weight=1.0, stored_text=message.content,
                         window_text=message.content, embed=True, isolated=False, reasons=("article_mode",))

    def _store(self, message: Message, plan: WritePlan, *, replies: bool = False) -> int:
        fields: dict[str, Any] = {"created_at": _iso(message), "source": plan.source}
        for name in ("domain", "session_id", "task_id"):
            if getattr(message, name) is not None:
                fields[name] = getattr(message, name)
        if message.metadata:
            fields["metadata"] = dict(message.metadata)
        if self.policy.enabled and plan.source == "user_input":
            fields["read_by"] = plan.read_by  # which engine read its sentences: explain shows it with the record
            if plan.asks:
                fields["asks"] = True  # a later answer looks for it (``answers.py``)
            if replies:
                fields["replies"] = True  # answers the assistant's question: the summary keeps it with its exchange
            if (plan.claims or plan.lasting) and message.task_id is not None:
                fields["about_user"] = True  # about the user, or said to hold beyond the task: not bound to it
        record = self.store.add(message.user_id, message.role, plan.stored_text, tenant_id=message.tenant_id, **fields)
        key = scope_key(message.user_id, message.tenant_id)
        if self.policy.enabled:
            self.ledger.register(record["record_id"], key, verified=plan.verified, base_weight=plan.base_weight,
                                 isolated=plan.isolated, quoted=plan.quoted)
            self.ledger.index_identifiers(record["record_id"], key, plan.identifiers)
        return record["record_id"]

    # -- read path ---------------------------------------------------------------------------
    def explain(self, query: str, scope: Scope, *, threshold: float, top_k: int, session_id: str | None = None,
                task_id: str | None = None, domain: str | None = None) -> Explanation:
        """Judge every candidate for ``query`` in ``scope``; no side effects."""
        decision = self._route(query, scope)
        # Step 1: candidates — lexical hits, plus (exact route) every memory naming the identifier.
        candidates = self._candidates(query, scope, decision.identifiers, max(self.policy.candidate_pool, 5 * top_k))
        if not self.policy.enabled:
            admissions = [Admission(r, s, 1.0, s, threshold, s >= threshold, () if s >= threshold else ("below_threshold",),
                                    relevance=s) for s, r in candidates.values()]
            return Explanation(query, decision, tuple(cut_to_top_k(admissions, top_k)))
        read = ReadContext(
            threshold, self.clock(), self.policy.rates, decision, session_id, task_id, domain,
            session_status=lambda sid: self.state.session_status(scope, sid),
            task_state=lambda tid: self.view.task_state(scope, tid),
            identifiers=self._identifiers(candidates) if decision.identifiers else {},
            query_terms=frozenset(analyze(query)),
            # hybrid retrieval (``storage/semantic_store.py``): each candidate's lexical and semantic parts
            components=self.store.components(query, scope[1], tenant_id=scope[0]) if hasattr(self.store, "components") else {},
            scope=scope, memo=self.memo,
        )
        # Step 2: judge each one; a corrected memory that matched brings in its correction.
        # (One read of the user's facts serves both the candidates' facts and the confirmed ones.)
        user_facts = self.ledger.facts(scope_key(scope[1], scope[0]))
        admissions = self._recall_corrections(self._judge_all(candidates, read, user_facts), scope, read)
        # Step 3: best first, duplicates collapsed, optionally diversified, cut to top_k.
        admissions.sort(key=lambda a: (not a.admitted, -a.effective, a.record_id))
        if self.policy.dedup:
            admissions = collapse_rewordings(collapse_duplicates(admissions))
        if self.policy.mmr_lambda is not None:
            admissions = mmr_order(admissions, self.policy.mmr_lambda)
        facts = tuple(f.to_dict() for f in user_facts if f.status == "confirmed")
        return Explanation(query, decision, tuple(cut_to_top_k(admissions, top_k)), facts)

    def _route(self, query: str, scope: Scope) -> Route:
        """The router's decision; and a two-part number its form leaves ambiguous ("SDK 2.7", like
        "GPA 3.8") is a version when this user's memories name that version: an exact read."""
        decision = route(query)
        if decision.identifiers or not self.policy.enabled:
            return decision
        key = scope_key(scope[1], scope[0])
        named = tuple(v for v in version_candidates(query) if self.ledger.records_with(key, [v]))
        if not named:
            return decision
        return Route("exact", ("exact", "long_term", "window", "summary"),
                     f"query names {', '.join(named)}, a version the user's memories name: only exact matches may be admitted", named)

    def _candidates(self, query: str, scope: Scope, identifiers: tuple[str, ...], pool: int) -> dict[int, tuple[float, dict]]:
        tenant_id, user_id = scope
        hits = self.store.search(query, user_id, pool, 1e-12, tenant_id=tenant_id)
        candidates = {hit.record["record_id"]: (hit.score, hit.record) for hit in hits}
        if self.policy.enabled:
            named = [rid for rid in self.ledger.records_with(scope_key(user_id, tenant_id), identifiers) if rid not in candidates]
            # One scan scores every named memory as the store's scorer does (one score() per memory
            # rescanned the user's index each time: quadratic when thousands name the identifier).
            scored = {hit.record["record_id"]: hit.score
                      for hit in self.store.search(query, user_id, sys.maxsize, 1e-12, tenant_id=tenant_id)} if named else {}
            for record_id in named:
                record = self.store.get(record_id)
                # subtle: ledger ids point into the store; check the owner, never trust the id alone.
                if record is not None and _owner(record) == scope:
                    candidates[record_id] = (scored.get(record_id, 0.0), record)
        return candidates

    def _identifiers(self, candidates: dict[int, tuple[float, dict]]) -> dict[int, set[str]]:
        """Each candidate's identifiers: from the ledger, or read from the text when the ledger has
        no row for it (written without governance, or just before a crash)."""
        found = self.ledger.identifiers_of(candidates)
        registered = self.ledger.states(candidates)
        for rid, (_, record) in candidates.items():
            if rid not in registered:
                found[rid] = set(extract_identifiers(record["content"]))
        return found

    def _judge_all(self, candidates: dict[int, tuple[float, dict]], read: ReadContext,
                   user_facts: list[Fact]) -> list[Admission]:
        states = self.ledger.states(candidates)
        facts: dict[int, list[Fact]] = {}
        for fact in user_facts:  # a record's facts are its owner's: the user's facts hold them all
            if fact.record_id in candidates:
                facts.setdefault(fact.record_id, []).append(fact)
        rates = self.policy.rates
        return [self._judge(score, record, states.get(rid) or default_state(record, rates), facts.get(rid, []), read)
                for rid, (score, record) in candidates.items()]

    def _recall_corrections(self, admissions: list[Admission], scope: Scope, read: ReadContext) -> list[Admission]:
        """"不是周三，是周四" shares no word with "我哪天去看牙医", but the memory it corrected may:
        when a superseded memory is relevant, its correction is judged on that relevance too (or on
        its own, if higher) — marked ``recalled_via``. Chains (A corrected by B, B by C) are followed."""
        result = list(admissions)
        by_id = {a.record_id: i for i, a in enumerate(result)}
        # Only a corrected memory that is really about the query (content words in common) speaks for its correction.
        queue = [a for a in result if "superseded" in a.reasons and a.similarity >= read.threshold
                 and "only_stop_words" not in a.reasons]
        while queue:
            corrected = queue.pop(0)
            state = self.ledger.states([corrected.record_id]).get(corrected.record_id)
            successor = state.superseded_by if state is not None else None
            record = self.store.get(successor) if successor is not None else None
            if record is None or _owner(record) != scope:
                continue
            own = result[by_id[successor]].similarity if successor in by_id else 0.0
            judged = self._judge(max(own, corrected.similarity), record, self._state_of(record),
                                 self.ledger.facts_by_record([successor]).get(successor, []), read, recalled=True)
            judged = replace(judged, recalled_via=corrected.record_id if corrected.similarity > own else None)
            if successor in by_id:
                result[by_id[successor]] = judged
            else:
                by_id[successor] = len(result)
                result.append(judged)
            if "superseded" in judged.reasons and judged.record_id != corrected.record_id:
                queue.append(judged)
        return result

    def _state_of(self, record: dict[str, Any]) -> MemoryState:
        return self.ledger.states([record["record_id"]]).get(record["record_id"]) or default_state(record, self.policy.rates)

    @staticmethod
    def _judge(score: float, record: dict[str, Any], state: MemoryState, facts: list[Fact], read: ReadContext,
               recalled: bool = False) -> Admission:
        admission = admit(score, record, state, read, recalled=recalled)
        reason = _fact_reason(facts)
        if reason and reason not in admission.reasons:
            admission = replace(admission, admitted=False, reasons=admission.reasons + (reason,))
        return admission

    def record_usage(self, explanation: Explanation, returned: list[int] | None = None) -> None:
        """Usage after a retrieval (``decay.py``): what a context ``returned`` (default: all admitted)
        is reinforced — or, with ``usage="literal"``, weakened ×0.95 per hit; a candidate that lost
        on score (below threshold, decayed, beyond top-k) counts a miss, and 3 misses in a row cost
        ×0.8. Rejections for other reasons (another session, unverified, ...) say nothing about the
        memory's use and count neither way."""
        if not self.policy.enabled:
            return
        hits = [a.record_id for a in explanation.admitted] if returned is None else returned
        missed = [a.record_id for a in explanation.rejected if set(a.reasons) <= _SCORE_REASONS]
        rates = self.policy.rates
        literal = rates.usage == "literal"
        self.ledger.record_usage(hits if literal else [], missed, hit=rates.usage_hit, miss=rates.usage_miss,
                                 streak=rates.miss_streak)
        if not literal:
            self.ledger.reinforce(hits, rates.usage_reinforce)

    # -- what the user confirms, and what leaves (the manager's only way to the ledger) -------
    def verify(self, record_id: int) -> bool:
        """The user confirmed a stored (model-written) memory: verified, full weight."""
        return self.ledger.verify(record_id)

    def confirm_fact(self, scope: Scope, key: str, value: str | None) -> int:
        """The user confirmed a pending persona fact (a value, or every pending one of ``key``)."""
        return self.ledger.confirm_fact(scope_key(scope[1], scope[0]), key, value, single_valued=key in SINGLE_VALUED_KEYS)

    def facts(self, scope: Scope, status: str | None = None) -> list[Fact]:
        return self.ledger.facts(scope_key(scope[1], scope[0]), status=status)

    def states(self, record_ids: Iterable[int]) -> dict[int, MemoryState]:
        """The ledger's rows (trust, weight, supersession, isolation) of these records."""
        return self.ledger.states(record_ids)

    def all_states(self) -> dict[int, MemoryState]:
        return self.ledger.all_states()

    def forget(self, record_id: int) -> None:
        """Everything governance knows of one record (its row, identifiers, facts) leaves."""
        self.ledger.forget(record_id)

    def erase(self, scope: Scope) -> tuple[int, int]:
        """Everything governance knows of the scope leaves: (ledger rows, session and task rows)."""
        state = self.state.erase(scope)
        return self.ledger.erase(scope_key(scope[1], scope[0])), state

    # -- sessions and tasks (``state.py``): the state reads consult --------------------------------
    def end_session(self, scope: Scope, session_id: str) -> bool:
        return self.state.end_session(scope, session_id)

    def session(self, scope: Scope, session_id: str) -> SessionInfo | None:
        return next((s for s in self.state.sessions(scope) if s.session_id == session_id), None)

    def start_task(self, scope: Scope, task_id: str, ttl: timedelta | None) -> TaskInfo:
        return self.state.start_task(scope, task_id, ttl)

    def set_task_progress(self, scope: Scope, task_id: str, completion: float) -> TaskInfo:
        return self.state.set_progress(scope, task_id, completion)

    def finish_task(self, scope: Scope, task_id: str) -> TaskInfo:
        return self.state.finish_task(scope, task_id)

    def task(self, scope: Scope, task_id: str) -> TaskInfo | None:
        return self.state.task(scope, task_id)

    @staticmethod
    def fact_lines(facts: Iterable[dict[str, Any]]) -> list[str]:
        """Confirmed persona facts (an explanation's ``facts``, read with it) as context lines."""
        return [render_fact(fact["key"], fact["value"], fact["polarity"]) for fact in facts]


def _fact_reason(facts: list[Fact]) -> str | None:
    """What the facts a statement declared say about showing its words.

    While a fact waits for confirmation, the user's own words are the evidence and may enter as
    they are ("what laptop do I use?" finds "I use a Mac"). Once every fact it declared is
    confirmed, the statement reaches prompts as those facts, by reference (``shown_as_fact``); once
    every one was replaced, it is stale (``superseded``).
    """
    if not facts:
        return None
    statuses = {fact.status for fact in facts}
    if statuses == {"superseded"}:
        return "superseded"
    if statuses == {"confirmed"}:
        return "shown_as_fact"
    return None


def _owner(record: dict[str, Any]) -> Scope:
    return (record.get("tenant_id"), record["user_id"])


def _iso(message: Message) -> str:
    """The message's UTC timestamp as text (the manager stamps every message before writing)."""
    if message.timestamp is None:
        raise ValueError("message has no timestamp; write it through MemoryManager.add")
    return message.timestamp.isoformat()


def _pointed(before: tuple[int | None, Message] | None, mine: Sequence[int], own: bool = False) -> int | None:
    """The user's turn a pointer ("that last bit", "上一句") means: the turn just before, if it
    is the user's; past an assistant turn that only answered, the user's turn before it; after an
    assistant question or offer, nothing ("no, scrap that" answers the offer: ``reply.py``) —
    unless the pointer names the user's own words (``own``: "把我上一句抹掉", "delete my last message")."""
    if before is None:
        return None
    if before[1].role == "user":
        return before[0]
    return mine[0] if before[1].role == "assistant" and (own or not asks(before[1].content)) and mine else None
