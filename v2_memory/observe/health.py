"""Memory health: the troubleshooting manual's dashboard, computed from the store, ledger and logs.

Each metric has a value, the counts behind it, the record ids behind it (``record_ids``: the writes
that make the figure, so a reader can open them with ``inspect``), and a status decided by a stated
rule:

    pollution_rate               model output that was trusted or admitted      ok < 5 %, warn < 15 %, else bad
                                 / all writes (see below)
    decay_efficiency             records with weight < 0.3 / records            ok 30–50 %, warn 15–70 %, else bad
    cross_domain_leakage         persona reads that admitted session memory     ok 0, else bad
    unverified_low_confidence    model writes with weight < 0.6, never verified,  ok < 5 %, warn < 15 %, else bad
                                 that a read admitted / all writes
    negated_stored_positive      user writes with a negation stored as a         ok 0, else bad
                                 positive fact
    persona_writes_per_user_hour the most writes of one persona key (the same   ok <= 3, else bad
                                 preference) by one user within any 60 minutes
    high_weight_share            records with weight > 0.9 / records            ok <= 80 %, else bad ("decay is not working")
    ended_sessions_holding_state sessions whose memory was admitted after the   ok 0, else bad
                                 session ended
    model_output_as_user_input   writes by an assistant role labelled as user    ok 0, else bad
                                 input, a knowledge base or a tool (an
                                 integration trusting the model's words)

**Pollution is model output that reached trust or a prompt**, not model output that was written:
a reply kept in quarantine (unverified, never admitted) is governance working. A model write
counts when it was trusted at write time (stored verified: governance off, or a model role
labelled as user input, a knowledge base or a tool) or when a read admitted it before a user
verified it. Model output a user verified is the user's knowledge from then on. For the same
reason a quarantined reply is left out of the weight metrics (it never had weight to lose: its
0.01 is not decay), and ``unverified_low_confidence`` counts only weak model writes that escaped
quarantine into a read. An agent that stores every reply and verifies few reads healthy.

**A flood is one preference written again and again** (the manual: "反复确认同一偏好"), not a
self-introduction: "I'm Ann, I live in Lyon, I'm vegetarian" declares three keys once each.

**Health does not cry wolf.** A share over a handful of writes says nothing: one write of three
is 33 %. So a share needs a minimum sample (``HealthMinimums``: 20 writes; 20 records written over
at least 7 days — the persona τ — for the weight metrics, which need time to decay) and reads ``n/a`` below it,
with ``note`` saying what it needs and what it has. A metric with nothing to examine (no writes,
no persona reads, no ended session) is ``n/a`` too. A leak is a leak however small the store:
the zero-target counts are ``bad`` from the first event. Weights are read at ``now``: base ×
usage × conflict from the ledger, times time decay by domain (task completion from the logs).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Sequence

from .audit import AuditEvent
from ..governance.decay import DecayRates, time_decay
from ..governance.governor import default_state
from ..display import Displayed, Shown
from ..messages import MemoryState

__all__ = ["Metric", "HealthReport", "HealthMinimums", "health_report"]

_NEGATION = re.compile(r"不要|别|不吃|不用|不喜欢|取消|从不|don'?t|do not|never|\bnot\b|\bno\b", re.I)


@dataclass(frozen=True, repr=False)
class Metric(Displayed):
    name: str
    value: float | None
    unit: str  # "%" (value is a share in [0, 1]), "count"
    status: str  # ok | warn | bad | n/a
    rule: str
    numerator: int = 0
    denominator: int | None = None
    record_ids: tuple[int, ...] = ()  # the writes behind the figure
    minimum: int | None = None  # the sample this metric needs before it may judge
    note: str = ""  # why it reads n/a, in words

    def shown(self) -> str:
        if self.value is None:
            return "—"
        return f"{self.value * 100:.1f} %" if self.unit == "%" else f"{self.value:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit, "status": self.status, "rule": self.rule,
                "numerator": self.numerator, "denominator": self.denominator, "shown": self.shown(),
                "record_ids": list(self.record_ids), "minimum": self.minimum, "note": self.note}

    def counts(self) -> str:
        """``3 / 40`` for a share, ``3`` for a count: the events behind the figure."""
        return f"{self.numerator} / {self.denominator}" if self.denominator is not None else str(self.numerator)

    def _shown(self) -> Shown:
        fields = (("name", self.name), ("status", self.status), ("value", self.shown()), ("counts", self.counts()),
                  ("note", self.note or self.rule), ("record_ids", self.record_ids))
        return Shown("Metric", fields)


@dataclass(frozen=True, repr=False)
class HealthReport(Displayed):
    metrics: tuple[Metric, ...]

    def __getitem__(self, name: str) -> Metric:
        return next(m for m in self.metrics if m.name == name)

    @property
    def status(self) -> str:
        """The worst status of any metric."""
        order = ["bad", "warn", "ok", "n/a"]
        return min((m.status for m in self.metrics), key=order.index, default="n/a")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "metrics": [m.to_dict() for m in self.metrics]}

    def _shown(self) -> Shown:
        """The worst status, then one row per metric: its figure, the counts behind it, and why."""
        rows = tuple((m.name, m.status, m.shown(), m.counts(), m.note or m.rule) for m in self.metrics)
        return Shown("HealthReport", (("status", self.status),), ("metric", "status", "value", "counts", "note"), rows)


@dataclass(frozen=True)
class HealthMinimums:
    """The smallest sample each kind of metric judges; ``HealthMinimums.none()`` judges anything."""

    writes: int = 20  # for shares of writes
    records: int = 20  # for shares of records by weight
    # the records' history, oldest to now: decay is judged over the longest time constant (persona τ, 7 days)
    span: timedelta = timedelta(hours=168)

    @classmethod
    def none(cls) -> HealthMinimums:
        return cls(0, 0, timedelta(0))


def _ids(events: Iterable[AuditEvent]) -> tuple[int, ...]:
    return tuple(sorted({e.data["record_id"] for e in events if isinstance(e.data.get("record_id"), int)}))


def _share(name: str, hits: Sequence[AuditEvent], total: int, ok_below: float, warn_below: float, rule: str,
           minimum: int = 0) -> Metric:
    if total == 0:
        return Metric(name, None, "%", "n/a", rule, 0, 0, minimum=minimum, note="no writes yet")
    value = len(hits) / total
    status = "ok" if value < ok_below else "warn" if value < warn_below else "bad"
    metric = Metric(name, value, "%", status, rule, len(hits), total, _ids(hits), minimum)
    return _too_small(metric, total, minimum, "writes")


def _too_small(metric: Metric, has: int, minimum: int, what: str) -> Metric:
    """Below its minimum sample a share is shown, but judges nothing: ``n/a``, saying what it needs."""
    if has >= minimum:
        return metric
    return replace(metric, status="n/a", note=f"needs at least {minimum} {what}, has {has}")


def _zero(name: str, count: int, ids: Iterable[int], rule: str, examined: int, nothing: str) -> Metric:
    """A count whose target is 0: bad from the first event; n/a when there was nothing to examine."""
    ids = tuple(sorted({i for i in ids if isinstance(i, int)}))
    if examined == 0:
        return Metric(name, 0.0, "count", "n/a", rule, 0, record_ids=ids, note=nothing)
    return Metric(name, float(count), "count", "ok" if count == 0 else "bad", rule, count, record_ids=ids)


# -- the metrics, one function each ---------------------------------------------------------------

_MODEL_ROLES = {"assistant", "ai", "model"}


def _is_model_output(event: AuditEvent) -> bool:
    return event.data.get("source") == "llm_response" or str(event.data.get("role", "")).lower() in _MODEL_ROLES


def _admitted_unverified(reads: Sequence[AuditEvent], verified_at: dict[int, str]) -> set[int]:
    """Record ids of model output some read admitted before a user verified it (or never verified)."""
    found = set()
    for read in reads:
        for c in read.data.get("candidates", []):
            rid = c.get("record_id")
            if c.get("admitted") and c.get("source") == "llm_response" and (rid not in verified_at or read.time < verified_at[rid]):
                found.add(rid)
    return found


def pollution_rate(writes: Sequence[AuditEvent], reads: Sequence[AuditEvent] = (), verified_at: dict[int, str] | None = None,
                   *, minimum: int = 0) -> Metric:
    """Model output that was trusted at write, or admitted while unverified, over all writes."""
    admitted = _admitted_unverified(reads, verified_at or {})
    polluting = [e for e in writes if _is_model_output(e) and (e.data.get("verified") or e.data.get("record_id") in admitted)]
    return _share("pollution_rate", polluting, len(writes), 0.05, 0.15,
                  "ok < 5 %, warn < 15 %, bad >= 15 % of writes: model output trusted at write or admitted unverified",
                  minimum)


def unverified_low_confidence(writes: Sequence[AuditEvent], reads: Sequence[AuditEvent], verified_at: dict[int, str],
                              *, minimum: int = 0) -> Metric:
    """Weak model writes that left quarantine: never verified, weight < 0.6, and admitted by a read."""
    admitted = _admitted_unverified(reads, verified_at)
    weak = [e for e in writes if e.data.get("source") == "llm_response" and (e.data.get("weight") or 0) < 0.6
            and e.data.get("record_id") not in verified_at and e.data.get("record_id") in admitted]
    return _share("unverified_low_confidence", weak, len(writes), 0.05, 0.15,
                  "ok < 5 %, warn < 15 %, bad >= 15 % of writes: model output with weight < 0.6, never verified, "
                  "that a read admitted", minimum)


Weighed = Sequence[float] | Sequence[tuple[int, float]]


def _pairs(weights: Weighed) -> list[tuple[int | None, float]]:
    """(record_id, weight) pairs; bare weights (as a test may pass them) have no id."""
    return [w if isinstance(w, tuple) else (None, w) for w in weights]


def _weight_share(name: str, weights: Weighed, picked: Callable[[float], bool], rule: str, minimum: int,
                  span_ok: bool, judge: Callable[[float], str]) -> Metric:
    pairs = _pairs(weights)
    if not pairs:
        return Metric(name, None, "%", "n/a", rule, 0, 0, minimum=minimum, note="no records yet")
    ids = tuple(rid for rid, w in pairs if picked(w) and rid is not None)
    hits = sum(1 for _, w in pairs if picked(w))
    metric = Metric(name, hits / len(pairs), "%", judge(hits / len(pairs)), rule, hits, len(pairs), ids, minimum)
    metric = _too_small(metric, len(pairs), minimum, "records")
    return metric if span_ok or metric.status == "n/a" else replace(
        metric, status="n/a", note="needs records written over a longer time (HealthMinimums.span, 7 days by "
                                   "default): weights need time to decay")


def decay_efficiency(weights: Weighed, *, minimum: int = 0, span_ok: bool = True) -> Metric:
    return _weight_share("decay_efficiency", weights, lambda w: w < 0.3,
                         "ok 30–50 %, warn 15–70 %, bad otherwise: records with weight < 0.3", minimum, span_ok,
                         lambda v: "ok" if 0.30 <= v <= 0.50 else "warn" if 0.15 <= v <= 0.70 else "bad")


def high_weight_share(weights: Weighed, *, minimum: int = 0, span_ok: bool = True) -> Metric:
    return _weight_share("high_weight_share", weights, lambda w: w > 0.9,
                         "ok <= 80 %, bad above: records with weight > 0.9 (above 80 % decay is not working)",
                         minimum, span_ok, lambda v: "ok" if v <= 0.8 else "bad")


def cross_domain_leakage(reads: Sequence[AuditEvent]) -> Metric:
    persona = [e for e in reads if e.data.get("domain") == "persona"]
    leaked = [[c.get("record_id") for c in e.data.get("candidates", []) if c.get("admitted") and c.get("domain") == "session"]
              for e in persona]
    return _zero("cross_domain_leakage", sum(1 for ids in leaked if ids), [i for ids in leaked for i in ids],
                 "ok 0: persona reads that admitted session memory", len(persona), "no persona reads yet")


def negated_stored_positive(writes: Sequence[AuditEvent]) -> Metric:
    facts = [e for e in writes if e.data.get("source") == "user_input" and e.data.get("fact")]
    flips = [e for e in facts if e.data["fact"].get("polarity", 0) > 0 and _NEGATION.search(e.data.get("content") or "")]
    return _zero("negated_stored_positive", len(flips), _ids(flips),
                 "ok 0: user inputs with a negation stored as a positive fact", len(facts), "no persona facts yet")


def persona_writes_per_user_hour(writes: Sequence[AuditEvent]) -> Metric:
    # (tenant, user, persona key) -> [(when, record id)]: one preference written again and again
    times: dict[tuple[Any, Any, Any], list[tuple[datetime, Any]]] = defaultdict(list)
    for e in writes:
        for fact in e.data.get("facts") or ([e.data["fact"]] if e.data.get("fact") else []):
            times[(e.tenant_id, e.user_id, fact.get("key"))].append((datetime.fromisoformat(e.time), e.data.get("record_id")))
    worst: list[Any] = []
    for moments in times.values():
        moments.sort(key=lambda pair: pair[0])
        start = 0
        for end, (moment, _) in enumerate(moments):  # sliding 60-minute window
            while moment - moments[start][0] >= timedelta(hours=1):
                start += 1
            if end - start + 1 > len(worst):
                worst = [rid for _, rid in moments[start:end + 1]]
    rule = "ok <= 3, bad above: most writes of one persona key by one user within 60 minutes"
    ids = tuple(sorted(i for i in worst if isinstance(i, int)))
    if not times:
        return Metric("persona_writes_per_user_hour", 0.0, "count", "n/a", rule, 0, note="no persona facts yet")
    return Metric("persona_writes_per_user_hour", float(len(worst)), "count", "ok" if len(worst) <= 3 else "bad", rule,
                  len(worst), record_ids=ids)


def model_output_as_user_input(writes: Sequence[AuditEvent]) -> Metric:
    """The write-side bug pollution_rate cannot see: model output labelled as trusted input."""
    mislabelled = [e for e in writes if str(e.data.get("role", "")).lower() in _MODEL_ROLES
                   and e.data.get("source") != "llm_response"]
    return _zero("model_output_as_user_input", len(mislabelled), _ids(mislabelled),
                 "ok 0: writes by an assistant role stored as user input, knowledge base or tool", len(writes), "no writes yet")


def ended_sessions_holding_state(writes: Sequence[AuditEvent], reads: Sequence[AuditEvent]) -> Metric:
    ended = {(e.tenant_id, e.user_id, e.session_id): e.time for e in writes if e.kind == "end_session"}
    holding, ids = set(), set()
    for read in reads:
        for c in read.data.get("candidates", []):
            key = (read.tenant_id, read.user_id, c.get("session_id"))
            if c.get("admitted") and c.get("domain") == "session" and key in ended and read.time > ended[key]:
                holding.add(key)
                ids.add(c.get("record_id"))
    return _zero("ended_sessions_holding_state", len(holding), ids,
                 "ok 0: sessions whose memory was admitted after they ended", len(ended), "no ended sessions yet")


# -- the report ------------------------------------------------------------------------------------


def weighed_records(records: Iterable[dict[str, Any]], states: dict[int, MemoryState], writes: Sequence[AuditEvent],
                    rates: DecayRates, now: datetime) -> list[tuple[int, float]]:
    """(record_id, weight at ``now``) for each record."""
    completion: dict[tuple[Any, Any, Any], float] = {}
    for e in writes:
        if e.kind in ("task_progress", "finish_task"):
            completion[(e.tenant_id, e.user_id, e.data.get("task_id"))] = 1.0 if e.kind == "finish_task" else e.data["completion"]
    weights = []
    for record in records:
        state = states.get(record["record_id"]) or default_state(record, rates)
        written = datetime.fromisoformat(record["created_at"]) if "created_at" in record else now
        done = completion.get((record.get("tenant_id"), record["user_id"], record.get("task_id")), 0.0)
        weights.append((record["record_id"], state.weight * time_decay(rates, record.get("domain"), written, now, done)))
    return weights


def _quarantined(record: dict[str, Any], state: MemoryState | None) -> bool:
    return record.get("source") == "llm_response" and state is not None and not state.verified


def _history_span(records: Sequence[dict[str, Any]], now: datetime) -> timedelta:
    written = [datetime.fromisoformat(r["created_at"]) for r in records if "created_at" in r]
    return now - min(written) if written else timedelta(0)


def health_report(records: list[dict[str, Any]], states: dict[int, MemoryState], events: Sequence[AuditEvent],
                  reads: Sequence[AuditEvent], *, rates: DecayRates, now: datetime,
                  minimums: HealthMinimums = HealthMinimums()) -> HealthReport:
    """The dashboard for one store: ``events`` is the write log (writes and lifecycle events)."""
    writes = [e for e in events if e.kind == "write"]
    verified_at = {e.data.get("record_id"): e.time for e in events if e.kind == "verify"}
    # A quarantined reply (model output, never verified) never had weight to lose: not decay.
    kept = [r for r in records if not _quarantined(r, states.get(r["record_id"]))]
    weights = weighed_records(kept, states, events, rates, now)
    span_ok = _history_span(records, now) >= minimums.span
    return HealthReport((
        pollution_rate(writes, reads, verified_at, minimum=minimums.writes),
        decay_efficiency(weights, minimum=minimums.records, span_ok=span_ok),
        cross_domain_leakage(reads),
        unverified_low_confidence(writes, reads, verified_at, minimum=minimums.writes),
        negated_stored_positive(writes),
        persona_writes_per_user_hour(writes),
        high_weight_share(weights, minimum=minimums.records, span_ok=span_ok),
        ended_sessions_holding_state(events, reads),
        model_output_as_user_input(writes),
    ))
