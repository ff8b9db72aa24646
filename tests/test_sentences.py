"""Sentence-level reading (issue 8, classes 6 and the linear bound): clauses, speech acts, speakers, facts."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.governance.corrections import detect_correction
from v2_memory.governance.facts import extract_claims
from v2_memory.text.segmenter import MAX_CLAUSE, Meter, read_message


def facts(text):
    return [(c.key, c.value, c.polarity) for c in extract_claims(text)]


@pytest.mark.parametrize("text, act", [
    ("是不是周五来着", "question"), ("我用的是什么手机", "question"), ("你还记得我住哪", "question"),
    ("didn't you say 5 o'clock", "question"), ("what laptop do I use", "question"),
    ("如果我吃素的话", "conditional"), ("要是明天下雨我就不去", "conditional"), ("if I were vegan I'd skip this", "conditional"),
    ("say hypothetically I had $40k to invest", "conditional"), ("hypothetically we move to Porto next year", "conditional"),
    ("我妈总说我不吃辣", "report"), ("my friend says I love cats", "report"), ("听说我对猫过敏", "report"),
    ("请帮我订个会议室", "request"), ("can you book a table", "request"),
    ("我不吃香菜", "statement"),
    # a bare imperative asks for a piece of work; a verb that names no such work, or a noun, states
    ("outline a talk on sleep hygiene", "request"), ("translate this menu into Spanish", "request"),
    ("介绍几部科幻电影", "request"), ("解释一下什么叫复利", "request"),
    ("下周三提醒我交物业费", "request"), ("plan to visit Rome next year", "statement"),
    ("write-up went out on Friday", "statement"), ("今天给我发了奖金", "statement"),
    # a question word before 都/也 means "any": it asks nothing
    ("我什么都吃", "statement"), ("哪儿都不想去", "statement"), ("谁也不认识", "statement"),
    ("怎么也睡不着", "statement"), ("我对什么都不过敏", "statement"),
    ("你什么都吃吗", "question"), ("哪天都行吗", "question"), ("为什么都不理我", "question"), ("去哪儿", "question"),
    # "if" after wonder, not sure, ask … means "whether": it asks, it supposes nothing
    ("I wonder if I'm gluten intolerant", "question"), ("not sure if the shop is open", "question"),
    ("I asked if they deliver", "statement"),
])
def test_each_clause_has_its_speech_act(text, act):
    assert {c.act for c in read_message(text)} == {act}


@pytest.mark.parametrize("text", [
    "我用Mac吗", "我住哪来着", "是不是我对花生过敏", "如果我用Mac的话", "要是我吃素呢", "我妈总说我不吃辣",
    "我儿子对牛奶过敏", "我女朋友喜欢猫", "用我同事的电脑", "my girlfriend loves cats", "my son is allergic to milk",
    "if I were vegetarian", "do I use a Mac", "my friend's motto is I love cats", "he uses Windows",
])
def test_no_question_conditional_report_or_other_person_becomes_a_fact(text):
    assert facts(text) == []


def test_several_facts_of_different_polarity_in_one_message():
    assert facts("我不喝牛奶，但喝豆浆") == [("drink", "牛奶", -1), ("drink", "豆浆", 1)]
    assert facts("I'm not allergic to peanuts, but allergic to shellfish") == [("allergy", "peanuts", 1), ("allergy", "shellfish", -1)]
    assert facts("My name is Sam and I use a Mac") == [("name", "Sam", 1), ("device", "Mac", 1)]


def test_values_are_clean_and_lead_ins_are_skipped():
    assert facts("我用的是一加手机") == [("device", "一加手机", 1)]
    assert facts("嗯，对了，记住我平时用Mac") == [("device", "Mac", 1)]
    assert facts("Oh btw, I'm allergic to cats now.") == [("allergy", "cats", -1)]


def test_a_clause_is_read_wherever_it_is_in_the_message():
    """Not anchored at the start of the message: the fact is in the third clause."""
    assert facts("今天好累，加班到十点，我对芒果过敏你记一下") == [("allergy", "芒果", -1)]


def test_a_pending_first_person_statement_is_found_after_a_restart(tmp_path, clock):
    """Class 11: the user's words are evidence while the persona line waits for confirmation."""
    path = tmp_path / "m.json"
    with MemoryManager(store_path=path, clock=clock) as memory:
        memory.add(Message("user", "I use a Mac for work"))
    with MemoryManager(store_path=path, clock=clock) as memory:
        context = memory.build_context("what laptop do I use? Mac or not")
        assert "user: I use a Mac for work" in context and "persona:device" not in context


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["如果", "要是", "假如"]), st.sampled_from(["我不吃香菜", "我用Mac", "我对花生过敏", "我住在杭州"]),
       st.sampled_from(["的话", "，那就算了", ""]))
