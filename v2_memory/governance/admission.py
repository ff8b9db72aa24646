"""Admission: every memory considered for a prompt is admitted or rejected, with its reasons.

A candidate is a long-term record with its similarity to the query. ``admit`` checks it against
the read's boundaries and the memory's lifecycle, computes its weight, and applies the threshold
to the *effective* score (similarity × weight). Rejections say why, with the numbers:

    superseded              a later user message corrected it
    sensitive               it holds personal data kept under the "isolate" policy
    session_ended / other_session / other_task / expired / wrong_domain
                            it belongs to a session, task or domain this read is not in
    unverified_model_output the model said it and no user confirmed it
    identifier_mismatch     the query names CS201; this memory does not
    below_threshold         its similarity alone is under the threshold
    only_stop_words         it shares only words like "the", "is" with the query
    decayed                 similar enough, but time, disuse or conflict took its weight
    duplicate               it says what an admitted memory already says
    beyond_top_k            it passed, but top_k better memories came first

Some memories are admitted with a note on how they may be shown (``notes``), not a rejection:

    instruction_quoted      it instructs the assistant ("ignore previous instructions"): it may be
                            recalled as what was said, on a line marked quoted, never obeyed
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Iterator, overload

from ..display import Displayed, Shown
from ..text.analyzer import FUNCTION_BIGRAMS, analyze
from ..text.memo import UserMemo
from ..retrieval.index import indexed_text
from ..text.tokenizer import cosine_similarity
from .decay import DecayRates, time_decay
from .persona import fact_phrase
from ..messages import MemoryState
from .router import Route
from .scope import task_bound

__all__ = ["Admission", "Explanation", "ReadContext", "admit", "notes_of", "collapse_duplicates", "mmr_order", "cut_to_top_k"]


@dataclass(frozen=True, repr=False)
class Admission(Displayed):
    """The decision about one candidate memory, and the numbers behind it."""

    record: dict[str, Any]
    similarity: float
    weight: float
    effective: float
    threshold: float
    admitted: bool
    reasons: tuple[str, ...] = ()
    duplicates: int = 0  # near-identical memories collapsed into this one
    duplicate_of: int | None = None
    exact: bool = False  # names the query's identifier: fully relevant whatever the word overlap
    relevance: float | None = None  # what the threshold saw before weight: similarity, or 1.0 if exact

    def __post_init__(self) -> None:
        if self.relevance is None:
            object.__setattr__(self, "relevance", self.similarity)
    recalled_via: int | None = None  # a correction, brought in by the memory it superseded
    components: dict[str, float] | None = None  # hybrid retrieval: lexical, cosine, semantic, fused
    notes: tuple[str, ...] = ()  # how it may be shown, admitted or not: ("instruction_quoted",)

    @property
    def quoted(self) -> bool:
        """It instructs the assistant: a context shows it only on a line marked quoted."""
        return "instruction_quoted" in self.notes

    @property
    def record_id(self) -> int:
        return self.record["record_id"]

    # The memory's own fields, as the repr shows them (``a.content`` reads ``a.record["content"]``).
    @property
    def content(self) -> str:
        return self.record["content"]

    @property
    def role(self) -> str | None:
        return self.record.get("role")

    @property
    def source(self) -> str | None:
        return self.record.get("source")

    @property
    def domain(self) -> str | None:
        return self.record.get("domain")

    def to_dict(self, digits: int = 3) -> dict[str, Any]:
        return {
            "record_id": self.record_id, "role": self.record.get("role"), "content": self.record.get("content"),
            "source": self.record.get("source"), "domain": self.record.get("domain"),
            "similarity": round(self.similarity, digits), "weight": round(self.weight, digits),
            "effective": round(self.effective, digits), "threshold": self.threshold,
            "admitted": self.admitted, "reasons": list(self.reasons),
            "duplicates": self.duplicates, "duplicate_of": self.duplicate_of,
            "exact": self.exact, "recalled_via": self.recalled_via,
            "relevance": round(self.relevance, digits), "notes": list(self.notes),
            **({"components": {k: round(v, digits) for k, v in self.components.items()}} if self.components else {}),
        }

    def _shown(self) -> Shown:
        """The decision first, then the numbers behind it, then the memory itself."""
        fields: list[tuple[str, Any]] = [("record_id", self.record_id), ("admitted", self.admitted),
                                         ("reasons", self.reasons)]
        fields += [("notes", self.notes)] if self.notes else []
        fields.append(("similarity", self.similarity))
        if self.relevance != self.similarity:
            fields.append(("relevance", self.relevance))  # an exact identifier match counts as 1.0
        fields += [("weight", self.weight), ("effective", self.effective), ("threshold", self.threshold)]
        # Only what is set: most admissions are neither duplicates, exact matches nor recalled.
        fields += [(name, getattr(self, name)) for name in ("duplicates", "duplicate_of", "exact", "recalled_via")
                   if getattr(self, name)]
        fields += [(key, self.record.get(key)) for key in ("role", "source", "domain") if self.record.get(key)]
        return Shown("Admission", (*fields, ("content", self.record.get("content"))))


@dataclass(frozen=True, repr=False)
class Explanation(Displayed, Sequence):
    """What ``explain`` returns: the route, and one admission per candidate (a sequence of them)."""

    query: str
    route: Route
    admissions: tuple[Admission, ...] = ()
    facts: tuple[dict[str, Any], ...] = field(default=())
    summary: tuple[Any, ...] = ()  # SummaryEntry per covered memory: shown in this read's summary, or why not

    @overload
    def __getitem__(self, index: int) -> Admission: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Admission]: ...
    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.admissions[index]

    def __len__(self) -> int:
        return len(self.admissions)

    def __iter__(self) -> Iterator[Admission]:
        return iter(self.admissions)

    @property
    def admitted(self) -> list[Admission]:
        return [a for a in self.admissions if a.admitted]

    @property
    def rejected(self) -> list[Admission]:
        return [a for a in self.admissions if not a.admitted]

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "route": self.route.to_dict(),
                "admissions": [a.to_dict() for a in self.admissions], "facts": list(self.facts),
                "summary": [entry.to_dict() for entry in self.summary]}

    _HEADERS = ("record_id", "admitted", "reasons", "similarity", "weight", "effective", "source", "content")

    def _shown(self) -> Shown:
        """The query and its route, then one row per candidate, in the order governance ranked them."""
        fields: list[tuple[str, Any]] = [("query", self.query), ("route", self.route.kind),
                                         ("admitted", len(self.admitted)), ("rejected", len(self.rejected))]
        if self.facts:
            fields.append(("facts", tuple(fact_phrase(f) for f in self.facts)))
        if self.summary:
            fields.append(("summary", tuple(_summary_verdict(entry) for entry in self.summary)))
        rows = tuple((a.record_id, a.admitted, a.reasons + a.notes, a.similarity, a.weight, a.effective,
                      a.record.get("source"), a.record.get("content")) for a in self.admissions)
        return Shown("Explanation", tuple(fields), self._HEADERS, rows)


def _summary_verdict(entry: Any) -> str:
    """``#3 shown`` or ``#5 hidden: superseded``: what this read's summary did with one memory."""
    which = f"#{entry.record_id}" if entry.record_id is not None else "a message"  # None: never stored
    notes = f" ({', '.join(entry.notes)})" if entry.notes else ""
    return f"{which} shown{notes}" if entry.shown else f"{which} hidden: {', '.join(entry.reasons)}{notes}"


