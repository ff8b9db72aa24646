"""One-off happenings told in passing stay out of the governed summary (``text/happenings.py``),
while what still holds about the user, plans, changes and corrections stay in its running story."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.text.happenings import is_happening


@pytest.mark.parametrize("text", [
    "Bumped into my old chemistry teacher at the farmers market yesterday",
    "spilled coffee all over my keyboard this morning, what a start",
    "our neighbour's dog got loose last night and dug up the tulips",
    "我刚才在地铁上碰到了高中同学",
    "昨天晚上楼下的猫生了五只小猫",
])
def test_a_recent_past_happening_is_recognised(text):
    assert is_happening(text)


@pytest.mark.parametrize("text", [
    "I'm allergic to penicillin",
    "My sister lives in Lyon and teaches piano",
    "I fly to Lisbon on Friday morning",
    "明天下午三点开组会",
    "The physio session moved to Thursday yesterday",  # a change: the story needs the new time
    "我昨天把手机换成了安卓",                             # a change
    "哦不对，我记错了，聚餐是上周六不是周日",              # a correction
    "What did I order from the Thai place last night?",   # a question
    "Remind me today to renew the parking permit",        # a request
    "",
])
def test_what_still_holds_plans_changes_and_questions_are_not(text):
    assert not is_happening(text)


def test_a_happening_leaves_the_summary_but_not_long_term_memory(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        memory.add(Message("user", "My landlord is called Mr Okafor and rent is due on the 3rd", "kim"))
        spill = memory.add(Message("user", "spilled coffee all over my keyboard this morning", "kim")).record_id
        for text in ("I'm training for a half marathon in April", "I usually run before work",
                     "my running shoes are Brooks Ghost 15"):
            memory.add(Message("user", text, "kim"))
        context = memory.build_context("who is my landlord and when is rent due?", "kim")
        assert "Okafor" in context and "keyboard" not in context
        entry = next(e for e in memory.explain("who is my landlord", "kim").summary if e.record_id == spill)
        assert not entry.shown and entry.reasons == ("happening",)
        asked = memory.build_context("what happened to my keyboard this morning?", "kim")
        assert "spilled coffee" in asked  # found by relevance, as a memory


def test_a_correction_told_with_a_past_moment_stays_in_the_story(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我订的是西湖边那家如家酒店", "lin"))
        memory.add(Message("user", "哦不对，我搞错了，订的是北山路的汉庭，如家那个昨天就退掉了", "lin"))
        for text in ("我周末想去爬山", "我平时喝美式", "我家猫叫团子"):
            memory.add(Message("user", text, "lin"))
        assert "汉庭" in memory.summary("lin")


def test_leaving_a_thing_somewhere_is_no_employer(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        job = memory.add(Message("user", "I work at Initech", "sam")).record_id
        memory.add(Message("user", "My bike is a blue Brompton", "sam"))
        assert memory.add(Message("user", "left my umbrella on the bus on Monday", "sam")).supersedes == ()
        assert [f.value for f in memory.facts("sam") if f.key == "employer" and f.status != "superseded"] == ["Initech"]
        assert memory.add(Message("user", "I quit Initech last month", "sam")).supersedes == (job,)
