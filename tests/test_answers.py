"""A question the user answers later is no longer memory (issue 19, class 7: questions are not evidence).

Written in this project's own words; the held-out sets use others.
"""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance.answers import answer_terms, question_clauses, shared_terms


@pytest.fixture
def memory(clock):
    with MemoryManager(store_path=None, clock=clock) as manager:
        yield manager


def test_the_answer_supersedes_the_question_in_every_track(tmp_path, clock):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path, clock=clock, window_size=6) as memory:
        asked = memory.add(Message("user", "is the dentist on Monday? I keep forgetting")).record_id
        memory.add(Message("assistant", "I don't have that. Your confirmation email would say."))
        result = memory.add(Message("user", "found the email: the dentist is Wednesday at 10:15"))
        assert asked in result.supersedes and "answered_question" in result.reasons
        context = memory.build_context("when is the dentist?")
        assert "Wednesday at 10:15" in context and "Monday" not in context  # the window too
        assert "I keep forgetting" in memory.retrieve("I keep forgetting")[0].record["content"]  # the rest is kept
    clock.advance(days=9)
    with MemoryManager(store_path=path, clock=clock, window_size=1) as memory:
        memory.add(Message("user", "unrelated: the printer needs toner"))
        memory.add(Message("user", "and the cat food is running low"))
        later = memory.build_context("is the dentist on Monday?")  # the question's own words
        assert "Wednesday at 10:15" in later and "Monday?" not in later  # the answer is recalled instead


def test_a_chinese_answer_days_later_takes_the_question_out(memory, clock):
    asked = memory.add(Message("user", "我的护照是不是明年三月过期？")).record_id
    clock.advance(days=3)
    result = memory.add(Message("user", "翻了一下，护照2027年8月过期"))
    assert asked in result.supersedes
    context = memory.build_context("护照什么时候过期")
    assert "2027年8月" in context and "三月" not in context


def test_one_shared_word_is_not_the_same_thing(memory):
    asked = memory.add(Message("user", "what should I cook for my neighbour's birthday?")).record_id
    result = memory.add(Message("user", "my neighbour parks in my spot again"))
    assert asked not in result.supersedes
    assert "birthday" in memory.build_context("cooking for my neighbour's birthday")


def test_a_message_that_asks_back_answers_nothing(memory):
    asked = memory.add(Message("user", "is the gym open on Sunday?")).record_id
    result = memory.add(Message("user", "the gym opens at 8 on Sunday, or is it 9?"))
    assert asked not in result.supersedes and "answered_question" not in result.reasons


def test_only_the_users_own_earlier_questions_are_answered(memory):
    theirs = memory.add(Message("user", "does the library close at 6 on Fridays?", "bob")).record_id
    mine = memory.add(Message("user", "the library closes at 8 on Fridays", "ann"))
    assert theirs not in mine.supersedes
    assert "close at 6" in memory.build_context("library Friday hours", "bob")


def test_a_question_in_another_task_stays_with_its_task(memory):
    memory.start_task("default", "trip")
    asked = memory.add(Message("user", "is the ferry to the island at 7?", task_id="trip")).record_id
    result = memory.add(Message("user", "the ferry to the island leaves at 7:40"))  # no task: not the trip's
    assert asked not in result.supersedes


def test_the_reading_in_pieces():
    assert [c.core for c in question_clauses("did I renew the car insurance? no idea")] == ["did I renew the car insurance"]
    assert answer_terms("would you book it?") == frozenset() and answer_terms("if it rains, the picnic moves") == frozenset()
    asked = question_clauses("when does the car insurance renew?")[0]
    assert shared_terms(asked, answer_terms("car insurance renews on May 3")) >= {"car", "insur"}
    assert shared_terms(asked, answer_terms("the car is at the garage")) == frozenset()  # one word: not enough


@pytest.mark.parametrize("question, statement", [
    ("is the dentist on Monday?", "my sister is training to be a dentist"),   # the thing, but no value
    ("can my cat eat tuna?", "my cat loves tuna"),
    ("家长会是五点还是六点？", "家长会真无聊"),
])
def test_a_statement_that_gives_no_value_answers_nothing(memory, question, statement):
    asked = memory.add(Message("user", question)).record_id
    assert asked not in memory.add(Message("user", statement)).supersedes


def test_another_question_beside_the_answered_one_stays(memory):
    asked = memory.add(Message("user", "is the dentist on Monday? and what should I cook for the kids?")).record_id
    result = memory.add(Message("user", "the dentist is Wednesday at 10"))
    assert asked in result.supersedes
    assert "cook for the kids" in memory.build_context("what should I cook for the kids?")
    assert not any(r["content"].startswith("?") for r in memory.store.all_records())  # no stray "?" left


@pytest.mark.parametrize("question, answer, asked_again", [
    ("does my passport expire in March? pretty sure it does", "looked it up, it expires October 12", "when does my passport expire?"),
    ("体检是不是下周二？我记不清了", "问过了，体检在周四上午", "体检哪天"),
])
def test_the_next_turn_answers_a_guess_with_one_shared_word(memory, question, answer, asked_again):
    asked = memory.add(Message("user", question)).record_id
    memory.add(Message("assistant", "I can't see that from here; worth checking."))
    result = memory.add(Message("user", answer))  # the user's very next turn: "it" is the question's thing
    assert asked in result.supersedes and "answered_question" in result.reasons
    context = memory.build_context(asked_again)
    assert ("March" not in context and "October 12" in context) or ("下周二" not in context and "周四上午" in context)


def test_one_shared_word_answers_only_the_turn_right_before(memory):
    asked = memory.add(Message("user", "does my passport expire in March?")).record_id
    memory.add(Message("user", "also the kitchen tap drips"))
    result = memory.add(Message("user", "looked it up, it expires October 12"))  # a turn between: two words needed
    assert asked not in result.supersedes


@pytest.mark.parametrize("question, statement", [
    ("does the gym open at 6 on Sundays?", "I went to the gym 3 times this week"),   # no when of the kind guessed
    ("is my flight to Denver at 7am tomorrow?", "my flight last month was delayed 3 hours"),
    ("是不是周五交房租？", "上个月房租涨了200块"),
])
def test_one_shared_word_needs_a_when_of_the_kind_the_question_guessed(memory, question, statement):
    asked = memory.add(Message("user", question)).record_id
    memory.add(Message("assistant", "Not sure, worth checking."))
    assert asked not in memory.add(Message("user", statement)).supersedes


def test_one_shared_word_answers_only_within_the_conversation(memory, clock):
    asked = memory.add(Message("user", "does my passport expire in March?")).record_id
    clock.advance(days=3)
    assert asked not in memory.add(Message("user", "looked it up, it expires October 12")).supersedes
