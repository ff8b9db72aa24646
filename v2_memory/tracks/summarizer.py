"""The summary track: what left the recent window, folded into a short, bounded text.

The article appends every expired message to one ever-growing string shared by all users. Here
each user has their own ``Summary``, the summarizer keeps it under a size limit, and the summary
remembers which records it covers, so it can be rebuilt without one of them (after a ``forget``).

A summarizer is anything with ``fold(summary, message, record_id) -> Summary``. The default,
``ExtractiveSummarizer``, is deterministic; an LLM summarizer can replace it without the manager
changing, as long as it returns a new ``Summary`` that adds ``record_id`` to ``covers``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Protocol, runtime_checkable

from ..messages import Message
from ..text.segmenter import read_message

__all__ = ["Summary", "Summarizer", "ExtractiveSummarizer", "SummaryTrack", "clip", "asks_only"]


@dataclass(frozen=True)
class Summary:
    """A summary text, the record ids it covers, and the summarizer's own working parts.

    ``shows`` (when the summarizer knows it) names, part by part, the record whose words that part
    shows — ``None`` for a part whose record is unknown. A read then needs to judge only those
    records to know whether the text may be shown as it is (``MemoryManager`` does)."""

    text: str = ""
    covers: tuple[int, ...] = ()
    parts: tuple[str, ...] = ()
    shows: tuple[int | None, ...] | None = None
    # Whether each part only asks (read once, when the part is made; None: not known, read again)
    asks: tuple[bool, ...] | None = field(default=None, compare=False)


@runtime_checkable
class Summarizer(Protocol):
    def fold(self, summary: Summary, message: Message, record_id: int) -> Summary:
        """Return a new summary that also covers ``message`` (stored as ``record_id``)."""


class ExtractiveSummarizer:
    """Keeps a snippet of each expired message, within ``max_chars``; what asks goes first.

    A snippet is the message on one line, clipped at ``snippet_chars`` — at a clause or word
    boundary when one is near, so "switched from Android to an iPhone 15 Pro" does not become
    "switched from An…". When the snippets outgrow ``max_chars``, the oldest snippet that only
    *asks* (a question or a request: it states nothing the story needs) falls off first, then the
    oldest statement. The count of covered messages stays, so the reader knows how much history
    the summary stands for. Every fold touches at most the snippets that fit: its cost is bounded.

        >>> s = ExtractiveSummarizer(max_chars=40, snippet_chars=12)
        >>> summary = s.fold(Summary(), Message("user", "我在写 Agent 专栏，关注 ReAct 状态机。"), 1)
        >>> summary.text
        '[1 earlier message] user: 我在写 Agent…'
        >>> s = ExtractiveSummarizer(max_chars=70, snippet_chars=30)
        >>> for i, text in enumerate(["I use a Mac", "what time is it?", "my cat is Tom", "I live in Oslo"]):
        ...     summary = s.fold(summary if i else Summary(), Message("user", text), i)
        >>> summary.text
        '[4 earlier messages] user: I use a Mac | user: my cat is Tom | user: I live in Oslo'
    """

    def __init__(self, max_chars: int = 600, snippet_chars: int = 120) -> None:
        if snippet_chars < 2 or max_chars < snippet_chars:
            raise ValueError("need 2 <= snippet_chars <= max_chars")
        self.max_chars = max_chars
        self.snippet_chars = snippet_chars

    def fold(self, summary: Summary, message: Message, record_id: int) -> Summary:
        # Step 1: one single-line snippet per message, clipped at a boundary.
        content = clip(" ".join(message.content.split()), self.snippet_chars)
        parts = list(summary.parts) + [f"{message.role}: {content}"]
        # Which record each part shows (parts of an older release's summary: unknown).
        shows = list(summary.shows) if summary.shows is not None and len(summary.shows) == len(summary.parts) \
            else [None] * len(summary.parts)
        shows.append(record_id)
        # Each snippet is read once, when it is made: whether it only asks.
        asks = list(summary.asks) if summary.asks is not None and len(summary.asks) == len(summary.parts) \
            else [asks_only(part.partition(": ")[2]) for part in summary.parts]
        asks.append(asks_only(content))
        # Step 2: drop snippets until the body fits the bound — those that only ask first.
        size = len(" | ".join(parts))
        while len(parts) > 1 and size > self.max_chars:
            index = _first_to_drop(asks)
            dropped = parts.pop(index)
            shows.pop(index)
            asks.pop(index)
            size -= len(dropped) + len(" | ")
        covers = summary.covers + (record_id,)
        noun = "message" if len(covers) == 1 else "messages"
        return Summary(f"[{len(covers)} earlier {noun}] " + " | ".join(parts), covers, tuple(parts), tuple(shows),
                       tuple(asks))


    def without(self, summary: Summary, record_ids: set[int]) -> Summary:
        """``summary`` less the snippets that show ``record_ids``, without folding again (what is left
        still fits); it still stands for the rest of the history it covered.

            >>> s = ExtractiveSummarizer()
            >>> summary = s.fold(s.fold(Summary(), Message("user", "I use a Mac"), 1), Message("user", "my cat is Tom"), 2)
            >>> s.without(summary, {1}).text
            '[1 earlier message] user: my cat is Tom'
        """
        if summary.shows is None or len(summary.shows) != len(summary.parts):
            raise ValueError("a summary that does not say which record each part shows")
        kept = [i for i, rid in enumerate(summary.shows) if rid not in record_ids]
        covers = tuple(rid for rid in summary.covers if rid not in record_ids)
        parts = tuple(summary.parts[i] for i in kept)
        asks = tuple(summary.asks[i] for i in kept) if summary.asks is not None and len(summary.asks) == len(summary.parts) else None
        if not parts:
            return Summary("", covers, (), (), asks)
        noun = "message" if len(covers) == 1 else "messages"
        return Summary(f"[{len(covers)} earlier {noun}] " + " | ".join(parts), covers, parts,
                       tuple(summary.shows[i] for i in kept), asks)


_BOUNDARY = "，,。.;；、—–:：!！ "


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (with "…"), at the last clause or word boundary in
    its second half if there is one.

    >>> clip("switched from Android to an iPhone", 20), clip("我住在杭州滨江，离公司骑车十分钟", 10)
    ('switched from…', '我住在杭州滨江…')
    """
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind(mark) for mark in _BOUNDARY)
    if cut >= limit // 2:
        head = head[:cut]
    return head.rstrip(_BOUNDARY) + "…"


