"""The governed summary: what a summary may show *for one read*.

The summary track remembers every stored message that left the window (its ``covers``). Folding
it once and printing it into every context would make it a back door: a corrected fact, an ended
session's chatter or another task's notes would come back through it. So the summary is judged
like any other track, at read time: each covered memory passes the same boundary rules as a
long-term candidate (owner, supersession, verification, session, task, domain), and the summary
shown is the summarizer's fold over the memories that pass — recomputed whenever what passes
changes (a correction, a session end, a task finish).

A read judges the latest ``SUMMARY_HORIZON`` (256) covered memories, so its cost does not grow
with the user's whole history; the extractive summary only ever shows the last few anyway.

Relevance plays no part in these verdicts: the summary is the user's running story, not a search
result — only of conversations before the last pause does a read keep what its query is about and
the newest few others (``track_view.py``: weeks of asides would fill every context). A
one-off happening of the recent past told in passing ("saw a heron this morning", "昨晚把游戏通关了",
``text/happenings.py``) is not part of that story: the summary leaves it out (reason ``happening``),
unless it corrected an earlier memory. Nor is a message that only supposes ("if the promotion
comes through we'll get a Tesla", "要是哪天去柏林…": reason ``hypothetical``), or only asks the
assistant something ("why is the sky blue?", "溏心蛋要煮几分钟": reason ``question``). Long-term
memory keeps them, found by relevance like any other.
Messages kept out of the long-term store (filler, code-only text) never had a record to judge;
they stay in the window only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..messages import MemoryState
from ..text.happenings import is_happening
from ..text.segmenter import READ_LIMIT, read_message
from .admission import ReadContext, boundary_reasons, notes_of
from .scope import task_bound

__all__ = ["SummaryEntry", "judge_summary", "supposes", "only_asks"]

Scope = tuple  # (tenant_id or None, user_id)


def supposes(text: str) -> tuple[str, ...]:
    """``("hypothetical",)`` when ``text`` opens with a supposition and says nothing else as so
    (its first clause holds the condition and every clause is conditional: "if the promotion
    comes through we'll get a Tesla", "要是哪天去柏林，我想住十字山区") and says what would happen
    (would, will, 就, 想 …); else ``()``. A plain statement with a condition after it ("my favourite
    food is Ethiopian, if you're ever suggesting places"), or a fact behind a hedge ("if it helps,
    I'm allergic to peanuts", "万一你忘了，我对青霉素过敏"), is the user's story.

        >>> supposes("要是升职了就换辆车"), supposes("I love sushi, if you ever book dinner"), supposes("if it helps, I'm diabetic")
        (('hypothetical',), (), ())
    """
    clauses = read_message(text[:READ_LIMIT])
    if clauses and "condition" in clauses[0].flags and all(c.act == "conditional" for c in clauses) \
            and _WOULD.search(text[:READ_LIMIT]):
        return ("hypothetical",)
    return ()


# What a supposed plan says: would, will, might, 就, 会, 想 … ("If it helps, I'm allergic to peanuts",
# "如果没记错的话，我的护照三月到期" hedge a fact that holds: no such word, no supposition).
_WOULD = re.compile(r"\b(?:will|would|might|could|maybe|perhaps|gonna|going\s{1,3}to|plan\s{1,3}to|hope\s{1,3}to)\b|\w'(?:ll|d)\b"
                    r"|就|会|想|要(?!是)|打算|准备|可能|也许", re.I)


def only_asks(text: str) -> tuple[str, ...]:
    """``("question",)`` when every clause of ``text`` is a question ("why is the sky blue?", "溏心蛋要
    煮几分钟"): the user asked the assistant something, which tells the story nothing; or when it
    opens by asking about the user's own case ("am I …", "I wonder if I …", "should I …", "我是不
    是…", "要不要…", "…会不会太…") and the rest only says why it asks ("我是不是乳糖不耐受啊，一喝牛奶
    就胀气", "i wonder if i'm gluten intolerant, i always feel bloated after pasta night"): a doubt,
    not what holds. Else ``()``.

        >>> only_asks("do fish sleep?"), only_asks("remind me to call mum"), only_asks("I moved to Oslo")
        (('question',), (), ())
        >>> only_asks("搬去成都会不会太冲动啊，北京房租太贵了"), only_asks("what time is it? I'm meeting Sam at 5")
        (('question',), ())
    """
    clauses = read_message(text[:READ_LIMIT])
    if not clauses:
        return ()
    if all(c.act == "question" for c in clauses):
        return ("question",)
    doubt = clauses[0].act == "question" and _SELF_QUESTION.search(clauses[0].core) is not None
    return ("question",) if doubt and all(c.act in ("question", "statement") for c in clauses) else ()


# A question about the user's own case: a doubt about themselves or their own next step.
_SELF_QUESTION = re.compile(r"^(?:(?:hmm+|ok|so|honestly)\s+)?(?:am\s+i|i\s+wonder\s+(?:if|whether)\s+i|do\s+i|should\s+i|"
                            r"could\s+i\s+be|is\s+it\s+(?:bad|weird|normal|ok|okay|crazy|dumb)\s+(?:if|that)\s+i|"
                            r"would\s+it\s+be\s+(?:crazy|dumb|silly|bad)\s+(?:to|if\s+i))\b"
                            r"|^我?(?:是不是|要不要|该不该|会不会)|会不会太|要不要", re.I)


@dataclass(frozen=True)
class SummaryEntry:
    """One covered memory's verdict for this read: shown in the summary, or why not."""

    record_id: int | None
    shown: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # ("instruction_quoted",): shown, its part of the summary marked quoted

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "shown": self.shown, "reasons": list(self.reasons), "notes": list(self.notes)}


def judge_summary(covers: Iterable[int | None], records: dict[int, dict[str, Any]], states: dict[int, MemoryState],
                  scope: Scope, read: ReadContext, default_state: Callable[[dict[str, Any]], MemoryState]) -> list[SummaryEntry]:
    """A verdict for each covered id, oldest first (``records`` and ``states`` by id, fetched in bulk)."""
    entries = []
    corrections = {state.superseded_by for state in states.values()}  # what corrected an earlier memory
    for record_id in covers:
        record = records.get(record_id) if record_id is not None else None
        if record_id is None:
            entries.append(SummaryEntry(None, False, ("not_stored",)))
        elif record is None:
            entries.append(SummaryEntry(record_id, False, ("forgotten",)))
        elif (record.get("tenant_id"), record["user_id"]) != scope:
            entries.append(SummaryEntry(record_id, False, ("other_user",)))  # never: ids are checked, not trusted
        else:
            state = states.get(record_id) or default_state(record)
            # An isolated record may be summarised: the summary shows it redacted, like every track.
            reasons = tuple(r for r in boundary_reasons(record, state, read) if r != "sensitive")
            if (task_bound(record) and read.task_state(record.get("task_id") or "")[0] == "finished"
                    and (record.get("domain") == "task" or record.get("task_id") != read.task_id)):
                reasons += ("task_finished",)  # kept in history, no longer part of the running story
            if record_id not in corrections and record.get("role") == "user":
                if read.reading("happening", record["content"], is_happening):
                    reasons += ("happening",)
                reasons += read.reading("supposes", record["content"], supposes)
                reasons += read.reading("only_asks", record["content"], only_asks)
            entries.append(SummaryEntry(record_id, not reasons, reasons, notes_of(state)))
    return entries
