"""What one read may see of the short-term tracks: the recent window, the summary, the task line.

The long-term store is judged candidate by candidate (``admission.py``); the other tracks are
judged here, by the same boundary rules, so none of them is a back door: a corrected message
leaves the window, an ended session's chatter and another task's notes leave both, unverified
model output never enters the summary (``summary_view.py`` judges what the summary covers).
And the window is the conversation going on: after a pause of ``CONVERSATION_GAP`` its earlier
turns are history, which a read's summary covers instead (``conversation_start``). The summary
recaps the conversation in progress whole; of the conversations before the last pause it keeps
what shares content words with the read's query, then the newest ``EARLIER_SNIPPETS`` others,
statements before mere requests — or, when a snippet shares two of the query's words (the read
found what it asks about), that snippet's exchange and nothing else of other conversations but
what shares as many (reason ``earlier_conversation`` for the rest).

What the user tells of someone else and then sets their own against ("my coworker is allergic to
cats" — "I'm allergic to penicillin myself"; "我妈让我考公" — "我自己打算做运营") is the other
person's story: for a query about the user ("what am I allergic to?") the summary shows the
user's own and leaves the other out (reason ``someone_else``), unless the query names what only
the other message says ("what is Dave allergic to?").
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Callable, Iterable

from ..messages import MemoryState, Message
from ..storage.ledger import Ledger
from ..storage.vector_store import hooks_of
from ..text.analyzer import FUNCTION_BIGRAMS, analyze
from ..text.memo import UserMemo
from ..text.segmenter import READ_LIMIT, read_message
from ..tracks.summarizer import asks_only
from .admission import ReadContext, shared_content, shares_content
from .identifiers import look_alike
from .reply import reply_to
from .restatement import points_back
from .router import Route
from .scope import CONVERSATION_GAP
from .state import StateTracker
from .summary_view import SummaryEntry, judge_summary

__all__ = ["TrackView", "SUMMARY_HORIZON", "CONVERSATION_GAP", "EARLIER_SNIPPETS", "FOUND_WORDS", "FOLLOWING"]

Scope = tuple  # (tenant_id or None, user_id)

SUMMARY_HORIZON = 256  # covered memories a read's summary is drawn from: its cost stays bounded


class TrackView:
    """The governed view of one store's window, summary and task tracks (``policy`` off: all of it)."""

    def __init__(self, store: Any, ledger: Ledger, state: StateTracker, policy: Any,
                 clock: Callable[[], Any], default_state: Callable[[dict[str, Any]], MemoryState],
                 memo: UserMemo | None = None) -> None:
        self.store, self.ledger, self.state, self.policy, self.clock = store, ledger, state, policy, clock
        self.default_state, self.memo = default_state, memo

    def task_state(self, scope: Scope, task_id: str) -> tuple[str, float]:
        """A task's status ("active", "expired", "finished", "unknown") and completion, for admission."""
        info = self.state.task(scope, task_id)
        return (info.status(self.clock()), info.completion) if info is not None else ("unknown", 0.0)

    def prefetch(self, record_ids: Iterable[int]) -> None:
        """Ask the ledger to read these records' rows with the next batch it reads (one query)."""
        self.ledger.want(list(record_ids))

    def summary_entries(self, covers: tuple[int | None, ...], scope: Scope, *, session_id: str | None = None,
                        task_id: str | None = None, domain: str | None = None,
                        identifiers: tuple[str, ...] = (), window: tuple[Any, ...] = (),
                        query_terms: frozenset[str] = frozenset(), query_text: str = "") -> list[SummaryEntry]:
        """Which covered memories this read's summary may show (``summary_view.py``); a read naming
        identifiers also leaves out memories that name only others (CS202 when asked for CS201)."""
        if not self.policy.enabled:
            return [SummaryEntry(rid, True) for rid in covers]
        covers = covers[-SUMMARY_HORIZON:]  # a read judges (and a summary stands for) the latest ones only
        ids = [rid for rid in covers if rid is not None]
        records = hooks_of(self.store).get_many(ids, scope)
        read = ReadContext(0.0, self.clock(), self.policy.rates, Route("conversation", (), "summary"), session_id,
                           task_id, domain, session_status=lambda sid: self.state.session_status(scope, sid),
                           task_state=lambda tid: self.task_state(scope, tid), scope=scope, memo=self.memo,
                           query_terms=query_terms)
        entries = judge_summary(covers, records, self.ledger.states(ids), scope, read, self.default_state)
        began = self._conversation_began([records[rid].get("created_at") for rid in ids if rid in records]
                                         + [m.timestamp for m in window], query_text)
        if began is not None:
            entries = _earlier_kept(entries, records, began, read, self.ledger.replaced_by, self.store)
        entries = _own_over_others(entries, records, read, query_text)
        if not identifiers:
            return entries
        named = self.ledger.identifiers_of(ids)
        asked = set(identifiers)
        # A memory naming only other identifiers, or a look-alike number ("481" when room 418 is
        # asked), is about another thing: the summary of this read leaves it out.
        return [SummaryEntry(e.record_id, False, e.reasons + ("identifier_mismatch",), e.notes)
                if e.shown and ((named.get(e.record_id) and not named[e.record_id] & asked)
                                or (not named.get(e.record_id, set()) & asked and e.record_id in records
                                    and look_alike(records[e.record_id]["content"], identifiers)))
                else e for e in entries]

    def _conversation_began(self, times: list[Any], query: str = "") -> Any:
        """When the conversation in progress began: after the last pause of ``CONVERSATION_GAP``
        among ``times`` and now (None: no pause). A pause before now leaves the conversation the
        user left in progress, unless the query does not pick it up (``picks_up``): then none is."""
        stamps = sorted(t if not isinstance(t, str) else datetime.fromisoformat(t) for t in times if t is not None)
        stamps.append(self.clock())
        for index in range(len(stamps) - 1, 0, -1):
            if stamps[index] - stamps[index - 1] >= CONVERSATION_GAP:
                if index < len(stamps) - 1 or (query and not picks_up(query)):
                    return stamps[index]
                return stamps[index - 1]
        return None

    def may_summarize(self, record_id: int | None) -> bool:
        """Whether a message leaving the window may enter the summary: not while it is unverified
        model output (a summary is recalled in every context, so it would be an echo's back door)."""
        if not self.policy.enabled:
            return True
        if record_id is None:
            return False  # kept out of the store (filler, code-only text): no read could ever show it
        state = self.ledger.states([record_id]).get(record_id)
        return state is None or state.verified

    def task_lines(self, scope: Scope, task_id: str | None) -> list[str]:
        """The read's task as a context line: ``task:paper = active, 50% done``."""
        info = self.state.task(scope, task_id) if task_id is not None else None
        if info is None:
            return []
        return [f"task:{task_id} = {info.status(self.clock())}, {info.completion:.0%} done"]

    def window_for_read(self, entries: list[tuple[int | None, Message]], scope: Scope, session_id: str | None,
                        task_id: str | None) -> list[tuple[int | None, Message]]:
        """The recent-window entries this read may see: not a corrected message, not an ended or
        other session's, not another task's."""
        if not self.policy.enabled:
            return entries
        states = self.ledger.states(rid for rid, _ in entries if rid is not None)
        # The model's own unverified words stay in the window only while they are its last turn,
        # the one the user is answering; an older one the user never took up is not evidence, nor
        # one from another session: a new session answers nothing said in the last one.
        last_reply = max((i for i, (_, m) in enumerate(entries) if m.role == "assistant"), default=-1)
        if last_reply >= 0 and session_id is not None and entries[last_reply][1].session_id != session_id:
            last_reply = -1
        return [(rid, message) for i, (rid, message) in enumerate(entries)
                if not (rid in states and states[rid].superseded_by is not None)
                and not (i != last_reply and rid in states and not states[rid].verified)
                and self._in_read_scope(message, scope, session_id, task_id)]

    def split_window(self, entries: list[tuple[int | None, Message]], scope: Scope, session_id: str | None,
                     task_id: str | None, query: str | None = None) -> tuple[list[Any], list[Any]]:
        """The window entries this read may see (``window_for_read``), as history and the
        conversation going on (``conversation_start``). Where the conversation begins is read from
        every turn in the read's scope, shown or not: the last exchange ends with the assistant's
        last reply even when that reply, unconfirmed, is not shown — else an older exchange whose
        reply is shown would stand for it, and a month-old turn would pass for recent."""
        visible = self.window_for_read(entries, scope, session_id, task_id)
        if not self.policy.enabled:
            return [], visible
        turns = [entry for entry in entries if self._in_read_scope(entry[1], scope, session_id, task_id)]
        going_on = {id(message) for _, message in turns[self.conversation_start(turns, query):]}
        return ([entry for entry in visible if id(entry[1]) not in going_on],
                [entry for entry in visible if id(entry[1]) in going_on])

    def conversation_start(self, entries: list[tuple[int | None, Message]], query: str | None = None) -> int:
        """Where this read's conversation begins in the window: after the last pause of at least
        ``CONVERSATION_GAP`` between two turns, or between the last turn and now (0: no pause) —
        but never after the last exchange (the user's turn the assistant last answered, and all
        after it): whoever comes back after a night ("tell me more about the second one") still
        has the exchange they left, whatever it holds. Unless the ``query`` of one who comes back
        does not pick it up (``picks_up``: "我住在哪一带？" after a night): then the whole window
        is history, which the summary judges."""
        if not self.policy.enabled or not entries:
            return 0
        times = [message.timestamp for _, message in entries] + [self.clock()]
        if (query is not None and times[-1] is not None and times[-2] is not None
                and times[-1] - times[-2] >= CONVERSATION_GAP and not picks_up(query)):
            return len(entries)
        roles = [message.role for _, message in entries]
        last = max((i for i, role in enumerate(roles) if role == "user"), default=0)
        reply = max((i for i, role in enumerate(roles) if role == "assistant"), default=-1)
        asked = max((i for i in range(reply) if roles[i] == "user"), default=last) if reply > 0 else last
        for index in range(len(entries), 0, -1):
            if times[index] is not None and times[index - 1] is not None and times[index] - times[index - 1] >= CONVERSATION_GAP:
                return min(index, last, asked)
        return 0

    def _in_read_scope(self, message: Message, scope: Scope, session_id: str | None, task_id: str | None) -> bool:
        if message.domain == "session":
            status = self.state.session_status(scope, message.session_id or "")
            return message.session_id == session_id and status not in ("ended", "expired")
        if message.domain == "task":
            return message.task_id == task_id
        # Written inside a task with no domain of its own: that task's, not another task's (unless
        # it says something about the user: ``scope.task_bound``).
        return (message.domain is not None or not message.task_id or task_id is None or message.task_id == task_id
                or bool((message.metadata or {}).get("about_user")))


