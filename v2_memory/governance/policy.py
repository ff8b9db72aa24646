"""Write policy: what may enter memory, how much it is trusted, and what is kept out of the store.

The manual's finding is that most pollution enters on the *write* side, so every message passes
here first:

    source      from the role unless given: user → user_input, assistant → llm_response,
                tool → tool; any other role ("system" too) is treated as model output: unverified,
                never trusted (a knowledge base entry says so with source="knowledge_base")
    verified    user input, tools and knowledge bases are; model output is not, and starts with
                weight 0.01 until a user confirms it (``MemoryManager.verify``)
    embedded    filler — acknowledgements and interjections only, however repeated or spelled
                ("嗯", "好嘞好嘞", "ok ok", "thx!", "哈哈哈") — and code-only or symbol-only text
                (emoji, punctuation: "👍👍") stay in the recent window but are not embedded into
                the long-term store
"""
from __future__ import annotations

import re

from ..messages import DOMAINS, SOURCES

__all__ = ["SOURCES", "DOMAINS", "default_source", "is_trusted", "is_filler", "not_embedded_reason"]

_ROLE_SOURCE = {
    "user": "user_input",
    "human": "user_input",
    "assistant": "llm_response",
    "ai": "llm_response",
    "model": "llm_response",
    "tool": "tool",
    "function": "tool",
}  # "system" is not here: a system prompt is the agent's own instruction, never a trusted memory
# -- filler, by its form ---------------------------------------------------------------------------
# Filler is a message made only of acknowledgement and interjection units — in any number, repeated,
# elongated ("okkk", "好的好的~", "哈哈哈哈"), with any punctuation or emoji around them. Interjections,
# modal particles and acknowledgements are a closed class of words, so the units are listed; the
# form (only such units, at least one) is what decides. A digit or any other word makes it content:
# "周五", "OK, book it for Friday", "不要香菜", "ok 3pm".
_ZH_PARTICLES = frozenset("嗯恩哦噢喔啊呀哈嘿呵嘻哇唉诶欸额呃嗷嘛呢吧啦咯嘞哒滴哟呦哎呐噻耶嗨好行对是的了吗")
# Laughter is an interjection in Chinese too ("笑死我了" is "lmao"), as "lol" is in English.
_ZH_WORDS = frozenset({"谢谢", "多谢", "感谢", "收到", "可以", "明白", "知道", "晓得", "没问题", "辛苦", "没事", "懂",
                       "笑死", "笑死我", "笑哭", "笑喷", "笑疯", "太好笑"})
_EN_WORDS = frozenset("""
ok okay okey okie k yes yep yeah yea ya yup sure thanks thank thx ty tysm np lol lmao rofl cool nice great good fine
alright right gotcha noted roger wow yay oh ah uh um hm mhm aha ooh kk
""".split())
_LAUGH = re.compile(r"(?:h[aeiou]){2,100}h?|(?:[aeiou]h){2,100}|(?:lo){1,100}l|(?:he){2,100}|x?d{1,3}"
                    r"|l{1,9}m{1,9}f?a{1,9}o{1,9}")
_UNIT = re.compile(r"[^\W\d_\u4e00-\u9fff]{1,200}|[\u4e00-\u9fff]{1,200}|\d")  # a word, a run of CJK, or a digit


def _collapse(text: str) -> str:
    """Latin elongation undone: "okkk" → "ok", "got itt" → "got it"; both sides compare collapsed
    (so "good" is "god" on both)."""
    return re.sub(r"([a-z])\1{1,10000}", r"\1", text)


_EN_COLLAPSED = frozenset(_collapse(word) for word in _EN_WORDS)
_EN_PHRASES = re.compile(r"\b(?:" + "|".join(_collapse(phrase).replace(" ", r"\s{1,3}") for phrase in (
    "thank you", "thank u", "got it", "no problem", "sounds good", "all good", "will do", "ok then")) + r")\b")


