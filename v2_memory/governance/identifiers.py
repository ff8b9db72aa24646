"""Exact identifiers: course codes, tickets, orders, rooms, flights, versions, formulas and code.

Lexical and vector similarity smooth these away — ``CS201`` and ``CS202`` share most of their
characters, "第三次作业" and "第二次作业" most of their meaning. So identifiers are pulled out at
write time and matched *exactly*: when a query names one, only memories naming the same one may
be admitted (the rest are rejected with ``identifier_mismatch``).

**The forms people type, and their one normal form** (upper case, no separators):

    code        CS201, cs201, CS-201, "CS 201", ISO 9001, iso9001, JIRA-123  → CS201, ISO9001, JIRA123
                (a space before the number only when the letters are capitals: "in 2024" is prose;
                currency codes are amounts: "USD 300")
    flight      CA1234, "MU 5101", 3U8888, "flight mu 5101", "航班 5101"      → CA1234, MU5101, 3U8888, FLIGHT5101
    number      a pure-digit reference introduced by a noun: order / ticket / work order / 订单 / 工单 /
                单号 / 编号, or "#": "ticket 3341", "工单 20231105", "订单号：778812", "#4521"
                                                                             → #3341, #20231105, #778812, #4521
                (the noun is only the cue: "order 3341" and "工单 3341" name the same number)
    room        "room 1203", "Room B12", "房间 1203", "1203房间", "302室"       → ROOM1203, ROOMB12, ROOM302
    version     v2.3, V3.10, 3.10.1, and a two-part number after a product name or a version word:
                "Python 2.7", "iOS 17.2", "version 2.17", "版本 2.7", "2.7版本"   → V2.3, V3.10, V3.10.1, V2.7, V17.2, V2.17
                ("v2.7", "version 2.7" and "Python 2.7" are one version; "2.7" and "2.17" differ, and so do
                "v3.1" and "v3.10")
    code span   `np.dot`; formulas f(x)=x^2, ∑x                              → as written, upper case

Not identifiers: decimals and prices in prose ("3.5 kg", "¥4.5", "评分 4.5", "GPA 3.8"), dates
("3.15", "2024"), bare numbers with no noun, smileys (^_^). Personal data (a phone number after
"order", a card number after "#") is never an identifier: the sensitive detectors blank it first,
so no route, log or ledger row can carry it.

    >>> extract_identifiers("CS201 第三次作业截止时间？参考 `np.dot` 和 v2.3.1，工单 #4521")
    ['CS201', 'NP.DOT', 'V2.3.1', '#4521']
    >>> extract_identifiers("ISO 9001 vs iso9001 vs ISO-9001; ticket 3341, 工单 20231105, room 1203, MU 5101")
    ['ISO9001', '#3341', '#20231105', 'ROOM1203', 'MU5101']
    >>> extract_identifiers("评分 4.5，明天 3.15 见 ^_^，买了 3.5 kg 米，in 2024")   # prose, not identifiers
    []
"""
from __future__ import annotations

import re
from typing import Callable

from ..text.analyzer import STOP_WORDS
from ..text.sensitive import find_sensitive

__all__ = ["extract_identifiers", "normalize_identifier", "look_alike", "version_candidates"]

_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9_.])", r"(?![A-Za-z0-9_])"
_NOT_DECIMAL = r"(?![0-9]|\.[0-9])"  # "3341" but not "3341.5"
_CURRENCY = {"USD", "EUR", "RMB", "CNY", "GBP", "JPY", "HKD", "AUD", "CAD", "SGD", "CHF", "KRW", "TWD", "INR", "RUB"}
# Units and marks after a number make it a quantity: "2.7 kg", "4.5分", "3.5%", "4.5 stars".
_QUANTITY_AFTER = (r"(?!\s{0,2}(?:%|％|(?i:kg|g|mg|km|m|cm|mm|l|ml|h|hrs?|min|mins|s|sec|lbs?|oz|ft|mi|k|kw|w|gb|mb|tb"
                   r"|ghz|mhz|x|stars?|points?|pts|out|percent|times|hours?|days?|years?|miles?)\b|[分元块斤克米岁度点个次天号月年]))")