# A query points back at the conversation it comes back to: a pronoun or a demonstrative ("tell
# me more about it", "is that place open on Sundays?", "那家店叫什么"), an ordinal or "the other"
# ("the second one", "第二个"), or a word asking for more ("anything else?", "继续", "还有呢").
_PICKS_UP = re.compile(r"\b(?:it|its|that|this|those|these|them|they|he|she|him|his|her|their|one|ones|more|else|"
                       r"again|instead|then|first|second|third|last|other|next|previous|above|earlier)\b"
                       r"|它|他|她|[那这](?:个|家|些|种|款|位|条|件|本|部|次|里|边)|上面|刚才|刚刚|前面|第\S个|"
                       r"继续|另一|再说|还有呢|然后呢|呢[？?]?\s*$", re.I)


def picks_up(query: str) -> bool:
    """Whether a query picks up the conversation before it rather than asking on its own.

        >>> picks_up("tell me more about the second one"), picks_up("那家店几点关门？"), picks_up("what car do I drive?")
        (True, True, False)
    """
    return _PICKS_UP.search(query[:READ_LIMIT]) is not None


EARLIER_SNIPPETS = 6  # of the conversations before the last pause, a summary shows this many besides the relevant ones
# A snippet sharing FOUND_WORDS content words with the query or more is what the read asks about:
# then the summary shows it and the FOLLOWING messages after it in its own conversation (the reply
# that confirmed or corrected it), and of other conversations only what shares as many words.
FOUND_WORDS = 2
FOLLOWING = 4
# A one-off happening the summary leaves out of the running story ("planted the tomatoes today") is
# still a fact a read may have found; a question or a supposition sharing the query's words is not.
_STORY_REASONS = frozenset({"happening"})


