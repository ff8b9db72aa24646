"""Corrections: a user message that says an earlier one was wrong, read clause by clause.

People correct themselves the way they talk: with a lead-in ("Hmm, looked at the ticket again — the
gate is B12, not B21"), a subject between the cue and the value ("记错了，体检是周五"), and many cue
words ("搞错了", "口误", "scratch that", "my bad", "sorry, I meant"). So a correction is found in
the clauses of the message (``text.segmenter``), anywhere in it, by two families of signs:

    an error cue    a clause that admits a mistake (说错/记错/搞错/口误/不对/更正, actually/scratch that/
                    my bad/I meant/I was wrong/typo ...); the new value is what follows it
    a contrast      "不是X，是Y", "Y，不是X", "Y而不是X", "Y, not X", "not X but Y", "Y rather than X":
                    the wrong value is named

A doubtful question corrects nothing ("didn't you say 5 o'clock?", "是不是周五来着？"), nor does a
conditional or someone else's words. The corrected memory is not deleted: it is superseded and
weighted ×0.1 (``conflicts.py`` finds it).

    >>> detect_correction("不是周三，是周五")
    Correction(new_value='周五', wrong_value='周三', deictic=False)
    >>> detect_correction("刚才说错了，应该是Mac")
    Correction(new_value='Mac', wrong_value=None, deictic=True)
    >>> detect_correction("哦不对，我搞错了，体检是周五上午").new_value
    '体检是周五上午'
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.segmenter import Clause, Meter, read_message

__all__ = ["Correction", "detect_correction", "value_kinds", "kind_values", "kind_pattern", "strip_kinds"]


@dataclass(frozen=True)
class Correction:
    new_value: str
    wrong_value: str | None  # what the user said was wrong, when they name it
    deictic: bool = False  # "刚才", "I meant", "just now": it points at what the user just said


# Error cues, two families. A *standing* cue admits a mistake and stands alone in its clause (or
# leads into "应该是/it's ..."): the new value is in the clauses after it. A *leading* cue is followed
# by the value itself ("actually, Friday", "I meant Friday", "no wait, 7pm").
_STANDING = (r"(?:我|我的)?(?:刚才|刚刚|之前|上面|前面|上一条|方才)?(?:说|写|打|记|搞|弄|看|听|填|报|讲|算)错(?:了)?|口误|笔误|不对|不是的|"
             r"错了|更正(?:一下)?|纠正(?:一下)?|修正(?:一下)?|订正(?:一下)?|我的错|搞混了|记混了|弄混了|"
             r"scratch\s+that|my\s+bad|my\s+mistake|correction|to\s+correct\s+myself|let\s+me\s+correct\s+(?:that|myself)|"
             r"i\s+was\s+wrong|(?:i\s+)?got\s+(?:that|it|this)\s+wrong|i\s+misspoke|i\s+made\s+a\s+(?:mistake|typo|error)|typo|"
             r"i\s+mixed\s+(?:it|them|that|those)\s+up|that'?s\s+(?:wrong|not\s+right)|that\s+was\s+wrong|oops|whoops|not\s+quite|"
             r"i\s+(?:mis(?:spoke|read|typed|heard|remembered|counted|wrote|spelled|spelt)|got\s+(?:the|my)\s+\w{1,15}\s+wrong)|"
             r"(?:the\s+)?wrong\s+(?:date|day|time|number|room|address|name|amount|price|one)(?:\s+(?:earlier|before|above))?")
# A standing cue may close a clause that opens with what it is about or when ("昨天那个我说错了",
# "时间我记错了"): the clause ends in the admission; the new value follows.
_CUE_END = re.compile(r"(?:我|我的)?(?:刚才|刚刚|之前|昨天|上次)?(?<![没不])(?:说|写|打|记|搞|弄|看|听|填|报|讲|算)错(?:了)?[啦呀啊哈]{0,2}$")
# What may follow a standing cue and still leave the value to the next clause: when the mistake
# was ("from yesterday", "earlier"), or what it is about ("about the kitchen": the thing, kept).
_QUALIFIER = re.compile(r"^(?:(?P<when>(?:from|about|in|on)\s+(?:yesterday|earlier|before|today|last\s+\w{1,10}|this\s+\w{1,10}|my\s+last\s+message)"
                        r"|earlier|before|above|again)|(?:about|on|regarding|re|for)\s+(?P<topic>.{1,40})"
                        r"|(?:the|my|that|this)\s+[\w-]{1,20}(?:\s+[\w-]{1,20})?)$", re.I)  # "I misread the key card": where it went wrong
_LEADING = (r"actually|no\s+wait|wait\s+no|no\s+sorry|sorry\s+no|(?:sorry\s+)?i\s+meant\b(?!\s+to\b)|make\s+that|"
            r"(?:it'?s\s+|that'?s\s+)?(?:actually\s+)?spelled|(?:the\s+)?(?:right|correct)\s+spelling\s+is")
_CUE = re.compile(rf"^(?:(?P<standing>(?:{_STANDING})(?:[\s,，]{{0,2}}(?:{_STANDING})){{0,2}})|(?P<leading>{_LEADING}))(?:\s*[,.:;!]*\s*)", re.I)
# Mid-clause: "钢琴课其实是周四", "piano is actually on Thursday".
_MID = re.compile(r"(?P<head>.{1,40}?)(?:其实是|实际上是|应该是|\s+is\s+actually|\s+was\s+actually|\s+should\s+be|\s+actually\s+is)\s*(?P<tail>.{1,60})$",
                  re.I)
_NOT_TAIL = re.compile(r"^(?P<new>.{1,60}?),?\s+not\s+(?P<wrong>[^\s,]{1,20})$", re.I)
_DEICTIC = re.compile(r"刚才|刚刚|方才|上一条|前面|上面|\bi\s+meant?\b|\bjust\s+now\b|\bjust\s+said\b|\bthat\b", re.I)
# What leads from a cue to the new value: "应该是", "其实是", "it's", "should be", "make that".
_LINK = re.compile(r"^(?:(?:其实|实际上|正确的)?(?:应该|应当)?(?:是|改成|改为|改到|换成)|"
                   r"(?:it'?s|it\s+is|it\s+should\s+be|should\s+be|make\s+that|it'?s\s+actually|the\s+right\s+one\s+is)\b)\s*", re.I)
# Contrasts naming the wrong value.
_NOT_ZH = re.compile(r"^(?:而)?不是(?P<wrong>.{1,40})$")
_IS_ZH = re.compile(r"^(?:而|应该|其实)?是(?P<new>.{1,60})$")
_INLINE_ZH = re.compile(r"^不是(?P<wrong>.{1,40}?)(?:而|，|,)?是(?P<new>.{1,60})$|^(?P<new2>.{1,60}?)而不是(?P<wrong2>.{1,40})$")
_NOT_EN = re.compile(r"^(?:and\s+)?not\s+(?P<wrong>[^\s].{0,40})$", re.I)
_INLINE_EN = re.compile(r"^not\s+(?P<wrong>.{1,40}?)\s+but\s+(?P<new>.{1,60})$|^(?P<new2>.{1,60}?)\s+(?:rather\s+than|instead\s+of)\s+"
                        r"(?P<wrong2>.{1,40})$", re.I)
_TRAILING = "。.!！ ，,~～"
# "I just checked and the office says the cleaning is Friday": the frame before the relayed words.
_REPORT_FRAME = re.compile(r"^.{0,80}?\b(?:says?|said|told\s+me|confirmed|confirms|wrote)\s+(?:that\s+)?", re.I)
_DOUBT = ("question", "conditional", "report")


def detect_correction(text: str, meter: Meter | None = None) -> Correction | None:
    """The correction ``text`` makes, or None.

    >>> detect_correction("Actually, I meant Friday, not Wednesday.")
    Correction(new_value='Friday', wrong_value='Wednesday', deictic=True)
    >>> detect_correction("Hmm, looked at the ticket again — the gate is B12, not B21")
    Correction(new_value='the gate is B12', wrong_value='B21', deictic=False)
    >>> [detect_correction(t) for t in ["不是我说的", "不是很懂，是什么意思？", "是不是周五来着？"]]
    [None, None, None]
    """
    clauses = read_message(text, meter)  # without a meter: the reading every rule shares
    meter = meter or Meter()
    if not clauses or text.rstrip().endswith(("?", "？")):
        return None  # a doubtful question supersedes nothing
    found = _contrast(clauses, meter) or _after_cue(clauses, meter)
    if found is None:
        return None
    new, wrong, used = found
    # A report the user relays after their own error cue is their evidence, not a doubt ("actually,
    # I checked and the office says it's Friday"); a question or a conditional still is.
    relayed = any(meter.scan(_CUE, c.core, "match") and c.act == "statement" for c in clauses[: used[0]])
    if any(clauses[i].act in _DOUBT and not (relayed and clauses[i].act == "report") for i in used):
        return None
    new = _REPORT_FRAME.sub("", new, count=1) if relayed else new
    new, wrong = _clean(new), _clean(wrong) if wrong else None
    if not new:
        return None
    return Correction(new, wrong, bool(meter.scan(_DEICTIC, text[: clauses[used[-1]].end])))


def _clean(value: str) -> str:
    return value.strip().strip(_TRAILING).strip()


def _contrast(clauses: list[Clause], meter: Meter) -> tuple[str, str | None, list[int]] | None:
    """A contrast naming the wrong value, in one clause or two neighbouring ones."""
    for i, clause in enumerate(clauses):
        core = _strip_cue(clause.core, meter)
        inline = meter.scan(_INLINE_ZH, core, "match") or meter.scan(_INLINE_EN, core, "match")
        if inline:
            groups = inline.groupdict()
            return groups.get("new") or groups["new2"], groups.get("wrong") or groups["wrong2"], [i]
        wrong = meter.scan(_NOT_ZH, core, "match") or meter.scan(_NOT_EN, core, "match")
        if wrong is None:
            continue
        if i + 1 < len(clauses):  # "不是周三，是周五"
            follow = meter.scan(_IS_ZH, clauses[i + 1].core, "match")
            if follow:
                return follow.group("new"), wrong.group("wrong"), [i, i + 1]
        if i > 0:  # "the gate is B12, not B21" / "是周五，不是周三"
            before = _strip_cue(clauses[i - 1].core, meter)
            return _LINK.sub("", before, count=1), wrong.group("wrong"), [i - 1, i]
    return None


def _strip_cue(core: str, meter: Meter) -> str:
    cue = meter.scan(_CUE, core, "match")
    return core[cue.end():] if cue else core


def _after_cue(clauses: list[Clause], meter: Meter) -> tuple[str, str | None, list[int]] | None:
    """An error cue; the new value is the rest of its clause, or else the clause after it."""
    for i, clause in enumerate(clauses):
        cue = meter.scan(_CUE, clause.core, "match")
        topic = ""
        if cue is None:
            if clause.whose == "other" or not meter.scan(_CUE_END, clause.core):
                mid = meter.scan(_MID, clause.core, "match")
                if mid and clause.whose != "other":
                    return f"{mid.group('head').strip()} {mid.group('tail').strip()}", None, [i]
                continue
        else:
            rest = clause.core[cue.end():].strip()
            linked = _LINK.sub("", rest, count=1)
            if rest and (cue.group("leading") or linked != rest):
                tail = meter.scan(_NOT_TAIL, linked, "match")  # "room 305 not 350"
                return (tail.group("new"), tail.group("wrong"), [i]) if tail else (linked, None, [i])
            qualifier = meter.scan(_QUALIFIER, rest.strip(_TRAILING), "match") if rest else None
            if rest and qualifier is None:
                continue  # "纠正一下我的发音": a cue word with an object is not a correction
            topic = (qualifier.group("topic") or "") if qualifier else ""
        # subtle: the value is the first clause after the cue; later ones give the reason
        # ("记错了，按摩仪是下周一到，商家说缺货"), and their words must not blur what it is about.
        following = [j for j in range(i + 1, len(clauses)) if not _is_cue_only(clauses[j].core, meter)][:1]
        if following:
            text = " ".join(part for part in (topic, _LINK.sub("", clauses[following[0]].core, count=1)) if part)
            tail = meter.scan(_NOT_TAIL, text, "match")
            return (tail.group("new"), tail.group("wrong"), [i, *following]) if tail else (text, None, [i, *following])
    return None


def _is_cue_only(core: str, meter: Meter) -> bool:
    cue = meter.scan(_CUE, core, "match")
    return cue is not None and not core[cue.end():].strip(_TRAILING + " ")


# Kinds of value a correction can carry, so "actually, Friday" finds the message that had a day in it.
_KINDS = {
    "day": re.compile(r"周[一二三四五六日天末]|星期.|礼拜.|今天|明天|后天|昨天|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)"
                      r"(?:day)?s?\b|\b(?:today|tomorrow|yesterday|weekend|tonight)\b", re.I),
    "time": re.compile(r"\d{1,2}\s*[:：点]\s*\d{0,2}(?:分|半)?|\d{1,2}(?:\.\d{2})?\s*(?:am|pm|o'?clock)\b|(?:(?<![大小多少快慢好高低早晚长短远近轻重贵松紧差有])一|[二三四五六七八九十两]|[一二三四五六七八九十两]{2,3})点(?:半|[一二三四五]十分?)?|"
                       r"上午|下午|晚上|早上|中午|傍晚|凌晨|\b(?:noon|morning|afternoon|evening|midnight)\b", re.I),
    "date": re.compile(r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|\d{1,2}\s*[日号]|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}|"
                       r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|\b\d{1,2}(?:st|nd|rd|th)\b", re.I),
    "grade": re.compile(r"[初高][一二三]|[一二三四五六]年级|大[一二三四]|[大中小]班|\bgrade\s{0,2}\d{1,2}\b|\b\d{1,2}(?:st|nd|rd|th)\s+grade\b"
                        r"|\b(?:freshman|sophomore|junior|senior|kindergarten|preschool)\b", re.I),
    "number": re.compile(r"\d|[一二三四五六七八九十两]+(?:个|天|楼|层|次|人|号|块|元|米|公里|分钟|小时)"),
}


def kind_pattern(kind: str) -> re.Pattern[str]:
    """The pattern that finds values of one ``kind`` ("day", "time", "date", "grade", "number")."""
    return _KINDS[kind]


def value_kinds(text: str) -> set[str]:
    """The kinds of value ``text`` mentions: day, time, date, number.

    >>> sorted(value_kinds("Friday at three")), sorted(value_kinds("牙医预约在周三下午三点"))
    (['day'], ['day', 'time'])
    >>> value_kinds("iPhone")
    set()
    """
    return {kind for kind, pattern in _KINDS.items() if pattern.search(text[:2000])}


def kind_values(text: str, kinds: set[str] | frozenset[str]) -> set[str]:
    """The values of those ``kinds`` that ``text`` mentions.

    >>> sorted(kind_values("我儿子在读初二，周三补课", {"grade", "day"}))
    ['初二', '周三']
    """
    return {m.group(0) for kind in sorted(kinds) for m in _KINDS[kind].finditer(text[:2000])}


def strip_kinds(text: str) -> str:
    """``text`` without its days, times, dates and numbers: what is left names the thing.

    >>> strip_kinds("体检是周五上午")
    '体检是'
    """
    for pattern in _KINDS.values():
        text = pattern.sub(" ", text)
    return text.strip()
