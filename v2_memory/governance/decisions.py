"""Decisions: what the user settled on replaces what they were only considering.

People think aloud before they choose: "thinking of maybe trying Invisalign", then "decided on
regular braces"; "在考虑做隐适美", then "最后决定做传统钢牙". The two rarely share a word — the option
changed — so nothing else here links them. The frame does: a clause of the user's own that says a
choice was made (decided, went with, settled on, 最后决定, 定了 …) right after the user's previous turn
only weighed an option (thinking of, considering, should we use …, 在考虑, 纠结, 要不要 …). The
weighing clauses are superseded, the rest of that turn kept ("I'm allergic to penicillin" stays
beside "thinking of trying Invisalign"). One turn back only, in the same task: the turn the
decision answers, however long ago and in whichever session it was said (weeks and a new chat may
pass between "would it be crazy to move to Portland?" and "ok decision made, we're moving to
Tucson"); a decision two turns later settles nothing. Deciding against counts ("先不换了").

    >>> [(c.start, c.end) for c in decided("ok, decided on the blue sofa")], considering("thinking of maybe a green one")
    ([(4, 28)], [(0, 29)])
"""
from __future__ import annotations

import re

from ..text.segmenter import Clause, read_message

__all__ = ["decided", "considering"]

_DECIDED = re.compile(r"\b(?:decided|(?:going|went)\s{1,3}with|settled\s{1,3}on|chose|picked(?!\s{1,3}up)|opted\s{1,3}for|ended\s{1,3}up\s{1,3}"
                      r"(?:with|going|choosing|getting|picking))\b|最后决定|最终决定|决定了|还是决定|决定(?:做|用|买|选|去|报)|(?<![预约设订确规决])定了|"
                      r"最后选|最终选|还是选|选了|拍板|想好了|定下来了|(?:先|还是|决定|暂时)不(?:换|买|搬|去|用|报|辞|卖|租)了|"
                      r"\bdecision(?:'s|\s{1,3}is)?\s{1,3}made\b|\bmade\s{1,3}(?:the|a|my|our)\s{1,3}(?:decision|call)\b", re.I)
_CONSIDERING = re.compile(r"\b(?:thinking\s{1,3}(?:of|about)|considering|(?:maybe|might)\s{1,3}(?:try|get|go\s{1,3}with|switch\s{1,3}to|buy|"
                          r"use|book|pick|choose)|not\s{1,3}sure\s{1,3}(?:if|whether|between|about)|torn\s{1,3}between|"
                          r"on\s{1,3}the\s{1,3}fence|debating|weighing|should\s{1,3}(?:we|i)\s{1,3}(?:use|go\s{1,3}with|get|buy|pick|"
                          r"choose|try|switch\s{1,3}to|book|move|quit|take))\b|\b(?:would|is)\s{1,3}it\s{1,3}be\s{1,3}(?:crazy|dumb|stupid|smart|wise|"
                          r"a\s{1,3}(?:good|bad)\s{1,3}idea|a\s{1,3}mistake)\s{1,3}to\b|\bis\s{1,3}it\s{1,3}(?:crazy|dumb|smart|wise)\s{1,3}to\b"
                          r"|在考虑|纠结|犹豫|要不要|想试试|打算试|会不会太|该不该|值不值得", re.I)
# "haven't decided yet", "还没定": no choice made.
_UNDECIDED = re.compile(r"\b(?:not|never|yet|undecided)\b|n't|还没|没有?(?:决定|定|选)|未定|不定", re.I)
# A choice the user's group made is the user's too: "team decided: …", "we went with …".
_OURS = re.compile(r"^(?:(?:ok|so|well|and)[\s,]{1,3})?(?:we\b|we'(?:ve|re)\b|our\s{1,3}team\b|the\s{1,3}team\b|team\b|我们|咱们|团队|开会)", re.I)


def decided(text: str) -> list[Clause]:
    """The clauses of ``text`` in which the speaker says they made a choice."""
    return [c for c in read_message(text) if c.act == "statement" and (c.whose in ("user", "unknown") or _OURS.match(c.core))
            and _DECIDED.search(c.core) is not None and _UNDECIDED.search(c.core) is None]


def considering(text: str) -> list[tuple[int, int]]:
    """The spans of the clauses of ``text`` that weigh an option — none if any clause decides."""
    clauses = read_message(text)
    if any(_DECIDED.search(c.core) for c in clauses):
        return []
    return [(c.start, c.end) for c in clauses if c.act in ("statement", "question") and _CONSIDERING.search(c.core)]
