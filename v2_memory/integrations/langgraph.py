"""A LangGraph store over a ``MemoryManager``: LangGraph's long-term memory API, governed.

A LangGraph graph keeps long-term memory in a ``BaseStore`` (``graph.compile(store=...)``; a node
gets it as its ``store`` argument). ``V2MemoryStore`` is that store with v2_memory behind it, so
what a graph reads back has passed the same admission rules as ``MemoryManager.retrieve``.

Namespaces are scopes, matched exactly, segment by segment (``("u1",)`` never sees ``("u10",)``):

    (user,)          the user's ordinary memories          Message(user_id=user, domain=None)
    (user, domain)   domain "persona", "session", "task"   Message(user_id=user, domain=domain)
    tenant           fixed when the store is made (``tenant_id=``), never in a namespace, so no
                     namespace a graph builds can reach another tenant

Any other namespace (empty, three segments, ``("memories", user)``) is an ``InvalidNamespaceError``
that says this, never a guess. The operations:

    put     ``manager.add``: governance reads the value's text (its "content", else its "text",
            else the one field ``index=[...]`` names); role, session_id, task_id and source come
            from the value when it has them. The rest of the value rides in the record's metadata,
            so ``get`` returns the whole value, its text as governance stored it (redacted).
            A put to a key that exists replaces it: the new record is added, the old ones forgotten
            from every track and log (without rebuilding the file, which costs the whole store:
            their bytes leave its free pages at the next delete or erase_user).
    get     the key's current record, as that value
    search  with a query: ``manager.retrieve`` (admitted memories only, score = similarity, the read
            logged and used); without one: every item a query could admit (no boundary, trust or
            lifecycle reason against it, weight at least the threshold), oldest first. A statement
            whose facts the user confirmed reaches prompts as its ``persona:`` line, as in retrieve
    delete  ``manager.forget`` on every record of the key: every track, every file
    list_namespaces   the namespaces that hold items, with prefix / suffix ("*" = one segment),
            max_depth, limit and offset

The key lives in each record's metadata (``record["metadata"]["langgraph"]``), so keys survive a
restart with the store's file, and looking one up reads only that user's records.
"""
from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import replace
from datetime import datetime
from typing import Any, Iterable

from ..errors import install_hint

try:
    from langgraph.store.base import (BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp,
                                      MatchCondition, PutOp, SearchItem, SearchOp)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("v2_memory.integrations.langgraph needs the 'langgraph' extra: "
                      + install_hint("langgraph", "langgraph langchain-core")) from exc

from ..governance.admission import ReadContext, admit
from ..governance.governor import default_state
from ..governance.policy import not_embedded_reason
from ..governance.router import route
from ..text.sensitive import check_not_personal, find_sensitive, redact
from ..manager import MemoryManager
from ..messages import DOMAINS, Message, as_utc
from ..validation import require_id, require_text

__all__ = ["V2MemoryStore", "TEXT_FIELDS", "GOVERNANCE_FIELDS"]

TEXT_FIELDS = ("content", "text")  # where a value's text is looked for, in this order
GOVERNANCE_FIELDS = ("role", "session_id", "task_id", "source")  # value fields the message takes
_META = "langgraph"  # record["metadata"][_META] = {"key", "value" (without its text), "field", "at", "created_at", "indexed"}
_MAPPING = ("namespaces are (user,) or (user, domain) with domain one of persona, session, task; "
            "the tenant is fixed by V2MemoryStore(manager, tenant_id=...)")


