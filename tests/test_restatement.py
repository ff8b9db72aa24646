"""A restatement is an update (issue 19, class 2): the same thing said again with a new time or
date, no cue word, supersedes the earlier clause; another thing, another person or another
identifier does not. The sentences are this file's own, not the held-out scenarios'."""
from __future__ import annotations

from v2_memory import MemoryManager, Message
from v2_memory.governance.facts import extract_claims
from v2_memory.text.segmenter import read_message


def _memory() -> MemoryManager:
    return MemoryManager(store_path=None, window_size=4)


def _supersedes(old: str, new: str) -> bool:
    """Whether ``new``, said after ``old`` alone, supersedes something."""
    memory = _memory()
    memory.add(Message("user", old, "u"))
    return bool(memory.add(Message("user", new, "u")).supersedes)


def _context(memory: MemoryManager, query: str, **scope) -> str:
    return memory.build_context(query, "u", top_k=8, **scope)


def test_the_same_thing_with_a_new_time_supersedes_the_old_time():
    memory = _memory()
    memory.add(Message("user", "the piano recital is on the 9th at 6pm", "u"))
    memory.add(Message("user", "I need to buy flowers for my niece", "u"))
    result = memory.add(Message("user", "piano recital: the 11th now, the hall flooded", "u"))
    assert result.supersedes
    context = _context(memory, "when is the piano recital?")
    assert "11th" in context and "9th" not in context


def test_a_pronoun_points_back_at_the_recent_message_with_a_when():
    memory = _memory()
    memory.add(Message("user", "the electrician is booked for Thursday at 1:45", "u", session_id="s"))
    memory.add(Message("user", "should I switch off the fuse box first?", "u", session_id="s"))
    result = memory.add(Message("user", "she just called, she'll be here at 3:10 instead", "u", session_id="s"))
    assert result.supersedes
    assert "1:45" not in _context(memory, "when does the electrician arrive?", session_id="s")


def test_chinese_restatement():
    memory = _memory()
    memory.add(Message("user", "家长会在周四下午三点", "u"))
    memory.add(Message("user", "记得提醒我带作业本", "u"))
    assert memory.add(Message("user", "家长会改到周五上午了", "u")).supersedes
    context = _context(memory, "家长会什么时候开？")
    assert "周五上午" in context and "周四下午三点" not in context


def test_another_meeting_another_person_or_another_identifier_stays():
    memory = _memory()
    memory.add(Message("user", "meeting with Anna on Monday at 10", "u"))
    memory.add(Message("user", "meeting with Bruno on Friday at 2", "u"))
    memory.add(Message("user", "my flight lands at 7:05", "u"))
    memory.add(Message("user", "my sister's flight lands at 9:40", "u"))
    memory.add(Message("user", "ISO 27001 audit is on the 3rd", "u"))
    memory.add(Message("user", "ISO 14001 audit is on the 19th", "u"))
    context = _context(memory, "meetings Anna Bruno flights audits ISO Monday Friday")
    for kept in ("Anna", "Bruno", "7:05", "9:40", "3rd", "19th"):
        assert kept in context, kept


def test_a_question_restates_nothing():
    memory = _memory()
    memory.add(Message("user", "the vet appointment is Tuesday at 4", "u"))
    result = memory.add(Message("user", "is the vet appointment at 5 maybe?", "u"))
    assert not result.supersedes


def test_a_time_is_not_cut_at_its_colon():
    assert [c.core for c in read_message("he'll be here at 4:30, then we leave")] == ["he'll be here at 4:30", "then we leave"]
    assert [c.core for c in read_message("the plan: bring the keys")] == ["the plan", "bring the keys"]


def test_a_change_said_without_a_subject_is_the_speakers():
    assert [(c.key, c.value) for c in extract_claims("搬到望京了，通勤方便多了")] == [("location", "望京")]
    assert [(c.key, c.value) for c in extract_claims("started at Klarna last week as a PM")] == [("employer", "Klarna")]
    assert [(c.key, c.value) for c in extract_claims("I'm a staff nurse at Royal Free Hospital")] == [("employer", "Royal Free Hospital")]
    assert extract_claims("I'm a regular at the climbing gym") == []