@dataclass(frozen=True)
class ReadContext:
    """Everything a judgement needs to know about the read, gathered once per query."""

    threshold: float
    now: datetime
    rates: DecayRates
    route: Route
    session_id: str | None = None
    task_id: str | None = None
    domain: str | None = None
    session_status: Callable[[str], str] = lambda session_id: "unknown"
    task_state: Callable[[str], tuple[str, float]] = lambda task_id: ("unknown", 0.0)
    identifiers: dict[int, set[str]] = field(default_factory=dict)  # record_id -> its identifiers
    query_terms: frozenset[str] = frozenset()  # the query's content words (``analyze``: no stop words)
    components: dict[int, dict[str, float]] = field(default_factory=dict)  # record_id -> hybrid score parts
    scope: tuple[str | None, str] | None = None  # (tenant_id, user_id) the read is for; None: not checked
    memo: UserMemo | None = None  # readings of this user's memories, kept with the user (``text/memo.py``)
    readings: Any = field(default=None, init=False, repr=False, compare=False)  # the user's, looked up once

    def __post_init__(self) -> None:
        if self.memo is not None and self.scope is not None:
            object.__setattr__(self, "readings", self.memo.of(self.scope))

    def reading(self, kind: str, text: str, read: Callable[[str], Any]) -> Any:
        """``read(text)``, remembered with the user's other readings when the read has a memo."""
        if self.readings is None:
            return read(text)
        return self.readings.reading(kind, text, read)


def boundary_reasons(record: dict[str, Any], state: MemoryState, read: ReadContext) -> list[str]:
    """Reasons that reject a memory whatever its score: owner, lifecycle, scope and trust."""
    reasons = []
    # Defence in depth: the store searched one scope's partition, and admission checks it again, so
    # a store that mixed partitions up (an empty tenant read as none, a bad index) still leaks nothing.
    if read.scope is not None and (record.get("tenant_id"), record.get("user_id")) != read.scope:
        reasons.append("other_user")
    if state.isolated:
        reasons.append("sensitive")
    if state.superseded_by is not None:
        reasons.append("superseded")
    domain = record.get("domain")
    if read.domain is not None and domain != read.domain:
        reasons.append("wrong_domain")
    if domain == "session":
        status = read.session_status(record.get("session_id") or "")
        if status == "ended":
            reasons.append("session_ended")
        elif status == "expired":
            reasons.append("expired")
        elif record.get("session_id") != read.session_id:
            reasons.append("other_session")
    if domain == "task":
        if record.get("task_id") != read.task_id:
            reasons.append("other_task")
        elif read.task_state(record.get("task_id") or "")[0] == "expired":
            reasons.append("expired")
    elif task_bound(record) and read.task_id is not None and record.get("task_id") != read.task_id:
        reasons.append("other_task")  # written inside another task: that task's, whatever its domain says
    if not state.verified:
        reasons.append("unverified_model_output")
    if read.route.identifiers and not set(read.route.identifiers) & read.identifiers.get(record["record_id"], set()):
        reasons.append("identifier_mismatch")
    return reasons