class V2MemoryStore(BaseStore):
    """LangGraph's ``BaseStore`` over one ``MemoryManager`` (and one tenant, or none).

    The manager stays yours: open and close it as usual (``with MemoryManager(...) as memory``).
    """

    supports_ttl = False  # decay and session/task lifetimes are governance's, not a TTL's

    def __init__(self, manager: MemoryManager, *, tenant_id: str | None = None) -> None:
        if not isinstance(manager, MemoryManager):
            raise TypeError(f"manager must be a MemoryManager, got {type(manager).__name__}")
        if tenant_id is not None:
            require_id("tenant_id", tenant_id)
        self.manager = manager
        self.tenant_id = tenant_id
        self._lock = threading.RLock()  # one batch at a time: a put is an add and a forget

    # -- the batch API (BaseStore's get/put/search/... all come here) -----------------------------
    def batch(self, ops: Iterable[Any]) -> list[Any]:
        """Run ``ops`` in order, each seeing the ones before it; one result per op, in order.

        Every op is checked first, so a bad one raises before any of them changes anything."""
        ops = list(ops)
        checked = [self._check(op) for op in ops]
        with self._lock:
            return [self._run(op, plan) for op, plan in zip(ops, checked)]

    async def abatch(self, ops: Iterable[Any]) -> list[Any]:
        """``batch`` in a worker thread, so the event loop keeps running while files are written."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _check(self, op: Any) -> Any:
        """Validate one op; for a put, return the message it will add."""
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise TypeError(f"unknown store operation: {type(op).__name__}")
        if isinstance(op, (GetOp, PutOp)):
            self._scope(op.namespace)
            _check_key(op.key)
        if isinstance(op, SearchOp):
            self._scope(op.namespace_prefix)
            _check_window(op.limit, op.offset)
            if op.query is not None and not isinstance(op.query, str):
                raise TypeError(f"query must be a str or None, got {type(op.query).__name__}")
            if op.filter is not None and not isinstance(op.filter, dict):
                raise TypeError(f"filter must be a dict or None, got {type(op.filter).__name__}")
        if isinstance(op, ListNamespacesOp):
            _check_window(op.limit, op.offset)
            for condition in op.match_conditions or ():
                _check_labels(tuple(condition.path))
        if isinstance(op, PutOp) and op.value is not None:
            if getattr(op, "ttl", None) is not None:
                raise NotImplementedError("V2MemoryStore has no TTL: memories decay by governance; pass ttl=None")
            return self._message(op)
        return None

    def _run(self, op: Any, message: Message | None) -> Any:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        if op.value is None:
            self._delete(op.namespace, op.key)
        else:
            self._put(op, message)
        return None

    # -- namespaces ------------------------------------------------------------------------------
    def _scope(self, namespace: tuple[str, ...]) -> tuple[str, str | None]:
        """``(user, domain)`` for a namespace; anything else is an error naming the mapping."""
        if not isinstance(namespace, tuple) or len(namespace) not in (1, 2):
            raise InvalidNamespaceError(f"{namespace!r}: {_MAPPING}")
        _check_labels(namespace)
        user, domain = namespace[0], namespace[1] if len(namespace) == 2 else None
        if domain is not None and domain not in DOMAINS:
            raise InvalidNamespaceError(f"{namespace!r}: {domain!r} is not a domain; {_MAPPING}")
        require_id("user_id", user)
        return user, domain

    # -- put ---------------------------------------------------------------------------------------
    def _message(self, op: PutOp) -> Message:
        """The message a put adds: the value's text, its governance fields, the rest as metadata."""
        user, domain = self._scope(op.namespace)
        value = _as_value(op.value)
        field = _text_field(value, op.index)
        text = value[field]
        require_text(f"value[{field!r}]", text)
        if self.manager.policy.enabled and not_embedded_reason(text):
            raise ValueError(f"value[{field!r}] is {not_embedded_reason(text)}: v2_memory keeps such text out of "
                             "long-term memory, so it cannot be stored under a key")
        rest = {name: item for name, item in value.items() if name != field}
        for name, item in rest.items():
            check_not_personal(f"value[{name!r}]", item, f"only the text field ({field!r}) is redacted; keep it there")
        fields = {name: rest[name] for name in GOVERNANCE_FIELDS if isinstance(rest.get(name), str)}
        meta = {"key": op.key, "value": rest, "field": field, "at": list(value).index(field),
                "indexed": op.index is not False}
        return Message(fields.pop("role", "user"), text, user, domain=domain, tenant_id=self.tenant_id,
                       metadata={_META: meta}, **fields)

    def _put(self, op: PutOp, message: Message) -> None:
        user, domain = self._scope(op.namespace)
        earlier = self._records(user).get((domain, op.key), [])
        created = _meta(earlier[0])["created_at"] if earlier else None
        now = self._now()  # the record's time is the item's updated_at; the first put's, its created_at
        meta = dict(message.metadata[_META], created_at=created or now.isoformat())
        result = self.manager.add(replace(message, metadata={_META: meta}, timestamp=now))
        if result.record_id is None:  # only a policy that stores nothing could get here
            raise ValueError(f"the manager did not store the value ({', '.join(result.reasons)})")
        # The key now names the new record alone: earlier versions, and clauses split from them, go
        # (a replacement, not an erasure: the file is not rebuilt for it; delete and erase_user do).
        for record in self._records(user).get((domain, op.key), []):
            if record["record_id"] != result.record_id:
                self.manager.forget(user, record["record_id"], tenant_id=self.tenant_id, scrub=False)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        user, domain = self._scope(namespace)
        for record in self._records(user).get((domain, key), []):
            self.manager.forget(user, record["record_id"], tenant_id=self.tenant_id)

    # -- get ---------------------------------------------------------------------------------------
    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user, domain = self._scope(namespace)
        current = _current(self._records(user).get((domain, key), []))
        originals = [r for r in current if "split_from" not in (r.get("metadata") or {})]
        if not current:
            return None
        found = self._item(originals[-1] if originals else current[-1])
        return Item(value=found.value, key=found.key, namespace=found.namespace, created_at=found.created_at,
                    updated_at=found.updated_at)

    # -- search ------------------------------------------------------------------------------------
    def _search(self, op: SearchOp) -> list[SearchItem]:
        user, domain = self._scope(op.namespace_prefix)
        # record_id -> record, for the current records of every item in the prefix that the filter keeps
        eligible = {r["record_id"]: r for (d, _), records in self._records(user).items()
                    if domain in (None, d) for r in _current(records)
                    if _meta(r)["indexed"] and _matches(_value(r), op.filter)}
        read_scope = {name: op.filter[name] for name in ("session_id", "task_id")
                      if isinstance((op.filter or {}).get(name), str)}
        if op.limit == 0 or not eligible:
            return []
        if op.query:
            # Ask for enough: every record of the user that is not an eligible item may come first.
            others = len(self.manager.store.records(user, tenant_id=self.tenant_id)) - len(eligible)
            hits = self.manager.retrieve(op.query, user, op.offset + op.limit + others, tenant_id=self.tenant_id,
                                         domain=domain, **read_scope)
            found = [(hit.score, eligible[hit.record["record_id"]]) for hit in hits if hit.record["record_id"] in eligible]
        else:
            found = [(None, record) for record in self._admissible(user, list(eligible.values()), domain, read_scope)]
        items, seen = [], set()
        for score, record in found:
            if (record.get("domain"), _meta(record)["key"]) not in seen:  # one result per item
                seen.add((record.get("domain"), _meta(record)["key"]))
                items.append(self._item(record, score))
        return items[op.offset:op.offset + op.limit]

    def _admissible(self, user: str, records: list[dict[str, Any]], domain: str | None,
                    read_scope: dict[str, str]) -> list[dict[str, Any]]:
        """The records a query could admit: judged as a perfect match, so only the reasons that
        hold whatever the query (superseded, sensitive, unverified, session, task, decayed) apply."""
        manager = self.manager
        if not manager.policy.enabled:
            return records
        now = as_utc(manager.clock())
        session_id, task_id = read_scope.get("session_id"), read_scope.get("task_id")
        read = ReadContext(manager.threshold, now, manager.policy.rates, route(""), session_id, task_id, domain,
                           session_status=lambda sid: _status(manager.session(user, sid, tenant_id=self.tenant_id), now),
                           task_state=lambda tid: _task_state(manager.task(user, tid, tenant_id=self.tenant_id), now),
                           scope=(self.tenant_id, user))
        ids = [r["record_id"] for r in records]
        states, facts = manager.ledger.states(ids), manager.ledger.facts_by_record(ids)
        kept = []
        for record in sorted(records, key=lambda r: r["record_id"]):
            state = states.get(record["record_id"]) or default_state(record, manager.policy.rates)
            statuses = {fact.status for fact in facts.get(record["record_id"], [])}
            # The rule retrieve applies to a statement's facts: all replaced -> stale; all confirmed ->
            # it reaches prompts as its persona: line, not as its words.
            if statuses in ({"superseded"}, {"confirmed"}):
                continue
            if admit(1.0, record, state, read).admitted:
                kept.append(record)
        return kept

    # -- list_namespaces ---------------------------------------------------------------------------
    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = {(user,) + ((domain,) if domain else ())
                 for user in self.manager.store.users(tenant_id=self.tenant_id)
                 for domain, _ in self._records(user)}
        found = {ns for ns in found if all(_namespace_matches(c, ns) for c in op.match_conditions or ())}
        if op.max_depth is not None:
            found = {ns[:op.max_depth] for ns in found}
        return sorted(found)[op.offset:op.offset + op.limit]

    # -- records and items -------------------------------------------------------------------------
    def _records(self, user: str) -> dict[tuple[str | None, str], list[dict[str, Any]]]:
        """(domain, key) -> the user's records carrying that key, oldest first (one pass over them)."""
        by_key: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
        for record in self.manager.store.records(user, tenant_id=self.tenant_id):
            meta = (record.get("metadata") or {}).get(_META)
            if isinstance(meta, dict) and isinstance(meta.get("key"), str):
                by_key.setdefault((record.get("domain"), meta["key"]), []).append(record)
        return by_key

    def _item(self, record: dict[str, Any], score: float | None = None) -> SearchItem:
        meta = _meta(record)
        namespace = (record["user_id"],) + ((record["domain"],) if record.get("domain") else ())
        state = self.manager.ledger.states([record["record_id"]]).get(record["record_id"])
        # An isolated record keeps its personal data raw in the store; it leaves here redacted.
        text = redact(record["content"], find_sensitive(record["content"])) if state and state.isolated else None
        return SearchItem(namespace, meta["key"], _value(record, text), datetime.fromisoformat(meta["created_at"]),
                          datetime.fromisoformat(record["created_at"]), score)

    def _now(self) -> datetime:
        return as_utc(self.manager.clock())