def test_items_of_a_list_are_not_updates_of_each_other():
    memory = _memory()
    for n, day in enumerate(["Monday", "Wednesday", "Friday"]):
        memory.add(Message("user", f"yoga class {n + 1} is on {day} at 7", "u"))
    context = _context(memory, "when are my yoga classes? Monday Wednesday Friday")
    assert all(day in context for day in ("Monday", "Wednesday", "Friday"))
    memory.add(Message("user", "yoga class 3 is on Saturday at 7 now", "u"))  # said to change: an update
    assert "Friday" not in _context(memory, "when is yoga class 3? Friday Saturday")


def test_another_attribute_of_the_same_thing_is_not_an_update():
    memory = _memory()
    memory.add(Message("user", "the board meeting starts at 10:00", "u", session_id="s"))
    memory.add(Message("user", "the board meeting ends at 11:30", "u", session_id="s"))
    memory.add(Message("user", "my aunt arrives Friday at 6", "u", session_id="s"))
    memory.add(Message("user", "she'll stay till Sunday", "u", session_id="s"))
    memory.add(Message("user", "the ferry leaves at 9:15", "u", session_id="s"))
    memory.add(Message("user", "it docks at 13:40", "u", session_id="s"))
    context = _context(memory, "board meeting start end, aunt Friday Sunday, ferry leaves docks", session_id="s")
    for kept in ("10:00", "11:30", "Friday at 6", "Sunday", "9:15", "13:40"):
        assert kept in context, kept



def test_the_speakers_own_discourse_markers_are_not_someone_elses_words():
    from v2_memory.text.segmenter import read_message as read
    assert [c.act for c in read("说来奇怪，最近迷上了攀岩")] == ["statement", "statement"]
    assert [c.act for c in read("老实说，我不太喜欢榴莲")] == ["statement", "statement"]
    assert [c.act for c in read("我爸总说我不吃辣")] == ["report"]


def test_a_taste_that_turned_is_read_through_its_adverb_and_supersedes_the_old_one():
    assert [(c.key, c.value, c.polarity) for c in extract_claims("最近竟然爱上榴莲了")] == [("likes", "榴莲", 1)]
    memory = _memory()
    memory.add(Message("user", "我不喜欢榴莲", "u"))
    assert memory.add(Message("user", "说来奇怪，最近竟然爱上榴莲了", "u")).supersedes


def test_a_spelling_correction_finds_the_misspelt_name():
    memory = _memory()
    memory.add(Message("user", "my dentist is Dr. Haverbeck, great guy", "u", session_id="s"))
    fixed = memory.add(Message("user", "sorry, it's spelled Haverbeke, with an e", "u", session_id="s"))
    assert fixed.supersedes
    memory = _memory()
    memory.add(Message("user", "我的导师叫李文博", "u", session_id="s"))
    assert "correction_target:spelling" in memory.add(Message("user", "打错了，是李闻博", "u", session_id="s")).reasons


def test_one_more_or_an_exception_is_not_a_restatement():
    memory = _memory()
    memory.add(Message("user", "I have yoga class on Tuesday at 6pm.", "u"))
    memory.add(Message("user", "I also have yoga class on Thursday at 7pm.", "u"))
    memory.add(Message("user", "Standup is at 9:30 every day.", "u"))
    memory.add(Message("user", "Standup is at 9:45 on Fridays.", "u"))
    memory.add(Message("user", "我周一上午九点开组会。", "u"))
    memory.add(Message("user", "周四下午三点开组会，最后一个议题是预算。", "u"))
    context = _context(memory, "yoga Tuesday Thursday standup every day Fridays 组会 周一 周四")
    for kept in ("Tuesday at 6pm", "Thursday at 7pm", "9:30 every day", "9:45 on Fridays", "周一上午九点", "周四下午三点"):
        assert kept in context, kept