def memory_weight(record: dict[str, Any], state: MemoryState, read: ReadContext) -> float:
    """base × usage × conflict × time decay (by domain, and task completion)."""
    domain = record.get("domain")
    completion = read.task_state(record.get("task_id") or "")[1] if domain == "task" else 0.0
    written = datetime.fromisoformat(record["created_at"]) if "created_at" in record else read.now
    return state.weight * time_decay(read.rates, domain, written, read.now, completion)


def admit(similarity: float, record: dict[str, Any], state: MemoryState, read: ReadContext, *,
          recalled: bool = False) -> Admission:
    """Admit or reject one candidate, with every reason that applies.

    Relevance is the similarity, except that a memory naming the query's identifier exactly is
    fully relevant (relevance 1.0: the exact match is the evidence). The threshold applies to the
    effective score, relevance × weight. A memory that shares only function words with the query
    ("the", "is", "我的" ...) is not relevant, however it scores — unless it was ``recalled``
    through the memory it corrected, which is the point of recalling it, or its meaning alone
    (the semantic part of a hybrid score) reaches the threshold: then the words are not the evidence.
    """
    exact = bool(set(read.route.identifiers) & read.identifiers.get(record["record_id"], set()))
    parts = read.components.get(record["record_id"])
    meant = parts is not None and parts["semantic"] >= read.threshold
    relevance = 1.0 if exact else similarity
    weight = memory_weight(record, state, read)
    effective = relevance * weight
    reasons = boundary_reasons(record, state, read)
    if relevance < read.threshold:
        reasons.append("below_threshold")
    elif not (exact or recalled or meant) and read.query_terms and not shares_content(read, record):
        reasons.append("only_stop_words")
    elif effective < read.threshold and not reasons:
        reasons.append("decayed")  # only when nothing else explains the rejection
    return Admission(record, similarity, weight, effective, read.threshold, not reasons, tuple(reasons),
                     exact=exact, relevance=relevance, components=parts, notes=notes_of(state))


def notes_of(state: MemoryState) -> tuple[str, ...]:
    """How a memory may be shown, whatever the verdict: quoted, when it instructs the assistant."""
    return ("instruction_quoted",) if state.quoted else ()


def shares_content(read: ReadContext, record: dict[str, Any]) -> bool:
    """At least one content word (not a stop word, not a function bigram like 我的) in common with
    the query, counting the text the record is indexed by."""
    return not (read.query_terms - FUNCTION_BIGRAMS).isdisjoint(read.reading("terms", indexed_text(record), _term_set))


def shared_content(read: ReadContext, record: dict[str, Any]) -> frozenset[str]:
    """The content words the record (its indexed text) has in common with the query."""
    return (read.query_terms - FUNCTION_BIGRAMS) & read.reading("terms", indexed_text(record), _term_set)


def _term_set(text: str) -> frozenset[str]:
    return frozenset(analyze(text))


def _same_text(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def collapse_duplicates(admissions: list[Admission]) -> list[Admission]:
    """Admitted memories that say the same thing collapse into the first one, which counts them."""
    first: dict[str, int] = {}  # normalized text -> index of the kept admission
    result = list(admissions)
    for index, admission in enumerate(result):
        if not admission.admitted:
            continue
        key = _same_text(admission.record["content"])
        if key in first:
            kept = result[first[key]]
            result[first[key]] = replace(kept, duplicates=kept.duplicates + 1)
            result[index] = replace(admission, admitted=False, reasons=("duplicate",), duplicate_of=kept.record_id)
        else:
            first[key] = index
    return result


def mmr_order(admissions: list[Admission], lam: float) -> list[Admission]:
    """Maximal marginal relevance: re-rank admitted memories, trading relevance for diversity.

    Each pick maximizes ``lam × effective − (1 − lam) × (max similarity to what is already picked)``.
    """
    pool = [a for a in admissions if a.admitted]
    picked: list[Admission] = []
    while pool:
        def gain(candidate: Admission) -> float:
            overlap = max((cosine_similarity(candidate.record["content"], p.record["content"]) for p in picked), default=0.0)
            return lam * candidate.effective - (1 - lam) * overlap
        best = max(pool, key=gain)  # max keeps the earliest on ties
        pool.remove(best)
        picked.append(best)
    return picked + [a for a in admissions if not a.admitted]


def cut_to_top_k(admissions: list[Admission], top_k: int) -> list[Admission]:
    """Keep the first ``top_k`` admitted; the rest are rejected as ``beyond_top_k``."""
    kept = 0
    result = []
    for admission in admissions:
        if admission.admitted:
            kept += 1
            if kept > top_k:
                admission = replace(admission, admitted=False, reasons=("beyond_top_k",))
        result.append(admission)
    return result