def _earlier_kept(entries: list[SummaryEntry], records: dict[int, dict[str, Any]], began: datetime, read: ReadContext,
                  replaced_by: Callable[[list[Any]], dict[int, list[int]]], store: Any) -> list[SummaryEntry]:
    """The conversation in progress is recapped whole. Of those before it, when a memory shares
    ``FOUND_WORDS`` words with the query ("book club" for "what are we reading for book club?"),
    the read found what it asks about: the summary shows that memory's conversation's relevant
    snippets and the ``FOLLOWING`` messages after it ("不对，周六走" after the trip it corrects), and
    of other conversations only what shares as many words — not "my kid's class is reading
    charlotte's web" from another day. Otherwise it shows what shares content words with the query
    — or replaced what does ("加到75微克" for "一天50微克", asked "一天吃多少") — and the newest
    ``EARLIER_SNIPPETS`` others: a fact that shares no word ("parked at level P4" for "where did I
    leave the car?") is kept by that count, and a snippet sharing one word ("on the plane") finds
    nothing."""
    if not read.query_terms:
        return entries
    written = {i: _written(records.get(e.record_id)) for i, e in enumerate(entries)}
    before = [i for i, moment in written.items() if moment is not None and moment < began]
    shared = {i: len(shared_content(read, records[entries[i].record_id])) for i in before}  # type: ignore[index]
    talk = dict(zip(before, _conversations([written[i] for i in before])))
    found = [i for i in before if shared[i] >= FOUND_WORDS and (entries[i].shown or set(entries[i].reasons) <= _STORY_REASONS)]
    earlier = [i for i in before if entries[i].shown]
    if found:
        near = {talk[i] for i in found}
        at = {i: k for k, i in enumerate(before)}
        following = {j for i in found for j in before[at[i] + 1:at[i] + 1 + FOLLOWING]
                     if talk[j] == talk[i] and _answers(records[entries[j].record_id], records[entries[i].record_id], read)}  # type: ignore[index]
        pointed = (_pointed_at(i, before[max(0, at[i] - FOLLOWING):at[i]], talk, entries, records, read) for i in found)
        following |= {j for j in pointed if j is not None}
        others = [i for i in earlier if shared[i] < FOUND_WORDS and i not in following and not (shared[i] and talk[i] in near)]
        keep = 0
    else:
        others = [i for i in earlier if not shared[i]]
        keep = EARLIER_SNIPPETS
    if len(others) > keep:
        # A snippet that replaced a relevant memory is relevant: the memory left the summary when
        # it was superseded, its successor says what holds now.
        replaced = replaced_by([entries[i].record_id for i in others])
        if replaced:
            olds = hooks_of(store).get_many([rid for ids in replaced.values() for rid in ids], read.scope)
            successors = {new for new, ids in replaced.items() if any(rid in olds and shares_content(read, olds[rid]) for rid in ids)}
            others = [i for i in others if entries[i].record_id not in successors]
    # What states something before what only asks (a one-off "write me a haiku"), newest first.
    ranked = sorted(others, key=lambda i: (read.reading("asks", records[entries[i].record_id]["content"][:READ_LIMIT], asks_only), -i))
    dropped = set(ranked[keep:])
    return [SummaryEntry(e.record_id, False, e.reasons + ("earlier_conversation",), e.notes) if i in dropped else e
            for i, e in enumerate(entries)]


