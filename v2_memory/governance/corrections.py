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

__all__ = ["Correction", "detect_correction"]


@dataclass(frozen=True)
class Correction:
    new_value: str
    wrong_value: str | None  # what the user said was wrong, when they name it


_SEP = r"\s*[，,、;；]?\s*"
_RULES = [
    re.compile(r"^(?:我)?(?:刚才|之前|上面|前面)?(?:说|写|打)错了" + _SEP + r"(?:应该是|是|改成)(?P<new>.+)$"),
    re.compile(r"^不是(?P<wrong>.+?)" + _SEP + r"(?:而)?是(?P<new>.+)$"),
    re.compile(r"^(?:更正|纠正|改正)[:：]?\s*(?P<new>.+)$"),
    re.compile(r"^(?:actually|sorry|oops)?,?\s*i\s+meant\s+(?P<new>.+?)(?:,?\s+not\s+(?P<wrong>.+))?$", re.I),
    re.compile(r"^(?:correction|to\s+correct\s+myself)[:,]?\s*(?P<new>.+)$", re.I),
    re.compile(r"^(?:no|sorry),?\s+(?:it'?s|it\s+is)\s+(?P<new>.+?),?\s+not\s+(?P<wrong>.+)$", re.I),
]
_TRAILING = "。.!！ ，,"


def detect_correction(text: str) -> Correction | None:
    """The correction ``text`` makes, or None.

    >>> detect_correction("Actually, I meant Friday, not Wednesday.")
    Correction(new_value='Friday', wrong_value='Wednesday')
    >>> detect_correction("不是我说的") is None
    True
    """
    sentence = text.strip().rstrip(_TRAILING)
    for pattern in _RULES:
        match = pattern.match(sentence)
        if match:
            new = match.group("new").strip().strip(_TRAILING)
            wrong = (match.groupdict().get("wrong") or "").strip().strip(_TRAILING) or None
            if new:
                return Correction(new, wrong)
    return None