def test_an_amount_restated_where_the_sentence_says_it_changed():
    memory = _memory()
    memory.add(Message("user", "the caterer quoted us $1,400 for the party", "u", session_id="s"))
    memory.add(Message("user", "and the band is booked", "u", session_id="s"))
    result = memory.add(Message("user", "ugh she changed her mind, it's $1,650 now", "u", session_id="s"))
    assert result.supersedes
    context = _context(memory, "how much is the caterer?", session_id="s")
    assert "1,650" in context and "1,400" not in context


def test_a_chinese_amount_restated():
    memory = _memory()
    memory.add(Message("user", "读书会在二楼的204教室，每周三晚上", "u"))
    memory.add(Message("user", "帮我列个书单", "u"))
    assert memory.add(Message("user", "读书会以后在311开，人多了", "u")).supersedes
    context = _context(memory, "读书会在哪个教室？")
    assert "311" in context and "204" not in context


def test_an_amount_without_a_word_of_change_is_one_more():
    memory = _memory()
    memory.add(Message("user", "the caterer quoted us $1,400 for the party", "u"))
    assert not memory.add(Message("user", "the caterer wants a $300 deposit", "u")).supersedes
    assert not memory.add(Message("user", "my brother says his caterer is $900", "u")).supersedes


def test_a_bit_is_not_one_oclock():
    from v2_memory.governance.corrections import kind_values

    assert kind_values("房间大一点，晚一点到也行", {"time"}) == set()
    assert kind_values("一点半开会，十一点结束", {"time"}) == {"一点半", "十一点"}


def test_a_new_day_with_the_same_part_of_the_day_is_a_change():
    memory = _memory()
    memory.add(Message("user", "跟物业的协调会定在周二下午", "u"))
    memory.add(Message("user", "对了，地点在他们办公室3楼", "u"))
    assert memory.add(Message("user", "协调会挪到周三下午了，物业临时有事", "u")).supersedes
    context = _context(memory, "协调会什么时候、在哪儿？")
    assert "周二下午" not in context and "周三下午" in context and "3楼" in context


def test_each_sentence_is_read_once_however_many_clauses_it_has(monkeypatch):
    import v2_memory.governance.restatement as module

    searched = []

    class Counting:
        def search(self, text):
            searched.append(len(text))
            return None

    monkeypatch.setattr(module, "_CHANGED", Counting())
    text = "a, " * 3000 + "b. " + "我，" * 3000
    module.restated_clauses(text)
    assert len(searched) <= 3 and sum(searched) <= 2 * len(text)  # one search per sentence, linear in the text


import pytest  # noqa: E402


@pytest.mark.parametrize("before, after, new, old", [
    ("I take 25mg of sertraline every morning", "GP visit went fine, she put me up to 50mg", "50mg", "25mg"),
    ("每天晚上吃一片二甲双胍，500毫克", "内分泌科复诊，大夫给我调到850毫克了", "850毫克", "500毫克"),
    ("currently weighing in at 91kg", "weigh-in this morning: down to 87kg!", "87kg", "91kg"),
    ("我现在体重62公斤", "这个月瘦了，降到59公斤", "59公斤", "62公斤"),
])
def test_a_dose_or_a_weight_set_anew_supersedes_the_old_amount(before, after, new, old):
    memory = _memory()
    memory.add(Message("user", before, "u"))
    for filler in ("the neighbours got a new puppy", "need to fix the bike chain", "rained all day", "watched a film"):
        memory.add(Message("user", filler, "u"))
    result = memory.add(Message("user", after, "u"))
    assert result.supersedes == (1,), result.reasons
    assert old not in _context(memory, before) and new in _context(memory, after)


@pytest.mark.parametrize("before, after", [
    ("我现在体重62公斤", "我想减到55公斤"),                      # a goal, not the weight
    ("I take 25mg of sertraline", "my mum's dose went up to 50mg"),  # someone else's dose
    ("I take 25mg of sertraline", "vitamin D: they raised me to 1000mg"),  # another dose, far from this one
    ("I take 25mg of sertraline", "I weighed 70kg, now down to 66kg"),  # another unit class
])
def test_a_goal_another_person_or_another_amount_supersedes_nothing(before, after):
    memory = _memory()
    memory.add(Message("user", before, "u"))
    assert not memory.add(Message("user", after, "u")).supersedes


