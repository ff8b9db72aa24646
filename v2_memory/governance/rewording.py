"""Rewordings: the same reminder said twice in other words collapses into one admitted memory.

``admission.collapse_duplicates`` collapses memories whose normalised text is *identical*. People
repeat themselves in other words ("明天提醒我交房租" / "记得明天提醒我交一下房租", "remind me to call
mom at 5" / "don't forget: call mom at 5pm"), and each copy takes a place in the prompt. Two admitted
memories are rewordings when, on their cleaned terms (``analyze``: stems, CJK bigrams, no stop
words),

    overlap  |A ∩ B| / min(|A|, |B|) >= 0.75   (one says nearly all the other says)
    jaccard  |A ∩ B| / |A ∪ B|       >= 0.5    (and they are not a word and a paragraph)
    acts     both ask, or neither does ("What is the capital?" is not "The capital is Canberra")
    numbers  the digits they carry are the same ("call mom at 5" is not "call mom at 6")

The later one is rejected as a ``duplicate`` (with ``rewording``) of the first, which counts it.

    >>> same_reminder("明天提醒我交房租", "记得明天提醒我交一下房租"), same_reminder("明天交房租", "明天交水费")
    (True, False)
"""
from __future__ import annotations

import re
from dataclasses import replace

from ..text.analyzer import analyze
from ..text.segmenter import read_message
from .admission import Admission

__all__ = ["same_reminder", "collapse_rewordings", "MIN_OVERLAP", "MIN_JACCARD"]

MIN_OVERLAP = 0.75
MIN_JACCARD = 0.5
_DIGITS = re.compile(r"\d+")
MAX_COMPARED = 32  # kept memories a candidate is compared with (enough for any prompt)
_MAX_CHARS = 2000  # a reminder is short; longer texts are compared on their first 2,000 characters


def _terms(text: str) -> frozenset[str]:
    return frozenset(t for t in analyze(text[:_MAX_CHARS]) if not t.isdigit())


def _asks(text: str) -> bool:
    return any(clause.act == "question" for clause in read_message(text[:_MAX_CHARS]))


def _features(text: str) -> tuple[tuple[frozenset[str], bool], frozenset[str]]:
    """(digits, asks) — texts can only be rewordings with equal keys — and the cleaned terms."""
    return (frozenset(_DIGITS.findall(text[:_MAX_CHARS])), _asks(text)), _terms(text)


def _close(ta: frozenset[str], tb: frozenset[str]) -> bool:
    if min(len(ta), len(tb)) < 2:
        return False
    shared = len(ta & tb)
    return shared / min(len(ta), len(tb)) >= MIN_OVERLAP and shared / len(ta | tb) >= MIN_JACCARD


def same_reminder(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` say the same thing in other words (see the module docstring)."""
    (key_a, ta), (key_b, tb) = _features(a), _features(b)
    return key_a == key_b and _close(ta, tb)


def collapse_rewordings(admissions: list[Admission]) -> list[Admission]:
    """Admitted rewordings collapse into the first (best) one, which counts them in ``duplicates``.

    Each text is read once; a memory is compared only with kept ones of the same (digits, asks)
    key, and with at most ``MAX_COMPARED`` of those (the best, since admissions come best first) —
    so the work stays linear in the number of candidates however many share an identifier."""
    result = list(admissions)
    kept: dict[tuple, list[tuple[int, frozenset[str]]]] = {}  # key -> [(index, terms)] kept so far
    for index, admission in enumerate(result):
        if not admission.admitted:
            continue
        key, terms = _features(admission.record["content"])
        bucket = kept.setdefault(key, [])
        first = next((k for k, other in bucket[:MAX_COMPARED] if _close(other, terms)), None)
        if first is None:
            bucket.append((index, terms))
            continue
        result[first] = replace(result[first], duplicates=result[first].duplicates + 1)
        result[index] = replace(admission, admitted=False, reasons=("duplicate", "rewording"),
                                duplicate_of=result[first].record_id)
    return result
