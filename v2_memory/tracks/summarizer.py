"""The summary track: what left the recent window, folded into a short, bounded text.

The article appends every expired message to one ever-growing string shared by all users. Here
each user has their own ``Summary``, the summarizer keeps it under a size limit, and the summary
remembers which records it covers, so it can be rebuilt without one of them (after a ``forget``).

A summarizer is anything with ``fold(summary, message, record_id) -> Summary``. The default,
``ExtractiveSummarizer``, is deterministic; an LLM summarizer can replace it without the manager
changing, as long as it returns a new ``Summary`` that adds ``record_id`` to ``covers``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Protocol, runtime_checkable

from ..messages import Message

__all__ = ["Summary", "Summarizer", "ExtractiveSummarizer", "SummaryTrack"]


@dataclass(frozen=True)
class Summary:
    """A summary text, the record ids it covers, and the summarizer's own working parts."""

    text: str = ""
    covers: tuple[int, ...] = ()
    parts: tuple[str, ...] = ()


@runtime_checkable
class Summarizer(Protocol):
    def fold(self, summary: Summary, message: Message, record_id: int) -> Summary:
        """Return a new summary that also covers ``message`` (stored as ``record_id``)."""


class ExtractiveSummarizer:
    """Keeps a clipped snippet of the latest expired messages, within ``max_chars``.

    Older snippets fall off the front; the count of covered messages stays, so the reader knows
    how much history the summary stands for.

        >>> s = ExtractiveSummarizer(max_chars=40, snippet_chars=12)
        >>> summary = s.fold(Summary(), Message("user", "我在写 Agent 专栏，关注 ReAct 状态机。"), 1)
        >>> summary.text
        '[1 earlier message] user: 我在写 Agent 专…'
    """

    def __init__(self, max_chars: int = 240, snippet_chars: int = 40) -> None:
        if snippet_chars < 2 or max_chars < snippet_chars:
            raise ValueError("need 2 <= snippet_chars <= max_chars")
        self.max_chars = max_chars
        self.snippet_chars = snippet_chars

    def fold(self, summary: Summary, message: Message, record_id: int) -> Summary:
        # Step 1: one clipped, single-line snippet per message.
        content = " ".join(message.content.split())
        if len(content) > self.snippet_chars:
            content = content[: self.snippet_chars - 1] + "…"
        parts = summary.parts + (f"{message.role}: {content}",)
        # Step 2: drop the oldest snippets until the body fits the bound.
        while len(parts) > 1 and len(" | ".join(parts)) > self.max_chars:
            parts = parts[1:]
        covers = summary.covers + (record_id,)
        noun = "message" if len(covers) == 1 else "messages"
        return Summary(f"[{len(covers)} earlier {noun}] " + " | ".join(parts), covers, parts)


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
