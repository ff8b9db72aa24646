"""Resolving conflicts on the write path: corrections, updates, restatements and confirmations.

``conflicts.py`` decides *which* earlier clause a message contradicts; this module makes it so, on
the store and the ledger, for one write:

    correct     a correction supersedes the clause it found (×0.1, linked to its successor) and
                the facts declared there; their corrected values become pending facts
    declare     each claim of the message becomes a pending fact; an update ("I switched from
                Android to an iPhone") supersedes the earlier facts of that attribute and the
                statements that made them; saying the opposite, or the same again, supersedes
                the earlier statement
    confirm     "OK" / "对" right after a message that declared facts confirms them
    revoke      "forget what I told you about the loan" supersedes every sentence it names (the
                manager then forgets those records: ``MemoryManager.add``)

A clause is superseded without losing the rest of its message: the record is superseded and its
remaining clauses are stored as a new record (``split_from`` in its metadata, same time, same
trust), which takes over the facts declared there — "Swimming Monday 6pm, piano Wednesday 5pm"
corrected about the piano keeps "Swimming Monday 6pm" admissible.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Callable, Sequence

from ..messages import Declaration, Fact, Message
from ..storage import VectorStore
from ..storage.ledger import Ledger, scope_key
from ..storage.vector_store import hooks_of
from .conflicts import Target, clause_of, correction_target, may_update_person, person_update_targets, resolve_key, retraction_target, update_facts, terms_of
from .corrections import Correction
from .restatement import POINTER_REACH, VERSION, restated_clauses, restatement_target
from .revocation import MAX_TARGETS, Revocation, revocation_targets, sentences_holding
from .decay import DecayRates
from .decisions import considering, decided
from .facts import Claim, extract_claims
from .identifiers import extract_identifiers
from .answers import answer_terms, asked_about, question_clauses
from .categories import kinds_named, search_words
from .persona import SINGLE_VALUED_KEYS
from .scope import CONVERSATION_GAP

__all__ = ["Resolver"]

REVOCATION_CANDIDATES = 50  # records sharing the thing's words a take-back is checked against
RESTATEMENT_CANDIDATES = 20  # records sharing the thing's words that a restatement is checked against
UNIT_CANDIDATES = 200  # the user's latest statements a dose or weight set anew is checked against
_JOINERS = re.compile(r"^[\s，,、;；:：—–?？!！-]+|[\s，,、;；:：—–-]+$")  # a remainder never opens with a stray "?"


class Resolver:
    """Applies the conflicts of one write to a store and a ledger."""

    def __init__(self, store: VectorStore, ledger: Ledger, rates: DecayRates, iso: Callable[[Message], str]) -> None:
        self.store, self.ledger, self.rates, self._iso = store, ledger, rates, iso

    # -- history -------------------------------------------------------------------------------
    def history(self, message: Message, exclude: int | None) -> list[dict[str, Any]]:
        """The scope's live user statements of the message's task, every session, oldest first."""
        records = [r for r in self.store.records(message.user_id, tenant_id=message.tenant_id)
                   if r.get("source") == "user_input" and r["record_id"] != exclude and r.get("task_id") == message.task_id]
        states = self.ledger.states(r["record_id"] for r in records)
        return [r for r in records if r["record_id"] not in states or states[r["record_id"]].superseded_by is None]

    # -- corrections ---------------------------------------------------------------------------
    def correct(self, message: Message, correction: Correction, record_id: int | None) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """Supersede what ``correction`` corrects; return (superseded ids, reasons)."""
        history = self.history(message, record_id)
        facts = self.ledger.facts_by_record(r["record_id"] for r in history)
        target = correction_target(correction, history, facts, session_id=message.session_id)
        if target is None or record_id is None:
            return (), ("correction_target_not_found",)
        stale = self.supersede_clause(message, target, record_id)
        key = scope_key(message.user_id, message.tenant_id)
        for fact in stale:
            # The corrected value becomes a pending fact of the same kind and polarity
            # ("我用安卓" → "应该是Mac"; "我不吃香菜" → "不是香菜，是葱" is still a NOT).
            value = _corrected_value(fact.key, correction.new_value)
            if value is not None:
                self.ledger.put_fact(key, Declaration(fact.key, value, fact.polarity), record_id, self._iso(message))
        return (target.record_id,), (f"correction_target:{target.how}",)

    # -- declarations and updates ---------------------------------------------------------------
    def declare(self, message: Message, claims: tuple[Claim, ...], record_id: int | None) -> tuple[list[Fact], tuple[int, ...]]:
        """Record each claim as a pending fact; supersede what updates, flips and restatements replace."""
        key = scope_key(message.user_id, message.tenant_id)
        facts: list[Fact] = []
        superseded: list[int] = []
        for claim in claims:
            live = self.ledger.facts(key)
            if claim.key.endswith("?"):
                claim = Claim(resolve_key(claim, live, message.content), claim.value, claim.polarity, claim.start,
                              claim.end, claim.update, claim.old)
            if claim.update or claim.old:
                replaced = self._replace(message, update_facts(claim, live, SINGLE_VALUED_KEYS), record_id)
                superseded += replaced or self._retract(message, claim, record_id)
            if claim.key == "retract" or (claim.polarity < 0 and claim.update and claim.key in SINGLE_VALUED_KEYS):
                continue  # "我已经不在腾讯了" only retracts: there is no fact "employer = NOT 腾讯" to keep
            before = self.ledger.fact(key, claim.key, claim.value)
            facts.append(self.ledger.put_fact(key, claim.declaration, record_id, self._iso(message)))
            # The fact now points at the newest statement; the earlier one (said again, or revoked)
            # must not linger as a plain memory beside it.
            if before is not None and before.record_id not in (None, record_id) and record_id is not None:
                superseded += self._supersede_statement(message, before, record_id)
        return facts, tuple(dict.fromkeys(superseded))

    # -- revocations -----------------------------------------------------------------------------
    def revoke(self, message: Message, revocations: tuple[Revocation, ...], record_id: int | None,
               recent: Sequence[int] = (), previous: int | None = None) -> tuple[tuple[int, ...], tuple[str, ...], bool]:
        """Supersede what the first resolvable of ``revocations`` takes back; return (record ids,
        reasons, whether they are to be forgotten). ``recent``: the user's own turns in the recent
        window of this session and task, newest first; ``previous``: the turn just before, if the user's.

        Where each kind looks, and what it does:

            pointer ("that last bit")          the turn just before, if it is the user's    forgotten
            said ("what I told you about X")   the store's search for X, any session        forgotten
            withdrawn ("stop reminding me")    the store's search for X, requests only      superseded
            plain ("forget the Kindle idea")   the recent window only                       superseded
            kept ("forget my address")         the recent window, and the session's search   superseded
        """
        if record_id is None:
            return (), ("revocation_target_not_found",), False
        for revocation in revocations:
            if revocation.attribute:
                taken = self._revoke_attribute(message, revocation.attribute, record_id)
                if taken:
                    return taken, ("revocation_target:attribute",), False
            if revocation.pointer:
                ids = [previous] if previous is not None else []
                candidates = self._live([r for r in (self.store.get(rid) for rid in ids) if r is not None], message, record_id)
            elif revocation.said or revocation.withdraws:
                found = self._search(revocation.about, message)
                if revocation.withdraws:  # a request withdrawn in other words than it was made: the recent ones too
                    found += [r for r in (self.store.get(rid) for rid in recent) if r is not None]
                candidates = self._live(list({r["record_id"]: r for r in found}.values()), message, record_id)
            else:
                # A plain thing ("forget the hotel"): the recent turns; what is kept of the user
                # ("forget my address", "学校名字你别存了"): also what this session said of it
                # before them (a conversation goes on past the window).
                window = [r for r in (self.store.get(rid) for rid in recent) if r is not None]
                earlier = [r for r in self._search(revocation.about, message) if r.get("session_id") == message.session_id
                           and r["record_id"] not in recent] if revocation.kept else []
                candidates = self._live(window + earlier, message, record_id)
            targets = revocation_targets(revocation, sorted(candidates, key=lambda r: r["record_id"], reverse=True))
            if targets:
                spans: dict[int, list[tuple[int, int]]] = {}
                for target in targets:
                    spans.setdefault(target.record_id, []).append(target.span)
                for revoked, parts in spans.items():
                    self.supersede_spans(message, revoked, parts, record_id)
                return tuple(spans), (f"revocation_target:{targets[0].how}",), revocation.pointer or revocation.said
        return (), ("revocation_target_not_found",), False

    def _revoke_attribute(self, message: Message, attribute: str, record_id: int) -> tuple[int, ...]:
        """Supersede every live statement of the user's ``attribute`` ("forget where I live": each
        clause that declared a ``location``), found through the user's facts of that key."""
        facts = self.ledger.facts(scope_key(message.user_id, message.tenant_id), key=attribute)
        ids = [f.record_id for f in facts if f.record_id is not None]
        records = self._live([r for r in (self.store.get(rid) for rid in dict.fromkeys(ids)) if r is not None], message, record_id)
        taken = []
        for record in records[:MAX_TARGETS]:
            spans = sentences_holding(record["content"], [(c.start, c.end) for c in extract_claims(record["content"]) if c.key == attribute])
            if spans:
                self.supersede_spans(message, record["record_id"], spans, record_id)
                taken.append(record["record_id"])
        return tuple(taken)

    def _search(self, about: str, message: Message) -> list[dict[str, Any]]:
        """The user's records that share words with ``about`` (the store's search: a write costs
        what its matches cost, however long the history)."""
        about = f"{about} {search_words(kinds_named(about))}"  # a thing named by its kind: its sentences' words too
        return [h.record for h in hooks_of(self.store).lexical.search(about, message.user_id, top_k=REVOCATION_CANDIDATES,
                                                                       threshold=1e-9, tenant_id=message.tenant_id)]

    def _live(self, records: list[dict[str, Any]], message: Message, exclude: int | None) -> list[dict[str, Any]]:
        """The user's own live statements among ``records``, of the message's task (not ``exclude``)."""
        mine = [r for r in records if r.get("source") == "user_input" and r.get("task_id") == message.task_id
                and r["record_id"] != exclude]
        states = self.ledger.states(r["record_id"] for r in mine)
        return [r for r in mine if r["record_id"] not in states or states[r["record_id"]].superseded_by is None]

    # -- answered questions ------------------------------------------------------------------------
    def answered(self, message: Message, record_id: int | None, recent: Sequence[int] = (),
                 previous: int | None = None) -> tuple[int, ...]:
        """Supersede the user's earlier questions this statement answers (``answers.py``): the
        question clauses about its thing, and those that point back at it ("what's Jamie's
        birthday, is it the 9th?": the second asks about the first's thing). Where it looks:
        ``recent``, the user's turns still in the recent window of this session and task that ask
        something, newest first — the conversation the answer belongs to (a write costs the same
        however long the history is, and nothing when no question waits); ``previous``: the user's
        turn right before this one, whose questions one shared word may answer (``asked_about``)."""
        if record_id is None or not recent:
            return ()
        found = hooks_of(self.store).get_many(recent, (message.tenant_id, message.user_id))
        earlier = [r for rid, r in sorted(found.items()) if rid < record_id and r.get("asks")]
        answer = answer_terms(message.content) if earlier else frozenset()  # read only when a question waits
        if not answer:
            return ()
        answered = []
        for record in self._live(earlier, message, record_id):
            next_turn = record["record_id"] == previous and _within_conversation(record, message)
            asked = asked_about(question_clauses(record["content"]), answer, next_turn=next_turn, answer_text=message.content)
            if asked:
                self.supersede_spans(message, record["record_id"], [(c.start, c.end) for c in asked], record_id)
                answered.append(record["record_id"])
        return tuple(answered)

    # -- restatements ---------------------------------------------------------------------------
    def restatements(self, message: Message, record_id: int | None, recent: Sequence[int] = ()) -> tuple[int, ...]:
        """Supersede the clauses this message gives a new time or date (``restatement.py``);
        ``recent``: the record ids of the user's messages in the recent window, newest first."""
        if record_id is None:
            return ()
        superseded: list[int] = []
        for restated in restated_clauses(message.content):
            if restated.pointer:
                records = [r for r in (self.store.get(rid) for rid in recent[:POINTER_REACH]) if r is not None
                           and r.get("session_id") == message.session_id]
            elif restated.unit_named or VERSION in restated.kinds:
                # "加到75微克" names no word of "一天50微克", and the article's tokens may hide a
                # name ("我用的是iphone" is one): the user's latest statements (a rare message, and
                # a bounded look: the newest ``UNIT_CANDIDATES``).
                records = self.history(message, record_id)[-UNIT_CANDIDATES:]
            else:
                # subtle: the store's search for the thing's words, not the user's whole history, so
                # a write costs what its matches cost however long the history is.
                words = restated.topic | restated.values if restated.slot else restated.topic  # the slot finds what it held
                hits = hooks_of(self.store).lexical.search(" ".join(sorted(words)), message.user_id,
                                                          top_k=RESTATEMENT_CANDIDATES, threshold=1e-9,
                                                          tenant_id=message.tenant_id)
                records = [h.record for h in hits]
            records = [r for r in records if r["record_id"] not in (record_id, *superseded)
                       and r.get("source") == "user_input" and r.get("task_id") == message.task_id]
            states = self.ledger.states(r["record_id"] for r in records)
            live = sorted((r for r in records if r["record_id"] not in states or states[r["record_id"]].superseded_by is None),
                          key=lambda r: r["record_id"], reverse=True)
            target = restatement_target(restated, live)
            if target is not None:
                self.supersede_clause(message, target, record_id)
                superseded.append(target.record_id)
        return tuple(superseded)

    def decisions(self, message: Message, record_id: int | None, recent: Sequence[int] = ()) -> tuple[int, ...]:
        """Supersede what the user's previous turn only considered, when this message says what
        they decided (``decisions.py``); ``recent``: the user's turns of this task in the window,
        newest first, of any session ("would it be crazy to move to Portland?", then weeks later in
        another chat "ok decision made, we're moving to Tucson": in another session, only weighing
        that shares a content word with the decision — "decided on the red kettle" settles no
        standing desk). Only the weighing clauses go; the rest of that turn stays."""
        choices = decided(message.content) if record_id is not None else []
        if not choices:
            return ()
        previous = next((r for r in (self.store.get(rid) for rid in recent if rid != record_id) if r is not None), None)
        if previous is None or previous.get("task_id") != message.task_id:
            return ()
        weighed = considering(previous["content"]) if self._live([previous], message, record_id) else []
        if weighed and previous.get("session_id") != message.session_id:
            chosen = terms_of(message.content[:2000])  # "decision made: we're keeping the van": the message says what
            weighed = [(a, b) for a, b in weighed if chosen & terms_of(previous["content"][a:b])]
        if not weighed:
            return ()
        self.supersede_spans(message, previous["record_id"], weighed, record_id)
        return (previous["record_id"],)

    def person_updates(self, message: Message, record_id: int | None) -> tuple[int, ...]:
        """Supersede what an update about one of the user's people replaces (``conflicts.py``)."""
        # subtle: the history is read only when the message may hold such an update — reading it
        # on every write would make a long history's writes quadratic.
        if record_id is None or not may_update_person(message.content):
            return ()
        targets = person_update_targets(message.content, self.history(message, record_id))
        for target in targets:
            self.supersede_clause(message, target, record_id)
        return tuple(t.record_id for t in targets)

    def _retract(self, message: Message, claim: Claim, record_id: int | None) -> list[int]:
        """An update naming the old value ("from Android", "不在腾讯了", "cancelled X") that no
        recorded fact holds: the latest statement naming it is superseded (by its sentence)."""
        old = claim.old if claim.old is not None else (claim.value if claim.polarity < 0 else None)
        if old is None or record_id is None:
            return []
        target = retraction_target(old, self.history(message, record_id))
        if target is None:
            return []
        self.supersede_clause(message, target, record_id)
        return [target.record_id]

    def _replace(self, message: Message, replaced: list[Fact], record_id: int | None) -> list[int]:
        key = scope_key(message.user_id, message.tenant_id)
        superseded = []
        for fact in replaced:
            self.ledger.set_fact_status(key, fact.key, fact.value, "superseded")
            if fact.record_id not in (None, record_id) and record_id is not None:
                superseded += self._supersede_statement(message, fact, record_id)
        return superseded

    def _supersede_statement(self, message: Message, fact: Fact, by: int) -> list[int]:
        record = self.store.get(fact.record_id) if fact.record_id is not None else None
        state = self.ledger.states([fact.record_id]).get(fact.record_id) if record else None
        if record is None or (state is not None and state.superseded_by is not None):
            return []
        self.supersede_clause(message, clause_of(record, fact.value, "same_attribute"), by)
        return [record["record_id"]]

    # -- superseding a clause ------------------------------------------------------------------------
    def supersede_clause(self, message: Message, target: Target, by: int) -> list[Fact]:
        """Supersede ``target``'s record (×conflict, linked to ``by``); keep its other clauses as a
        split record. Returns the facts declared in the superseded clause (now superseded)."""
        return self.supersede_spans(message, target.record_id, [target.span], by)

    def supersede_spans(self, message: Message, record_id: int, spans: list[tuple[int, int]], by: int) -> list[Fact]:
        """``supersede_clause`` for several parts of one record at once (one split keeps the rest)."""
        record = self.store.get(record_id)
        if record is None:
            return []
        content = record["content"]
        pieces, last = [], 0
        for start, end in sorted(spans):
            pieces.append(content[last:start])
            last = max(last, end)
        kept = _JOINERS.sub("", " ".join(pieces + [content[last:]])).strip()
        kept = re.sub(r"\s{2,}", " ", kept)
        kept = re.sub(r"([，,;；、])(?:\s*[，,;；、])+", r"\1", kept)  # "5800， ，房东" -> "5800，房东"
        kept = re.sub(r"\s*[，,;；、]+\s*([.。!！?？])", r"\1", kept)  # "at 09:58, . Off-peak" -> "at 09:58. Off-peak"
        if kept and len(kept) >= 2 and kept != content and re.search(r"\w", kept):  # not "? ?": no words left
            self._split(message, record, kept)
        self.ledger.supersede(record_id, by, self.rates.conflict)
        return self.ledger.supersede_facts_of(record_id)

    def _split(self, message: Message, record: dict[str, Any], kept: str) -> int:
        """Store the clauses of ``record`` that stay true as a record of their own, with their facts."""
        fields = {name: record[name] for name in ("created_at", "source", "domain", "session_id", "task_id") if name in record}
        fields["metadata"] = {**(record.get("metadata") or {}), "split_from": record["record_id"]}
        if record.get("asks") and question_clauses(kept):
            fields["asks"] = True
        split = self.store.add(record["user_id"], record["role"], kept, tenant_id=record.get("tenant_id"), **fields)
        state = self.ledger.states([record["record_id"]]).get(record["record_id"])
        key = scope_key(record["user_id"], record.get("tenant_id"))
        self.ledger.register(split["record_id"], key, verified=state.verified if state else True,
                             base_weight=state.base_weight if state else 1.0, isolated=state.isolated if state else False,
                             quoted=state.quoted if state else False)
        self.ledger.index_identifiers(split["record_id"], key, extract_identifiers(kept))
        for fact in self.ledger.facts_by_record([record["record_id"]]).get(record["record_id"], []):
            if fact.value.casefold() in kept.casefold():  # re-pointed: its status (confirmed or not) is kept
                self.ledger.put_fact(key, Declaration(fact.key, fact.value, fact.polarity), split["record_id"], fact.created_at)
        return split["record_id"]

    # -- the confirmation loop -------------------------------------------------------------------------
    def confirm_reply(self, message: Message, record_id: int | None) -> list[Fact]:
        """"OK" right after the user's message that declared facts: confirm those still pending."""
        previous = [r for r in self.store.records(message.user_id, tenant_id=message.tenant_id)
                    if r.get("source") == "user_input" and r["record_id"] != record_id
                    and not (r.get("metadata") or {}).get("split_from")]
        if not previous or previous[-1].get("session_id") != message.session_id:
            return []
        key = scope_key(message.user_id, message.tenant_id)
        pending = [f for f in self.ledger.facts_by_record([previous[-1]["record_id"]]).get(previous[-1]["record_id"], [])
                   if f.status == "pending"]
        for fact in pending:
            self.ledger.confirm_fact(key, fact.key, fact.value, single_valued=fact.key in SINGLE_VALUED_KEYS)
        return pending


def _corrected_value(key: str, new_value: str) -> str | None:
    """The fact value a correction gives: "我用的是iPhone 14" → "iPhone 14" for the device; a short
    bare value ("Mac", "葱") as it is; None for a long sentence that is no value of that key."""
    for claim in extract_claims(new_value) or extract_claims(("我" if not new_value.isascii() else "I ") + new_value):
        if claim.key == key:
            return claim.value
    return new_value if len(new_value) <= 20 else None


def _within_conversation(record: dict[str, Any], message: Message) -> bool:
    """Whether ``message`` follows ``record`` without a pause that ends a conversation."""
    try:
        return message.timestamp - datetime.fromisoformat(record["created_at"]) < CONVERSATION_GAP
    except (KeyError, TypeError, ValueError):
        return False
