"""The read path: what one ``build_context`` shows, track by track, and why.

    task line (when the router sends "next/继续" to task state)
    persona:  the user's confirmed facts
    summary:  the fold over the covered memories this read may see (``track_view.py``), and
              the window's turns said before a pause in the conversation: history now
    recent:   the window's messages this read may see, since that pause
    memory:   the admitted long-term candidates (``governor.explain``), minus what the window shows

Each step is judged by governance; this module only puts them in order. It records the read's
usage (reinforcement and misses) but writes no log: the manager logs what was shown.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ..context import ContextItem
from ..storage.vector_store import hooks_of
from ..text.analyzer import analyze
from ..text.instructions import find_instruction
from ..tracks.cache import TrackCache, record_message
from ..tracks.summarizer import ExtractiveSummarizer, Summary
from .admission import Explanation
from .summary_view import SummaryEntry
from .governor import Governor

__all__ = ["ReadPath", "ContextRead"]

Scope = tuple  # (tenant_id or None, user_id)


@dataclass(frozen=True)
class ContextRead:
    """One read's result: its explanation, the context items, and every record whose words they hold."""

    explanation: Explanation
    items: list[ContextItem]
    shown: list[int]


class ReadPath:
    """Reads a scope's tracks through governance (``governor``) into context items."""

    def __init__(self, governor: Governor, cache: TrackCache, store: Any) -> None:
        self.governor, self.cache, self.store = governor, cache, store

    def explain(self, query: str, scope: Scope, top_k: int, threshold: float, *, session_id: str | None = None,
                task_id: str | None = None, domain: str | None = None, with_summary: bool = True) -> Explanation:
        """Every long-term candidate's verdict, and (``with_summary``) the summary's covered memories'."""
        self.cache.ensure(scope)
        # The window's and the summary's records are judged after the candidates: their ledger
        # rows come with the candidates' (inside build_context's transaction; see Ledger.states).
        shows = self.cache.summaries.get(scope).shows or ()
        self.governor.view.prefetch([rid for rid, _ in self.cache.window.entries(scope) if rid is not None]
                                    + [rid for rid in shows if rid is not None])
        explanation = self.governor.explain(query, scope, threshold=threshold, top_k=top_k, session_id=session_id,
                                            task_id=task_id, domain=domain)
        if not with_summary:
            return explanation
        view = self.governor.view
        before, recent = view.split_window(self.cache.window.entries(scope), scope, session_id, task_id, query)
        history = tuple(rid for rid, _ in before if rid is not None)
        entries = view.summary_entries(self.cache.summaries.get(scope).covers + history, scope, session_id=session_id,
                                       task_id=task_id, domain=domain, identifiers=explanation.route.identifiers,
                                       window=tuple(m for _, m in before + recent), query_terms=frozenset(analyze(query)),
                                       query_text=query)
        return replace(explanation, summary=tuple(entries))

    def context(self, query: str, scope: Scope, top_k: int, threshold: float, *, session_id: str | None = None,
                task_id: str | None = None, domain: str | None = None) -> ContextRead:
        """The context items for ``query``, in the order above; usage recorded for what is shown."""
        window_size = self.cache.window.size
        explanation = self.explain(query, scope, top_k + window_size, threshold, session_id=session_id,
                                   task_id=task_id, domain=domain, with_summary=False)
        view = self.governor.view
        # The router sends "继续/next" to task state first: the task's progress leads the context.
        items = [ContextItem("task", line) for line in (view.task_lines(scope, task_id)
                                                         if explanation.route.kind == "task" else [])]
        items += [ContextItem("persona", line) for line in self.governor.fact_lines(explanation.facts)]
        # Turns said before a pause in the conversation are history, no longer recent: the summary
        # covers them for this read, judged as it judges what left the window.
        before, recent = view.split_window(self.cache.window.entries(scope), scope, session_id, task_id, query)
        # Memories already shown in the recent window are not repeated; a memory line shows the
        # others, so the summary leaves them out: the context says each thing once.
        in_window = {record_id for record_id, _ in recent}
        fresh = [a for a in explanation.admitted if a.record_id not in in_window][:top_k]
        summary = self.summary(scope, session_id, task_id, domain, explanation.route.identifiers,
                               history=tuple(rid for rid, _ in before if rid is not None),
                               window=tuple(m for _, m in before + recent), query_terms=frozenset(analyze(query)),
                               query_text=query, as_memories=frozenset(a.record_id for a in fresh))
        entries = recent
        # Which of the words shown instruct the assistant: their lines are marked quoted.
        in_summary = [rid for rid in words_of(summary) if rid is not None] if summary.text else []
        states = self.governor.states([rid for rid, _ in entries if rid is not None] + in_summary)
        instructs = {rid for rid, state in states.items() if state.quoted}
        if summary.text:
            items.append(ContextItem("summary", summary.text, quoted=bool(instructs & set(in_summary))))
        # subtle: a message kept out of the store (code- or JSON-shaped text) has no ledger row to
        # hold its mark; the window holds its words, which are recognised again (the same answer).
        items += [ContextItem("recent", message.content, message.role, rid,
                              quoted=rid in instructs if rid is not None else self._instructs(message.content))
                  for rid, message in entries]
        self.governor.record_usage(explanation, returned=[a.record_id for a in fresh])
        # relevance × weight: the threshold was applied to their product, the effective score.
        items += [ContextItem("memory", a.record["content"], a.record["role"], a.record_id, a.relevance, a.weight, a.quoted)
                  for a in fresh]
        shown = [rid for rid, _ in entries if rid is not None] + [rid for rid in words_of(summary) if rid is not None]
        return ContextRead(explanation, items, shown + [a.record_id for a in fresh])

    def _instructs(self, text: str) -> bool:
        return self.governor.policy.enabled and find_instruction(text) is not None

    def summary(self, scope: Scope, session_id: str | None, task_id: str | None, domain: str | None = None,
                identifiers: tuple[str, ...] = (), history: tuple[int, ...] = (), window: tuple[Any, ...] = (),
                query_terms: frozenset[str] = frozenset(), as_memories: frozenset[int] = frozenset(),
                query_text: str = "") -> Summary:
        """The summary as this read may see it. When the summarizer says which records its text
        shows, those few are judged first: if this read may see them all, the stored text is the
        answer (its count includes the messages its snippets no longer fit); if it may see all but
        ``as_memories`` (the memories this context shows as lines of their own), the stored text less
        those snippets. Only otherwise are the covered memories judged (the latest
        ``SUMMARY_HORIZON``) and the visible ones refolded (its count: the messages refolded); so are
        ``history``, the window's turns before a pause (``TrackView.conversation_start``), which
        this read's summary covers too. Of the conversations before a pause, the snippets a read
        judges are the ones it weighs (``track_view.EARLIER_SNIPPETS``): the stored text's alone on
        the first path. The scope's tracks must be current (``cache.ensure``)."""
        stored = self.cache.summaries.get(scope)
        judged = partial(self.governor.view.summary_entries, scope=scope, session_id=session_id, task_id=task_id,
                         domain=domain, identifiers=identifiers, window=window, query_terms=query_terms,
                         query_text=query_text)

        def judge(covers: tuple[int | None, ...]) -> list[SummaryEntry]:
            return [SummaryEntry(e.record_id, False, e.reasons + ("shown_as_memory",), e.notes)
                    if e.shown and e.record_id in as_memories else e for e in judged(covers)]

        fast = not history and bool(stored.shows) and None not in (stored.shows or ())
        entries = judge(stored.shows if fast else stored.covers + history)  # type: ignore[arg-type]
        if fast and all(e.shown for e in entries):
            return stored
        # A memory shown as its own line is taken out of the fold of the rest (which stays the same
        # from read to read); anything else this read leaves out is refolded without it, so an older
        # memory the read is about may take its place.
        summarizer = self.cache.summaries.summarizer
        extractive = isinstance(summarizer, ExtractiveSummarizer)

        def lines(judged: list[SummaryEntry]) -> set[int | None]:
            return {e.record_id for e in judged if not e.shown and e.reasons in _TAKEN_OUT} if extractive else set()

        as_lines = lines(entries)
        if fast and all(e.shown or e.record_id in as_lines for e in entries):
            return summarizer.without(stored, as_lines)  # type: ignore[union-attr]
        if fast:
            entries = judge(stored.covers + history)
        left = lines(entries)
        if not left:
            return self._refold(scope, entries)
        base = [SummaryEntry(e.record_id, True, (), e.notes) if e.record_id in left else e for e in entries]
        return summarizer.without(self._refold(scope, base), left)  # type: ignore[union-attr]

    def _refold(self, scope: Scope, entries: Any) -> Summary:
        """The summarizer's fold over the covered memories this read may see (the stored fold when
        it may see them all); refolded only when that set changes."""
        stored = self.cache.summaries.get(scope)
        shown = tuple(e.record_id for e in entries if e.shown)
        if shown == stored.covers:
            return stored
        memo = self.cache.refolded.get(scope)
        if memo is not None and memo[0] == shown:
            return memo[1]
        summary = Summary()
        records = hooks_of(self.store).get_many([rid for rid in shown if rid is not None], scope)
        for record_id in shown:
            record = records.get(record_id) if record_id is not None else None
            if record is not None:
                summary = self.cache.summaries.summarizer.fold(summary, record_message(record), record_id)
        self.cache.refolded[scope] = (shown, summary)
        return summary


# Verdicts that take a snippet out of the stored fold as it is, without folding the rest again
# (what is left still fits): a memory shown as its own line, someone else's story set aside.
_TAKEN_OUT = (("shown_as_memory",), ("someone_else",))


def words_of(summary: Summary) -> tuple[int | None, ...]:
    """The records whose words the summary's text holds (every covered one, if it does not say
    which record every snippet shows: an older release's snippets)."""
    return summary.covers if summary.shows is None or None in summary.shows else summary.shows
