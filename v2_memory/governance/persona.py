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

from ..messages import Declaration, fact_phrase, render_fact
from .facts import extract_claims

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