# -- values ----------------------------------------------------------------------------------------
def _as_value(value: Any) -> dict[str, Any]:
    """A put's value: a mapping with string keys that JSON can hold (the record's metadata is JSON)."""
    if not isinstance(value, dict) and not hasattr(value, "items"):
        raise TypeError(f"a value must be a dict, got {type(value).__name__}")
    value = dict(value.items())
    if not all(isinstance(name, str) for name in value):
        raise TypeError("a value's keys must be strings")
    try:
        json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a value must be JSON-serializable: {exc}") from exc
    return value


def _text_field(value: dict[str, Any], index: Any) -> str:
    """Which field holds the text governance reads: ``index=[field]`` names one, else the first of
    ``TEXT_FIELDS`` that holds a string."""
    if isinstance(index, list):
        if len(index) != 1 or not isinstance(index[0], str) or not isinstance(value.get(index[0]), str):
            raise ValueError(f"index must name one top-level field of the value that holds a string, got {index!r}: "
                             "v2_memory governs one text per memory")
        return index[0]
    if index not in (None, False):
        raise TypeError(f"index must be None, False or a list of one field name, got {index!r}")
    field = next((name for name in TEXT_FIELDS if isinstance(value.get(name), str)), None)
    if field is None:
        raise ValueError(f"a value needs its text in a string field {' or '.join(map(repr, TEXT_FIELDS))} "
                         "(or name the field with index=['field']): that text is what governance reads")
    return field


