"""Persona declarations: only what users state about themselves becomes a fact.

The manual's intent check: a persona fact needs a first-person subject, an affirming (or
explicitly negating) verb and a concrete attribute. "我是iOS用户" and "I use a Mac" pass; "你像我同事"
and "my friend uses Windows" are remarks, not declarations. A negation is kept as *polarity*:
"别推荐咖啡" is a fact against coffee (polarity −1), never "推荐咖啡".

    >>> detect_declaration("记住我不吃香菜")
    Declaration(key='diet', value='香菜', polarity=-1)
    >>> detect_declaration("你像我同事") is None
    True
"""
from __future__ import annotations

import re

from ..messages import Declaration

__all__ = ["Declaration", "detect_declaration", "SINGLE_VALUED_KEYS", "render_fact"]

# Keys where a new value replaces the old one (a user has one device); others accumulate.
SINGLE_VALUED_KEYS = frozenset({"device", "platform", "name"})


_LEAD = r"^(?:请?记住|记一下|(?:please\s+)?remember(?:\s+that)?)?[:：,，]?\s*(?:以后|今后|from now on,?)?\s*"
_ADVERB = r"(?:现在|已经|再也|也|真的|一直|从来|其实)?"  # "我现在不喜欢…", "我已经不吃…"
_PRONOUNS = {"你", "您", "他", "她", "它", "你们", "他们", "you", "him", "her", "it", "them", "this", "that"}
# (pattern, key, polarity) — first match wins, so negative forms come before positive ones.
_RULES: list[tuple[re.Pattern[str], str, int]] = [
    (re.compile(_LEAD + r"我" + _ADVERB + r"(?:不吃|不能吃|从不吃|从来不吃|吃不了|忌口)(?P<v>.+)$"), "diet", -1),
    (re.compile(_LEAD + r"我(?P<v>吃素|是素食者?)$"), "diet", +1),
    (re.compile(_LEAD + r"我对(?P<v>.+?)过敏$"), "allergy", -1),
    (re.compile(_LEAD + r"(?:请)?(?:别|不要|请勿|不用|请不要)(?:再)?(?:给我)?推荐(?P<v>.+)$"), "recommend", -1),
    (re.compile(_LEAD + r"我" + _ADVERB + r"(?:不喜欢|讨厌|不爱)(?P<v>.+)$"), "likes", -1),
    (re.compile(_LEAD + r"我" + _ADVERB + r"(?:喜欢|爱)(?P<v>.+)$"), "likes", +1),
    (re.compile(_LEAD + r"我是(?P<v>[A-Za-z][\w .+-]*|[\u4e00-\u9fff]{2,8})用户$"), "platform", +1),
    (re.compile(_LEAD + r"我" + _ADVERB + r"(?:用|使用|在用)(?![了过着餐])(?P<v>.{2,})$"), "device", +1),
    (re.compile(_LEAD + r"我叫(?![个了辆一车])(?P<v>\S{1,10})$"), "name", +1),
    (re.compile(_LEAD + r"i\s+(?:don'?t|do\s+not|never|can'?t)\s+eat\s+(?P<v>.+)$", re.I), "diet", -1),
    (re.compile(_LEAD + r"i\s*(?:'m|\s+am)\s+(?:a\s+)?(?P<v>vegetarian|vegan)$", re.I), "diet", +1),
    (re.compile(_LEAD + r"i\s*(?:'m|\s+am)\s+allergic\s+to\s+(?P<v>.+)$", re.I), "allergy", -1),
    (re.compile(_LEAD + r"(?:please\s+)?(?:don'?t|do\s+not|never)\s+recommend\s+(?P<v>.+?)(?:\s+to\s+me)?$", re.I), "recommend", -1),
    (re.compile(_LEAD + r"i\s+(?:don'?t|do\s+not)\s+like\s+(?P<v>.+)$|^i\s+hate\s+(?P<w>.+)$", re.I), "likes", -1),
    (re.compile(_LEAD + r"i\s+(?:like|love)\s+(?P<v>.+)$", re.I), "likes", +1),
    (re.compile(_LEAD + r"i\s*(?:'m|\s+am)\s+an?\s+(?P<v>.+?)\s+user$", re.I), "platform", +1),
    (re.compile(_LEAD + r"i\s+(?:use|am\s+using|'m\s+using)\s+(?:an?\s+|the\s+)?(?P<v>.+?)(?:\s+(?:to|for)\s+.*)?$", re.I), "device", +1),
    (re.compile(_LEAD + r"(?:my\s+name\s+is|call\s+me)\s+(?P<v>.+)$", re.I), "name", +1),
]
_TRAILING = "。.!！~～ ，,;；了的"
_QUESTION = re.compile(r"[?？]|吗$|呢$")
_TIME_WORDS = re.compile(r"\s+(?:any\s?more|now|these days|nowadays|at all)$|了$", re.I)
_CLAUSE_END = re.compile(r"[，,;；。]|但|\bbut\b", re.I)  # a value ends where its clause does


def detect_declaration(text: str) -> Declaration | None:
    """The persona fact ``text`` declares about its speaker, or None for anything else.

    >>> detect_declaration("别推荐咖啡")
    Declaration(key='recommend', value='咖啡', polarity=-1)
    >>> detect_declaration("I use a Mac.")
    Declaration(key='device', value='Mac', polarity=1)
    >>> detect_declaration("my friend uses Windows") is None
    True
    """
    sentence = text.strip().rstrip(_TRAILING).strip()
    if not sentence or _QUESTION.search(sentence) or len(sentence) > 60:
        return None
    for pattern, key, polarity in _RULES:
        match = pattern.match(sentence)
        if match:
            value = match.group("v") or match.groupdict().get("w") or ""
            value = _CLAUSE_END.split(value, maxsplit=1)[0].strip().strip(_TRAILING).strip()
            value = _TIME_WORDS.sub("", value).strip()  # "horror movies anymore" is "horror movies"
            if 0 < len(value) <= 30 and value.casefold() not in _PRONOUNS:
                return Declaration(key, value, polarity)
            return None  # "我喜欢你" is a remark about someone, not a fact about the speaker
    return None


# How a negative fact reads, per key: said so that it cannot be misread as its opposite.
_NEGATIVE = {
    "allergy": "{value} (过敏，必须避免 / allergic: avoid it)",
    "diet": "NOT {value} (不吃 / does not eat it)",
    "likes": "NOT {value} (不喜欢 / dislikes it)",
    "recommend": "NOT {value} (用户明确拒绝 / the user said no)",
}


def render_fact(key: str, value: str, polarity: int) -> str:
    """A fact as a context line that cannot be misread as its opposite.

    >>> render_fact("recommend", "咖啡", -1)
    'persona:recommend = NOT 咖啡 (用户明确拒绝 / the user said no)'
    >>> render_fact("allergy", "花生", -1)
    'persona:allergy = 花生 (过敏，必须避免 / allergic: avoid it)'
    """
    if polarity < 0:
        template = _NEGATIVE.get(key, "NOT {value} (用户明确拒绝 / the user said no)")
        return f"persona:{key} = " + template.format(value=value)
    return f"persona:{key} = {value}"
