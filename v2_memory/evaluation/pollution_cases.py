"""The pollution benchmark's labelled scenarios, written for this project (Chinese, English, mixed).

Each kind of pollution has one template — a little history with a fixed shape — filled with
several sets of slot values, so every scenario is a coherent story of its own. The templates are
the code below; the slot values are data, in ``cases/pollution_scope.json`` (one list of cases per
kind: ``{"name", "lang", "slots"}``). This module holds the kinds about *who and where* a memory
may be read (noise, other users, erasure, wrong session or task); ``pollution_cases_meaning.py``
holds the kinds about *what a memory means* (corrections, negations, model output, look-alike
identifiers). ``SCENARIOS`` is all of them, in kind order.

How to read a template: ``say`` writes a user message and returns its key, ``reply`` writes the
model's, ``do`` is an action, ``ask`` a labelled query (``should`` = what the context needs;
``related`` = harmless). Everything else a query must not see is derived from the script
(``pollution_script.labels``).

Queries share words with the memory they need, because the article's similarity is lexical and
this benchmark measures governance, not the embedding — except where that is the point: a terse
correction ("不是周三，是周四") names no subject, so only a governor that follows the correction
can bring it to a question about the dentist.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .pollution_cases_meaning import MEANING_SCENARIOS
from .pollution_script import KINDS, Scenario, Script, Template, load_scenarios

__all__ = ["CASES", "TEMPLATES", "SCOPE_SCENARIOS", "SCENARIOS"]

CASES = Path(__file__).with_name("cases") / "pollution_scope.json"


# -- noise: one topic that matters, amid chatter; and questions about things never said ----------
def _noise(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "noise", lang), d["user"]
    facts, chats = [], []
    for index, ((fact, _), (chat, _)) in enumerate(zip(d["facts"], d["chatter"])):
        facts.append(s.say(user, fact))
        chats.append(s.say(user, chat))
        if index == 0:
            s.say(user, d["fillers"][0])
            s.reply(user, d["echo"])  # the model repeats the first fact: unverified
    s.say(d["peer"], d["peer_note"])  # another user, same topic
    s.say(user, d["fillers"][1])
    for index, (_, question) in enumerate(d["facts"]):
        s.ask(user, question, should=facts[index], related=tuple(f for f in facts if f != facts[index]))
    for index, (_, question) in enumerate(d["chatter"]):
        s.ask(user, question, should=chats[index])
    for question in d["unasked"]:
        s.ask(user, question)  # never talked about: nothing should enter
    return s.build()



# -- other users and tenants: the same kind of fact, said by different people -------------------
def _other_users(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s = Script(name, "other_user", lang)
    people = d["people"]  # [(user, tenant, first statement, second statement)] x 3
    first = [s.say(user, a, tenant=tenant) for user, tenant, a, _ in people]
    second = [s.say(user, b, tenant=tenant) for user, tenant, _, b in people]
    s.reply(people[1][0], d["echo"], tenant=people[1][1])
    quiet_user, quiet_tenant = d["quiet"]
    s.say(quiet_user, d["quiet_note"], tenant=quiet_tenant)
    question_a, question_b = d["questions"]
    for (user, tenant, _, _), key in zip(people, first):
        s.ask(user, question_a, should=key, tenant=tenant)
    for (user, tenant, _, _), key in zip(people, second):
        s.ask(user, question_b, should=key, tenant=tenant)
    s.ask(quiet_user, question_a, tenant=quiet_tenant)  # never said it: only others could answer
    return s.build()



# -- erasure: a user erased (and back again), one memory forgotten, a fact forgotten -----------
def _erasure(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s = Script(name, "erased", lang)
    (keeper, keeper_tenant), (leaver, leaver_tenant) = d["keeper"], d["leaver"]
    kept = s.say(keeper, d["keep"], tenant=keeper_tenant)
    s.say(leaver, d["leave"][0], tenant=leaver_tenant)
    s.say(leaver, d["leave"][1], tenant=leaver_tenant)
    statement, fact_key, declares = d["leave_fact"]
    s.say(leaver, statement, tenant=leaver_tenant, declares=declares)
    s.do("confirm_fact", leaver, fact_key, tenant=leaver_tenant)
    s.reply(leaver, d["echo"], tenant=leaver_tenant)
    statement, keeper_key, keeper_declares = d["keep_fact"]
    keeper_fact = s.say(keeper, statement, tenant=keeper_tenant, declares=keeper_declares)
    s.do("confirm_fact", keeper, keeper_key, tenant=keeper_tenant)
    forgotten = s.say(keeper, d["forget"][0], tenant=keeper_tenant)
    request = s.say(keeper, d["forget"][1], tenant=keeper_tenant)  # "delete what I just said"
    s.do("forget", keeper, forgotten, tenant=keeper_tenant)
    s.do("erase_user", leaver, tenant=leaver_tenant)
    back = s.say(leaver, d["comeback"], tenant=leaver_tenant)  # the same id, starting afresh
    for question in d["leaver_questions"]:
        s.ask(leaver, question, tenant=leaver_tenant)  # nothing of before may answer
    s.ask(leaver, d["comeback_question"], should=back, tenant=leaver_tenant)
    s.ask(keeper, d["keep_question"], should=kept, tenant=keeper_tenant)
    s.ask(keeper, d["forget_question"], related=request, tenant=keeper_tenant)
    s.ask(keeper, d["keep_fact_question"], should=f"fact:{keeper_declares}|{keeper_fact}", tenant=keeper_tenant)
    return s.build()



# -- wrong session or task: an ended (or idle) session, two tasks side by side --------------------
def _scopes(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "wrong_scope", lang), d["user"]
    task_a, task_b = d["tasks"]
    s.do("start_task", user, task_a)
    s.do("start_task", user, task_b)
    for text in d["old_session"]:
        s.say(user, text, session="s-old", domain="session")
    if d["ends"] == "end_session":
        s.do("end_session", user, "s-old")
    else:
        s.wait(45)  # the user walks away: the session idles past its 30-minute TTL
    durable = s.say(user, d["durable"])  # ordinary memory: any session may use it
    new = s.say(user, d["new_session"], session="s-new", domain="session")
    peer, note = d["peer"]
    s.say(peer, note, session="s-new", domain="session")  # another user, the same session id
    in_a = s.say(user, d["task_notes"][0], task=task_a, domain="task")
    in_b = s.say(user, d["task_notes"][1], task=task_b, domain="task")
    if d.get("progress"):
        s.do("set_task_progress", user, task_a, amount=d["progress"])
    q = d["questions"]
    s.ask(user, q["new"], should=new, session="s-new")
    s.ask(user, q["old"][0], session="s-new", related=new)
    s.ask(user, q["old"][1], session="s-new")
    s.ask(user, q["durable"], should=durable, session="s-new")
    s.ask(user, q["task_a"], should=in_a, task=task_a, session="s-new")
    s.ask(user, q["task_b"], should=in_b, task=task_b, session="s-new")
    s.ask(user, q["task_b_from_a"], task=task_a, session="s-new")
    s.ask(user, q["no_session"], related=durable)  # outside every session: no session memory
    return s.build()


# kind -> the template its cases fill, in the order the scenarios are built
TEMPLATES: dict[str, Template] = {"noise": _noise, "other_user": _other_users, "erased": _erasure,
                                  "wrong_scope": _scopes}
SCOPE_SCENARIOS = load_scenarios(CASES, TEMPLATES)
SCENARIOS: tuple[Scenario, ...] = tuple(sorted(SCOPE_SCENARIOS + MEANING_SCENARIOS, key=lambda s: list(KINDS).index(s.kind)))