# Nouns that introduce a pure-digit reference number; "number"/"no."/"#"/"号"/"：" may follow.
_NUMBER_NOUN_EN = r"(?i:\b(?:work\s?order|order|ticket|invoice|booking|reservation|confirmation|tracking)\b)"
_NUMBER_NOUN_ZH = r"订单|工单|单号|编号|运单|快递单|预订|预约|发票"
_NUMBER_LINK = r"(?:\s{0,2}(?i:number|no\.?|num|id|#|号码?|编号))?(?:\s{0,2}(?i:is|was|是|为|[:：=]))?\s{0,2}#?\s{0,1}"
# "order 20 pizzas" is a count: straight after an English noun (which may be a verb) a reference
# number has 4+ digits; after "#", "number", "no.", ":" or a Chinese noun, 3+.
_NUMBER_LINKED = r"(?:\s{0,2}(?i:number|no\.?|num|id|#|号码?|编号|is|was|是|为|[:：=])){1,2}\s{0,2}#?\s{0,1}"
# "rm" is a room however it is spaced: "rm 301", "Rm.301" and "RM301" are one room, ROOM301.
_ROOM_NOUN = r"(?i:\b(?:room\b|rm(?:\b|(?=\d)))\.?)|房间号?|房号"
_FLIGHT_NOUN = r"(?i:\bflight\b)|航班号?"

# (pattern, normal form of the match) — tried in this order; a later pattern never re-reads what an
# earlier one matched. Every quantifier is bounded, so each start position costs a constant: a
# long paste costs linear time, never quadratic.
_OPERATOR = re.compile(r"[A-Za-z0-9)\]][=^][A-Za-z0-9(]|[∫∑√]")
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]


def _upper(match: re.Match[str]) -> str | None:
    return normalize_identifier(match.group("id"))


def _prefixed(prefix: str) -> Callable[[re.Match[str]], str | None]:
    return lambda match: prefix + normalize_identifier(match.group("id"))


def _version(match: re.Match[str]) -> str | None:
    """Every version in one form, "V" and its numbers: "v3.10", "version 3.10", "Python 3.10" → V3.10."""
    return "V" + match.group("id").lstrip("vV")


def _spaced_code(match: re.Match[str]) -> str | None:
    return None if match.group("letters") in _CURRENCY else match.group("letters") + match.group("digits")


