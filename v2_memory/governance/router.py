"""The router: which tracks a query consults, and why.

    identifiers, formulas, code   → exact: the SQLite identifier index adds every memory naming the
                                    identifier as a candidate (even with no word in common), and
                                    only memories naming it may be admitted
    "继续/下一步/continue/next"     → task: the context leads with the task's state and progress
    "解释/什么是/how/what is"      → semantic: long-term memory is the main evidence
    anything else                  → conversation: the article's tracks, window, summary, long-term

The decision (kind, tracks, reason) is part of every ``explain`` and every read-log entry, so a
reader sees why a track was or was not consulted.

    >>> route("CS201 第三次作业截止时间？").kind
    'exact'
    >>> route("继续下一步").tracks
    ('task_state', 'window', 'summary', 'long_term')
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .identifiers import extract_identifiers

__all__ = ["Route", "route"]


@dataclass(frozen=True)
class Route:
    kind: str  # exact | semantic | task | conversation
    tracks: tuple[str, ...]
    reason: str
    identifiers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "tracks": list(self.tracks), "reason": self.reason, "identifiers": list(self.identifiers)}


_EXPLAIN = re.compile(r"解释|什么是|是什么|为什么|怎么用|如何|\bhow\b|\bwhat\s{1,3}is\b|\bwhat's\b|\bexplain\b|\bwhy\b", re.I)
_CONTINUE = re.compile(r"继续|下一步|接着|再生成|\bcontinue\b|\bnext\b|\bgo on\b|\bresume\b", re.I)


def route(query: str) -> Route:
    """Classify ``query``; identifiers win, then continuation, then explanation."""
    identifiers = tuple(extract_identifiers(query))
    if identifiers:
        return Route("exact", ("exact", "long_term", "window", "summary"),
                     f"query names identifiers {', '.join(identifiers)}: only exact matches may be admitted", identifiers)
    if _CONTINUE.search(query):
        return Route("task", ("task_state", "window", "summary", "long_term"), "query continues a task: task state first")
    if _EXPLAIN.search(query):
        return Route("semantic", ("long_term", "window", "summary"), "query asks for an explanation: semantic long-term memory")
    return Route("conversation", ("window", "summary", "long_term"), "ordinary query: the article's three tracks")
