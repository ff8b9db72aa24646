"""Natural corrections (issue 8, classes 2, 3 and 4): cues anywhere, targets by meaning, one fact of many."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance.corrections import detect_correction


@pytest.fixture
def memory(clock):
    with MemoryManager(threshold=0.2, store_path=None, clock=clock) as manager:
        yield manager


def admitted(memory, query, **scope):
    return [a.record["content"] for a in memory.explain(query, top_k=10, **scope).admitted]


@pytest.mark.parametrize("text, new, wrong", [
    ("Hmm, looked at the ticket again — the gate is B12, not B21", "the gate is B12", "B21"),
    ("哦不对，我搞错了，体检是周五上午", "体检是周五上午", None),
    ("记错了，体检是周五", "体检是周五", None),
    ("scratch that, the call is at 4pm", "the call is at 4pm", None),
    ("my bad, the dentist is on Thursday", "the dentist is on Thursday", None),
    ("sorry, I meant Thursday", "Thursday", None),
    ("口误，是下午三点", "下午三点", None),
    ("钢琴课其实是周四下午五点", "钢琴课 周四下午五点", None),
])
def test_cue_words_in_families_with_lead_ins_and_a_subject_between(text, new, wrong):
    correction = detect_correction(text)
    assert (correction.new_value, correction.wrong_value) == (new, wrong)


@pytest.mark.parametrize("text", ["didn't you say 5 o'clock?", "是不是周五来着？", "是不是周五来着", "Wasn't it Gate B21?",
                                  "纠正一下我的发音", "I meant to ask about pricing", "如果说错了，是周五吗"])
def test_doubtful_questions_and_look_alikes_correct_nothing(text):
    assert detect_correction(text) is None


def test_a_correction_in_a_later_session_finds_its_target(memory):
    """The fact was said in session s1; the correction comes in s2: the whole history counts."""
    first = memory.add(Message("user", "提醒我一下，单位体检是下周四上午，要空腹去", session_id="s1")).record_id
    memory.add(Message("user", "早茶的话虾饺一定要有", session_id="s1"))
    result = memory.add(Message("user", "哦不对，我搞错了，体检是下周五", session_id="s2"))
    assert first in result.supersedes
    assert "correction_target:same_thing" in result.reasons


def test_a_correction_naming_no_value_finds_the_same_attribute_far_back(memory):
    """More than ten messages later, "记错了" finds the 体检's time by meaning, not recency."""
    checkup = memory.add(Message("user", "单位体检是下周四上午九点")).record_id
    for i in range(12):
        memory.add(Message("user", f"第{i}件事：周{'一二三四五'[i % 5]}下午去超市买水果"))
    result = memory.add(Message("user", "记错了，体检是下周五上午九点"))
    assert result.supersedes == (checkup,)


def test_no_credible_target_supersedes_nothing_and_says_so(memory):
    memory.add(Message("user", "明天下午三点去银行"))
    result = memory.add(Message("user", "scratch that, the piano recital is on Sunday"))
    assert result.supersedes == () and "correction_target_not_found" in result.reasons
    assert admitted(memory, "银行 下午三点") == ["明天下午三点去银行"]


def test_correcting_one_of_several_facts_keeps_the_others(memory):
    """"Swimming Monday 6pm, piano Wednesday 5pm": correcting the piano splits the record — the
    swimming clause stays admissible on its own, the stale piano time enters no context."""
    both = memory.add(Message("user", "Swimming Monday 6pm, piano Wednesday 5pm")).record_id
    result = memory.add(Message("user", "Actually, piano is Thursday 5pm"))
    assert result.supersedes == (both,)
    assert "Swimming Monday 6pm" in admitted(memory, "when is swimming")
    for query in ("when is piano", "piano Wednesday", "swimming and piano times"):
        assert "Wednesday" not in memory.build_context(query)
    split = next(r for r in memory.store.records("default") if r["content"] == "Swimming Monday 6pm")
    assert split["metadata"]["split_from"] == both


def test_correcting_one_fact_of_a_message_keeps_the_other_facts(memory):
    memory.add(Message("user", "我不喝牛奶，但喝豆浆"))
    memory.confirm_fact("default", "drink")
    memory.add(Message("user", "不是豆浆，是燕麦奶"))
    assert {(f.value, f.status) for f in memory.facts()} >= {("牛奶", "confirmed"), ("豆浆", "superseded"), ("燕麦奶", "pending")}
    assert "persona:drink = NOT 牛奶" in memory.build_context("牛奶")


def test_the_same_attribute_of_the_same_person(memory):
    """"她生日是5月21号" corrects the wife's birthday, not the user's own, though that one is newer."""
    wife = memory.add(Message("user", "我老婆生日是5月20号，每年都得提前准备")).record_id
    mine = memory.add(Message("user", "我自己生日是8月3号，无所谓过不过")).record_id
    result = memory.add(Message("user", "哦我搞错了，她生日是5月21号，20号是她闺蜜的"))
    assert wife in result.supersedes and mine not in result.supersedes


def test_a_correction_naming_a_thing_never_talked_about_buries_nothing():
    """"记错了，体检是周五" names its thing (体检); with no 体检 in the history there is no credible
    target, even when a recent message in the same session holds a day."""
    from v2_memory import MemoryManager, Message

    with MemoryManager(store_path=None) as memory:
        memory.add(Message("user", "Swimming Monday 6pm, piano Wednesday 5pm", "u", session_id="s"))
        memory.add(Message("user", "sorry, I meant piano is Thursday 5pm", "u", session_id="s"))
        result = memory.add(Message("user", "记错了，体检是周五", "u", session_id="s"))
        assert result.supersedes == () and "correction_target_not_found" in result.reasons
        assert "Monday 6pm" in memory.build_context("when is swimming", "u", session_id="s")
