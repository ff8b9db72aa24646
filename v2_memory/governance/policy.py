"""Write policy: what may enter memory, how much it is trusted, and what is kept out of the store.

The manual's finding is that most pollution enters on the *write* side, so every message passes
here first:

    source      from the role unless given: user → user_input, assistant → llm_response,
                tool → tool, system → knowledge_base; an unknown role is treated as model output
    verified    user input, tools and knowledge bases are; model output is not, and starts with
                weight 0.01 until a user confirms it (``MemoryManager.verify``)
    embedded    filler ("嗯", "好的", "ok", "thanks") and code-only or symbol-only text stays in
                the recent window but is not embedded into the long-term store
"""
from __future__ import annotations

import re

from ..messages import DOMAINS, SOURCES

__all__ = ["SOURCES", "DOMAINS", "default_source", "is_trusted", "not_embedded_reason"]

_ROLE_SOURCE = {
    "user": "user_input",
    "human": "user_input",
    "assistant": "llm_response",
    "ai": "llm_response",
    "model": "llm_response",
    "tool": "tool",
    "function": "tool",
    "system": "knowledge_base",
}
_FILLER = {
    "嗯", "嗯嗯", "好", "好的", "好滴", "行", "可以", "对", "是的", "收到", "哦", "噢", "哈哈", "谢谢", "多谢", "ok", "okay",
    "k", "kk", "yes", "yep", "yeah", "sure", "thanks", "thank you", "thx", "ty", "got it", "cool", "nice", "lol", "👍",
}
_PUNCT = "。，、！？!?.,~～…:：;； \t\r\n"
# A line that is code beyond doubt: a statement keyword with code syntax, a call, an assignment,
# or a line ending in ; { } — prose like "return it by Friday" or "for dinner: sushi" is not.
_CODE_LINE = re.compile(
    r"^\s*(?:def \w+\(|class \w+[:(]|import [\w.]+(?: as \w+)?\s*$|from [\w.]+ import |return\b.*[;)\]]\s*$|\s+return\b"
    r"|#include\s*<|\$ \w)"
    r"|[;{}]\s*$|^\s*[\w.]+\(.*\)\s*$|^\s*[\w.\[\]]+\s*(?:=|\+=|-=|==|=>)\s*\S"
)


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
    stripped = text.strip().strip(_PUNCT).strip().lower()
    if stripped in _FILLER:
        return "filler"
    if not _has_letters(text):
        return "symbols_only"
    prose = re.sub(r"```.*?```", " ", text, flags=re.S).strip()
    if not prose or not _has_letters(prose):
        return "code_only"
    lines = [line for line in prose.splitlines() if line.strip()]
    if not re.search(r"[\u4e00-\u9fff]", prose) and lines and all(_CODE_LINE.search(line) for line in lines):
        return "code_only"
    return None
