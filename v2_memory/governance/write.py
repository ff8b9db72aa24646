"""Planning a write: everything the write policy decides about a message, before anything is stored.

``plan_write`` is a pure function of the message and the policy settings, so a reader (or a test)
can see every decision without a store: the source and its trust, the starting weight, whether
the text is embedded, what sensitive data was found and what was done with it, and whether the
message declares a persona fact or corrects an earlier message.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import logger
from ..errors import V2MemoryError
from ..messages import Message
from .confirmation import is_affirmation
from .corrections import Correction
from .decay import DecayRates
from .facts import Claim
from .identifiers import extract_identifiers
from .answers import question_clauses
from .judge import Judge, read_message_facts
from .persona import Declaration
from .policy import default_source, is_trusted, not_embedded_reason
from .revocation import Revocation, detect_revocations
from .scope import spoken_lasting, spoken_scope
from ..text.instructions import find_instruction
from ..text.sensitive import SENSITIVE_POLICIES, SensitiveFinding, find_sensitive, redact

__all__ = ["WritePlan", "plan_write", "SensitiveDataError"]


class SensitiveDataError(V2MemoryError, ValueError):
    """The manager's policy is "refuse" and the message holds personal data. ``kinds`` says which."""

    def __init__(self, findings: list[SensitiveFinding]) -> None:
        self.kinds = tuple(f.kind for f in findings)
        masked = ", ".join(f"{f.kind} {f.masked}" for f in findings)
        super().__init__(f"refused: the message contains sensitive data ({masked})")


@dataclass(frozen=True)
class WritePlan:
    source: str
    verified: bool
    base_weight: float
    stored_text: str  # what the long-term store keeps (redacted unless isolated)
    window_text: str  # what the recent window shows (never raw sensitive data when isolated)
    embed: bool
    isolated: bool
    reasons: tuple[str, ...]
    sensitive: tuple[SensitiveFinding, ...] = ()
    declaration: Declaration | None = None
    correction: Correction | None = None
    identifiers: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()  # every fact the message declares (``declaration`` is the first)
    read_by: str = "rules"  # which engine read the sentences: rules | judge
    affirmation: bool = False  # "OK" / "对": a reply that may confirm the previous message's facts
    scope: str | None = None  # "session" / "task" when the user said the message holds only there
    lasting: bool = False  # said inside a task to hold beyond it ("not just this cake"): the user's, not the task's
    revocations: tuple[Revocation, ...] = ()  # "forget what I told you about …": what it takes back is found on write
    quoted: bool = False  # it instructs the assistant: stored, but only ever recalled as quoted words
    asks: bool = False  # the user asks something in it: a later answer supersedes the question (``answers.py``)

WITHHELD = "[withheld at the user's request]"


def plan_write(message: Message, *, sensitive_policy: str = "redact", rates: DecayRates = DecayRates(),
               judge: Judge | None = None) -> WritePlan:
    """Decide how ``message`` is written; raises ``SensitiveDataError`` under the "refuse" policy.

    >>> plan = plan_write(Message("assistant", "ReLU 是循环神经元"))
    >>> plan.source, plan.verified, plan.base_weight, plan.reasons
    ('llm_response', False, 0.01, ('unverified_model_output',))
    """
    if sensitive_policy not in SENSITIVE_POLICIES:
        raise ValueError(f"sensitive_policy must be one of {SENSITIVE_POLICIES}, got {sensitive_policy!r}")
    reasons: list[str] = []
    # Step 1: provenance and trust. Model output is stored, but weak and unverified.
    source = message.source or default_source(message.role)
    verified = is_trusted(source)
    reasons.append("trusted_source" if verified else "unverified_model_output")
    is_user = source == "user_input"
    # Step 2: what the user takes back. "don't store this: …" keeps nothing of what follows, not
    # even redacted; "forget what I told you about X" is resolved against the history on write.
    content = message.content
    revocations = detect_revocations(content) if is_user else ()
    if revocations and revocations[-1].withheld_from is not None:
        content = f"{content[:revocations[-1].withheld_from].rstrip()} {WITHHELD}"
        reasons.append("withheld_at_user_request")
        revocations = revocations[:-1]
    # Step 3: personal data — redacted, refused, or kept apart from every other track.
    findings = find_sensitive(content)
    stored_text = window_text = content
    isolated = False
    if findings:
        if sensitive_policy == "refuse":
            logger("governance").info("refused a message holding personal data (%s); nothing was stored",
                                      ", ".join(sorted({f.kind for f in findings})))
            raise SensitiveDataError(findings)
        window_text = redact(content, findings)
        isolated = sensitive_policy == "isolate"
        stored_text = content if isolated else window_text
        reasons.append("sensitive_isolated" if isolated else "sensitive_redacted")
    # Step 4: filler, code and symbols stay in the window only.
    skip = not_embedded_reason(content)
    if skip:
        reasons.append(f"not_embedded:{skip}")
    # Step 5: a message that instructs the assistant ("ignore previous instructions", a forged
    # "SYSTEM:" line) is kept as what was said, and nothing more: no fact, no correction, no route,
    # no take-back and no scope.
    instruction = find_instruction(content)
    if instruction:
        reasons.append(instruction.reason)
        is_user, revocations = False, ()
    # Step 6: only a user speaking about themselves declares facts or corrects the record; the
    # sentences are read clause by clause (by the rules, or a judge the rules check).
    reading = read_message_facts(window_text, judge) if is_user else None  # never a raw sensitive value
    correction = reading.correction if reading else None
    claims = reading.claims if reading else ()  # kept beside a correction: used if it finds no target
    if reading is not None:
        reasons.append(f"read_by:{reading.engine}")
        if reading.note:
            reasons.append(reading.note)
    # A scope needs the session or task that holds it (``scope.py``: a passing state never scopes
    # a fact about the user).
    scope = spoken_scope(content, states_facts=bool(claims)) if is_user and message.domain is None else None
    if scope is not None and getattr(message, f"{scope}_id") is None:
        scope = None
    if scope is not None:
        reasons.append(f"scoped_by_speech:{scope}")
    # "…, that's for always, not just this cake": inside a task, the user's, not the task's.
    lasting = scope is None and is_user and message.task_id is not None and message.domain is None and spoken_lasting(content)
    if lasting:
        reasons.append("lasting_by_speech")
    if claims:
        reasons.append("persona_fact_pending")
    if correction:
        reasons.append("correction")
    if revocations:
        reasons.append("revocation")
    return WritePlan(
        source=source, verified=verified, base_weight=1.0 if verified else rates.unverified_weight,
        stored_text=stored_text, window_text=window_text, embed=skip is None, isolated=isolated,
        reasons=tuple(reasons), sensitive=tuple(findings),
        declaration=claims[0].declaration if claims else None, correction=correction,
        identifiers=() if instruction else tuple(extract_identifiers(window_text)), claims=claims,
        read_by=reading.engine if reading else "rules", affirmation=is_user and is_affirmation(window_text),
        revocations=revocations, scope=scope, lasting=lasting, quoted=instruction is not None,
        asks=is_user and bool(question_clauses(window_text)),
    )
