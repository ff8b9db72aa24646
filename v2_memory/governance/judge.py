"""A judge you can plug in: any callable from a prompt to JSON may read a message — and the rules check it.

The deterministic bilingual rules (``segmenter``, ``facts``, ``corrections``) are the default: no
dependencies, every decision explainable. Behind this small protocol a ``Judge`` — an LLM client,
a small classifier, the manual's "用小模型判断" — may answer the same questions instead: the
speech act, whose statement it is, the facts (attribute, value, polarity), and whether it corrects
an earlier message. Wiring a real client takes a few lines::

    def my_judge(prompt: str) -> str:
        return client.chat(model="small", messages=[{"role": "user", "content": prompt}]).text

    MemoryManager(governance=GovernancePolicy(judge=my_judge))

What a judge may *not* do is decided outside it: it only ever sees the user's own messages, already
redacted (never model output, never raw personal data); it cannot name another user's memory (the
target of a correction is looked up inside the writer's scope); and its answer is validated — a
known speech act, facts only for the user's own statements, every value a span of the message (no
invented values), polarity ±1. A malformed or failing answer falls back to the rules, and the
write result says which engine decided (``read_by:judge`` / ``read_by:rules``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from ..text.segmenter import ACTS
from .corrections import Correction, detect_correction
from .facts import Claim, extract_claims

__all__ = ["Judge", "Reading", "PROMPT", "read_message_facts", "JudgeAnswerError"]

Judge = Callable[[str], Union[str, Mapping[str, Any]]]  # prompt -> JSON text (or the parsed object)

PROMPT = """You read one message a user sent to an assistant, to decide what it says about the user.
Answer with one JSON object and nothing else:
{{"speech_act": "statement" | "question" | "conditional" | "report" | "request",
  "subject": "user" | "other",
  "facts": [{{"attribute": "diet" | "allergy" | "likes" | "device" | "name" | "location" | "employer" | ...,
             "value": "<words copied from the message>", "polarity": 1 | -1}}],
  "correction": null | {{"new_value": "<words from the message>", "wrong_value": "<words>" | null}}}}
Facts only for what the user states about themselves (not questions, hypotheticals, other people).
Message: <<<{text}>>>"""

_ATTRIBUTE = re.compile(r"^[a-z][a-z_]{0,29}$")
MAX_FACTS = 8


class JudgeAnswerError(ValueError):
    """The judge's answer is not what the protocol asks for (the rules decide instead)."""


@dataclass(frozen=True)
class Reading:
    """What a message says, and which engine read it."""

    claims: tuple[Claim, ...]
    correction: Correction | None
    engine: str  # "rules" | "judge"
    note: str | None = None  # why the judge's answer was not used, when it was not


def read_message_facts(text: str, judge: Judge | None = None) -> Reading:
    """Read ``text`` with the judge if there is one (validated), else — or on a bad answer — with the rules."""
    rules = Reading(tuple(extract_claims(text)), detect_correction(text), "rules")
    if judge is None:
        return rules
    try:
        return _validated(_parse(judge(PROMPT.format(text=text))), text)
    except JudgeAnswerError as exc:
        return Reading(rules.claims, rules.correction, "rules", f"judge_refused:{exc}")
    except Exception as exc:  # a judge is foreign code (a network client): its failure must not fail the write
        return Reading(rules.claims, rules.correction, "rules", f"judge_failed:{type(exc).__name__}")


def _parse(answer: object) -> Mapping[str, Any]:
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except ValueError as exc:
            raise JudgeAnswerError("not_json") from exc
    if not isinstance(answer, Mapping):
        raise JudgeAnswerError("not_an_object")
    return answer


def _validated(answer: Mapping[str, Any], text: str) -> Reading:
    act, subject = answer.get("speech_act"), answer.get("subject")
    if act not in ACTS or subject not in ("user", "other"):
        raise JudgeAnswerError("speech_act_or_subject")
    facts = answer.get("facts") or []
    if not isinstance(facts, list) or len(facts) > MAX_FACTS:
        raise JudgeAnswerError("facts")
    own = subject == "user" and act in ("statement", "request")
    claims = tuple(_claim(fact, text) for fact in facts) if own else ()
    return Reading(claims, _correction(answer.get("correction"), text) if act == "statement" else None, "judge")


def _in_text(value: object, text: str) -> str:
    """A value must be words of the message: a judge may read, never invent."""
    if not isinstance(value, str) or not value.strip() or len(value) > 60 or value.strip().casefold() not in text.casefold():
        raise JudgeAnswerError("value_not_in_message")
    return value.strip()


def _claim(fact: object, text: str) -> Claim:
    if not isinstance(fact, Mapping) or not isinstance(fact.get("attribute"), str):
        raise JudgeAnswerError("fact")
    attribute = fact["attribute"].strip().lower()
    polarity = fact.get("polarity")
    if not _ATTRIBUTE.match(attribute) or isinstance(polarity, bool) or polarity not in (1, -1):
        raise JudgeAnswerError("attribute_or_polarity")
    return Claim(attribute, _in_text(fact.get("value"), text), int(fact["polarity"]))


def _correction(correction: object, text: str) -> Correction | None:
    if correction is None:
        return None
    if not isinstance(correction, Mapping):
        raise JudgeAnswerError("correction")
    wrong = correction.get("wrong_value")
    return Correction(_in_text(correction.get("new_value"), text), _in_text(wrong, text) if wrong is not None else None)
