"""Exact identifiers: course codes, tickets, versions, formulas and inline code.

Lexical and vector similarity smooth these away — ``CS201`` and ``CS202`` share most of their
characters, "第三次作业" and "第二次作业" most of their meaning. So identifiers are pulled out at
write time and matched *exactly*: when a query names one, only memories naming the same one may
be admitted (the rest are rejected with ``identifier_mismatch``).

    >>> extract_identifiers("CS201 第三次作业截止时间？参考 `np.dot` 和 v2.3.1，工单 #4521")
    ['CS201', 'NP.DOT', 'V2.3.1', '#4521']
    >>> extract_identifiers("评分 4.5，明天 3.15 见 ^_^")   # decimals and smileys are not identifiers
    []
"""
from __future__ import annotations

import re

__all__ = ["extract_identifiers"]

_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9_.])", r"(?![A-Za-z0-9_])"
# Quantifiers are bounded ({0,40}) so a long paste costs linear time, not quadratic.
_PATTERNS = [
    re.compile(r"`([^`\n]{1,80})`"),                                          # inline code
    re.compile(_EDGE_L + r"([A-Za-z]{1,10}-?\d{2,8}(?:-\d{1,8})?)" + _EDGE_R),  # CS201, JIRA-123
    re.compile(r"(?<![A-Za-z0-9])([A-Z]{2,4} \d{3})(?![0-9])"),                 # "CS 201"
    re.compile(_EDGE_L + r"(v\d{1,4}(?:\.\d{1,4}){1,3}|\d{1,4}(?:\.\d{1,4}){2,3})(?![0-9.]*\d)"),  # v2.3, 3.10.1
    re.compile(r"(#\d{2,10})\b"),                                              # tickets #4521
    # formulas: a run of formula characters holding an operator between two operands (f(x)=x^2)
    # or starting with ∫ ∑ √; a "?" or "&" in front means a URL parameter, not a formula.
    re.compile(r"(?<![?&A-Za-z0-9_])((?=[^\s]{0,80}?(?:[A-Za-z0-9)\]][=^][A-Za-z0-9(]|[∫∑√]))"
               r"[A-Za-z0-9_()\[\]{}.+\-*/=^∫∑√]{3,80})"),
]


def _normalize(identifier: str) -> str:
    identifier = identifier.strip().upper().replace(" ", "")
    # "CS-201" and "CS201" name the same course.
    return re.sub(r"^([A-Z]{1,10})-(\d)", r"\1\2", identifier)


def extract_identifiers(text: str) -> list[str]:
    """Identifier-like tokens of ``text``, normalized (upper case), in text order, without repeats."""
    found: list[tuple[int, str]] = []
    masked = text
    for pattern in _PATTERNS:
        for match in pattern.finditer(masked):
            if len(match.group(1)) >= 2:
                found.append((match.start(), _normalize(match.group(1))))
        # Hide what was matched so later patterns do not re-match its pieces.
        masked = pattern.sub(lambda m: " " * len(m.group(0)), masked)
    return list(dict.fromkeys(value for _, value in sorted(found)))
