"""Conflicts: which earlier memory a correction or an update contradicts — found by meaning.

A correction that names the wrong value ("不是周三，是周五") is about the latest memory holding that
value. One that names none must find *the same attribute of the same thing*: "记错了，体检是周五"
is about the clause that gave the 体检 a day or time, wherever in the user's history (any session of
the scope, the same task) it was said — never simply "the previous message". Three readings, in
order of evidence:

    named value     the latest clause that contains the wrong value
    same attribute  the new value is a persona claim of an attribute with one value ("不对，我用的是
                    iPhone"): the latest live fact of that attribute
    same thing      the new value minus its days, times and numbers names a thing ("体检"); the
                    clause sharing most of those words, holding the same kind of value (a time
                    for a time), best and then latest; at least 30 % of the words in common
    bare value      no thing named ("应该是Mac", "actually, Friday"): only among the last few
                    messages of the same session — a clause with the same kind of value, or, for
                    a value of no kind, the latest one that declared a fact

No credible target: nothing is superseded, and the write says ``correction_target_not_found``.
A target is a *clause* of a record: "Swimming Monday 6pm, piano Wednesday 5pm" corrected about the
piano keeps the swimming (the governor splits the record).
"""
from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, Iterable

from ..messages import Fact
from ..text.analyzer import FUNCTION_BIGRAMS, analyze
from ..text.segmenter import person_of, read_message
from .corrections import Correction, kind_values, strip_kinds, value_kinds
from .facts import VEGETARIAN, Claim, extract_claims
from .persona import SINGLE_VALUED_KEYS

__all__ = ["Target", "terms_of", "content_chars", "correction_target", "clause_of", "retraction_target", "person_update_targets", "may_update_person", "update_facts", "resolve_key", "RECENT"]

RECENT = 5  # user messages of the same session a bare value may reach back to
RETRACTION_HORIZON = 1000  # latest live statements an update naming its old value searches (cost per write is bounded)
_MIN_SHARE = 0.3
_WORK = ("公司", "工作", "上班", "入职", "离职", "单位", "job", "work", "company", "office", "employer")


@dataclass(frozen=True)
class Target:
    """The part of an earlier record a correction contradicts, and which reading found it."""

    record_id: int
    span: tuple[int, int]  # the clause's offsets in the record's content
    how: str  # named_value | same_attribute | same_thing | bare_value


# Characters that carry grammar, not things: a CJK bigram holding one ("改到", "在每") names nothing.
_GRAMMAR_CHARS = frozenset("的了是在到把被和与或也都就还又很改定为给从向对于着过吗呢吧啊我你他她它们这那个每")


def _terms(text: str) -> set[str]:
    """Content words naming things: no stop words, no grammar bigrams, no lone characters.

    >>> sorted(_terms("周会改到每周二上午十点")), sorted(_terms("the dentist is on Thursday"))
    (['周会'], ['dentist'])
    """
    return {t for t in analyze(strip_kinds(text)) if len(t) > 1 and t not in FUNCTION_BIGRAMS
            and not _GRAMMAR_CHARS.intersection(t)}


terms_of = _terms  # the public name: revocation matches what it takes back by these words


def content_chars(text: str) -> frozenset[str]:
    """The Chinese characters of ``text`` that name things (no grammar characters, no values): what
    a short Chinese description still shares with a sentence when their words differ ("借钱" and
    "借了五万", "包" and "刷了个包").

    >>> sorted(content_chars("借钱那事"))
    ['事', '借', '钱']
    """
    return frozenset(c for c in strip_kinds(text) if "\u4e00" <= c <= "\u9fff" and c not in _GRAMMAR_CHARS)


def _clauses(record: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in read_message(record["content"])] or [(0, len(record["content"]), record["content"])]


def _speaker(text: str) -> str:
    """Whose thing a clause is about: "user" (我/I), "other" (她/我老婆/my son), or "unknown"."""
    clauses = read_message(text)
    return clauses[0].whose if clauses else "unknown"


def _same_person(a: str, b: str) -> bool:
    """"她生日是5月21号" is not about "我自己生日是8月3号": the same attribute of the same *thing*
    needs the same person, when both clauses say whose it is."""
    return "unknown" in (a, b) or a == b


