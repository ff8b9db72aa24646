"""Confirmation by reply (issue 19, class 3): the user's yes to the assistant message right before
it verifies that message, a no supersedes it; the model's own unverified words leave the window
once they are no longer its last turn. The sentences are this file's own."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.governance.reply import reply_to


@pytest.mark.parametrize("text, answer", [
    ("yep, lock it in", "accept"),
    ("sure thing", None),                      # "thing" is more than a yes: not read as one
    ("that one works, reserve it", "accept"),
    ("perfect, send it", "accept"),
    ("行，就按这个来", "accept"),
    ("好的", "accept"),
    ("nah, the cheaper one", "deny"),
    ("not quite — it's the 12th", "deny"),
    ("不对，是下周二", "deny"),
    ("no problem at all", None),
    ("is that the cheaper one?", None),
    ("ok and what about parking", None),
    ("不过我得问问我老婆", None),
])
def test_how_a_reply_answers(text, answer):
    assert reply_to(text, asked=True) == answer


def test_a_bare_ok_after_a_statement_acknowledges_it_and_vouches_for_nothing():
    assert reply_to("ok", asked=False) is None and reply_to("好的", asked=False) is None
    assert reply_to("exactly", asked=False) == "accept" and reply_to("没错", asked=False) == "accept"


def _chat(memory: MemoryManager, *turns: tuple[str, str]) -> list:
    return [memory.add(Message(role, text, "u", session_id="s")) for role, text in turns]


def test_a_yes_verifies_the_assistants_offer_so_it_is_remembered():
    memory = MemoryManager(store_path=None, window_size=2)
    results = _chat(memory, ("user", "find me a dentist slot next week"),
                    ("assistant", "Dr Okoye has Thursday at 16:20 free."),
                    ("user", "yep, lock it in"),
                    ("assistant", "Booked."), ("user", "thanks"), ("assistant", "Anytime."))
    assert "verified_previous_reply" in results[2].reasons
    assert memory.governor.states([results[1].record_id])[results[1].record_id].verified
    assert "16:20" in memory.build_context("when is my dentist appointment?", "u", session_id="s")


def test_a_no_rejects_the_assistants_guess_everywhere():
    memory = MemoryManager(store_path=None, window_size=4)
    results = _chat(memory, ("user", "my passport renewal came through"),
                    ("assistant", "Great, so it now expires in March 2034?"),
                    ("user", "nah, October 2035"))
    assert "rejected_previous_reply" in results[2].reasons
    context = memory.build_context("when does my passport expire?", "u", session_id="s")
    assert "2034" not in context and "2035" in context


def test_the_model_cannot_confirm_itself():
    memory = MemoryManager(store_path=None)
    results = _chat(memory, ("assistant", "Your flight is at 7am."), ("assistant", "yes, correct"))
    assert "verified_previous_reply" not in results[1].reasons
    assert not memory.governor.states([results[0].record_id])[results[0].record_id].verified


def test_an_unanswered_guess_leaves_the_window_once_the_talk_moves_on():
    memory = MemoryManager(store_path=None, window_size=4)
    _chat(memory, ("user", "my blender broke again"),
          ("assistant", "Your blender's warranty probably runs until 2031."),
          ("user", "hmm. anyway, suggest a smoothie recipe"),
          ("assistant", "Banana, oats, peanut butter and milk."))
    context = memory.build_context("is my blender under warranty?", "u", session_id="s")
    assert "2031" not in context and "Banana" in context  # the last turn stays: the user answers it


@pytest.mark.parametrize("text", ["please don't book that", "I can't use that, I'm not admin", "这个方案不行，别加到计划里",
                                  "yes, but it leaves at 10pm", "对，不过是周四"])
def test_a_negated_take_up_or_a_yes_with_a_but_verifies_nothing(text):
    assert reply_to(text, asked=True) != "accept"


def test_a_yes_in_another_session_or_task_verifies_nothing():
    memory = MemoryManager(store_path=None, window_size=4)
    guess = memory.add(Message("assistant", "Your blood type is A+, shall I note it?", "u", session_id="a"))
    memory.end_session("u", "a")
    assert "verified_previous_reply" not in memory.add(Message("user", "Yes.", "u", session_id="b")).reasons
    offer = memory.add(Message("assistant", "Step 1: drop the users table. Shall I proceed?", "u", task_id="x"))
    assert "verified_previous_reply" not in memory.add(Message("user", "sure", "u", task_id="y")).reasons
    states = memory.governor.states([guess.record_id, offer.record_id])
    assert not states[guess.record_id].verified and not states[offer.record_id].verified


def test_a_new_session_answers_nothing_the_model_said_in_the_last_one():
    memory = MemoryManager(store_path=None, window_size=4)
    memory.add(Message("user", "for this chat only, talk like a 1920s radio announcer", "u", session_id="old"))
    memory.add(Message("assistant", "Good evening, ladies and gentlemen of the wireless!", "u", session_id="old"))
    memory.end_session("u", "old")
    memory.add(Message("user", "draft a formal note to my landlord about the boiler", "u", session_id="new"))
    context = memory.build_context("go ahead", "u", session_id="new")
    assert "wireless" not in context and "landlord" in context
    memory.add(Message("assistant", "Dear Ms. Okafor, the boiler has failed twice this week.", "u", session_id="new"))
    assert "Okafor" in memory.build_context("go ahead", "u", session_id="new")  # this session's last turn stays


@pytest.mark.parametrize("text, answer", [
    ("great, that's the one, I reserved it already", "accept"),   # taking it up, said in the past
    ("we went with that one", "accept"),
    ("I never ordered it", None),                                    # a negated take-up takes nothing up
    ("didnt book that in the end", None),
])
def test_taking_up_is_read_in_any_tense(text, answer):
    assert reply_to(text) == answer


@pytest.mark.parametrize("reply, offer, answer", [
    ("订吧，下午三点", "这家评分4.8，人均120，要订吗？", "accept"),  # the question's verb, echoed
    ("买呗", "这款有货，要不要买？", "accept"),
    ("去", "周六去不去？", "accept"),
    ("不订", "要订吗？", None),
    ("订吧", "这家评分4.8，人均120。", None),                          # nothing was asked
    ("算了吧", "要订吗？", None),                                       # another word: not the verb
])
def test_a_chinese_yes_may_echo_the_verb(reply, offer, answer):
    assert reply_to(reply, asked="？" in offer, offer=offer) == answer


def test_an_echoed_yes_verifies_the_offer_and_it_is_remembered(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "周末聚餐帮我找家川菜", "mei"))
        offer = memory.add(Message("assistant", "蜀香园评分4.8，人均120，要订吗？", "mei")).record_id
        result = memory.add(Message("user", "订吧，周六晚上六点", "mei"))
        assert "verified_previous_reply" in result.reasons
        assert memory.governor.states([offer])[offer].verified


@pytest.mark.parametrize("reply, offer", [
    ("I used it last year and hated it", "Want me to add the Headspace app to your list?"),
    ("took that one last week and it was late", "Should I take the 6pm train?"),
    ("tried that one, it's the one that made me sick", "Want to try the 3-day keto plan?"),
    ("I sent it already", "Would you like me to send the invoice to Dana?"),
    ("难", "考试难吗？"),                                        # an answer, not a yes to an offer
])
def test_what_happened_before_is_no_yes(reply, offer):
    assert reply_to(reply, asked=True, offer=offer) is None


@pytest.mark.parametrize("text, answer", [
    ("love it, lock that in", "accept"),
    ("I like this. go", "accept"),
    ("行，就这款了", "accept"),
    ("嗯，就那家吧", "accept"),
    ("I love it when the bus is late", None),      # a love that takes nothing up
    ("I like this, but make it vegetarian", None),  # a yes with a change is no yes
    ("就这个了？", None),                            # a question back
])
def test_taking_up_what_the_assistant_proposed_after_a_statement(text, answer):
    assert reply_to(text, asked=False) == answer


@pytest.mark.parametrize("text, answer", [
    ("nice, I'll try that this weekend", "accept"),   # committing to do what was proposed
    ("great, gonna follow this", "accept"),
    ("行，那就做这个", "accept"),
    ("let's do that some other time", None),            # put off: taken up later, if at all
    ("I'll do it later, maybe", None),
    ("I won't do that", None),
    ("I'll do that myself, thanks", None),                # declines the offer
    ("I'll try that when I get home next month", None),  # put off
    ("我就试试自己打电话吧", None),
    ("我早就试过这个了，效果一般", None),                   # tried before: no take-up
])
def test_committing_to_what_the_assistant_proposed_takes_it_up(text, answer):
    assert reply_to(text, asked=False) == answer


@pytest.mark.parametrize("text, answer", [
    ("yes that matches the letter from the clinic", "accept"),  # a yes, then why it is so
    ("yeah, same as on my boarding pass", "accept"),
    ("没错就是下周三", "accept"),
    ("对的，跟合同上写的一样", "accept"),
    ("yes and also add oat milk", None),                        # a yes leading something new
    ("yeah could you remind me tomorrow", None),
    ("yeah no clue honestly", None),
    ("yes it isn't that one", None),
    ("对了，我下周出差", None),                                   # by the way: no yes at all
])
def test_a_yes_that_goes_on_saying_so_vouches(text, answer):
    assert reply_to(text) == answer


def test_a_yes_with_its_reason_verifies_the_statement(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        memory.add(Message("user", "the scan says I'm 12 weeks along", "mia"))
        memory.add(Message("assistant", "That puts your due date around the 24th of October.", "mia"))
        memory.add(Message("user", "yes that's what the midwife said as well", "mia"))
        memory.add(Message("user", "ok, something else", "mia"))
        clock.advance(days=3)
        assert "24th of October" in memory.build_context("when is my due date?", "mia")


def test_picking_one_of_the_assistants_options_keeps_that_one_only():
    """"the second one", "第一个吧", a yes to "… I'd go with X. Book X?": the chosen option is the
    user's, verified; the others leave with the message (a split keeps the rest)."""
    offer = "Two flights work: the 7:15 on Finnair landing at 10:40, or the 9:50 on KLM landing at 13:05. Both are refundable."
    memory = MemoryManager(store_path=None)
    memory.add(Message("assistant", offer, "u"))
    result = memory.add(Message("user", "the second one, I hate early alarms", "u"))
    assert "chose_option" in result.reasons
    context = memory.build_context("which flight am I on?", "u")
    assert "9:50 on KLM" in context and "7:15" not in context and "refundable" in context

    memory = MemoryManager(store_path=None)
    memory.add(Message("assistant", "可以订周五晚上七点的川菜馆，或者周六中午的粤菜馆，我更推荐川菜馆。订川菜馆？", "u"))
    assert "chose_option" in memory.add(Message("user", "好啊，订吧，我周五有空", "u")).reasons
    context = memory.build_context("我们去哪家吃？", "u")
    assert "川菜馆" in context and "粤菜馆" not in context

    for reply in ["not the first one", "no, neither", "hmm let me think", "what about the price?"]:
        memory = MemoryManager(store_path=None)
        memory.add(Message("assistant", offer, "u"))
        assert "chose_option" not in memory.add(Message("user", reply, "u")).reasons, reply