_RULES: list[_Rule] = [
    (re.compile(r"`(?P<id>[^`\n]{2,80})`"), _upper),                                       # inline code
    (re.compile(r"(?:" + _FLIGHT_NOUN + r")" + _NUMBER_LINK + r"(?P<id>(?:[A-Za-z][A-Za-z0-9]|[0-9][A-Za-z])\s?\d{3,4})"
                + _NOT_DECIMAL), _upper),                                                  # flight mu 5101
    (re.compile(r"(?:" + _FLIGHT_NOUN + r")" + _NUMBER_LINK + r"(?P<id>\d{3,4})" + _NOT_DECIMAL), _prefixed("FLIGHT")),
    (re.compile(r"(?:" + _ROOM_NOUN + r")-?" + _NUMBER_LINK + r"(?P<id>[A-Za-z]?\d{2,5}[A-Za-z]?)" + _EDGE_R + r"(?!\.[0-9])"),
     _prefixed("ROOM")),
    (re.compile(r"(?<![0-9A-Za-z.])(?P<id>\d{2,5})\s{0,1}(?:房间|号房|室)(?!友)"), _prefixed("ROOM")),  # 1203房间, 302室
    (re.compile(r"(?:" + _NUMBER_NOUN_EN + r")" + _NUMBER_LINKED + r"(?P<id>\d{3,20})" + _NOT_DECIMAL), _prefixed("#")),
    (re.compile(r"(?:" + _NUMBER_NOUN_EN + r")\s{1,2}(?P<id>\d{4,20})" + _NOT_DECIMAL), _prefixed("#")),
    (re.compile(r"(?:" + _NUMBER_NOUN_ZH + r")" + _NUMBER_LINK + r"(?P<id>\d{3,20})" + _NOT_DECIMAL), _prefixed("#")),
    (re.compile(r"(?<![A-Za-z0-9&])#(?P<id>\d{2,20})" + _NOT_DECIMAL), _prefixed("#")),   # tickets #4521
    # the noun after the number: "7730182 那单", "20231105号工单", "4521 这笔订单"
    (re.compile(r"(?<![0-9A-Za-z.])(?P<id>\d{4,20})\s{0,2}(?:那单|这单|那笔|这笔|号?订单|号?工单|的订单|的单子)"), _prefixed("#")),
    (re.compile(_EDGE_L + r"(?P<id>[A-Za-z]{1,10}-?\d{2,8}(?:-\d{1,8})?)" + _EDGE_R + r"(?!\.\d)"), _upper),  # CS201, iso9001, JIRA-123
    (re.compile(r"(?<![A-Za-z0-9])(?P<letters>[A-Z]{2,5}) (?P<digits>\d{3,8})" + _NOT_DECIMAL + r"(?![A-Za-z])"),
     _spaced_code),                                                                        # "ISO 9001", "MU 5101"
    (re.compile(r"(?<![A-Za-z0-9])(?P<id>[0-9][A-Z]|[A-Z][0-9]) ?(?P<n>\d{3,4})" + _NOT_DECIMAL + r"(?![A-Za-z])"),
     lambda m: (m.group("id") + m.group("n")).upper()),                                    # 3U8888, G5 1234
    (re.compile(_EDGE_L + r"(?P<id>[vV]\d{1,4}(?:\.\d{1,4}){1,3}|\d{1,4}(?:\.\d{1,4}){2,3})(?!\.?\d)"), _version),
    # a two-part version: after a version word, or a product name written with a capital; not a quantity
    (re.compile(r"(?:(?i:\b(?:version|ver\.?|release|(?:upgraded|updated|bumped|downgraded|rolled\s{1,2}back)\s{1,2}to)\b)"
                r"|版本号?|(?:升级|升|降级|降|回滚|回退)到|(?<![A-Za-z])[A-Za-z]{0,12}[A-Z][A-Za-z]{0,12})"
                r"(?:\s{0,2}(?i:is|是|为|[:：]))?\s{0,2}(?P<id>\d{1,4}\.\d{1,4})(?!\.?\d)" + _QUANTITY_AFTER),
     lambda m: None if _is_measure_or_word(_name_before(m)) else _version(m)),
    (re.compile(r"(?<![0-9.])(?P<id>\d{1,4}\.\d{1,4})(?!\.?\d)\s{0,2}(?:版本|版)"), _version),
    # formulas: a run of formula characters holding an operator between two operands (f(x)=x^2)
    # or a ∫ ∑ √; a "?" or "&" in front means a URL parameter, not a formula. The run is matched
    # first and the operator looked for inside it: one pass over the text, not a look-ahead per char.
    (re.compile(r"(?<![?&A-Za-z0-9_])(?P<id>[A-Za-z0-9_()\[\]{}.+\-*/=^∫∑√]{3,80})"),
     lambda m: normalize_identifier(m.group("id")) if _OPERATOR.search(m.group("id")) else None),
]

# What each rule cannot match without — its gate (as in ``sensitive.py``): an inline code span a
# backtick, every numbered form a digit, a formula an operator. Most messages hold no digit, so
# most rules never run; ``test_detector_gates`` proves each gate from the pattern's structure.
_RULE_NEEDS: list[str] = ["backtick", *["digit"] * (len(_RULES) - 2), "operator"]
_DIGIT = re.compile(r"\d")  # the rules' own \d: any Unicode decimal digit


def _present(text: str) -> set[str]:
    """The gates ``text`` opens."""
    present = {"digit"} if _DIGIT.search(text) else set()
    if "`" in text:
        present.add("backtick")
    if any(char in text for char in "=^∫∑√"):
        present.add("operator")
    return present