def _first_to_drop(asks: list[bool]) -> int:
    """The oldest snippet that only asks (the newest too: a question adds nothing to the story);
    else the oldest."""
    return asks.index(True) if True in asks else 0


def asks_only(text: str) -> bool:
    """Whether every clause of ``text`` asks (a question or a request): "do fish sleep?", "write me
    a haiku" tell the user's story nothing."""
    clauses = read_message(text)
    return bool(clauses) and all(c.act in ("question", "request") for c in clauses)


class SummaryTrack:
    """One ``Summary`` per scope — a ``(tenant_id, user_id)`` pair — folded by a shared summarizer."""

    def __init__(self, summarizer: Summarizer | None = None) -> None:
        self.summarizer = summarizer if summarizer is not None else ExtractiveSummarizer()
        self._summaries: dict[Hashable, Summary] = {}  # (tenant_id, user_id) -> Summary

    def fold(self, user_id: Hashable, message: Message, record_id: int | None) -> None:
        current = self._summaries.get(user_id, Summary())
        self._summaries[user_id] = self.summarizer.fold(current, message, record_id)

    def get(self, user_id: Hashable) -> Summary:
        return self._summaries.get(user_id, Summary())

    def rebuild(self, user_id: Hashable, covered: list[tuple[int, Message]]) -> None:
        """Refold a user's summary from scratch over ``covered`` (e.g. all but a forgotten record)."""
        summary = Summary()
        for record_id, message in covered:
            summary = self.summarizer.fold(summary, message, record_id)
        if covered:
            self._summaries[user_id] = summary
        else:
            self._summaries.pop(user_id, None)

    def load(self, user_id: Hashable, summary: Summary) -> None:
        """Replace the user's summary (as read back from storage)."""
        if summary.covers:
            self._summaries[user_id] = summary
        else:
            self._summaries.pop(user_id, None)

    def erase(self, user_id: Hashable) -> int:
        """Drop the user's summary; return how many messages it covered."""
        summary = self._summaries.pop(user_id, None)
        return len(summary.covers) if summary is not None else 0

    def users(self) -> list[Hashable]:
        return list(self._summaries)
