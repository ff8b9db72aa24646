"""A decision settles what was only being considered (issue 19): the user's previous turn that
weighed an option leaves the contexts once the user says what they chose — one turn back, the
same session, only the sentences that weighed it. The sentences are this file's own."""
from __future__ import annotations

from v2_memory import MemoryManager, Message


def _memory() -> MemoryManager:
    return MemoryManager(store_path=None, window_size=4)


def test_a_decision_supersedes_the_option_considered_just_before():
    memory = _memory()
    memory.add(Message("user", "I'm thinking of maybe a standing desk from Ikea. My back hurts a lot", "u", session_id="s"))
    memory.add(Message("assistant", "A standing desk can help.", "u", session_id="s"))
    result = memory.add(Message("user", "ok, went with a kneeling chair instead, cheaper", "u", session_id="s"))
    assert result.supersedes
    context = memory.build_context("what did I get for my back?", "u", session_id="s", top_k=5)
    assert "Ikea" not in context and "kneeling chair" in context and "My back hurts" in context


def test_a_chinese_decision():
    memory = _memory()
    memory.add(Message("user", "在纠结报日语班还是韩语班", "u"))
    assert memory.add(Message("user", "最后决定报韩语，周末上课", "u")).supersedes
    context = memory.build_context("我报了什么班？", "u", top_k=5)
    assert "纠结" not in context and "韩语" in context


def test_what_a_decision_does_not_settle():
    memory = _memory()
    memory.add(Message("user", "thinking of maybe a standing desk", "u", session_id="a"))
    assert not memory.add(Message("user", "decided on the red kettle", "u", session_id="b")).supersedes  # another session
    memory.add(Message("user", "my desk is a standing one", "u", session_id="b"))
    assert not memory.add(Message("user", "we went with pizza tonight", "u", session_id="b")).supersedes  # nothing weighed
    memory.add(Message("user", "considering a trip to Porto", "u", session_id="b"))
    assert not memory.add(Message("user", "my sister decided on Lisbon", "u", session_id="b")).supersedes  # not the user's choice


def test_a_question_that_weighs_an_option_and_a_team_decision():
    memory = _memory()
    memory.add(Message("user", "should we use Postgres for the audit trail?", "u", task_id="t"))
    assert memory.add(Message("user", "team decided: append-only files for now", "u", task_id="t")).supersedes
    assert "Postgres" not in memory.build_context("what do we use for the audit trail?", "u", task_id="t", top_k=5)


def test_what_is_no_decision_and_no_weighing():
    from v2_memory.governance.decisions import considering, decided

    for text in ["I picked up the kids at four", "still haven't decided", "还没定下来", "my boss chose the venue"]:
        assert not decided(text), text
    for text in ["I might be late tonight", "maybe it rains", "我考虑到你的时间了吗"]:
        assert not considering(text) or text.endswith("吗"), text


def test_a_decision_in_a_later_chat_settles_the_weighing_it_shares_a_word_with():
    memory = _memory()
    memory.add(Message("user", "is it crazy to sell the camper van? we barely use it", "u", session_id="a"))
    memory.end_session("u", "a")
    result = memory.add(Message("user", "ok decision made: we're keeping the camper van, summer trip is on", "u", session_id="b"))
    assert result.supersedes and "decision" in result.reasons
    assert "crazy to sell" not in memory.build_context("what are we doing with the camper van?", "u", session_id="b", top_k=5)


def test_deciding_against_in_chinese():
    memory = _memory()
    memory.add(Message("user", "要不要把这台旧电脑卖了换个新的", "u"))
    assert memory.add(Message("user", "先不换了，这台还能用两年", "u")).supersedes