def _cjk_is_filler(run: str) -> bool:
    """A run of CJK characters read greedily as acknowledgement words (longest first) and particles."""
    i = 0
    while i < len(run):
        step = next((n for n in (3, 2, 1) if run[i:i + n] in _ZH_WORDS), 0)
        if not step and run[i] not in _ZH_PARTICLES:
            return False
        i += step or 1
    return True


def is_filler(text: str) -> bool:
    """Only acknowledgements and interjections, however repeated, spelled or decorated.

    >>> [is_filler(t) for t in ["好嘞好嘞", "嗯呢", "ok ok", "thx!", "lol", "哈哈哈", "okk", "好的好的~", "Thank you!!"]]
    [True, True, True, True, True, True, True, True, True]
    >>> [is_filler(t) for t in ["周五", "OK, book it for Friday", "不要香菜", "ok 3pm", "👍👍", "no"]]
    [False, False, False, False, False, False]
    """
    units = _UNIT.findall(_EN_PHRASES.sub(" ok ", _collapse(text.casefold())))
    if not units:
        return False  # nothing but symbols and emoji: "symbols_only", not filler
    for unit in units:
        if unit.isdigit():
            return False
        if "\u4e00" <= unit[0] <= "\u9fff":
            if not _cjk_is_filler(unit):
                return False
        elif unit not in _EN_COLLAPSED and not _LAUGH.fullmatch(unit):
            return False
    return True


# A line that is code beyond doubt: a statement keyword with code syntax, a call, an assignment,
# or a line ending in ; { } — prose like "return it by Friday" or "for dinner: sushi" is not.
_CODE_LINE = re.compile(  # bounded like every detector: a line of 1 MB costs linear time
    r"^\s{0,80}(?:def \w{1,80}\(|class \w{1,80}[:(]|import [\w.]{1,200}(?: as \w{1,80})?\s{0,80}$|from [\w.]{1,200} import "
    r"|return\b.{0,2000}[;)\]]\s{0,80}$|\s{1,80}return\b|#include\s{0,8}<|\$ \w)"
    r"|[;{}]\s{0,80}$|^\s{0,80}[\w.]{1,200}\(.{0,2000}\)\s{0,80}$|^\s{0,80}[\w.\[\]]{1,200}\s{0,8}(?:=|\+=|-=|==|=>)\s{0,8}\S"
)


_FENCE = re.compile(r"```.{0,100000}?```", re.S)  # a fenced code block (bounded, like every pattern here)


def default_source(role: str) -> str:
    """The source a role implies; unknown roles get the least trust.

    >>> default_source("user"), default_source("assistant"), default_source("narrator")
    ('user_input', 'llm_response', 'llm_response')
    """
    return _ROLE_SOURCE.get(role.strip().lower(), "llm_response")


def is_trusted(source: str) -> bool:
    """Everything but model output is trusted at write time."""
    return source != "llm_response"


def _has_letters(text: str) -> bool:
    """Any letter of any script (Latin, CJK, Cyrillic, ...): numbers and symbols alone are not."""
    return any(char.isalpha() for char in text)


def not_embedded_reason(text: str) -> str | None:
    """Why ``text`` should stay out of the long-term store, or None if it may be embedded.

    >>> [not_embedded_reason(t) for t in ["好的！", "```x = 1```", "-> ==> ***", "如何治理记忆污染？"]]
    ['filler', 'code_only', 'symbols_only', None]
    >>> [not_embedded_reason(t) for t in ["x = compute(a);", "for dinner: I want sushi", "Я вегетарианец"]]
    ['code_only', None, None]
    """
    if is_filler(text):
        return "filler"
    if not _has_letters(text):
        return "symbols_only"
    prose = _FENCE.sub(" ", text).strip()
    if not prose or not _has_letters(prose):
        return "code_only"
    lines = [line for line in prose.splitlines() if line.strip()]
    if not re.search(r"[\u4e00-\u9fff]", prose) and lines and all(_CODE_LINE.search(line) for line in lines):
        return "code_only"
    return None
