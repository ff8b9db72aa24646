"""Decay: memories lose weight with time, disuse and contradiction — and are never deleted.

Three multiplicative factors (the troubleshooting manual's three layers):

    time      e^(−t/τ), t in hours since the memory was written, τ by domain:
              persona 168 h, session 1 h, task 24 h × (1 − completion of the task);
              ordinary conversation memory (no domain) does not time-decay
    usage     "the less it is used, the more easily it is forgotten": by default a memory a
              context used is reinforced (× 1.25, up to 1.0), and × 0.8 after 3 consecutive
              retrievals in which it was a candidate but lost on score; ``usage="literal"``
              reads the manual word for word instead: × 0.95 each time a retrieval returned it
    conflict  × 0.1 when a later user message corrects it

    effective score = similarity × weight, and the threshold applies to the effective score.

Worked example (``DecayRates()`` defaults): a session memory written 30 minutes ago has time weight
e^(−0.5/1) = 0.607; a task memory 12 h old on a task 50 % done has e^(−12/24) × (1 − 0.5) = 0.303.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["DecayRates", "time_decay"]


@dataclass(frozen=True)
class DecayRates:
    """Every rate in one place, so a reader can tune (and a test can pin) them."""

    # domain -> τ in hours; a domain not listed here does not time-decay.
    tau_hours: dict[str, float] = field(default_factory=lambda: {"persona": 168.0, "session": 1.0, "task": 24.0})
    usage: str = "reinforce"  # reinforce | literal (× usage_hit per retrieval that returned the memory)
    usage_hit: float = 0.95  # literal mode: per retrieval that returned the memory
    usage_reinforce: float = 1.25  # reinforce mode: per context that used the memory, capped at 1.0
    usage_miss: float = 0.8  # after `miss_streak` consecutive non-admitted candidacies
    miss_streak: int = 3
    conflict: float = 0.1  # when a user correction supersedes the memory
    unverified_weight: float = 0.01  # model output, until a user verifies it

    def __post_init__(self) -> None:
        for name in ("usage_hit", "usage_miss", "conflict", "unverified_weight"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        if self.usage not in ("reinforce", "literal"):
            raise ValueError(f"usage must be 'reinforce' or 'literal', got {self.usage!r}")
        if not isinstance(self.usage_reinforce, (int, float)) or not 1.0 <= self.usage_reinforce < math.inf:
            raise ValueError(f"usage_reinforce must be a finite number >= 1, got {self.usage_reinforce!r}")
        if any(not 0 < tau < math.inf for tau in self.tau_hours.values()):
            raise ValueError("every tau must be a finite number of hours > 0")
        if not isinstance(self.miss_streak, int) or isinstance(self.miss_streak, bool) or self.miss_streak < 1:
            raise ValueError(f"miss_streak must be a whole number >= 1, got {self.miss_streak!r}")


def time_decay(
    rates: DecayRates, domain: str | None, written: datetime, now: datetime, completion: float = 0.0
) -> float:
    """The time factor of a memory written at ``written``, seen at ``now``.

    >>> from datetime import datetime, timedelta, timezone
    >>> t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> round(time_decay(DecayRates(), "session", t0, t0 + timedelta(minutes=30)), 3)
    0.607
    >>> round(time_decay(DecayRates(), "task", t0, t0 + timedelta(hours=12), completion=0.5), 3)
    0.303
    >>> time_decay(DecayRates(), None, t0, t0 + timedelta(days=365))
    1.0
    """
    tau = rates.tau_hours.get(domain) if domain is not None else None
    if tau is None:
        return 1.0
    hours = max((now - written).total_seconds() / 3600.0, 0.0)
    weight = math.exp(-hours / tau)
    if domain == "task":
        weight *= 1.0 - min(max(completion, 0.0), 1.0)
    return weight
