"""Values that flow through v2_memory: messages in, hits and receipts out.

All of them are immutable (frozen dataclasses, or a named tuple for hits): once made they cannot change, so a hit shown in a trace is
exactly the hit the manager used. Mutable state lives only in the window, the summary track, the
store and the manager.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePath
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from .display import Displayed, Shown
from .text.sensitive import check_metadata
from .validation import check_json, require_id, require_text

__all__ = ["DEFAULT_USER", "Message", "Hit", "EraseReceipt", "WriteResult", "Declaration", "Fact", "MemoryState",
           "render_fact", "fact_phrase", "MEAT", "SessionInfo",
           "TaskInfo", "as_utc", "DOMAINS", "SOURCES"]

class _ImplicitUser(str):
    """The user id of a call that names none: equal to "default" in every way, but a caller can
    tell it apart (``user_id is DEFAULT_USER``) from a "default" someone typed on purpose."""

    __slots__ = ()

    def __reduce__(self) -> tuple:
        return (_implicit_user, ())


def _implicit_user() -> str:
    return DEFAULT_USER


DEFAULT_USER: str = _ImplicitUser("default")  # the article's default, when no user_id is given

DOMAINS = ("persona", "session", "task")  # None: ordinary conversation memory
SOURCES = ("user_input", "llm_response", "knowledge_base", "tool")


@dataclass(frozen=True)
class Message:
    """One conversation message, as the article defines it, plus optional provenance.

    ``role``, ``content`` and ``user_id`` must be non-empty strings. ``timestamp``, when given,
    must be timezone-aware and is kept in UTC; when omitted the manager stamps it from its clock.

        >>> Message("user", "如何治理记忆污染？").user_id
        'default'
    """

    role: str
    content: str
    user_id: str = DEFAULT_USER
    session_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    domain: str | None = None  # persona | session | task | None (ordinary conversation memory)
    task_id: str | None = None
    source: str | None = None  # user_input | llm_response | knowledge_base | tool; None: from the role
    tenant_id: str | None = None

    def __post_init__(self) -> None:
        require_text("role", self.role)
        require_text("content", self.content)
        # Ids and metadata reach the store and every log as they are: no personal data in them.
        require_id("user_id", self.user_id)
        for name in ("session_id", "task_id", "tenant_id"):
            if getattr(self, name) is not None:
                require_id(name, getattr(self, name))
        if self.domain is not None and self.domain not in DOMAINS:
            raise ValueError(f"domain must be one of {DOMAINS} or None, got {self.domain!r}")
        if self.source is not None and self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES} or None, got {self.source!r}")
        if self.domain == "session" and self.session_id is None:
            raise ValueError("a session-domain message needs a session_id")
        if self.domain == "task" and self.task_id is None:
            raise ValueError("a task-domain message needs a task_id")
        if not isinstance(self.metadata, Mapping):
            raise TypeError(f"metadata must be a mapping, got {type(self.metadata).__name__}")
        check_json("metadata", self.metadata)  # stored as JSON: refused here, not half-way through a write
        check_metadata(self.metadata)
        # subtle: a read-only copy, so the caller's dict cannot change a message after the fact.
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        if self.timestamp is not None:
            object.__setattr__(self, "timestamp", as_utc(self.timestamp))


def as_utc(moment: datetime) -> datetime:
    """Convert an aware datetime to UTC; refuse naive ones (their zone is a guess)."""
    if not isinstance(moment, datetime):
        raise TypeError(f"timestamp must be a datetime, got {type(moment).__name__}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("timestamp must be timezone-aware (use datetime.now(timezone.utc))")
    return moment.astimezone(timezone.utc)


class Hit(NamedTuple):
    """A search result: the similarity score and a copy of the stored record.

    A named tuple, so it works like the article's ``(score, record)`` pairs:
    ``score, record = hit``, ``hit[0]``, ``hit.score``.
    """

    score: float
    record: dict[str, Any]

    def to_dict(self, digits: int = 3) -> dict[str, Any]:
        """The trace form: ``{"score": 0.354, "record": {...}}``."""
        return {"score": round(self.score, digits), "record": dict(self.record)}


@dataclass(frozen=True, repr=False)
class WriteResult(Displayed):
    """What ``MemoryManager.add`` did with a message: where it went, how trusted, and why.

    ``record_id`` is None when nothing reached the long-term store (filler, code-only text).
    """

    record_id: int | None
    stored_in: tuple[str, ...]
    source: str
    domain: str | None
    verified: bool
    weight: float
    reasons: tuple[str, ...] = ()
    sensitive: tuple[dict[str, Any], ...] = ()
    fact: dict[str, Any] | None = None  # the first fact the message declared (``facts`` has them all)
    supersedes: tuple[int, ...] = ()
    facts: tuple[dict[str, Any], ...] = ()
    question: str | None = None  # the confirmation question the agent can ask ("已为您标记…，确认请回复 OK")
    revoked: tuple[int, ...] = ()  # memories the message took back ("forget what I told you about …"): forgotten

    def to_dict(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id, "stored_in": list(self.stored_in), "source": self.source,
            "domain": self.domain, "verified": self.verified, "weight": self.weight,
            "reasons": list(self.reasons), "sensitive": [dict(f) for f in self.sensitive],
            "fact": self.fact, "supersedes": list(self.supersedes), "facts": [dict(f) for f in self.facts],
            "question": self.question, "revoked": list(self.revoked),
        }

    def _shown(self) -> Shown:
        """Where the message went and how far it is trusted; then only what this write found."""
        fields: list[tuple[str, Any]] = [("record_id", self.record_id), ("stored_in", self.stored_in),
                                         ("source", self.source), ("domain", self.domain),
                                         ("verified", self.verified), ("weight", self.weight), ("reasons", self.reasons)]
        if self.sensitive:
            # The kind and the masked form (139*****678), never the value itself.
            fields.append(("sensitive", tuple(f"{f.get('kind')} {f.get('masked', '')}".strip() for f in self.sensitive)))
        if self.facts or self.fact:
            fields.append(("facts", tuple(fact_phrase(f) for f in (self.facts or (self.fact,)))))
        fields += [(name, getattr(self, name)) for name in ("supersedes", "question") if getattr(self, name)]
        return Shown("WriteResult", tuple(fields))


@dataclass(frozen=True, repr=False)
class EraseReceipt(Displayed):
    """What ``erase_user`` removed, per track, and which files it rewrote."""

    user_id: str
    window: int = 0
    summary: int = 0
    store: int = 0
    ledger: int = 0  # governance rows: weights, identifiers, persona facts
    state: int = 0  # sessions and tasks
    logs: int = 0  # audit-log events
    files_rewritten: tuple[str, ...] = ()
    tenant_id: str | None = None
    damaged_log_lines: tuple[str, ...] = ()  # "file:line" of unreadable log lines the rewrite dropped

    @property
    def total(self) -> int:
        """Number of items removed across the tracks (summary counts covered messages)."""
        return self.window + self.summary + self.store + self.ledger + self.state + self.logs

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "tenant_id": self.tenant_id,
            "removed": {"window": self.window, "summary": self.summary, "store": self.store,
                        "ledger": self.ledger, "state": self.state, "logs": self.logs},
            "files_rewritten": list(self.files_rewritten),
            "damaged_log_lines": list(self.damaged_log_lines),
        }

    def _shown(self) -> Shown:
        """Whom it erased, how much per track, and which files it rewrote."""
        fields: list[tuple[str, Any]] = [("user_id", self.user_id)]
        if self.tenant_id is not None:
            fields.append(("tenant_id", self.tenant_id))
        fields += [(track, getattr(self, track)) for track in ("window", "summary", "store", "ledger", "state", "logs")]
        # File names, not paths: a repr has room for three names, and the folder is the store's.
        fields += [("total", self.total), ("files_rewritten", tuple(PurePath(f).name for f in self.files_rewritten))]
        if self.damaged_log_lines:
            fields.append(("damaged_log_lines", self.damaged_log_lines))
        return Shown("EraseReceipt", tuple(fields))


# -- what governance learns about a memory (kept in the ledger) --------------------------------------


@dataclass(frozen=True)
class Declaration:
    key: str
    value: str
    polarity: int  # +1: the user is / has / wants it; -1: the user is not / does not want it


@dataclass(frozen=True)
class MemoryState:
    verified: bool = True
    base_weight: float = 1.0
    usage: float = 1.0
    conflict: float = 1.0
    miss_streak: int = 0
    superseded_by: int | None = None
    isolated: bool = False
    quoted: bool = False  # it instructs the assistant (``text/instructions.py``): recalled only as quoted words

    @property
    def weight(self) -> float:
        """Weight before time decay: base × usage × conflict."""
        return self.base_weight * self.usage * self.conflict


@dataclass(frozen=True)
class Fact:
    key: str
    value: str
    polarity: int
    status: str
    record_id: int | None
    created_at: str

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "value": self.value, "polarity": self.polarity, "status": self.status,
                "record_id": self.record_id, "created_at": self.created_at}


# -- how a persona fact reads in a context line -----------------------------------------------------

MEAT = {"zh": "肉", "en": "meat"}  # the value a "diet" fact holds for meat, in each language

# How a negative fact reads, per key: said so that it cannot be misread as its opposite.
_NEGATIVE = {
    "allergy": "{value} (过敏，必须避免 / allergic: avoid it)",
    "diet": "NOT {value} (不吃 / does not eat it)",
    "likes": "NOT {value} (不喜欢 / dislikes it)",
    "recommend": "NOT {value} (用户明确拒绝 / the user said no)",
}


def render_fact(key: str, value: str, polarity: int) -> str:
    """A fact as a context line that cannot be misread as its opposite.

    >>> render_fact("recommend", "咖啡", -1)
    'persona:recommend = NOT 咖啡 (用户明确拒绝 / the user said no)'
    >>> render_fact("allergy", "花生", -1)
    'persona:allergy = 花生 (过敏，必须避免 / allergic: avoid it)'
    """
    if key == "diet" and value in MEAT.values() and polarity > 0:
        return f"persona:diet = {value} (不再吃素 / eats meat, not vegetarian)"
    if polarity < 0:
        template = _NEGATIVE.get(key, "NOT {value} (用户明确拒绝 / the user said no)")
        return f"persona:{key} = " + template.format(value=value)
    if key == "allergy":
        return f"persona:allergy = NOT allergic to {value} (不过敏 / not allergic)"
    return f"persona:{key} = {value}"


def fact_phrase(fact: Mapping[str, Any]) -> str:
    """A fact's dict (as a write result or an explanation carries it) as one line, with its status.

    >>> fact_phrase({"key": "diet", "value": "香菜", "polarity": -1, "status": "pending"})
    'persona:diet = NOT 香菜 (不吃 / does not eat it) [pending]'
    """
    line = render_fact(str(fact.get("key")), str(fact.get("value")), int(fact.get("polarity", 1)))
    return f"{line} [{fact['status']}]" if fact.get("status") else line


# -- sessions and tasks (their time-to-live is governance's business: governance/state.py) -----------


@dataclass
class SessionInfo:
    session_id: str
    started_at: datetime
    last_seen: datetime
    expires_at: datetime
    ended_at: datetime | None = None

    def status(self, now: datetime) -> str:
        if self.ended_at is not None:
            return "ended"
        return "expired" if now >= self.expires_at else "active"


@dataclass
class TaskInfo:
    task_id: str
    started_at: datetime
    expires_at: datetime
    completion: float = 0.0
    finished_at: datetime | None = None

    def status(self, now: datetime) -> str:
        if self.finished_at is not None:
            return "finished"
        return "expired" if now >= self.expires_at else "active"
