"""The pollution benchmark's scripts: a scenario's history, its queries, and the labels it implies.

A *scenario* is a little history written as a script. Users and the model say things (``Write``),
the user or the app does things (``Action``: confirm a fact, verify a reply, end a session, finish
a task, erase a user, forget one memory), time passes, and at the end people ask (``Query``). One
minute passes per step; ``wait`` skips more.

The labels follow from the script, never from running the system. The author writes, per query,
what the context ``should`` hold and what is ``related`` (harmless, not needed); ``labels`` derives
everything else that must not enter, with its kind:

    erased        the script erased the user, or forgot this memory
    other_user    another user's, or the same user id under another tenant
    wrong_scope   a session memory outside the query's session, or of a session that was ended or
                  sat idle for 30 minutes (the manual's session TTL); a task memory of another task
    stale         a later message of the user corrected it (``corrects=``)
    negation      a later message of the user said the opposite ("我喜欢咖啡" → "我不喜欢咖啡了"),
                  or the author flagged it as the positive form of a negated preference
    identifier    the author flagged it: it names a look-alike identifier (CS202 for CS201)
    unverified    model output that no one verified
    noise         every other memory of the user: low relevance for this query

Persona facts are named ``fact:key=value`` or ``fact:key=NOT value`` (``declares=`` says which
write states one); a need ``"w2|fact:device=Mac"`` is met by either.

The scripts are written once per kind, as templates in Python; the stories that fill them are data
(``cases/pollution_*.json``), read by ``load_scenarios``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..messages import Message
from .pollution_metrics import Labels

__all__ = ["KINDS", "START", "SESSION_TTL_MINUTES", "Write", "Action", "Query", "Scenario", "Script", "labels",
           "fact_label", "is_model_output", "ScriptTruth", "truth_of", "CASES_FORMAT", "Template", "load_scenarios"]

KINDS = {
    "noise": "低相关噪声 / low-relevance noise",
    "stale": "已被纠正 / stale or superseded",
    "other_user": "其他用户或租户 / another user or tenant",
    "erased": "已擦除 / erased",
    "negation": "反义 / opposite meaning",
    "unverified": "未确认的模型输出 / unverified model output",
    "wrong_scope": "错误的会话或任务 / wrong session or task",
    "identifier": "相似标识符 / identifier look-alike",
}
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # minute 0 of every script
SESSION_TTL_MINUTES = 30
ACTIONS = ("confirm_fact", "verify", "end_session", "start_task", "set_task_progress", "finish_task",
           "erase_user", "forget")


@dataclass(frozen=True)
class Write:
    """A message written at ``minute``; ``declares`` a persona fact ("diet=NOT 香菜"), or
    ``corrects`` an earlier write (its key), as the script means it."""

    key: str
    minute: int
    message: Message
    declares: str | None = None
    corrects: str | None = None

    @property
    def owner(self) -> tuple[str | None, str]:
        return (self.message.tenant_id, self.message.user_id)


@dataclass(frozen=True)
class Action:
    """Something the user or the app does: ``call`` is a ``MemoryManager`` method (see ``ACTIONS``);
    ``arg`` is its fact key, write key, session id or task id; ``amount`` a task's completion."""

    minute: int
    call: str
    user_id: str
    arg: str | None = None
    tenant_id: str | None = None
    amount: float = 0.0

    @property
    def owner(self) -> tuple[str | None, str]:
        return (self.tenant_id, self.user_id)


Step = Write | Action


@dataclass(frozen=True)
class Query:
    """A question asked at the end of the script, in a read scope, with the author's labels."""

    text: str
    user_id: str
    kind: str
    should: tuple[str, ...] = ()  # each entry one piece of information: "w2" or "w2|fact:device=Mac"
    related: tuple[str, ...] = ()
    flagged: tuple[tuple[str, str], ...] = ()  # (write key, kind): identifier / negation look-alikes
    tenant_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    domain: str | None = None

    @property
    def owner(self) -> tuple[str | None, str]:
        return (self.tenant_id, self.user_id)

    def read_scope(self) -> dict[str, str]:
        """The keywords ``explain`` / ``retrieve`` take for this query's scope."""
        scope = {"tenant_id": self.tenant_id, "session_id": self.session_id, "task_id": self.task_id,
                 "domain": self.domain}
        return {name: value for name, value in scope.items() if value is not None}

    def needs(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(need.split("|")) for need in self.should)


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # the pollution it is about (its queries may probe others too)
    lang: str  # zh | en | mixed
    steps: tuple[Step, ...]
    queries: tuple[Query, ...]
    end_minute: int  # when the queries are asked

    @property
    def writes(self) -> dict[str, Write]:
        return {step.key: step for step in self.steps if isinstance(step, Write)}


def fact_label(declares: str) -> str:
    """``"device=Mac"`` -> ``"fact:device=Mac"``."""
    return "fact:" + declares


def is_model_output(message: Message) -> bool:
    return message.source == "llm_response" or (message.source is None and message.role == "assistant")


