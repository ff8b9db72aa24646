"""Answered questions: once the user states the answer, their question is no longer memory.

A question is not evidence ("does my lease end in July?" says nothing about the lease), and a
guess inside it ("is it the 9th?") reads like a fact to a model. While nothing answers it, the
question is all the memory holds of its thing and stays, in every track. Once the user states
something about the same thing ("checked, lease ends Sept 30"), the statement is the memory: the
question clauses that share its words are superseded by it (``Resolver.answered``), so they leave
the window, the summary and long-term memory together, and a read that still matches the
question's words recalls the statement instead (``Governor._recall_corrections``).

What counts, strictly in the user's own words:

    the question    a clause the segmenter reads as a question (``text/segmenter.py``), in an
                    earlier message of the user still in the recent window of the same session
                    and task — the conversation the answer belongs to, so a write costs the same
                    however long the history — and stored with ``asks`` (the write marks each
                    message that asks; messages stored before this release carry no mark); the
                    rest of that message stays as it was ("… I can't remember" is kept)
    the answer      a statement clause of the new message (not a question, request, hypothesis
                    or someone's report): a message that asks as well answers nothing
    the same thing  the question's *thing* — its content words (stems, CJK bigrams; no stop
                    words or function bigrams) without the values it guesses (numbers, days,
                    months, times: "Monday", "七月", "9th") — shares at least ``MIN_SHARED`` (2)
                    words with the answer, or all of them: "is Aunt Rosa still in Tucson" is
                    answered by "Aunt Rosa moved to Albuquerque", "is the dentist on Monday?" by
                    "the dentist is Wednesday"; "what do I get a coworker who's leaving" is not
                    answered by "a coworker brought durian in today", which shares one of its
                    three words. In the user's very next turn of the conversation one shared word
                    is enough when the answer gives a when of a kind the question guessed: "does
                    my lease end in June?" — "checked, it ends August 31" (its "it" is the thing)

    >>> [c.core for c in question_clauses("does my lease end in July? I can't remember")]
    ['does my lease end in July']
    >>> sorted(answer_terms("checked, lease ends Sept 30"))
    ['check', 'end', 'leas', 'sept']
    >>> answer_terms("is the lease ending in July?")
    frozenset()
"""
from __future__ import annotations

import re

from ..text.analyzer import FUNCTION_BIGRAMS, analyze
from ..text.segmenter import Clause, read_message
from .corrections import value_kinds

__all__ = ["question_clauses", "answer_terms", "asked_about", "guessed_kinds", "shared_terms", "MIN_SHARED"]

MIN_SHARED = 2  # content words a question and its answer share at least


# Words that say when, which a question guesses and its answer replaces: not what it is about.
_WHEN_WORDS = frozenset(analyze("""monday tuesday wednesday thursday friday saturday sunday january february march
april june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec today
tonight tomorrow yesterday morning afternoon evening noon midnight week weekend month year am pm"""))
_VALUE_ZH = re.compile(r"[\d一二三四五六七八九十两半]|星期|今天|明天|后天|昨天|上午|下午|晚上|早上|中午")


def _content(text: str) -> frozenset[str]:
    return frozenset(t for t in analyze(text) if not t.isdigit()) - FUNCTION_BIGRAMS


def _thing(text: str) -> frozenset[str]:
    """A question's content words without the values it guesses."""
    return frozenset(t for t in _content(text) if t not in _WHEN_WORDS and not _VALUE_ZH.search(t)
                     and not any(ch.isdigit() for ch in t))


def question_clauses(text: str) -> list[Clause]:
    """The clauses of ``text`` that ask."""
    return [clause for clause in read_message(text) if clause.act == "question"]


def answer_terms(text: str) -> frozenset[str]:
    """The content words of ``text``'s statements, or none when it asks, requests or supposes
    anything (a message that asks back answers nothing), or gives no value — a number, a day, a
    date, a time, a name ("my sister is training to be a dentist" answers no "is the dentist on
    Monday?"; "the dentist is Wednesday" does)."""
    clauses = read_message(text)
    if any(clause.act in ("question", "request", "conditional") for clause in clauses):
        return frozenset()
    statements = [c.core for c in clauses if c.act == "statement"]
    if not any(value_kinds(core) or _NAME.search(core) for core in statements):
        return frozenset()
    return frozenset().union(*(_content(core) for core in statements))


# A name inside a sentence ("moved to Albuquerque", "went with RabbitMQ"): a capital after its first word.
_NAME = re.compile(r"(?<=[\w,]\s)[A-Z][\w-]{1,40}")


def asked_about(questions: list[Clause], answer: frozenset[str], *, next_turn: bool = False,
                answer_text: str = "") -> list[Clause]:
    """The question clauses an answer takes out: those about its thing, and with them those of
    the same message that name no thing of their own or point back at it ("…, is it the 9th?",
    "… was it like $90?" ask about the thing before them); another question beside them ("… and
    what should I cook for the kids?") stays. ``next_turn``: the answer (``answer_text``) is the
    user's very next turn after the questions, in the same conversation, where one shared word is
    enough when the answer gives a when of a kind the question guessed ("does my lease end in
    June?" — "checked, it ends August 31"; not "I went to the gym 3 times" for "does the gym open
    at 6 on Sundays?")."""
    def about(q: Clause) -> frozenset[str]:
        return shared_terms(q, answer, least=1 if next_turn and guessed_kinds(q.core) & said else MIN_SHARED)

    said = guessed_kinds(answer_text) if next_turn else frozenset()

    if not any(about(q) for q in questions):
        return []
    return [q for q in questions if about(q) or not _thing(q.core) or _POINTS_BACK.search(q.core)]


def guessed_kinds(text: str) -> frozenset[str]:
    """The kinds of when a question guesses (a time, a day, a date: "…in June?", "是不是6月到期",
    "是不是下周二"), which its answer replaces; a bare number is no kind here ("3 times")."""
    kinds = set(value_kinds(text)) - {"number"}
    if _MONTH.search(text):
        kinds.add("date")
    return frozenset(kinds)


_MONTH = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                    r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b|(?<![上下本这])(?:\d{1,2}|[一二三四五六七八九十]{1,2})月", re.I)


_POINTS_BACK = re.compile(r"\b(?:it|that|this|they|them|he|she)\b|它|这个|那个|他|她", re.I)


def shared_terms(question: Clause, answer: frozenset[str], least: int = MIN_SHARED) -> frozenset[str]:
    """The words of a question clause's thing an answer shares, when they say both are about one
    thing (``least`` of them, or all); else none."""
    thing = _thing(question.core)
    shared = thing & answer
    return shared if shared and (len(shared) >= least or shared == thing) else frozenset()
