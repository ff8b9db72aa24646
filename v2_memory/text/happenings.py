"""One-off happenings of the recent past: told in passing, not part of the user's running story.

"saw a heron at the reservoir this morning", "the vending machine ate my dollar, third time this
week", "昨晚终于把游戏通关了" tell what happened once, lately. Nothing in them still holds about
the user, and a later question almost never needs them. In a long conversation they pile up in
the summary and crowd every context, so the governed summary leaves them out
(``governance/summary_view.py``); they stay in long-term memory, where a question about them finds
them by relevance, like any memory.

A statement is a happening when one of its clauses places a completed action at a recent past
moment:

    English   a past-time anchor (today, this morning, yesterday, last night, on Thursday, just now)
              and a verb in the past (-ed, or a common irregular past: saw, left, ate, brought ...)
    Chinese   a past-time anchor (今天, 今早, 昨天, 昨晚, 前天, 刚才, 刚刚, 上周) and a completed
              action (了, 过, or a resultative verb: 看到, 碰到, 遇到, 听到)

(the anchor and the verb may stand in different clauses), and none of its clauses asks, requests,
or reports a change or a correction ("moved", "rescheduled", "switched", "改到", "换成", "取消",
"不对，我搞错了"): a change is an update, and updates are the story. A future plan ("I fly
out on Thursday", "周四去看牙") has no past verb, so it stays.

    >>> is_happening("saw a heron at the reservoir this morning, huge thing")
    True
    >>> is_happening("同事今天带了榴莲进办公室，炸了"), is_happening("周四下午两点去看牙")
    (True, False)
    >>> is_happening("the dentist moved my appointment to Thursday yesterday")
    False

Linear: one reading by the segmenter (at most ``READ_LIMIT`` characters), then a fixed set of
patterns per clause whose repeats are bounded.
"""
from __future__ import annotations

import re

from .memo import text_cache
from .segmenter import READ_LIMIT, read_message

__all__ = ["is_happening"]

_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_ANCHOR_EN = re.compile(rf"\b(?:today|this\s(?:morning|afternoon|evening|week)|yesterday|last\s(?:night|week|weekend)"
                        rf"|earlier\stoday|just\snow|(?:on|last)\s{_WEEKDAY})\b", re.I)
_PAST_EN = re.compile(r"\b(?:[a-z]{2,20}ed|saw|left|ate|brought|got|went|had|made|took|came|ran|lost|found|met|"
                      r"heard|bought|broke|fell|won|forgot|spent|drove|flew|wrote|sent|caught|threw|sat|stood|"
                      r"told|gave|hit|felt|kept|paid|sold|stole|swam|woke|wore|ate)\b", re.I)
_CHANGE_EN = re.compile(r"\b(?:moved|changed|switched|rescheduled|cancell?ed|postponed|updated|pushed|delayed|"
                        r"replaced|instead|actually|now|no\slonger|anymore)\b", re.I)
_ANCHOR_ZH = re.compile(r"今天|今早|昨天|昨晚|前天|刚才|刚刚|上周")
_DONE_ZH = re.compile(r"了|过|看到|碰到|遇到|听到|看见")
_CHANGE_ZH = re.compile(r"改|换|推迟|提前|取消|调到|挪到|其实|不是|不对|搞错|记错|说错|不再|现在")


@text_cache(maxsize=1024)  # a read judges the summary's memories again and again
def is_happening(text: str) -> bool:
    """Whether ``text`` tells a one-off happening of the recent past (see the module docstring)."""
    clauses = read_message(text[:READ_LIMIT])
    if not clauses or any(c.act in ("question", "request") for c in clauses):
        return False
    said = " ".join(c.core for c in clauses)  # an anchor may stand in a clause of its own ("…, third time this week")
    if _CHANGE_EN.search(said) or _CHANGE_ZH.search(said):
        return False
    return bool((_ANCHOR_EN.search(said) and _PAST_EN.search(said)) or (_ANCHOR_ZH.search(said) and _DONE_ZH.search(said)))
