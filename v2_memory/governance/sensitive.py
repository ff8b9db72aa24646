"""Sensitive data found at write time: detect it, then redact, refuse, or isolate.

Detectors (each validates, not just pattern-matches, where the data has a checksum):

    cn_id       mainland resident ID: 17 digits + check digit (ISO 7064 MOD 11-2)
    mobile      mainland mobile number: 1[3-9] + 9 digits
    email       name@domain.tld
    bank_card   13–19 digits that pass the Luhn check
    secret      API keys and tokens (sk-…, AKIA…, ghp_…, xox…-…, Bearer …), "password: …", "密码：…"

The raw value never leaves this module in a finding: a finding carries the kind, its position and
a masked form (``138****8000``), so logs and write results can say what was found safely.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

__all__ = ["SensitiveFinding", "find_sensitive", "redact", "SENSITIVE_POLICIES"]

SENSITIVE_POLICIES = ("redact", "refuse", "isolate")

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def cn_id_valid(candidate: str) -> bool:
    """The 18th character of a mainland ID is a checksum of the first 17.

    >>> cn_id_valid("11010519491231002X")
    True
    >>> cn_id_valid("110105194912310021")
    False
    """
    total = sum(int(digit) * weight for digit, weight in zip(candidate[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == candidate[17].upper()


def luhn_valid(digits: str) -> bool:
    """Bank cards end in a Luhn check digit: double every second digit from the right.

    >>> luhn_valid("4111111111111111"), luhn_valid("4111111111111112")
    (True, False)
    """
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


@dataclass(frozen=True)
class SensitiveFinding:
    kind: str
    start: int
    end: int
    masked: str

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "masked": self.masked}


def _mask(kind: str, value: str) -> str:
    """Enough to recognise a value, never enough to use it; secrets show nothing of themselves."""
    if kind == "secret":
        return f"[{len(value)} characters]"
    keep = 3 if len(value) > 8 else 1
    return value[:keep] + "*" * max(len(value) - 2 * keep, 3) + value[-keep:]


# (kind, pattern, validator) — checked in this order; a span claimed by one kind is not reused.
_DIGIT_EDGE_L, _DIGIT_EDGE_R = r"(?<![0-9A-Za-z])", r"(?![0-9A-Za-z])"
_DETECTORS: list[tuple[str, re.Pattern[str], Callable[[str], bool]]] = [
    ("secret", re.compile(
        r"\b(?:sk-[A-Za-z0-9_-]{16,200}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,200}|xox[abpr]-[A-Za-z0-9-]{10,200}"
        r"|Bearer\s+[A-Za-z0-9._~+/-]{16,500}=*)"
        r"|(?i:\b(?:api[_-]?key|access[_-]?token|secret|password|passwd|token)(?:\s+is\s+|\s*[:=]\s*)['\"]?[^\s'\"，。]{8,200})"
        r"|(?:密码|口令|密钥|令牌)\s*(?:是|为|[:：])\s*[^\s，。]{6,200}"
    ), lambda value: True),
    # Bounded parts keep a long paste linear: local part <= 64, each label <= 63 (as in the RFCs).
    ("email", re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"),
     lambda value: True),
    ("cn_id", re.compile(_DIGIT_EDGE_L + r"\d{17}[\dXx]" + _DIGIT_EDGE_R), cn_id_valid),
    ("bank_card", re.compile(_DIGIT_EDGE_L + r"\d{13,19}" + _DIGIT_EDGE_R), luhn_valid),
    # 13800138000, 138 0013 8000, 138-0013-8000, +86 138 0013 8000
    ("mobile", re.compile(r"(?<!\d)(?:\+?86[- ]?)?1[3-9]\d[- ]?\d{4}[- ]?\d{4}(?!\d)"), lambda value: True),
]


def find_sensitive(text: str) -> list[SensitiveFinding]:
    """Every sensitive value in ``text``, in order of position.

    >>> [f.kind for f in find_sensitive("call 13800138000 or mail a@b.cn")]
    ['mobile', 'email']
    """
    findings: list[SensitiveFinding] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern, valid in _DETECTORS:
        for match in pattern.finditer(text):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken) or not valid(match.group()):
                continue
            taken.append(span)
            findings.append(SensitiveFinding(kind, span[0], span[1], _mask(kind, match.group())))
    return sorted(findings, key=lambda finding: finding.start)


def redact(text: str, findings: list[SensitiveFinding]) -> str:
    """Replace each finding with ``[kind]``.

    >>> redact("mail a@b.cn now", find_sensitive("mail a@b.cn now"))
    'mail [email] now'
    """
    for finding in sorted(findings, key=lambda f: f.start, reverse=True):
        text = text[: finding.start] + f"[{finding.kind}]" + text[finding.end :]
    return text