def correction_target(correction: Correction, history: list[dict[str, Any]], facts: dict[int, list[Fact]], *,
                      session_id: str | None) -> Target | None:
    """The clause ``correction`` corrects among ``history`` (the scope's live user records, oldest first)."""
    if correction.wrong_value:
        return _named(correction.wrong_value, history)
    new = correction.new_value
    return (_same_attribute(new, history, facts) or _same_thing(new, history)
            or _bare(new, history, facts, session_id))


def _named(wrong: str, history: list[dict[str, Any]]) -> Target | None:
    needle = wrong.casefold()
    for record in reversed(history):
        for start, end, text in _clauses(record):
            if needle in text.casefold():
                return Target(record["record_id"], (start, end), "named_value")
    return None


def _same_attribute(new: str, history: list[dict[str, Any]], facts: dict[int, list[Fact]]) -> Target | None:
    claims = extract_claims(new) or extract_claims("我" + new if not new.isascii() else "I " + new)
    # subtle: only an attribute with one value is contradicted by a new value; allergies, likes and
    # diets accumulate ("我自己是对猕猴桃过敏" says nothing against an earlier peanut allergy).
    keys = {c.key for c in claims} & SINGLE_VALUED_KEYS
    for record in reversed(history):
        for fact in facts.get(record["record_id"], []):
            if fact.key in keys and fact.status != "superseded":
                return clause_of(record, fact.value, "same_attribute")
    return None


def _same_thing(new: str, history: list[dict[str, Any]]) -> Target | None:
    topic = _terms(new)
    if not topic:
        return None
    kinds, speaker = value_kinds(new), _speaker(new)
    best: tuple[float, int, Target] | None = None
    for order, record in enumerate(history):
        for start, end, text in _clauses(record):
            share = len(topic & _terms(text)) / len(topic)
            if share < _MIN_SHARE or (kinds and not kinds & value_kinds(text)) or not _same_person(speaker, _speaker(text)):
                continue
            candidate = (share, order, Target(record["record_id"], (start, end), "same_thing"))
            if best is None or candidate[:2] >= best[:2]:
                best = candidate
    return best[2] if best else None


def _bare(new: str, history: list[dict[str, Any]], facts: dict[int, list[Fact]], session_id: str | None) -> Target | None:
    if _terms(new) - _terms_of_values(new):
        return None  # it names a thing that nothing in the history talks about: no credible target
    if extract_claims(new):
        return None  # a whole statement of its own ("不对，我还对头孢过敏"), not a bare value
    recent = [r for r in history if r.get("session_id") == session_id][-RECENT:]
    kinds = value_kinds(new)
    if not kinds:
        spelled = _spelling(new, recent)  # "写错了，是张玮" after "我房东叫张伟": one letter off
        if spelled is not None:
            return spelled
        for record in reversed(recent):
            if facts.get(record["record_id"]):
                return clause_of(record, facts[record["record_id"]][-1].value, "bare_value")
        return None
    # A bare value names no thing, so the evidence is in the value itself: the same kind of value
    # (a date for a date — a bare number is the weakest kind), the same person's, a look-alike
    # ("241" for "214"); the latest clause with the most of that evidence wins.
    wanted = kinds & _SPECIFIC or kinds
    speaker, shapes = _speaker(new), _shapes(new)
    best: tuple[tuple[int, int, int], Target] | None = None
    for order, record in enumerate(recent):
        for start, end, text in _clauses(record):
            whose = _speaker(text)
            if not wanted & value_kinds(text) or not _same_person(speaker, whose):
                continue
            rank = (int(bool(shapes & _shapes(text))), int(speaker != "unknown" and whose == speaker), order)
            if best is None or rank >= best[0]:
                best = (rank, Target(record["record_id"], (start, end), "bare_value"))
    return best[1] if best else None


_SPECIFIC = frozenset({"day", "time", "date"})
_NAME = re.compile(r"[A-Z][A-Za-z'-]{3,29}|[\u4e00-\u9fff]{2,4}")  # a capitalised word, or a short CJK run