def test_the_summary_shows_what_replaced_a_memory_the_query_is_about():
    from datetime import datetime, timedelta, timezone
    now = [datetime(2026, 5, 1, 9, tzinfo=timezone.utc)]
    memory = MemoryManager(store_path=None, window_size=2, clock=lambda: now[0])

    def say(text):
        now[0] += timedelta(minutes=1)
        memory.add(Message("user", text, "u"))

    say("my blood pressure pill is amlodipine, 5mg a day")
    now[0] += timedelta(days=3)
    say("checkup today, the cardiologist bumped it to 10mg")
    for text in ("the tomatoes finally ripened", "cleaned the gutters", "new sneakers arrived", "tried a new ramen place",
                 "the cat knocked over a vase", "finished a jigsaw puzzle", "car needs an oil change", "lovely sunset tonight"):
        now[0] += timedelta(days=1)
        say(text)
    now[0] += timedelta(days=1)
    context = memory.build_context("how much blood pressure medicine do I take a day?", "u")
    assert "10mg" in context and "5mg" not in context


def test_a_new_standing_time_replaces_a_daily_one():
    memory = _memory()
    memory.add(Message("user", "our team sync is at 8:45 every day on zoom", "u"))
    memory.add(Message("user", "need new running shoes", "u"))
    result = memory.add(Message("user", "team sync 11:20 from now on, the new lead is in Lisbon", "u"))
    assert result.supersedes == (1,)
    context = _context(memory, "when is the team sync?")
    assert "11:20" in context and "8:45" not in context
    memory.add(Message("user", "我们的晨会每天九点开", "z"))
    assert memory.add(Message("user", "晨会从今天起改到九点半", "z")).supersedes


def test_news_of_the_plan_from_whoever_runs_it_is_a_change():
    memory = _memory()
    memory.add(Message("user", "car service at the garage on Monday at 9:15", "u", session_id="a"))
    memory.end_session("u", "a")
    result = memory.add(Message("user", "the garage called, car service at 11:40", "u", session_id="b"))
    assert result.supersedes and "9:15" not in _context(memory, "when is the car service?", session_id="b")
    memory.add(Message("user", "周三上午十点物业来修水管", "u", session_id="c"))
    result = memory.add(Message("user", "物业那边打电话来，修水管下午三点到", "u", session_id="c"))
    assert result.supersedes and "上午十点" not in _context(memory, "物业什么时候来修水管", session_id="c")


def test_a_call_about_another_thing_changes_nothing():
    memory = _memory()
    memory.add(Message("user", "dentist cleaning on Friday at 2:30", "u"))
    result = memory.add(Message("user", "the vet called, Biscuit's checkup is at 4:00", "u"))
    assert not result.supersedes and "2:30" in _context(memory, "when is the dentist cleaning?")


def test_a_change_with_its_thing_left_unsaid_points_back():
    memory = _memory()
    memory.add(Message("user", "the design review with the agency is Wednesday at 10am", "u"))
    memory.add(Message("user", "room 4B, bring the printouts", "u"))
    result = memory.add(Message("user", "pushed to Thursday at 2pm, their lead is sick", "u"))
    assert result.supersedes == (1,)
    assert "Wednesday at 10am" not in _context(memory, "when is the design review?")
    memory.add(Message("user", "跟房东约的看房是周二晚上七点", "z"))
    assert memory.add(Message("user", "挪到周三晚上了", "z")).supersedes


def test_news_of_a_change_told_by_someone_restates_the_thing():
    memory = _memory()
    memory.add(Message("user", "the swim meet is on Saturday at 8am", "u"))
    memory.add(Message("user", "need to pack snacks", "u"))
    result = memory.add(Message("user", "the coach said the swim meet got moved to Sunday at 9am", "u"))
    assert result.supersedes == (1,)
    context = _context(memory, "when is the swim meet?")
    assert "Sunday at 9am" in context and "Saturday at 8am" not in context
    # someone else's own thing stays theirs
    memory.add(Message("user", "my flight lands at 7pm", "v"))
    assert not memory.add(Message("user", "my sister said her flight moved to 9pm", "v")).supersedes