def _answers(record: dict[str, Any], found: dict[str, Any], read: ReadContext) -> bool:
    """Whether ``record``, said soon after ``found`` in its conversation, carries on that exchange:
    the assistant's words the user confirmed (only those reach the summary), the user's answer to
    what the assistant asked or offered ("饶了我吧，十点前别排课" after "早上8点怎么样？"), a yes or no
    ("不对，周六走", "好，就它了"), a message pointing back at it ("对了，开会地点在他们公司18楼") or
    sharing a content word with it — not a new topic ("my cousin's band is playing on friday")."""
    if record.get("role") == "assistant" or record.get("replies"):
        return True
    text = record["content"][:READ_LIMIT]
    if read.reading("reply", text, _reply) is not None or read.reading("points_back", text, points_back):
        return True
    return bool((read.reading("terms", text, _terms) & read.reading("terms", found["content"][:READ_LIMIT], _terms)) - FUNCTION_BIGRAMS)


def _pointed_at(found: int, earlier: list[int], talk: dict[int, int], entries: list[SummaryEntry],
                records: dict[int, dict[str, Any]], read: ReadContext) -> int | None:
    """The user's message just before ``found`` in its conversation, when ``found`` points back
    at it ("my son is allergic to peanuts" — "I'm planning his birthday party") or shares a
    content word with it."""
    mine = [j for j in earlier if talk[j] == talk[found] and records[entries[j].record_id].get("role") == "user"]  # type: ignore[index]
    if not mine:
        return None
    text, prior = records[entries[found].record_id]["content"][:READ_LIMIT], records[entries[mine[-1]].record_id]["content"][:READ_LIMIT]  # type: ignore[index]
    shared = (read.reading("terms", text, _terms) & read.reading("terms", prior, _terms)) - FUNCTION_BIGRAMS
    return mine[-1] if shared or read.reading("points_back", text, points_back) else None


