"""Scope by speech, and the task boundary: how long and where a message holds.

A message's domain says where it may be recalled (``admission.py``): ``session`` only in its
session while it lasts, ``task`` only in its task. A caller may set it; a user may also *say* it:

    "for this session only, explain like I'm 12", "today only: I'm in the Berlin office",
    "I'm on my phone right now, keep it short", "这轮对话回答简短点", "今天聊天用东北话"
                                        → session (when the message has a session)
    "just in this task, assume a 5k budget", "这个任务里注释都用英文"
                                        → task (when the message has a task)

A scope is a phrase about the conversation's own time or task ("this chat", "today only", "the
rest of this conversation", "这轮", "本次会话", "这个任务里"), or a passing state with a request
that depends on it ("I'm driving right now, so …", "我在开车，…简短点"). A lasting statement is
never scoped by "now" alone: "I live in Berlin now" is an update, not a session note.

    >>> spoken_scope("for the rest of this chat answer in Spanish please")
    'session'
    >>> spoken_scope("这个任务里注释都用英文")
    'task'
    >>> spoken_scope("I moved to Valencia now") is None
    True

A user may also say that a message holds beyond the task it is said in: "btw I'm gluten free,
that's for always, not just this cake", "in all my projects use tabs", "不只是这个任务，以后写代码
都用英文注释" (``spoken_lasting``): it is the user's, as a fact about the user is.

    >>> spoken_lasting("use grams, and that's for always, not just this recipe")
    True
    >>> spoken_lasting("for this recipe use grams")
    False

The task boundary holds whatever the caller set: a message written inside a task (``task_id``
given, no domain) is that task's, so a read in *another* task never sees it, and a finished task's
messages leave the running story of reads in other tasks (``task_bound``). A message that
declares a fact about the user is the user's, not the task's.
"""
from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

__all__ = ["spoken_scope", "spoken_lasting", "task_bound", "CONVERSATION_GAP"]

# A pause this long ends a conversation: what came before it is history (``track_view.py``), and a
# decision settles only what the same conversation weighed (``decisions.py``).
CONVERSATION_GAP = timedelta(hours=8)

LIMIT = 2000  # a scope is said near the words it scopes: the first characters of a message
_SESSION_EN = re.compile(
    r"\b(?:(?:only|just)\s{1,3}(?:for|in|during)|for\s{1,3}the\s{1,3}rest\s{1,3}of|throughout|during)\s{1,3}(?:this|the|today'?s|our|tonight'?s)\s{1,3}"
    r"(?:chat|session|conversation|call|thread)\b|\b(?:for|in)\s{1,3}this\s{1,3}(?:chat|session|conversation)\b"
    r"|\b(?:this|the)\s{1,3}(?:chat|session|conversation)\s{1,3}only\b|\b(?:today|tonight)\s{1,3}only\b|\bjust\s{1,3}(?:for\s{1,3})?(?:today|tonight)\b"
    r"|\bonly\s{1,3}(?:for\s{1,3})?(?:today|tonight|this\s{1,3}(?:chat|session|conversation))\b|\buntil\s{1,3}(?:we'?re\s{1,3}done|the\s{1,3}end\s{1,3}of\s{1,3}(?:this|the)\s{1,3}(?:chat|session|conversation))\b",
    re.I)
# A request about the replies that names today ("keep answers super short today", "talk like a
# pirate tonight, it's my kid's party"): it opens its sentence, so "I need to write a report
# today" (a plan, not a request) is no scope.
_TODAY_EN = re.compile(r"(?:^|[.!?;]\s{0,3})(?:(?:ok(?:ay)?|so|and|also|pls|please|hey)[\s,]{1,3}){0,3}(?:keep|answer|reply|respond|talk|speak|"
                       r"write|use|be|make(?!\s{1,3}sure)|give)\b[^.!?;\n]{0,60}?\b(?:today|tonight|for\s{1,3}now)\b", re.I)
# A passing state, then a request that depends on it: "I'm on my phone right now so keep replies short".
_PASSING_EN = re.compile(r"\b(?:right\s{1,3}now|at\s{1,3}the\s{1,3}moment|currently)\b.{0,60}?\b(?:so|please|keep|reply|answer|use|talk|write|give)\b", re.I)
_SESSION_ZH = re.compile(r"(?:这轮|这一轮|本轮)(?:对话|聊天|会话)|这次(?:对话|聊天|会话)|本次(?:对话|聊天|会话)|这个(?:对话|会话)里?|今天(?:的)?(?:聊天|对话)|今天先|只(?:限|在)?今天|就今天")
_PASSING_ZH = re.compile(r"(?:我)?(?:现在|这会儿|正|正在)(?:在)?(?:开车|走路|开会|地铁上|路上|用手机|手机上|骑车|排队)")
_TASK_EN = re.compile(r"\b(?:in|for|within|on)\s{1,3}this\s{1,3}(?:task|project|ticket)\b|\b(?:task|project)[-\s]{1,3}only\b", re.I)
_TASK_ZH = re.compile(r"(?:这个|本|当前|这项)(?:任务|task|项目)(?:里|中|内|期间)?|任务内")


def spoken_scope(text: str, *, states_facts: bool = False) -> str | None:
    """"session" or "task" when the message says it holds only there, else None (linear: each
    pattern's repeats are bounded and it reads at most ``LIMIT`` characters). A passing state
    ("right now", "currently") scopes nothing in a message that ``states_facts`` about the user:
    "I currently live in Berlin, please use metric" is a lasting fact; "today only: I'm in the
    Berlin office" says how long it holds."""
    head = text[:LIMIT]
    if _TASK_EN.search(head) or _TASK_ZH.search(head):
        return "task"
    if _SESSION_EN.search(head) or _SESSION_ZH.search(head) or _TODAY_EN.search(head):
        return "session"
    if not states_facts and (_PASSING_EN.search(head) or _PASSING_ZH.search(head)):
        return "session"
    return None


# Said to hold beyond the task or the chat it is said in: set against "this" one ("not just this
# cake", "不只是这个任务"), or said of them all ("for always", "in all my projects", "in every
# task", "所有任务"); not "for all recipes", which may say something of recipes.
_LASTING_EN = re.compile(r"\bnot\s{1,3}(?:just|only)\s{1,3}(?:for\s{1,3}|in\s{1,3}|during\s{1,3})?(?:this|today'?s|the\s{1,3}current)\b"
                         r"|\bfor\s{1,3}always\b|\b(?:in|for|across|on)\s{1,3}(?:all\s{1,3}(?:of\s{1,3})?my|every|any)\s{1,3}"
                         r"(?:tasks?|projects?|chats?|sessions?|conversations?|recipes?|trips?)\b", re.I)
_LASTING_ZH = re.compile(r"不(?:只|仅|光|止)(?:是|限于|在)?(?:这|本|今天|这次|这回)|(?:所有|每个|任何)(?:的)?(?:任务|项目|对话|会话|聊天)|长期有效")


def spoken_lasting(text: str) -> bool:
    """Whether the message says it holds beyond the task or chat it is said in (reads at most ``LIMIT``)."""
    head = text[:LIMIT]
    return bool(_LASTING_EN.search(head) or _LASTING_ZH.search(head))


def task_bound(record: dict[str, Any]) -> bool:
    """Whether ``record`` belongs to its task: a task-domain record, or one written inside a task
    with no domain of its own (a persona or session record says where it holds itself) — unless
    it says something about the user ("btw I'm vegetarian", said during a task, is the user's)."""
    if record.get("domain") == "task":
        return True
    return record.get("domain") is None and bool(record.get("task_id")) and not record.get("about_user")