def test_property_no_conditional_becomes_a_fact(cue, clause, tail):
    assert facts(cue + clause + tail) == []


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["我妈说", "我同事觉得", "听说", "my mom says ", "my friend thinks "]),
       st.sampled_from(["我不吃香菜", "我用Mac", "I use a Mac", "I am allergic to cats"]))
def test_property_no_report_becomes_a_fact(reporter, clause):
    assert facts(reporter + clause) == []


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["我不吃香菜", "我用Mac", "我对花生过敏", "I use a Mac", "I am allergic to cats"]),
       st.sampled_from(["吗", "吗？", "来着？", "?", ", right?"]))
def test_property_no_question_becomes_a_fact(clause, ending):
    assert facts(clause + ending) == []


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["我儿子", "我女朋友", "我同事", "他", "my son ", "my girlfriend ", "she "]),
       st.sampled_from(["不吃香菜", "对花生过敏", "喜欢猫", "uses Windows", "is allergic to milk", "loves cats"]))
def test_property_no_one_elses_statement_becomes_a_fact(person, predicate):
    assert facts(person + predicate) == []


@pytest.mark.slow  # inputs grown to hundreds of KB
@pytest.mark.parametrize("unit", ["我 " + " " * 50 + "不吃", "不是" * 20 + "，是", "Actually, " + "not " * 30, "a" * 97 + "，",
                                  "我对" + "香菜" * 40 + "过敏，", "scratch that " + "x " * 40])
def test_every_detector_is_linear_in_the_input(unit):
    """A counted bound, not a timing: the characters every pattern saw grow linearly with the
    message (no clause longer than MAX_CLAUSE is ever scanned), for 1 MB adversarial messages."""
    work = []
    for size in (10_000, 1_000_000):
        text = (unit * (size // len(unit) + 1))[:size]
        meter = Meter()
        extract_claims(text, meter)
        detect_correction(text, meter)
        work.append(meter.chars)
        assert meter.chars <= 60 * size  # each character is seen by a bounded number of patterns
    assert work[1] <= 110 * work[0]  # 100 × the input: about 100 × the work, never 10,000 ×
    assert all(c.end - c.start <= MAX_CLAUSE for c in read_message(unit * 500))


def test_a_condition_put_to_the_listener_supposes_only_itself():
    said = read_message("we keep the spare key under the blue pot, in case you ever need it")
    assert [c.act for c in said] == ["statement", "conditional"]
    assert [c.act for c in read_message("我在海淀上班，你要是需要的话记一下")] == ["statement", "conditional"]
    assert {c.act for c in read_message("if the train is late, we take a taxi")} == {"conditional"}  # a real supposition


@pytest.mark.parametrize("text, acts", [
    # a condition with its own consequence in its clause supposes that clause only
    ("delete the note about my brother's loan, he'd be upset if he saw it", ["statement", "conditional"]),
    ("the spare charger is in the drawer, grab it if your laptop dies", ["statement", "conditional"]),
    ("我先把房租交了，房东知道的话会高兴", ["statement", "conditional"]),
    ("如果周五开会就不去了，我先回家", ["conditional", "statement"]),
    # a bare condition supposes the whole sentence, before or after it
    ("if the train is late, we take a taxi", ["conditional", "conditional"]),
    ("we take a taxi, if the train is late", ["conditional", "conditional"]),
    ("如果周五开会，我就不去了", ["conditional", "conditional"]),
    ("周五开会的话，我就不去了", ["conditional", "conditional"]),
    ("only if it's sunny, we hike", ["conditional", "conditional"]),
])
def test_a_condition_bound_to_its_own_consequence_supposes_only_its_clause(text, acts):
    assert [c.act for c in read_message(text)] == acts


@pytest.mark.parametrize("text, act", [
    ("forget 我刚才说的那个 salary 数字", "statement"),   # the user's own words named: no one is reported
    ("把我之前说的那个地址删掉", "statement"),
    ("delete what I said about the loan", "statement"),
    ("我妈说我刚才说的不对", "report"),                  # someone else's words still are
    ("my boss said what I said was fine", "report"),
])
def test_the_users_own_words_named_as_a_thing_are_not_reported_speech(text, act):
    assert read_message(text)[0].act == act