def _meta(record: dict[str, Any]) -> dict[str, Any]:
    return record["metadata"][_META]


def _value(record: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """The value as it was put, with its text as the record holds it (or ``text``)."""
    meta = _meta(record)
    pairs = list(meta["value"].items())
    pairs.insert(meta["at"], (meta["field"], record["content"] if text is None else text))
    return dict(pairs)


def _current(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A key's records that stand for it now: its newest put and the clauses split from it later
    (an older version left behind by a crash between a put's add and its forget is not current)."""
    originals = [r["record_id"] for r in records if "split_from" not in (r.get("metadata") or {})]
    newest = originals[-1] if originals else 0
    return [r for r in records if r["record_id"] >= newest]


def _check_labels(path: tuple[str, ...]) -> None:
    """LangGraph's label rules: non-empty strings without "." or NUL (backends join labels with ".")."""
    for label in path:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(f"{path!r}: namespace labels are non-empty strings without '.' or NUL, "
                                        f"got {label!r}")


def _check_key(key: Any) -> None:
    require_text("key", key)
    check_not_personal("key", key)  # it is written to the store as it is


def _check_window(limit: Any, offset: Any) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise ValueError(f"{name} must be an int >= 0, got {number!r}")


# -- filters and matching --------------------------------------------------------------------------
_OPERATORS = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
              "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
              "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def _matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter: each key equals (nested dicts and lists compared field by field), or
    satisfies ``{"$gt": 4.99}``-style operators. An operator on incomparable values is no match."""
    if condition is None:
        return True
    if isinstance(condition, dict) and any(name.startswith("$") for name in condition):
        return all(_compare(value, name, expected) for name, expected in condition.items())
    if isinstance(condition, dict):
        return isinstance(value, dict) and all(_matches(value.get(name), inner) for name, inner in condition.items())
    if isinstance(condition, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(condition)
                and all(_matches(v, c) for v, c in zip(value, condition)))
    return value == condition


def _compare(value: Any, operator: str, expected: Any) -> bool:
    if operator not in _OPERATORS:
        raise ValueError(f"unsupported filter operator {operator!r}; use one of {sorted(_OPERATORS)}")
    try:
        return bool(_OPERATORS[operator](value, expected))
    except TypeError:
        return False


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Per segment, exactly ("*" stands for any one segment), from the start or from the end."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        namespace, path = namespace[::-1], path[::-1]
    elif condition.match_type != "prefix":
        raise ValueError(f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}")
    return all(want in ("*", have) for have, want in zip(namespace, path))


def _status(info: Any, now: datetime) -> str:
    return info.status(now) if info is not None else "unknown"


def _task_state(info: Any, now: datetime) -> tuple[str, float]:
    return (info.status(now), info.completion) if info is not None else ("unknown", 0.0)
