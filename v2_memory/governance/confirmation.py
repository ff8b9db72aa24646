"""The confirmation loop: a persona fact is asked about, and the user's next reply settles it.

The manual: a fact the user declares is *pending* until confirmed ("已为您标记…，确认请回复 OK").
``question_for`` words that question, in the user's language, for the agent to ask; the write
result carries it. The user's next message, if it is an affirmation ("OK", "对", "是的", "yes,
that's right"), confirms the facts the previous user message declared; a denial with a value
("不对，是Windows") is a correction of them (``corrections.py`` reads it).

    >>> is_affirmation("OK!"), is_affirmation("对的"), is_affirmation("yes that's right"), is_affirmation("OK, and the weather?")
    (True, True, True, False)
"""
from __future__ import annotations

import re

from ..messages import Fact

__all__ = ["is_affirmation", "question_for"]

# Affirmation words, a family per language; a reply is an affirmation when it is nothing else.
_ZH = r"(?:是的|对的|好的|没错|没问题|确认|确定|可以|正确|就是|是啊|对啊|对呀|是呀|嗯呢|对|是|好|嗯|行|没)"
_EN = (r"(?:ok(?:ay)?|yes|yep|yeah|yup|ya|sure|correct|right|exactly|absolutely|confirm(?:ed)?|indeed|"
       r"that'?s\s+(?:right|correct|it)|sounds\s+good|you\s+got\s+it|y)")
_AFFIRMATION = re.compile(rf"^(?:(?:{_ZH})+|{_EN}(?:[\s,]+{_EN}){{0,3}})(?:[\s,]*(?:thanks|thank\s+you|谢谢|thx))?$", re.I)
_PUNCT = re.compile(r"[\s。.!！~～,，、;；:：👍🙂😊]+")


def is_affirmation(text: str) -> bool:
    """Whether ``text`` is, as a whole, a yes ("OK", "对", "是的", "yep, correct")."""
    core = _PUNCT.sub(" ", text[:60]).strip()
    return 0 < len(core) <= 40 and bool(_AFFIRMATION.match(core))


def question_for(facts: list[Fact], render: "callable", chinese: bool) -> str | None:
    """The question the agent can ask about pending ``facts``, or None when there are none."""
    pending = [render(f.key, f.value, f.polarity).removeprefix("persona:") for f in facts if f.status == "pending"]
    if not pending:
        return None
    listed = "；".join(pending) if chinese else "; ".join(pending)
    if chinese:
        return f"已为您标记：{listed}，确认请回复 OK（不对请直接说正确的）"
    return f"I've noted: {listed}. Reply OK to confirm (or tell me what is right)."
