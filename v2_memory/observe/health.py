"""Memory health: the troubleshooting manual's dashboard, computed from the store, ledger and logs.

Each metric has a value, the counts behind it, and a status decided by a stated rule:

    pollution_rate               writes from llm_response / all writes          ok < 5 %, warn < 15 %, else bad
    decay_efficiency             records with weight < 0.3 / records            ok 30–50 %, warn 15–70 %, else bad
    cross_domain_leakage         persona reads that admitted session memory     ok 0, else bad
    unverified_low_confidence    model writes with weight < 0.6, never verified  ok < 5 %, warn < 15 %, else bad
                                 / all writes
    negated_stored_positive      user writes with a negation stored as a         ok 0, else bad
                                 positive fact
    persona_writes_per_user_hour the most persona facts one user wrote within   ok <= 3, else bad
                                 any 60 minutes
    high_weight_share            records with weight > 0.9 / records            ok <= 80 %, else bad ("decay is not working")
    ended_sessions_holding_state sessions whose memory was admitted after the   ok 0, else bad
                                 session ended
    model_output_as_user_input   writes by an assistant role labelled as user    ok 0, else bad
                                 input, a knowledge base or a tool (an
                                 integration trusting the model's words)

A metric with nothing to count (no writes yet) has status ``n/a``. Weights are read at ``now``:
base × usage × conflict from the ledger, times time decay by domain (task completion taken from
the logs' task events).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Sequence

from .audit import AuditEvent
from ..governance.decay import DecayRates, time_decay
from ..governance.governor import default_state
from ..messages import MemoryState

__all__ = ["Metric", "HealthReport", "health_report"]

_NEGATION = re.compile(r"不要|别|不吃|不用|不喜欢|取消|从不|don'?t|do not|never|\bnot\b|\bno\b", re.I)


@dataclass(frozen=True)
class Metric:
    name: str
    value: float | None
    unit: str  # "%" (value is a share in [0, 1]), "count"
    status: str  # ok | warn | bad | n/a
    rule: str
    numerator: int = 0
    denominator: int | None = None

    def shown(self) -> str:
        if self.value is None:
            return "—"
        return f"{self.value * 100:.1f} %" if self.unit == "%" else f"{self.value:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit, "status": self.status, "rule": self.rule,
                "numerator": self.numerator, "denominator": self.denominator, "shown": self.shown()}


@dataclass(frozen=True)
class HealthReport:
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


def _share(name: str, hits: int, total: int, ok_below: float, warn_below: float, rule: str) -> Metric:
    if total == 0:
        return Metric(name, None, "%", "n/a", rule, hits, total)
    value = hits / total
    status = "ok" if value < ok_below else "warn" if value < warn_below else "bad"
    return Metric(name, value, "%", status, rule, hits, total)


def _zero(name: str, count: int, rule: str) -> Metric:
    return Metric(name, float(count), "count", "ok" if count == 0 else "bad", rule, count)


# -- the metrics, one function each ---------------------------------------------------------------


def pollution_rate(writes: Sequence[AuditEvent]) -> Metric:
    model = sum(1 for e in writes if e.data.get("source") == "llm_response")
    return _share("pollution_rate", model, len(writes), 0.05, 0.15, "ok < 5 %, warn < 15 %, bad >= 15 % of writes from llm_response")


def unverified_low_confidence(writes: Sequence[AuditEvent], verified_ids: set[int]) -> Metric:
    weak = sum(1 for e in writes if e.data.get("source") == "llm_response" and (e.data.get("weight") or 0) < 0.6
               and e.data.get("record_id") not in verified_ids)
    return _share("unverified_low_confidence", weak, len(writes), 0.05, 0.15,
                  "ok < 5 %, warn < 15 %, bad >= 15 % of writes: model output with weight < 0.6, never verified")


def decay_efficiency(weights: Sequence[float]) -> Metric:
    rule = "ok 30–50 %, warn 15–70 %, bad otherwise: records with weight < 0.3"
    if not weights:
        return Metric("decay_efficiency", None, "%", "n/a", rule, 0, 0)
    low = sum(1 for w in weights if w < 0.3)
    value = low / len(weights)
    status = "ok" if 0.30 <= value <= 0.50 else "warn" if 0.15 <= value <= 0.70 else "bad"
    return Metric("decay_efficiency", value, "%", status, rule, low, len(weights))


def high_weight_share(weights: Sequence[float]) -> Metric:
    rule = "ok <= 80 %, bad above: records with weight > 0.9 (above 80 % decay is not working)"
    if not weights:
        return Metric("high_weight_share", None, "%", "n/a", rule, 0, 0)
    high = sum(1 for w in weights if w > 0.9)
    value = high / len(weights)
    return Metric("high_weight_share", value, "%", "ok" if value <= 0.8 else "bad", rule, high, len(weights))


def cross_domain_leakage(reads: Sequence[AuditEvent]) -> Metric:
    leaks = sum(1 for e in reads if e.data.get("domain") == "persona"
                and any(c.get("admitted") and c.get("domain") == "session" for c in e.data.get("candidates", [])))
    return _zero("cross_domain_leakage", leaks, "ok 0: persona reads that admitted session memory")


def negated_stored_positive(writes: Sequence[AuditEvent]) -> Metric:
    flips = sum(1 for e in writes if e.data.get("source") == "user_input" and e.data.get("fact")
                and e.data["fact"].get("polarity", 0) > 0 and _NEGATION.search(e.data.get("content") or ""))
    return _zero("negated_stored_positive", flips, "ok 0: user inputs with a negation stored as a positive fact")


def persona_writes_per_user_hour(writes: Sequence[AuditEvent]) -> Metric:
    times: dict[tuple[Any, Any], list[datetime]] = defaultdict(list)
    for e in writes:
        if e.data.get("fact"):
            times[(e.tenant_id, e.user_id)].append(datetime.fromisoformat(e.time))
    worst = 0
    for moments in times.values():
        moments.sort()
        start = 0
        for end, moment in enumerate(moments):  # sliding 60-minute window
            while moment - moments[start] >= timedelta(hours=1):
                start += 1
            worst = max(worst, end - start + 1)
    status = "ok" if worst <= 3 else "bad"
    return Metric("persona_writes_per_user_hour", float(worst), "count", status,
                  "ok <= 3, bad above: most persona facts one user wrote within 60 minutes", worst)


_MODEL_ROLES = {"assistant", "ai", "model"}


def model_output_as_user_input(writes: Sequence[AuditEvent]) -> Metric:
    """The write-side bug pollution_rate cannot see: model output labelled as trusted input."""
    mislabelled = sum(1 for e in writes if str(e.data.get("role", "")).lower() in _MODEL_ROLES
                      and e.data.get("source") != "llm_response")
    return _zero("model_output_as_user_input", mislabelled,
                 "ok 0: writes by an assistant role stored as user input, knowledge base or tool")


def ended_sessions_holding_state(writes: Sequence[AuditEvent], reads: Sequence[AuditEvent]) -> Metric:
    ended = {(e.tenant_id, e.user_id, e.session_id): e.time for e in writes if e.kind == "end_session"}
    holding = set()
    for read in reads:
        for c in read.data.get("candidates", []):
            key = (read.tenant_id, read.user_id, c.get("session_id"))
            if c.get("admitted") and c.get("domain") == "session" and key in ended and read.time > ended[key]:
                holding.add(key)
    return _zero("ended_sessions_holding_state", len(holding), "ok 0: sessions whose memory was admitted after they ended")


# -- the report ------------------------------------------------------------------------------------


def current_weights(records: Iterable[dict[str, Any]], states: dict[int, MemoryState], writes: Sequence[AuditEvent],
                    rates: DecayRates, now: datetime) -> list[float]:
    """Each record's weight at ``now``: ledger factors × time decay (task completion from the logs)."""
    completion: dict[tuple[Any, Any, Any], float] = {}
    for e in writes:
        if e.kind in ("task_progress", "finish_task"):
            completion[(e.tenant_id, e.user_id, e.data.get("task_id"))] = 1.0 if e.kind == "finish_task" else e.data["completion"]
    weights = []
    for record in records:
        state = states.get(record["record_id"]) or default_state(record, rates)
        written = datetime.fromisoformat(record["created_at"]) if "created_at" in record else now
        done = completion.get((record.get("tenant_id"), record["user_id"], record.get("task_id")), 0.0)
        weights.append(state.weight * time_decay(rates, record.get("domain"), written, now, done))
    return weights


def health_report(records: list[dict[str, Any]], states: dict[int, MemoryState], events: Sequence[AuditEvent],
                  reads: Sequence[AuditEvent], *, rates: DecayRates, now: datetime) -> HealthReport:
    """The dashboard for one store: ``events`` is the write log (writes and lifecycle events)."""
    writes = [e for e in events if e.kind == "write"]
    verified = {e.data.get("record_id") for e in events if e.kind == "verify"}
    weights = current_weights(records, states, events, rates, now)
    return HealthReport((
        pollution_rate(writes),
        decay_efficiency(weights),
        cross_domain_leakage(reads),
        unverified_low_confidence(writes, verified),
        negated_stored_positive(writes),
        persona_writes_per_user_hour(writes),
        high_weight_share(weights),
        ended_sessions_holding_state(events, reads),
        model_output_as_user_input(writes),
    ))
