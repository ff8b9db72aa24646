"""Scope by speech and the task boundary on every track (issue 19, class 4). The sentences are this
file's own, not the held-out scenarios'."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance.scope import spoken_scope


@pytest.mark.parametrize("text, scope", [
    ("during this call please use metric units", "session"),
    ("for the rest of our conversation, call me Captain", "session"),
    ("tonight only: I'm at my parents', so suggest things near Leeds", "session"),
    ("I'm at the gym right now so keep answers to one line", "session"),
    ("本次会话里都用繁体字回答", "session"),
    ("我正在开车，回答简短点", "session"),
    ("within this task assume the launch slips to May", "task"),
    ("这个项目里变量名都用驼峰", "task"),
    ("answer in bullet points today, I'm reading on a tiny screen", "session"),
    ("ok, speak like a sommelier tonight", "session"),
    ("I need to write two reports today", None),
    ("make sure the invoice goes out today", None),
    ("I moved to Valencia now", None),
    ("I'm vegetarian", None),
    ("我现在住在成都", None),
    ("the session musicians were great", None),
])
def test_the_scope_a_user_says(text, scope):
    assert spoken_scope(text) == scope


def _memory() -> MemoryManager:
    return MemoryManager(store_path=None, window_size=2)


def test_a_session_scoped_instruction_leaves_with_its_session():
    memory = _memory()
    memory.add(Message("user", "during this call please use metric units", "u", session_id="mon"))
    memory.add(Message("user", "I'm training for a half marathon in June", "u", session_id="mon"))
    for n in range(3):
        memory.add(Message("user", f"filler question {n} about stretching", "u", session_id="mon"))
    memory.end_session("u", "mon")
    context = memory.build_context("plan my training week", "u", session_id="tue")
    assert "metric units" not in context
    assert "half marathon" in memory.build_context("when is my half marathon?", "u", session_id="tue")


def test_a_lasting_statement_is_not_scoped_by_now():
    memory = _memory()
    result = memory.add(Message("user", "I moved to Valencia now", "u", session_id="s1"))
    assert not any(r.startswith("scoped_by_speech") for r in result.reasons)
    memory.end_session("u", "s1")
    assert "Valencia" in memory.build_context("where do I live? Valencia?", "u", session_id="s2")


def test_another_task_never_sees_a_tasks_messages_on_any_track():
    memory = _memory()
    memory.start_task("u", "budget")
    memory.start_task("u", "essay")
    memory.add(Message("user", "assume the marketing budget is 48k", "u", task_id="budget"))
    for n in range(3):  # push it out of the window into the summary
        memory.add(Message("user", f"budget line {n} is travel", "u", task_id="budget"))
    memory.add(Message("user", "the essay is about river ecology", "u", task_id="essay"))
    in_essay = memory.build_context("what is the marketing budget? 48k?", "u", task_id="essay")
    assert "48k" not in in_essay and "budget line" not in in_essay
    in_budget = memory.build_context("what is the marketing budget?", "u", task_id="budget", top_k=5)
    assert "48k" in in_budget
    assert "48k" in memory.build_context("what is the marketing budget?", "u", top_k=5)  # no task: not another task


def test_a_finished_tasks_messages_leave_the_next_tasks_summary():
    memory = _memory()
    memory.start_task("u", "taxes")
    memory.add(Message("user", "my deductible expenses came to 7,300", "u", task_id="taxes"))
    for n in range(3):
        memory.add(Message("user", f"receipt {n} scanned", "u", task_id="taxes"))
    memory.finish_task("u", "taxes")
    memory.start_task("u", "trip")
    memory.add(Message("user", "plan a weekend in Porto", "u", task_id="trip"))
    context = memory.build_context("what should I pack for the weekend?", "u", task_id="trip")
    assert "7,300" not in context and "receipt" not in context
    assert memory.explain("deductible expenses", "u", task_id="trip").admitted == []


def test_a_caller_set_domain_wins_over_speech():
    memory = _memory()
    result = memory.add(Message("user", "for this chat only, I'm left-handed", "u", session_id="s", domain="persona"))
    assert not any(r.startswith("scoped_by_speech") for r in result.reasons)


def test_a_fact_about_the_user_said_inside_a_task_is_the_users():
    memory = MemoryManager(store_path=None, window_size=4)
    memory.start_task("u", "menu")
    memory.add(Message("user", "I'm allergic to walnuts", "u", task_id="menu"))
    assert "walnuts" in memory.build_context("any snack ideas without walnuts", "u", task_id="party", top_k=5)


@pytest.mark.parametrize("text, lasting", [
    ("oh and I can't have shellfish, that's for always, not just this menu", True),
    ("keep the code comments in English in all my projects", True),
    ("不只是这个任务，以后写代码都用英文注释", True),
    ("所有任务里都别用缩写", True),
    ("for this menu skip the shellfish", False),
    ("这个任务里注释都用英文", False),
    ("the soup was not bad at all", False),
    ("a good idea for all recipes", False),            # says something of recipes, not of where it holds
    ("I quit for good reason", False),
    ("哪个项目先做比较好", False),                      # a question about projects, not where it holds
])
def test_a_message_said_to_hold_beyond_its_task(text, lasting):
    from v2_memory.governance.scope import spoken_lasting
    assert spoken_lasting(text) is lasting


def test_what_is_said_to_hold_beyond_the_task_reaches_the_next_task_and_the_rest_stays():
    memory = MemoryManager(store_path=None, window_size=2)
    memory.start_task("u", "menu")
    memory.add(Message("user", "for this menu use cups, my scale is broken", "u", task_id="menu"))
    lasting = memory.add(Message("user", "btw no sesame for me, that's for always, not just this menu", "u", task_id="menu"))
    memory.add(Message("user", "ok let's do a thai curry", "u", task_id="menu"))
    memory.finish_task("u", "menu")
    assert "lasting_by_speech" in lasting.reasons
    context = memory.build_context("plan a snack platter for the party", "u", task_id="party", top_k=5)
    assert "sesame" in context and "cups" not in context and "thai curry" not in context