def _spelling(new: str, recent: list[dict[str, Any]]) -> Target | None:
    """The latest clause holding a look-alike of the new value: a name spelled one letter off
    ("Kowalsky" for "Kowalski", "张伟" for "张玮"), two for a long one. Bounded: the few recent
    records, words of at most 30 letters."""
    words = {w for w in _NAME.findall(new[:200]) if len(w) >= 2}
    for record in reversed(recent):
        for start, end, text in _clauses(record):
            # A CJK run has no spaces: every stretch of the new name's length is a candidate.
            olds = set(_NAME.findall(text)) | {text[i:i + len(w)] for w in words if not w.isascii()
                                                for i in range(max(0, len(text) - len(w) + 1))}
            if any(_one_off(w, old) for w in words for old in olds):
                return Target(record["record_id"], (start, end), "spelling")
    return None


def _one_off(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` misspelled: a different word of the same script within edit distance
    1 (2 for words of 7 letters or more), and not just a shorter or longer form of it."""
    a, b = a.casefold(), b.casefold()
    if a == b or a.isascii() != b.isascii() or abs(len(a) - len(b)) > 1 or a in b or b in a:
        return False
    if not a.isascii():  # CJK names: the same length, one character different
        return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1
    limit = 2 if min(len(a), len(b)) >= 7 else 1
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1] <= limit
_NUMBER_RUN = re.compile(r"[A-Za-z]{0,3}\d{1,12}")


def _shapes(text: str) -> set[tuple[int, int]]:
    """The shapes of the numbers in ``text`` (letters before, digits): "room 241" and "214" share
    (0, 3) — a misread or mistyped value keeps its shape."""
    return {(sum(ch.isalpha() for ch in m), sum(ch.isdigit() for ch in m)) for m in _NUMBER_RUN.findall(text[:2000])}


def _terms_of_values(new: str) -> set[str]:
    """A bare value's own words ("Mac", "一加手机") are not a thing to look for: short values are bare.
    A value with a subject before a copula ("体检是周五", "the gate is B12") names its thing: not bare."""
    if _SUBJECT_COPULA.search(new[:200]):
        return set()
    return _terms(new) if len(new) <= 20 and len(_terms(new)) <= 2 else set()


_SUBJECT_COPULA = re.compile(r"[\u4e00-\u9fff]{2,8}\s{0,3}(?:是|在|改到|改成|定在)|[A-Za-z]{2,20}\s{1,3}(?:is|are|was|moved\s{1,3}to)\s", re.I)


def retraction_target(value: str, history: list[dict[str, Any]]) -> Target | None:
    """The sentence an update ends when it names the old value ("我已经不在腾讯了", "cancelled Planet
    Fitness", "switched from Android"): the latest of the user's live statements that names it —
    the whole sentence, since all of it described what is gone ("家里养了一只金毛，叫豆豆").
    Searches the latest ``RETRACTION_HORIZON`` statements, newest first."""
    needle = value.casefold()
    if len(needle) < 2:
        return None
    # A value of two words or more is also found by its words, in any order and form: "gave up the
    # Sunday tennis" ends "Sundays are my tennis mornings", "周三的游泳取消了" ends "每周三晚上去游泳".
    # (One word is found as it was written.)
    words = _Words(value)
    # Bounded: the latest RETRACTION_HORIZON statements, and only those holding the value are read.
    for record in reversed(history[-RETRACTION_HORIZON:]):
        content = record["content"]
        verbatim = needle in content.casefold()
        if not verbatim and not words.in_(content):
            continue
        clauses = read_message(content)
        for clause in clauses:
            holds = needle in clause.text.casefold() if verbatim else words.in_(clause.text)  # one clause says it all
            if holds and clause.act == "statement" and clause.whose != "other":
                same = [c for c in clauses if c.sentence == clause.sentence]
                return Target(record["record_id"], (same[0].start, same[-1].end), "named_old_value")
    return None


class _Words:
    """A value's words: its stems (days and times kept), and its Chinese pieces between particles
    ("周三的游泳": 周三, 游泳). ``in_(text)`` says whether a text holds them all; a value of fewer
    than two holds nothing this way."""

    def __init__(self, value: str) -> None:
        self.stems = frozenset(t for t in analyze(value[:200]) if t.isascii())
        self.pieces = [p for p in _PARTICLES.split(value[:200]) if len(p) >= 2]

    def in_(self, text: str) -> bool:
        if len(self.stems) + len(self.pieces) < 2:
            return False
        text = text[:2000]
        if not all(piece in text for piece in self.pieces):
            return False
        low = text.casefold()  # a stem's first letters are in the word it came from: most texts stop here, unanalysed
        return not self.stems or (all(stem[:3] in low for stem in self.stems) and self.stems <= frozenset(analyze(text)))


_PARTICLES = re.compile(r"[^\u4e00-\u9fff]+|的|之|那个|这个|那|这")


_CHANGE = re.compile(r"升(?:到|上|入|了)?|换成|改成|变成|转到|转学|现在|已经|\b(?:now|moved\s+up|switched|started|is\s+starting|anymore)\b", re.I)
_PERSON_KINDS = frozenset({"grade", "date", "day", "time"})


def person_update_targets(text: str, history: list[dict[str, Any]]) -> list[Target]:
    """Updates about one of the user's people ("我儿子升初三了" after "我儿子在读初二", "my daughter
    is in grade 5 now"): a clause that opens with the person, says it changed, and holds a value
    of a definite kind (a grade, a day, a time, a date) supersedes that person's latest earlier
    clause holding a value of that kind — when the value differs. Bounded like a retraction."""
    targets: list[Target] = []
    if not may_update_person(text):
        return targets
    for clause in read_message(text):
        person = person_of(clause.core)
        kinds = value_kinds(clause.core) & _PERSON_KINDS
        if person is None or not kinds or clause.act != "statement" or not _CHANGE.search(clause.core):
            continue
        found = _person_clause(person, kinds, clause.core, history)
        if found is not None and found not in targets:
            targets.append(found)
    return targets


def may_update_person(text: str) -> bool:
    """One cheap pass before any history is read: a change word and a value of a definite kind.
    Most messages have neither, so an ordinary write never reads the user's history for this."""
    return bool(_CHANGE.search(text)) and bool(value_kinds(text) & _PERSON_KINDS)


def _person_clause(person: str, kinds: set[str], said: str, history: list[dict[str, Any]]) -> Target | None:
    for record in reversed(history[-RETRACTION_HORIZON:]):
        if person not in record["content"].casefold():
            continue
        for clause in read_message(record["content"]):
            if (person_of(clause.core) == person and kinds & value_kinds(clause.core)
                    and kind_values(clause.core, kinds) != kind_values(said, kinds)):
                return Target(record["record_id"], (clause.start, clause.end), "same_person_attribute")
    return None


def clause_of(record: dict[str, Any], value: str, how: str) -> Target:
    needle = value.casefold()
    for start, end, text in _clauses(record):
        if needle in text.casefold():
            return Target(record["record_id"], (start, end), how)
    return Target(record["record_id"], (0, len(record["content"])), how)


# -- updates ---------------------------------------------------------------------------------------
def resolve_key(claim: Claim, live: Iterable[Fact], message: str) -> str:
    """The attribute of an update whose verb does not say ("不在腾讯了" — an employer or a city?):
    the attribute the user gave the old value before; else from the words around it."""
    named = {claim.old, claim.value} - {None}
    for fact in live:
        if fact.value in named and fact.key:
            return fact.key
    if claim.key == "switch?":
        return "device"
    if claim.key == "place?":
        return "employer" if any(word in message.casefold() for word in _WORK) else "location"
    return claim.key


def update_facts(claim: Claim, live: Iterable[Fact], single_valued: frozenset[str]) -> list[Fact]:
    """The live facts an update replaces: the named old value of that attribute, or (for an
    attribute with one value, like a device or a city) every other value of it."""
    replaced = []
    for fact in live:
        if fact.key != claim.key or fact.status == "superseded":
            continue
        if claim.old is not None and (fact.value.casefold() == claim.old.casefold()
                                      or (claim.old == "vegetarian" and VEGETARIAN.search(fact.value))):
            replaced.append(fact)
        elif claim.polarity < 0 and fact.value.casefold() == claim.value.casefold() and fact.polarity > 0:
            replaced.append(fact)  # "I don't live in Hangzhou anymore"
        elif claim.polarity > 0 and claim.key in single_valued and fact.value != claim.value:
            replaced.append(fact)
    return replaced