def test_a_weekly_rule_moved_is_replaced_but_one_occasion_is_an_exception():
    memory = _memory()
    memory.add(Message("user", "儿子的围棋课是每周日下午两点", "u"))
    assert memory.add(Message("user", "老师说围棋课调到周六上午十点了", "u")).supersedes
    assert "周日下午两点" not in _context(memory, "围棋课什么时候")
    memory.add(Message("user", "book club meets every Tuesday at 7pm", "v"))
    assert not memory.add(Message("user", "book club moved to Wednesday at 7pm this week only", "v")).supersedes


def test_a_named_thing_given_a_new_number_is_restated():
    """The name is the thing ("Python 3.11", "Kindle 10", "小爱音箱2"): said to have changed, a new
    number replaces the old; without a word of change, or for someone else's, or with "also", not."""
    memory = _memory()
    memory.add(Message("user", "the lab machines all run Python 3.9 and conda", "u"))
    memory.add(Message("user", "what's a good name for a sourdough starter?", "u"))
    result = memory.add(Message("user", "we upgraded the lab to Python 3.12 over the break", "u"))
    assert result.supersedes
    context = _context(memory, "which python do the lab machines run?")
    assert "3.12" in context and "3.9" not in context

    assert _supersedes("家里的音箱是小爱音箱2，声音一般", "换了，现在是小爱音箱4")

    for later in ["my brother switched to a Kindle 11", "I also switched to a Kindle 11 for travel",
                  "the shop now sells the Kindle 11", "Amazon just upgraded the Kindle 11 screen",
                  "the Kindle 11 is out now"]:
        assert not _supersedes("I read on a Kindle 10 every night", later), later


def test_what_names_a_thing_and_its_number():
    from v2_memory.governance.restatement import versions

    assert versions("we moved everything to Postgres 16, and Redis 7.2") == {("postgres", "16"), ("redis", "7.2")}
    assert versions("现在是小爱音箱4，花了299") == {("小爱音箱", "4")}
    # a time, a length of time, an amount with its unit, a kind of number: no thing named
    assert versions("lunch at 12 for 3 weeks, 140g of rice, on version 5.1, chapter 7") == frozenset()


def test_a_rule_moved_from_a_day_on_is_replaced_but_one_day_is_an_exception():
    """"starting tomorrow", "明天开始": the rule moves from then on; "明天" alone is that one day."""
    for old, new, moved in [("we have standup every day at 9:30 on zoom", "starting tomorrow standup is moved to 10:30", True),
                            ("我们每天早上9点半开站会", "明天开始站会改到10点半了", True),
                            ("我们每天早上9点半开站会", "明天站会改到10点半", False),
                            ("we have standup every day at 9:30 on zoom", "tomorrow standup is moved to 10:30", False)]:
        assert _supersedes(old, new) is moved, new


def test_a_time_said_to_hold_something_else_now_replaces_what_it_held():
    """The when is what the clause is about ("thursday evenings are choir now", "周六上午改成游泳了"):
    the old thing at that time goes. A new thing beside it, a thing moved into the time, one week's
    exception or someone else's time is not that."""
    for old, new, replaced in [
            ("thursday evenings I coach the under-10s at the rink", "thursday evenings are choir practice now", True),
            ("周六上午带女儿上钢琴课", "周六上午改成游泳了，钢琴先停", True),
            ("on friday I have my piano lesson", "on friday we now have a team lunch", False),
            ("tuesday 3pm is my piano lesson", "I moved the dentist to tuesday 3pm", False),
            ("every saturday morning I go hiking", "saturday morning is the dentist this week", False),
            ("my sister does yoga on sundays", "sundays are brunch days now", False)]:
        assert _supersedes(old, new) is replaced, new