def _reply(text: str) -> str | None:
    return reply_to(text, asked=True)


def _conversations(moments: list[Any]) -> list[int]:
    """Which conversation each moment (in the order written) belongs to: a new one after each pause
    of ``CONVERSATION_GAP``."""
    numbers, number, last = [], 0, None
    for moment in moments:
        if last is not None and moment - last >= CONVERSATION_GAP:
            number += 1
        numbers.append(number)
        last = moment
    return numbers


# The user setting their own against what they just told of someone else: "myself", "personally",
# "as for me", "actually" (with the user as a subject or object in the message), "我自己", "我本人",
# "至于我". (Not "其实我": as often a filler as a contrast.)
_CONTRAST = re.compile(r"\b(?:myself|personally|actually|as\s+for\s+me)\b|我自己|我本人|至于我", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|myself)\b|我(?!们|家)", re.I)


def _own_over_others(entries: list[SummaryEntry], records: dict[int, dict[str, Any]],
                     read: ReadContext, query: str) -> list[SummaryEntry]:
    """Leave out (``someone_else``) a user's message that only tells of someone else when the
    user's next message in the same conversation sets their own against it, for a read whose
    query is about the user ("what am I allergic to?", "我对什么过敏") — unless the query shares a
    content word with the other message that the user's own does not say. A read about no one
    in particular ("plan dinner for the family") keeps both."""
    if not _FIRST_PERSON.search(query[:READ_LIMIT]):
        return entries
    users = [i for i, e in enumerate(entries) if e.shown and records.get(e.record_id, {}).get("role") == "user"]
    dropped = set()
    for here, after in zip(users, users[1:]):
        first, second = records[entries[here].record_id], records[entries[after].record_id]
        if _gap(first, second) >= CONVERSATION_GAP:
            continue
        if not read.reading("sets_own_against", second["content"][:READ_LIMIT], _sets_own_against):
            continue
        theirs = read.reading("clauses", first["content"][:READ_LIMIT], _clauses)
        if not theirs or not all(c.whose == "other" or c.act == "report" for c in theirs):
            continue
        only_theirs = (read.reading("terms", first["content"], _terms) - read.reading("terms", second["content"], _terms))
        if (read.query_terms - FUNCTION_BIGRAMS) & only_theirs:
            continue
        dropped.add(here)
    return [SummaryEntry(e.record_id, False, e.reasons + ("someone_else",), e.notes) if i in dropped else e
            for i, e in enumerate(entries)]


def _sets_own_against(text: str) -> bool:
    """Whether ``text`` sets the user's own against another's: a contrast word, and the user
    in it as a subject or object ("personally I only walk", "我自己是海鲜过敏")."""
    return _CONTRAST.search(text) is not None and _FIRST_PERSON.search(text) is not None


def _clauses(text: str) -> tuple[Any, ...]:
    return tuple(read_message(text))


def _terms(text: str) -> frozenset[str]:
    return frozenset(analyze(text))


def _gap(first: dict[str, Any], second: dict[str, Any]) -> Any:
    try:
        return datetime.fromisoformat(second["created_at"]) - datetime.fromisoformat(first["created_at"])
    except (KeyError, TypeError, ValueError):
        return CONVERSATION_GAP  # no times to go by: not known to be one conversation


def _written(record: dict[str, Any] | None) -> datetime | None:
    return datetime.fromisoformat(record["created_at"]) if record is not None and "created_at" in record else None
