"""Revocation by speech (issue 19, class 1): what the user takes back leaves every context and the
store; only that thing, never the user's other memories; "don't store this: …" stores nothing of
what follows. The sentences here are this file's own, not the held-out scenarios'."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance.revocation import detect_revocation, detect_revocations


@pytest.mark.parametrize("text, about, pointer, withdraws", [
    ("please forget everything I said about the mortgage", "mortgage", False, False),
    ("you can delete what I told you about my knee surgery", "knee surgery", False, False),
    ("scrap that last bit", "", True, False),
    ("I'd prefer you didn't remember my salary", "salary", False, False),
    ("quit recommending sushi places, I went off sushi", "sushi places", False, True),
    ("don't send me the weather every morning anymore", "weather every morning", False, True),
    ("我之前说的体检结果都删掉吧", "体检结果", False, False),
    ("刚才那句帮我删了", "", True, False),
    ("我的工资你别记了", "工资", False, False),
    ("以后别再提醒我喝水了", "喝水", False, True),
    ("hmm on second thought forget where I live", "live", False, False),
    ("我的住址别记了", "住址", False, False),
    ("pls turn off the posture alerts", "posture alerts", False, True),
    ("cancel the vitamin reminders, I ran out", "vitamin reminders", False, True),
    ("把周报推送关掉吧", "周报推送", False, True),
    ("装修那件事删了吧", "装修", False, False),
    ("体检那事你就当没听过", "体检", False, False),
])
def test_a_take_back_is_read_with_what_it_points_at(text, about, pointer, withdraws):
    found = detect_revocation(text)
    assert found is not None, text
    assert (found.about, found.pointer, found.withdraws) == (about, pointer, withdraws)


@pytest.mark.parametrize("text", [
    "I forgot my keys at the gym",           # a statement about the user's day
    "don't forget to call the plumber",      # a reminder, not a take-back
    "cancel my 3pm meeting with Dana",       # about the world, not about memory
    "remove the seeds before roasting",      # a recipe step
    "should I delete my old photos?",        # a question
    "if you forget the sauce it's bland",    # a conditional
    "my boss told me to drop the project",   # someone else's words
    "forget it, not important",              # conversation: points at nothing
    "我忘了带伞",                             # the user's own forgetting
    "帮我取消明天下午的会议",                  # about the world
    "别记错了，是周五",                        # "don't get it wrong"
    "我已经把那个app删了",                     # reports what the user did
    "我把闹钟关掉了",                          # reports what the user did, even of a service
    "delete the old photos from my phone",   # about the world: no service, no words about speech
    "那件事取消了",                            # reports that something was called off
])
def test_what_is_not_a_take_back(text):
    assert detect_revocation(text) is None, text


def test_an_attribute_is_named_by_what_it_is_not_by_a_word_near_it():
    assert detect_revocation("don't keep my home address").attribute == "location"
    assert detect_revocation("forget my house keys, I have a spare").attribute == ""  # keys, not where the user lives
    assert detect_revocation("forget who I work for").attribute == "employer"


def test_words_first_then_a_pointer_in_one_message():
    found = detect_revocations("hmm, I'd rather you didn't keep the health stuff. remove that please")
    assert [(r.about, r.pointer) for r in found] == [("health", False), ("", True)]


def _memory() -> MemoryManager:
    return MemoryManager(store_path=None, window_size=2)


def _texts(memory: MemoryManager, user: str) -> str:
    return " ".join(r["content"] for r in memory.store.records(user))


def _everywhere(memory: MemoryManager, user: str, query: str) -> str:
    return memory.build_context(query, user, top_k=10) + " " + _texts(memory, user) + " " + str(memory.facts(user))


def test_taking_back_a_thing_by_its_words_forgets_only_that_thing():
    memory = _memory()
    memory.add(Message("user", "My mortgage is 310k at 4.1 percent with Halden Bank.", "u"))
    memory.add(Message("user", "I play the cello in a community orchestra.", "u"))
    memory.add(Message("user", "The mortgage renewal is due in March.", "u"))
    memory.add(Message("user", "My sister Ilse lives in Bergen.", "u"))
    result = memory.add(Message("user", "please forget everything I told you about the mortgage", "u"))
    assert len(result.revoked) == 2 and "revocation_target:named" in result.reasons
    seen = _everywhere(memory, "u", "mortgage Halden bank renewal cello sister")
    assert "Halden" not in seen and "310k" not in seen and "renewal" not in seen
    assert "cello" in seen and "Bergen" in seen


def test_a_pointer_takes_back_the_previous_statement_whole():
    memory = _memory()
    memory.add(Message("user", "We are flying to Lima on the 4th.", "u"))
    memory.add(Message("user", "Oh and my brother Tomas is in rehab, so no bar tours.", "u"))
    result = memory.add(Message("user", "scrap that last bit, it's private", "u"))
    assert result.revoked and "revocation_target:pointer" in result.reasons
    seen = _everywhere(memory, "u", "who is coming to Lima, Tomas rehab bar")
    assert "rehab" not in seen and "Lima" in seen


def test_a_withdrawn_request_leaves_and_the_other_requests_stay():
    memory = _memory()
    memory.add(Message("user", "recommend me a sushi place for Friday", "u"))
    memory.add(Message("user", "and remind me to stretch every hour", "u"))
    memory.add(Message("user", "it is raining again", "u"))
    result = memory.add(Message("user", "quit recommending sushi places, I went off sushi", "u"))
    assert result.supersedes and not result.revoked and "revocation_target:withdrawn" in result.reasons  # superseded, kept
    seen = memory.build_context("what did I ask you to do: sushi, stretch", "u", top_k=10)
    assert "sushi place for Friday" not in seen and "stretch every hour" in seen


def test_a_request_withdrawn_by_its_service_leaves_and_other_requests_stay():
    memory = _memory()
    memory.add(Message("user", "from now on answer in metric units", "u"))
    memory.add(Message("user", "and ping me to review flashcards whenever we talk", "u"))
    memory.add(Message("user", "the flat is cold today", "u"))
    result = memory.add(Message("user", "kill the flashcard review pings please, exams are over", "u"))
    assert result.supersedes and "revocation_target:withdrawn" in result.reasons
    seen = memory.build_context("what standing requests did I give you?", "u", top_k=10)
    assert "flashcards" not in seen and "metric" in seen


def test_a_service_take_back_naming_another_thing_takes_nothing_back():
    memory = _memory()
    memory.add(Message("user", "remind me to call the plumber on Monday", "u"))
    memory.add(Message("user", "the fish oil ran out", "u"))
    result = memory.add(Message("user", "stop the fish oil reminders on my phone", "u"))
    assert not result.supersedes  # the only reminder is about the plumber: the fish oil one never was
    result = memory.add(Message("user", "昨天把闹钟关了，结果睡过头了", "u"))
    assert not result.supersedes  # a report of what the user did, not a request


def test_a_service_named_twice_and_no_other_word_takes_nothing_back():
    memory = _memory()
    memory.add(Message("user", "remind me to take out the bins on Tuesday", "u"))
    memory.add(Message("user", "also remind me to call the bank at noon", "u"))
    result = memory.add(Message("user", "cancel the reminder", "u"))
    assert not result.supersedes and "revocation_target_not_found" in result.reasons


def test_a_chinese_request_withdrawn_by_its_service():
    memory = _memory()
    memory.add(Message("user", "以后回复我都用中文", "u"))
    memory.add(Message("user", "每天早上七点提醒我量血压", "u"))
    memory.add(Message("user", "今天下雨了", "u"))
    assert memory.add(Message("user", "早上那个测量提醒取消吧", "u")).supersedes
    seen = memory.build_context("我给你定过哪些要求？", "u", top_k=10)
    assert "量血压" not in seen and "中文" in seen


def test_a_chinese_matter_taken_back_by_its_characters():
    memory = _memory()
    memory.add(Message("user", "下个月打算去成都看熊猫", "u"))
    memory.add(Message("user", "上周跟房东吵了一架，押金没退", "u"))
    result = memory.add(Message("user", "吵架的事儿抹掉吧，不想记着", "u"))
    assert result.supersedes and "revocation_target:recent" in result.reasons
    seen = memory.build_context("我最近有什么安排？押金 房东", "u", top_k=10)
    assert "押金没退" not in seen and "熊猫" in seen


def test_forgetting_an_attribute_takes_every_statement_of_it_and_nothing_else():
    memory = _memory()
    memory.add(Message("user", "my gym is on 12 Harbour St, I go at 7", "u"))
    memory.add(Message("user", "I live in Tromsø, near the bridge.", "u"))
    memory.add(Message("user", "the dog needs a walk", "u"))
    result = memory.add(Message("user", "on second thought, forget where I live please", "u"))
    assert "revocation_target:attribute" in result.reasons and len(result.supersedes) == 1
    seen = memory.build_context("where do I live? where is my gym?", "u", top_k=10)
    assert "Tromsø" not in seen and "Harbour St" in seen


def test_only_a_sentence_goes_when_the_message_said_more():
    memory = _memory()
    memory.add(Message("user", "I start at Norrvik Labs on Monday. My salary will be 92k.", "u"))
    memory.add(Message("user", "the weather is lovely", "u"))
    memory.add(Message("user", "delete what I told you about my salary", "u"))
    seen = _everywhere(memory, "u", "job salary Norrvik")
    assert "92k" not in seen and "Norrvik Labs on Monday" in seen


def test_chinese_take_backs():
    memory = _memory()
    memory.add(Message("user", "体检结果出来了，血脂有点高", "u"))
    memory.add(Message("user", "我下周去青岛出差", "u"))
    memory.add(Message("user", "今天好冷", "u"))
    assert memory.add(Message("user", "我之前说的体检结果都删掉吧", "u")).revoked
    seen = _everywhere(memory, "u", "体检 血脂 出差 青岛")
    assert "血脂" not in seen and "青岛" in seen


def test_words_that_name_nothing_take_nothing_back():
    memory = _memory()
    memory.add(Message("user", "I keep bees on the roof.", "u"))
    result = memory.add(Message("user", "forget what I said about the boat", "u"))
    assert result.revoked == () and "revocation_target_not_found" in result.reasons
    assert "bees" in _texts(memory, "u")


def test_dont_store_this_keeps_nothing_of_what_follows_on_disk(tmp_path):
    path = tmp_path / "store.json"
    with MemoryManager(store_path=path) as memory:
        result = memory.add(Message("user", "don't store this: my locker code is 5512 and I owe Reza money", "u"))
        assert "withheld_at_user_request" in result.reasons
        assert "owe" not in memory.build_context("what is my locker code, who do I owe?", "u")
    for file in tmp_path.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert b"Reza" not in data and b"5512" not in data, file


def test_a_taken_back_memory_leaves_the_files(tmp_path):
    path = tmp_path / "store.sqlite"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "My therapist is Dr Quillon on Thursdays.", "u"))
        memory.add(Message("user", "I like hiking.", "u"))
        assert memory.add(Message("user", "please forget what I told you about my therapist", "u")).revoked
    with MemoryManager(store_path=path) as memory:
        assert "Thursdays" not in memory.build_context("who is my therapist?", "u")
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert b"Quillon" not in file.read_bytes(), file


def test_inside_a_batch_a_take_back_is_never_shown_and_forgotten_after_it():
    memory = _memory()
    with memory.batch():
        memory.add(Message("user", "My PIN hint is the dog's birthday.", "u"))
        memory.add(Message("user", "forget what I said about the PIN hint", "u"))
    assert "dog's birthday" not in memory.build_context("PIN hint dog birthday", "u", top_k=10)


def test_another_user_never_loses_anything():
    memory = _memory()
    memory.add(Message("user", "My mortgage is with Halden Bank.", "a"))
    memory.add(Message("user", "My mortgage is with Orsa Bank.", "b"))
    memory.add(Message("user", "forget everything I told you about my mortgage", "b"))
    assert "Halden" in _texts(memory, "a") and "Orsa" not in _texts(memory, "b")


@pytest.mark.parametrize("earlier, request_", [
    ("My order number with the furniture shop is 55120.", "cancel my last order"),
    ("我在京东买了一台空气炸锅，订单明天到", "取消刚才的订单"),
    ("我下周三要开项目评审会议", "我刚才说的那个会议取消了"),
    ("My legacy app stores passwords in plain text.", "Never store passwords in plain text - use a hash"),
    ("I always log my runs in Strava.", "don't log me out of Strava please"),
    ("The old server config lives in /etc/app.conf.", "delete the info about the old server from the config file"),
    ("I'm writing a thesis on climate policy.", "Drop the thesis thing, I'll focus on my job"),
])
def test_a_request_about_the_world_deletes_nothing(earlier, request_):
    memory = _memory()
    memory.add(Message("user", earlier, "u"))
    memory.add(Message("user", "the weather is nice today", "u"))
    result = memory.add(Message("user", request_, "u"))
    assert result.revoked == () and earlier in _texts(memory, "u")


def test_a_pointer_after_the_assistants_turn_or_in_another_session_takes_nothing():
    memory = _memory()
    memory.add(Message("user", "I'm allergic to shellfish.", "u", session_id="a"))
    memory.add(Message("assistant", "Noted! Want me to add that to your profile?", "u", session_id="a"))
    assert memory.add(Message("user", "no, scrap that", "u", session_id="a")).revoked == ()
    memory.add(Message("user", "I'm allergic to penicillin.", "u", session_id="mon"))
    memory.end_session("u", "mon")
    assert memory.add(Message("user", "hmm wipe that", "u", session_id="fri")).revoked == ()
    assert "shellfish" in _texts(memory, "u") and "penicillin" in _texts(memory, "u")


def test_a_bare_my_last_one_after_the_assistants_question_names_no_words_of_the_user():
    memory = _memory()
    memory.add(Message("user", "I'm allergic to penicillin, please note it", "u"))
    memory.add(Message("assistant", "Want me to reorder the same vitamins as your last order?", "u"))
    assert memory.add(Message("user", "nah, forget my last one", "u")).revoked == ()
    assert "penicillin" in _texts(memory, "u")


@pytest.mark.parametrize("take_back", ["actually, delete my last message", "把我刚才那句删了吧，不想留着"])
def test_a_pointer_at_the_users_own_words_reaches_past_the_assistants_question(take_back):
    memory = _memory()
    said = memory.add(Message("user", "I owe my cousin 3,000 for the car repair", "u")).record_id
    memory.add(Message("assistant", "Got it. Want me to set a repayment reminder?", "u"))
    result = memory.add(Message("user", take_back, "u"))
    assert said in result.revoked and "3,000" not in _texts(memory, "u")


def test_a_plain_take_back_only_supersedes_what_was_just_said():
    memory = _memory()
    memory.add(Message("user", "I hate noisy hotel rooms.", "u", session_id="s"))
    for n in range(3):
        memory.add(Message("user", f"packing question {n}", "u", session_id="s"))
    memory.add(Message("user", "book the Hotel Lux in Porto for us", "u", session_id="s"))
    result = memory.add(Message("user", "Forget the hotel, we'll stay with friends", "u", session_id="s"))
    assert result.revoked == () and "noisy hotel rooms" in memory.build_context("hotel rooms noisy", "u", session_id="s", top_k=5)
    assert "Hotel Lux" not in memory.build_context("which hotel Lux Porto", "u", session_id="s", top_k=5)


def test_words_asked_not_to_be_stored_supersede_nothing():
    memory = _memory()
    memory.add(Message("user", "My dentist appointment is on Monday at 10am.", "u"))
    memory.add(Message("user", "don't store this: my dentist appointment is on Friday at 3pm now", "u"))
    assert "Monday at 10am" in memory.build_context("when is my dentist appointment?", "u", top_k=5)


def test_a_take_back_inside_add_messages_is_forgotten_after_the_batch():
    memory = _memory()
    memory.add_messages([{"role": "user", "content": "My loan is 20k with Norda Bank."},
                         {"role": "user", "content": "forget what I told you about the loan"}], user_id="u")
    assert "Norda" not in _texts(memory, "u")


def test_what_is_kept_of_the_user_is_taken_back_whenever_the_session_said_it():
    memory = _memory()  # a window of two: the number has left it by the time it is taken back
    memory.add(Message("user", "my locker code at the pool is 5150, handy for later", "u", session_id="s"))
    memory.add(Message("user", "I swim on Tuesdays and Thursdays", "u", session_id="s"))
    memory.add(Message("user", "the pool closes at nine", "u", session_id="s"))
    memory.add(Message("user", "actually, forget my locker code, I'd rather you didn't hold onto it", "u", session_id="s"))
    context = memory.build_context("what's my locker code at the pool?", "u", session_id="s", top_k=5)
    assert "5150" not in context
    assert "Tuesdays" in memory.build_context("when do I swim?", "u", session_id="s", top_k=5)
    memory.add(Message("user", "车牌号是浙A·7Q2K9，停车登记要用", "z", session_id="s"))
    memory.add(Message("user", "今天游了一千米", "z", session_id="s"))
    memory.add(Message("user", "周六要去爬山", "z", session_id="s"))
    memory.add(Message("user", "车牌号你别存了，不太放心", "z", session_id="s"))
    assert "7Q2K9" not in memory.build_context("我的车牌号是多少", "z", session_id="s", top_k=5)
    assert "爬山" in memory.build_context("周六我要干嘛", "z", session_id="s", top_k=5)


@pytest.mark.parametrize("asked, withdrawn, kept, query", [
    ("以后每周五帮我推荐一部悬疑电影吧", "不用再推荐悬疑电影了，最近不想看", "我周五晚上一般在家", "周五晚上干点什么"),
    ("this weekend can you remind me to repot the ficus", "stop reminding me to repot the ficus, done it", "I keep the ficus by the window",
     "anything to do this weekend?"),
])
def test_a_request_after_a_time_word_is_a_request_and_can_be_withdrawn(asked, withdrawn, kept, query):
    memory = _memory()
    memory.add(Message("user", asked, "u"))
    memory.add(Message("user", kept, "u"))
    memory.add(Message("user", withdrawn, "u"))
    context = memory.build_context(query, "u", top_k=5)
    assert asked not in context and kept in context


def test_a_correction_and_a_take_back_in_one_message_both_speak():
    memory = MemoryManager(store_path=None, window_size=1)
    memory.add(Message("user", "the book club meets on Wednesday at 7", "u"))
    memory.add(Message("user", "my gate code is 4471", "u"))
    said = memory.add(Message("user", "Oops, book club is on Thursday, not Wednesday. And forget my gate code.", "u"))
    assert len(said.supersedes) == 2
    assert "Wednesday at 7" not in memory.build_context("when does the book club meet?", "u", top_k=5)
    assert "4471" not in memory.build_context("what's my gate code?", "u", top_k=5)


@pytest.mark.parametrize("text", ["今天请假了", "周末不用上班", "晚上别人都睡了", "早上给我打了电话", "现在请假很难",
                                  "tomorrow never comes", "请客的是老王"])
def test_a_time_word_or_a_look_alike_marker_does_not_make_a_statement_a_request(text):
    from v2_memory.text.segmenter import read_message
    assert [c.act for c in read_message(text)] != ["request"], text


@pytest.mark.parametrize("said, other, take_back, query, gone, kept", [
    ("my daughter just started year 2 at Larchfield Academy", "she is obsessed with drawing horses",
     "actually don't keep the school name, I'd rather you didn't", "gift ideas for my daughter", "Larchfield", "horses"),
    ("闺女在育才三小读一年级", "她最近爱上了画画", "学校你就别记了，不太放心", "给闺女买点什么好", "育才三小", "画画"),
    ("please keep pestering me to book the vet for Mochi's shots", "also remind me to pay the water bill",
     "you can stop reminding me about the pet stuff, sorted it", "what should I still do?", "Mochi", "water bill"),
])
def test_a_thing_taken_back_by_its_kind_goes_and_nothing_else(said, other, take_back, query, gone, kept):
    memory = _memory()
    memory.add(Message("user", said, "u", session_id="s"))
    memory.add(Message("user", other, "u", session_id="s"))
    result = memory.add(Message("user", take_back, "u", session_id="s"))
    assert result.supersedes == (1,), result.reasons
    context = memory.build_context(query, "u", session_id="s", top_k=5)
    assert gone not in context and kept in context


def test_a_kind_named_twice_in_the_recent_turns_takes_back_neither():
    memory = _memory()  # "forget the dinner thing" with two dinners in view: which one is unsaid
    memory.add(Message("user", "book me a table at Osteria Lupa for Friday", "u"))
    memory.add(Message("user", "and a dinner with my in-laws on Sunday at Kim's Garden", "u"))
    result = memory.add(Message("user", "hmm forget the restaurant thing", "u"))
    assert not result.supersedes and "revocation_target_not_found" in result.reasons


@pytest.mark.parametrize("text, about", [
    ("ok scrap the whole lunch booking, the client bailed", "lunch"),
    ("nvm, cancel the trip plans", "trip"),
    ("这个称呼别再用了", "称呼"),
    ("那个小名别这么叫了哈", "小名"),
])
def test_calling_off_a_plan_or_a_name_withdraws_the_request(text, about):
    found = detect_revocation(text)
    assert found is not None and found.withdraws and about in found.about


@pytest.mark.parametrize("text", ["cancel the meeting", "we had to cancel the dinner, the babysitter was sick",
                                  "我不用了", "我们已经不叫了"])
def test_calling_off_the_world_or_reporting_is_no_withdrawal(text):
    found = detect_revocation(text)
    assert found is None or not found.withdraws


def test_a_name_the_user_asked_for_is_dropped_and_the_name_friends_use_stays():
    memory = _memory()
    memory.add(Message("user", "大家都叫我小满", "u"))
    memory.add(Message("user", "你以后就叫我满哥吧", "u"))
    result = memory.add(Message("user", "满哥这个外号别用了，有点土", "u"))
    assert result.supersedes == (2,), result.reasons
    context = memory.build_context("你该怎么称呼我", "u", top_k=5)
    assert "小满" in context and "你以后就叫我满哥吧" not in context


@pytest.mark.parametrize("text", ["hmm, remove that last message please", "scrap my last text", "delete that one"])
def test_a_message_pointed_at_by_its_name_is_the_previous_turn(text):
    found = detect_revocation(text)
    assert found is not None and found.pointer and not found.about


@pytest.mark.parametrize("text, pointer, said", [
    ("ok pretend I never said that, it's not official yet", True, False),
    ("刚才那句就当我没说", True, False),
    ("把关于我体检结果的那部分删了吧", False, True),
])
def test_unsaying_and_the_part_about_a_thing(text, pointer, said):
    found = detect_revocation(text)
    assert found is not None and (found.pointer, found.said) == (pointer, said)


def test_a_service_taken_back_with_a_suggesting_ba_is_said_to_the_assistant():
    found = detect_revocation("狗那个喂药提醒取消吧，我老公会管")
    assert found is not None and found.withdraws and found.service == "remind"
    assert detect_revocation("他把那个提醒取消了吧") is None  # a guess about what he did


def test_grades_taken_back_by_their_kind():
    memory = _memory()
    memory.add(Message("user", "女儿期中数学考了71分，语文88", "u", session_id="s"))
    memory.add(Message("user", "她周三下午有舞蹈课", "u", session_id="s"))
    result = memory.add(Message("user", "把关于女儿成绩的那段删掉吧，她不想让人知道", "u", session_id="s"))
    assert result.revoked == (1,), result.reasons
    context = memory.build_context("女儿这周有什么安排", "u", session_id="s", top_k=5)
    assert "71分" not in context and "舞蹈课" in context


def test_a_take_back_followed_by_its_reason_as_a_supposition_still_takes_back():
    memory = MemoryManager(store_path=None)
    memory.add(Message("user", "my cousin's birthday is May 9, she likes carrot cake"))
    split = memory.add(Message("user", "and she's in the middle of a messy split from Tom, custody fight and all")).record_id
    memory.add(Message("assistant", "That sounds rough for her."))
    result = memory.add(Message("user", "please forget the part about her divorce, she'd hate it if anyone knew"))
    assert split in result.supersedes  # a plain thing among the recent turns: superseded, as documented
    context = memory.build_context("what do you know about my cousin?")
    assert "Tom" not in context and "carrot cake" in context


def test_the_name_of_a_thing_is_taken_back_by_its_kind():
    """"forget the name of my band" takes the sentence that named it ("a trio called Marrowbone"),
    though it shares none of its words; with two names in view, neither; named words still find
    their own sentence first."""
    memory = _memory()
    memory.add(Message("user", "I work nights at the depot", "u"))
    memory.add(Message("user", "on sundays we rehearse in a garage, a trio called Marrowbone", "u"))
    result = memory.add(Message("user", "actually forget the name of my band, we might rename it", "u"))
    assert result.supersedes
    assert "Marrowbone" not in memory.build_context("what's my band called?", "u", top_k=10)
    assert "depot" in memory.build_context("where do I work?", "u", top_k=10)

    memory = _memory()
    memory.add(Message("user", "my dog is named Biscuit", "u"))
    memory.add(Message("user", "my cat is called Mochi", "u"))
    assert not memory.add(Message("user", "forget the name of my pet", "u")).supersedes  # which pet?
    memory.add(Message("user", "my dentist is Dr. Okafor on Elm St", "u"))
    assert memory.add(Message("user", "forget the name of my dentist", "u")).supersedes


def test_what_was_said_yesterday_is_the_users_own_words():
    """"昨天说的…" leaves the speaker unsaid, as Chinese does: the user's own words, taken back."""
    reading = detect_revocation("昨天说的那个外号你忘掉吧")
    assert reading is not None and reading.said
    assert detect_revocation("老师说的那个外号你忘掉吧") is None or not detect_revocation("老师说的那个外号你忘掉吧").said
