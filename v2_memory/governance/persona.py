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

from typing import Any, Mapping

from ..messages import Declaration
from .facts import MEAT, extract_claims

__all__ = ["Declaration", "detect_declaration", "SINGLE_VALUED_KEYS", "render_fact", "fact_phrase"]

# Keys where a new value replaces the old one (a user has one device); others accumulate.
SINGLE_VALUED_KEYS = frozenset({"device", "platform", "name", "location", "employer"})




def detect_declaration(text: str) -> Declaration | None:
    """The first persona fact ``text`` declares about its speaker, or None (``facts.extract_claims``
    gives them all).

    >>> detect_declaration("别推荐咖啡")
    Declaration(key='recommend', value='咖啡', polarity=-1)
    >>> detect_declaration("I use a Mac.")
    Declaration(key='device', value='Mac', polarity=1)
    >>> detect_declaration("my friend uses Windows") is None
    True
    """
    claims = extract_claims(text)
    return claims[0].declaration if claims else None


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
    if key == "diet" and value in MEAT.values() and polarity > 0:
        return f"persona:diet = {value} (不再吃素 / eats meat, not vegetarian)"
    if polarity < 0:
        template = _NEGATIVE.get(key, "NOT {value} (用户明确拒绝 / the user said no)")
        return f"persona:{key} = " + template.format(value=value)
    if key == "allergy":
        return f"persona:allergy = NOT allergic to {value} (不过敏 / not allergic)"
    return f"persona:{key} = {value}"


def fact_phrase(fact: Mapping[str, Any]) -> str:
    """A fact's dict (as a write result or an explanation carries it) as one line, with its status.

    >>> fact_phrase({"key": "diet", "value": "香菜", "polarity": -1, "status": "pending"})
    'persona:diet = NOT 香菜 (不吃 / does not eat it) [pending]'
    """
    line = render_fact(str(fact.get("key")), str(fact.get("value")), int(fact.get("polarity", 1)))
    return f"{line} [{fact['status']}]" if fact.get("status") else line
