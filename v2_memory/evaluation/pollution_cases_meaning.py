"""Pollution scenarios about what a memory *means*: corrected facts, negated preferences, the
model's own unverified output, and identifiers that look alike.

The companion of ``pollution_cases.py`` (who and where a memory may be read); same templates-and-
slots shape, same builder: the templates are the code below, the slot values are data in
``cases/pollution_meaning.json``. Corrections come in the forms people use — restating ("更正：…",
"Correction: …"), naming the wrong value ("不是周三，是周四", "Sorry, it's Boulder, not Denver") or
neither ("刚才说错了，应该是 iPhone") — and sometimes after an unrelated message.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .pollution_script import Scenario, Script, Template, load_scenarios

__all__ = ["CASES", "TEMPLATES", "MEANING_SCENARIOS"]

CASES = Path(__file__).with_name("cases") / "pollution_meaning.json"


# -- stale: facts the user corrected -------------------------------------------------------------
def _corrections(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "stale", lang), d["user"]
    (said, old_fact), (fixed, new_fact), key = d["device"]
    device = s.say(user, said, declares=old_fact)
    first = s.say(user, d["first"][0])
    s.reply(user, d["echo"])  # the model repeats the soon-corrected fact: unverified
    device_fix = s.say(user, fixed, corrects=device, declares=new_fact)
    s.do("confirm_fact", user, key)
    first_fix = s.say(user, d["first"][1], corrects=first)
    second = s.say(user, d["second"][0])
    between = s.say(user, d["between"])  # something else, before the correction comes
    second_fix = s.say(user, d["second"][1], corrects=second)
    control = s.say(user, d["control"])
    s.say(*d["peer"])  # another user, the same kind of fact
    q = d["questions"]
    for question in q["device"]:
        s.ask(user, question, should=f"fact:{new_fact}|{device_fix}")
    for question in q["first"]:
        s.ask(user, question, should=first_fix)
    s.ask(user, q["second"], should=second_fix)
    s.ask(user, q["between"], should=between)
    s.ask(user, q["control"], should=control)
    return s.build()



# -- negation: preferences said "no" to, or revoked; and the model recommending them anyway ------
def _negations(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "negation", lang), d["user"]
    (liked, liked_fact), (unliked, unliked_fact) = d["revoked"]
    s.say(user, liked, declares=liked_fact)  # later revoked: its positive form must not come back
    refusal, refusal_fact = d["refusal"]
    refused = s.say(user, refusal, declares=refusal_fact)
    s.do("confirm_fact", user, refusal_fact.split("=")[0])
    push_refused = s.reply(user, d["pushes"][0])  # the model recommends what the user refused
    likes, likes_fact = d["likes"]
    liked_now = s.say(user, likes, declares=likes_fact)
    revoked = s.say(user, unliked, declares=unliked_fact)
    s.do("confirm_fact", user, unliked_fact.split("=")[0])
    push_revoked = s.reply(user, d["pushes"][1])
    pending, pending_fact = d["unconfirmed"]
    unconfirmed = s.say(user, pending, declares=pending_fact)  # said, but not confirmed (yet)
    s.say(user, d["chatter"])
    s.say(*d["peer"])  # another user who likes exactly what this one refused
    q = d["questions"]
    for question in q["refusal"]:
        s.ask(user, question, should=f"fact:{refusal_fact}|{refused}", negation=push_refused)
    for question in q["revoked"]:
        s.ask(user, question, should=f"fact:{unliked_fact}|{revoked}", negation=push_revoked)
    s.ask(user, q["likes"], should=f"fact:{likes_fact}|{liked_now}")
    s.ask(user, q["unconfirmed"], should=f"fact:{pending_fact}|{unconfirmed}")
    return s.build()



# -- unverified: the model's answers, wrong or echoing, next to what users and tools said -------
def _model_output(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "unverified", lang), d["user"]
    asked = s.say(user, d["question"])
    s.reply(user, d["wrong"])  # a confident, wrong answer nobody confirmed
    truth = s.say(user, d["truth"])
    good = s.reply(user, d["good"])
    s.do("verify", user, good)  # the user confirmed this one
    tool = s.say(user, d["tool"], role="tool")
    for _ in range(2):
        s.reply(user, d["echo"])  # the agent describing itself, twice
    s.say(*d["peer"])  # another user on the same topic
    q, topic = d["questions"], (asked, truth, good, tool)  # one conversation, one topic
    for question in q["truth"]:
        s.ask(user, question, should=truth, related=tuple(k for k in topic if k != truth))
    s.ask(user, q["good"], should=good, related=tuple(k for k in topic if k != good))
    s.ask(user, q["tool"], should=tool, related=tuple(k for k in topic if k != tool))
    s.ask(user, q["echo"])  # about the agent itself: nothing said should answer it
    return s.build()



# -- identifiers: CS201 vs CS202, #4521 vs #4512, CA1831 vs CA1813 --------------------------------
def _identifiers(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "identifier", lang), d["user"]
    notes = [s.say(user, note) for note, _ in d["items"]]
    s.reply(user, d["echo"])  # the model mixes two of them up
    s.say(d["peer"], d["peer_note"])  # another user with the same identifier
    for index, (_, questions) in enumerate(d["items"]):
        for question in questions:
            s.ask(user, question, should=notes[index], identifier=tuple(n for n in notes if n != notes[index]))
    s.ask(user, d["missing"], identifier=tuple(notes))  # an identifier nobody mentioned
    return s.build()


# kind -> the template its cases fill, in the order the scenarios are built
TEMPLATES: dict[str, Template] = {"stale": _corrections, "negation": _negations, "unverified": _model_output,
                                  "identifier": _identifiers}
MEANING_SCENARIOS = load_scenarios(CASES, TEMPLATES)