class Script:
    """Writes one scenario step by step; ``build()`` freezes it. Used only while building."""

    def __init__(self, name: str, kind: str, lang: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        self.name, self.kind, self.lang = name, kind, lang
        self._steps: list[Step] = []
        self._queries: list[Query] = []
        self._minute = 0

    def say(self, user: str, text: str, *, role: str = "user", tenant: str | None = None, session: str | None = None,
            task: str | None = None, domain: str | None = None, source: str | None = None,
            declares: str | None = None, corrects: str | None = None) -> str:
        """Write a message; return its key ("w1", "w2", ...)."""
        key = f"w{sum(isinstance(step, Write) for step in self._steps) + 1}"
        message = Message(role, text, user, session_id=session, domain=domain, task_id=task, source=source,
                          tenant_id=tenant)
        self._steps.append(Write(key, self._minute, message, declares, corrects))
        self._minute += 1
        return key

    def reply(self, user: str, text: str, **options: str | None) -> str:
        """The model answers ``user``: stored as model output."""
        return self.say(user, text, role="assistant", **options)

    def do(self, call: str, user: str, arg: str | None = None, *, tenant: str | None = None, amount: float = 0.0) -> None:
        if call not in ACTIONS:
            raise ValueError(f"unknown action {call!r}")
        self._steps.append(Action(self._minute, call, user, arg, tenant, amount))
        self._minute += 1

    def wait(self, minutes: int) -> None:
        self._minute += minutes

    def ask(self, user: str, text: str, *, should: tuple[str, ...] | str = (), related: tuple[str, ...] | str = (),
            identifier: tuple[str, ...] | str = (), negation: tuple[str, ...] | str = (), kind: str | None = None,
            tenant: str | None = None, session: str | None = None, task: str | None = None,
            domain: str | None = None) -> None:
        flagged = tuple((key, "identifier") for key in _keys(identifier)) + tuple((key, "negation") for key in _keys(negation))
        self._queries.append(Query(text, user, kind or self.kind, _keys(should), _keys(related), flagged,
                                   tenant, session, task, domain))

    def build(self) -> Scenario:
        return Scenario(self.name, self.kind, self.lang, tuple(self._steps), tuple(self._queries), self._minute)


def _keys(value: tuple[str, ...] | str) -> tuple[str, ...]:
    """One label (``"w1"``, ``"fact:diet=NOT 香菜|w2"``) or several, as a tuple."""
    return (value,) if isinstance(value, str) else tuple(value)


# -- the stories, from a case file ---------------------------------------------------------------
CASES_FORMAT = "v2_memory.pollution_cases"
LANGS = ("zh", "en", "mixed")
Template = Callable[[str, str, dict[str, Any]], Scenario]  # (name, lang, slots) -> the scenario it scripts


def load_scenarios(path: Path | str, templates: dict[str, Template]) -> tuple[Scenario, ...]:
    """Every case of a case file, each built by its kind's template, kinds in ``templates``' order.

    The file (format ``v2_memory.pollution_cases`` version 1) holds
    ``{"templates": {kind: [{"name", "lang", "slots": {...}}, ...]}}``, one list per template; a
    template reads its slots as it scripts the story. A malformed file raises ``ValueError`` that
    names the file and, when one case is at fault, the case.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != CASES_FORMAT:
        raise ValueError(f"{path}: not a {CASES_FORMAT} file")
    if data.get("version") != 1:
        raise ValueError(f"{path}: unsupported version {data.get('version')!r}")
    groups = data.get("templates")
    if not isinstance(groups, dict) or sorted(groups) != sorted(templates) or \
            not all(isinstance(cases, list) for cases in groups.values()):
        raise ValueError(f"{path}: \"templates\" must map each of {list(templates)} to a list of cases")
    built = tuple(_build(path, kind, case, templates[kind]) for kind in templates for case in groups[kind])
    names = [scenario.name for scenario in built]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"{path}: case {name!r}: the name is used twice")
    return built


def _build(path: Path | str, kind: str, case: Any, template: Template) -> Scenario:
    """One case's scenario; a missing or malformed slot becomes an error naming the file and the case."""
    name = case.get("name") if isinstance(case, dict) else None
    if not isinstance(name, str) or case.get("lang") not in LANGS or not isinstance(case.get("slots"), dict):
        raise ValueError(f"{path}: {kind} case {name!r}: needs a \"name\", a \"lang\" (one of {LANGS}) and \"slots\"")
    try:
        return template(name, case["lang"], case["slots"])
    except KeyError as exc:
        raise ValueError(f"{path}: case {name!r}: missing slot {exc}") from exc
    except (TypeError, ValueError, IndexError) as exc:  # a slot of the wrong shape
        raise ValueError(f"{path}: case {name!r}: malformed slots ({type(exc).__name__}: {exc})") from exc


# -- what the script implies --------------------------------------------------------------------
@dataclass(frozen=True)
class ScriptTruth:
    """What the script did to its memories (write keys), computed once per scenario."""

    erased: frozenset[str]
    superseded: frozenset[str]
    revoked: frozenset[str]
    unverified: frozenset[str]
    sessions_over: frozenset[tuple[tuple[str | None, str], str]]  # (owner, session id)


def truth_of(scenario: Scenario) -> ScriptTruth:
    """Erasures, corrections, contradictions, verifications and session ends, from the steps."""
    writes = scenario.writes
    verified = {step.arg for step in scenario.steps if isinstance(step, Action) and step.call == "verify"}
    return ScriptTruth(
        erased=frozenset(_erased(scenario)),
        superseded=frozenset(w.corrects for w in writes.values() if w.corrects),
        revoked=frozenset(_revoked(writes)),
        unverified=frozenset(w.key for w in writes.values() if is_model_output(w.message) and w.key not in verified),
        sessions_over=frozenset(_sessions_over(scenario)),
    )


def _erased(scenario: Scenario) -> set[str]:
    """Keys of writes that an ``erase_user`` or ``forget`` after them removed."""
    erased: set[str] = set()
    writes = scenario.writes
    for step in scenario.steps:
        if isinstance(step, Action) and step.call == "erase_user":
            erased |= {w.key for w in writes.values() if w.owner == step.owner and w.minute < step.minute}
        elif isinstance(step, Action) and step.call == "forget":
            erased.add(step.arg or "")
    return erased


def _revoked(writes: dict[str, Write]) -> set[str]:
    """Declarations a later one of the same user contradicts ("likes=咖啡", then "likes=NOT 咖啡")."""
    revoked = set()
    for early in writes.values():
        for late in writes.values():
            if (early.declares and late.declares and late.minute > early.minute and late.owner == early.owner
                    and _opposite(early.declares, late.declares)):
                revoked.add(early.key)
    return revoked


def _opposite(a: str, b: str) -> bool:
    key_a, _, value_a = a.partition("=")
    key_b, _, value_b = b.partition("=")
    return key_a == key_b and value_a.startswith("NOT ") != value_b.startswith("NOT ") and \
        value_a.removeprefix("NOT ") == value_b.removeprefix("NOT ")


def _sessions_over(scenario: Scenario) -> set[tuple[tuple[str | None, str], str]]:
    """(owner, session id) of sessions ended by the script or idle for the TTL when the queries come."""
    last_seen: dict[tuple[tuple[str | None, str], str], int] = {}
    for write in scenario.writes.values():
        if write.message.session_id is not None:
            last_seen[(write.owner, write.message.session_id)] = write.minute
    over = {key for key, minute in last_seen.items() if scenario.end_minute - minute >= SESSION_TTL_MINUTES}
    over |= {(step.owner, step.arg or "") for step in scenario.steps
             if isinstance(step, Action) and step.call == "end_session"}
    return over


def _out_of_scope(write: Write, query: Query, over: frozenset[tuple[tuple[str | None, str], str]]) -> bool:
    message = write.message
    if query.domain is not None and message.domain != query.domain:
        return True
    if message.domain == "session":
        return message.session_id != query.session_id or (write.owner, message.session_id) in over
    return message.domain == "task" and message.task_id != query.task_id


def _derived_kind(write: Write, query: Query, truth: ScriptTruth) -> str | None:
    """The must-not kind the script gives ``write`` for ``query`` before the author's flags."""
    if write.key in truth.erased:
        return "erased"
    if write.owner != query.owner:
        return "other_user"
    if _out_of_scope(write, query, truth.sessions_over):
        return "wrong_scope"
    if write.key in truth.superseded:
        return "stale"
    if write.key in truth.revoked:
        return "negation"
    return None


def _fact_kinds(scenario: Scenario, query: Query, truth: ScriptTruth) -> dict[str, str]:
    """Must-not persona facts of the query's user: erased, superseded or contradicted ones."""
    declared: dict[str, list[Write]] = {}
    for write in scenario.writes.values():
        if write.declares and write.owner == query.owner:
            declared.setdefault(fact_label(write.declares), []).append(write)
    kinds = {}
    for label, sources in declared.items():
        keys = {w.key for w in sources}
        for kind, dead in (("erased", truth.erased), ("stale", truth.superseded), ("negation", truth.revoked)):
            if keys <= dead:  # every write that declared it is gone, corrected or contradicted
                kinds[label] = kind
                break
    return kinds


def labels(scenario: Scenario, query: Query, truth: ScriptTruth | None = None) -> Labels:
    """Everything ``query`` should and must not see, as the script implies it (see the module docstring)."""
    truth = truth if truth is not None else truth_of(scenario)
    flags = dict(query.flagged)
    wanted = {label for need in query.needs() for label in need} | set(query.related)
    must_not: dict[str, str] = {}
    for write in scenario.writes.values():
        kind = _derived_kind(write, query, truth) or flags.get(write.key)
        if kind is None and write.key in truth.unverified:
            kind = "unverified"
        if kind is None and write.key not in wanted:
            kind = "noise"
        if kind is not None:
            must_not[write.key] = kind
    must_not.update(_fact_kinds(scenario, query, truth))
    erased_texts = tuple(scenario.writes[key].message.content for key in sorted(truth.erased))
    return Labels(query.needs(), must_not, query.related, erased_texts)