def _name_before(match: re.Match[str]) -> str:
    """The word a two-part version follows: "Python" in "Python 2.7", "version" in "version 2.17"."""
    name = match.group(0)[: match.start("id") - match.start()].strip()
    return re.sub(r"(?i)\s{0,3}(?:is|是|为|[:：])$", "", name)


def _is_measure_or_word(name: str) -> bool:
    """An acronym of 2–4 capitals (GPA 3.8, BMI 22.5, PM 2.5) is a measure, not a product; a
    capitalised function word ("At 3.30", "About 2.5") starts a sentence, it names nothing."""
    return bool(re.fullmatch(r"[A-Z]{2,4}", name)) or name.lower() in STOP_WORDS


def normalize_identifier(identifier: str) -> str:
    """One form per identifier: upper case, no spaces or hyphens between letters and digits.

    >>> [normalize_identifier(x) for x in ["ISO 9001", "iso9001", "ISO-9001", "cs-201", "np.dot"]]
    ['ISO9001', 'ISO9001', 'ISO9001', 'CS201', 'NP.DOT']
    """
    identifier = re.sub(r"\s", "", identifier.strip().upper())
    # "CS-201" and "CS201" name the same course.
    return re.sub(r"^([A-Z]{1,10})-(\d)", r"\1\2", identifier)


def _blank_sensitive(text: str) -> str:
    """Personal data replaced by spaces (same length, so positions hold): never an identifier."""
    parts, last = [], 0
    for finding in find_sensitive(text):  # in order and disjoint: one pass
        parts += [text[last: finding.start], " " * (finding.end - finding.start)]
        last = finding.end
    return "".join(parts) + text[last:]


def extract_identifiers(text: str) -> list[str]:
    """Identifier-like tokens of ``text``, normalized (upper case), in text order, without repeats."""
    found: list[tuple[int, str]] = []
    masked = _blank_sensitive(text)
    present = _present(masked)
    for (pattern, normal_form), needs in zip(_RULES, _RULE_NEEDS):
        if needs not in present:
            continue
        def hide(match: re.Match[str]) -> str:
            value = normal_form(match)
            if value is None or len(value) < 2:
                return match.group(0)  # not an identifier: later rules may still read it
            found.append((match.start(), value))
            # Hide what was matched so later patterns do not re-match its pieces.
            return " " * len(match.group(0))
        masked = pattern.sub(hide, masked)
    return list(dict.fromkeys(value for _, value in sorted(found)))


_DIGITS = re.compile(r"\d{2,20}")


def look_alike(text: str, identifiers: tuple[str, ...] | list[str]) -> bool:
    """Whether ``text`` holds a number that looks like one of ``identifiers`` without being it: the
    same length and the same digits in another order, or one digit apart — "481" for room 418,
    "7730128" for order 7730182. Such a memory is about a look-alike, not the one asked for.

    >>> look_alike("Uncle Joe is in 481", ["ROOM418"]), look_alike("visiting hours end at 8", ["ROOM418"])
    (True, False)
    """
    asked = {run for identifier in identifiers for run in _DIGITS.findall(identifier)}
    for run in _DIGITS.findall(text[:4000]):
        for wanted in asked:
            if run != wanted and len(run) == len(wanted) and (
                    sorted(run) == sorted(wanted) or sum(a != b for a, b in zip(run, wanted)) == 1):
                return True
    return False


_TWO_PART = re.compile(r"(?<![0-9.])\d{1,4}\.\d{1,4}(?![0-9]|\.[0-9])")


def version_candidates(text: str, limit: int = 8) -> list[str]:
    """Two-part numbers of ``text`` in version form, whatever precedes them: by its form "SDK 2.7"
    is read like "GPA 3.8" (a measure), so the reader asks the user's own history whether it
    names version 2.7 (at most ``limit`` candidates, so a read stays bounded).

    >>> version_candidates("安全扫描说 SDK 2.7 有漏洞，3.10.1 不算")
    ['V2.7']
    """
    return list(dict.fromkeys("V" + m for m in _TWO_PART.findall(text[:4000])))[:limit]
