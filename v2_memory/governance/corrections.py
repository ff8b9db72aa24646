"""Corrections: a user message that says an earlier one was wrong.

"刚才说错了，应该是Mac", "不是周三，是周五", "actually, I meant Friday". The corrected memory is not
deleted: its weight is multiplied by the conflict rate (×0.1) and it is marked superseded by the
correction, so it stays in the user's history (traceable) but leaves their contexts.

    >>> detect_correction("不是周三，是周五")
    Correction(new_value='周五', wrong_value='周三')
    >>> detect_correction("刚才说错了，应该是Mac")
    Correction(new_value='Mac', wrong_value=None)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Correction", "detect_correction", "value_kinds"]


@dataclass(frozen=True)
class Correction:
    new_value: str
    wrong_value: str | None  # what the user said was wrong, when they name it


_SEP = r"\s*[，,、;；]?\s*"
_VALUE = r"[^，,。？?！!]+?"  # a value is a clause: no clause punctuation inside
_RULES = [
    re.compile(r"^(?:我)?(?:刚才|之前|上面|前面)?(?:说|写|打|记|搞)错了" + _SEP + r"(?:应该是|是|改成)(?P<new>.+)$"),
    re.compile(r"^不对" + _SEP + r"(?:应该是|是)(?P<new>.+)$"),
    re.compile(r"^不是(?P<wrong>" + _VALUE + r")" + _SEP + r"(?:而)?是(?P<new>.+)$"),
    re.compile(r"^应该是(?P<new>" + _VALUE + r")" + _SEP + r"不是(?P<wrong>.+)$"),
    re.compile(r"^(?:更正|纠正)[:：]\s*(?P<new>.+)$"),
    re.compile(r"^(?:actually|sorry|oops|wait)?,?\s*i\s+mean(?:t)?\s+(?!to\b)(?P<new>.+?)(?:,?\s+not\s+(?P<wrong>.+))?$", re.I),
    re.compile(r"^actually,?\s+(?:it'?s|it\s+is)\s+(?P<new>.+?)(?:,?\s+not\s+(?P<wrong>.+))?$", re.I),
    re.compile(r"^(?:correction|to\s+correct\s+myself)[:,]\s*(?P<new>.+)$", re.I),
    re.compile(r"^(?:sorry,?\s*)?i\s+(?:got\s+(?:that|it)\s+wrong|was\s+wrong|made\s+a\s+mistake)[:,.;]?\s*"
               r"(?P<new>.+?)(?:,?\s+not\s+(?P<wrong>[^,.]+))?$", re.I),
    re.compile(r"^no,?\s+wait[,.:]?\s*(?P<new>.+?)(?:,?\s+not\s+(?P<wrong>[^,.]+))?$", re.I),
    re.compile(r"^(?:no|sorry),?\s+(?:it'?s|it\s+is)\s+(?P<new>.+?),?\s+not\s+(?P<wrong>.+)$", re.I),
]
_TRAILING = "。.!！ ，,"
_QUESTION = re.compile(r"[?？]|[吗呢]$|什么|怎么|为什么")


def detect_correction(text: str) -> Correction | None:
    """The correction ``text`` makes, or None.

    >>> detect_correction("Actually, I meant Friday, not Wednesday.")
    Correction(new_value='Friday', wrong_value='Wednesday')
    >>> detect_correction("不是我说的") is None
    True
    >>> detect_correction("不是很懂，是什么意思？") is None
    True
    """
    sentence = text.strip().rstrip(_TRAILING)
    if _QUESTION.search(sentence):
        return None  # "不是很懂，是什么意思？" asks; it does not correct
    for pattern in _RULES:
        match = pattern.match(sentence)
        if match:
            new = match.group("new").strip().strip(_TRAILING)
            wrong = (match.groupdict().get("wrong") or "").strip().strip(_TRAILING) or None
            if new:
                return Correction(new, wrong)
    return None


# Kinds of value a correction can carry, so "actually, Friday" finds the message that had a day in it.
_KINDS = {
    "day": re.compile(r"周[一二三四五六日天]|星期.|礼拜.|今天|明天|后天|昨天|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)"
                      r"(?:day)?\b|\b(?:today|tomorrow|yesterday|weekend)\b", re.I),
    "time": re.compile(r"\d{1,2}\s*[:：点]\s*\d{0,2}|\d\s*(?:am|pm)\b|上午|下午|晚上|早上|中午|\b(?:noon|morning|evening)\b", re.I),
    "date": re.compile(r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|\d{4}-\d{1,2}-\d{1,2}|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d", re.I),
    "number": re.compile(r"\d|[一二三四五六七八九十两]+(?:个|天|楼|层|次|人|点)"),
}


def value_kinds(text: str) -> set[str]:
    """The kinds of value ``text`` mentions: day, time, date, number.

    >>> sorted(value_kinds("Friday at three")), sorted(value_kinds("牙医预约在周三下午三点"))
    (['day'], ['day', 'number', 'time'])
    >>> value_kinds("iPhone")
    set()
    """
    return {kind for kind, pattern in _KINDS.items() if pattern.search(text)}
