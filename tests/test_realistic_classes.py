"""Classes of the realistic set fixed as classes (issue 8), each proved on examples of our own.

None of these sentences is from ``cases/realistic_chat.json``: the set is measured, never tuned to.
"""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.tracks.summarizer import ExtractiveSummarizer, Summary, clip


@pytest.fixture
def memory(clock):
    with MemoryManager(threshold=0.2, store_path=None, clock=clock) as manager:
        yield manager


# -- the bounded summary keeps what the story needs ---------------------------------------------
@pytest.mark.parametrize("text, limit, kept", [
    ("we finally booked the cabin at Lake Tahoe for the long weekend", 40, "we finally booked the cabin at Lake…"),
    ("宠物医院换到了滨江那家，周六上午十点带猫去打疫苗", 16, "宠物医院换到了滨江那家…"),
])
def test_a_snippet_is_clipped_at_a_word_or_clause_boundary(text, limit, kept):
    assert clip(text, limit) == kept and len(kept) <= limit


@pytest.mark.parametrize("story, asks", [
    (["My sister's flat is in Leeds", "I drive a grey Skoda", "I teach chemistry"], ["could you find a cheap hotel?", "what's the weather like"]),
    (["我姐住在苏州园区", "我开一辆白色的朗逸", "我在中学教化学"], ["帮我查查明天的天气", "附近有什么好吃的吗？"]),
])
def test_questions_fall_out_of_a_full_summary_before_statements(story, asks):
    """Five messages, room for about three: the two that only ask go, the three statements stay."""
    summarizer = ExtractiveSummarizer(max_chars=max(60, len(" | ".join(f"user: {s}" for s in story)) + 5), snippet_chars=60)
    summary = Summary()
    for i, text in enumerate([story[0], asks[0], story[1], asks[1], story[2]]):
        summary = summarizer.fold(summary, Message("user", text), i)
    assert all(s in summary.text for s in story) and not any(a in summary.text for a in asks)
    assert summary.text.startswith("[5 earlier messages]")


def test_an_early_statement_survives_in_the_default_summary(memory):
    """Default bounds: six ordinary messages after a long first one still show it whole."""
    first = "So we replaced the old Toyota with a blue Kia EV6 last month, picked it up Friday"
    memory.add(Message("user", first))
    for text in ["is the charging network good", "any tips for winter range", "what tyres do you suggest",
                 "the garage is small", "I park on the street sometimes", "ok thanks", "one more thing", "never mind"]:
        memory.add(Message("user", text))
    assert first in memory.summary()
