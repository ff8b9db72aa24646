"""A pause ends a conversation: what came before is history, judged as history (issue 19).

The recent window shows turns verbatim, without governance's judgement of history, because they
are the conversation going on. After a pause of ``CONVERSATION_GAP`` (8 hours) they are not: a
read shows them through the summary, whose rules apply (a supposition is not the user's story).
"""
from __future__ import annotations

from v2_memory import MemoryManager, Message
from v2_memory.governance.summary_view import only_asks, supposes
from v2_memory.governance.track_view import CONVERSATION_GAP, picks_up
from v2_memory.text.segmenter import read_message


def _chat(memory, clock, *turns):
    for role, text in turns:
        memory.add(Message(role, text, "kai"))
        clock.advance(minutes=1)


def test_turns_before_a_pause_leave_the_window_for_the_summary(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "I commute by bike, 12 km each way"), ("assistant", "Nice distance."),
              ("user", "lunch is at noon today"), ("assistant", "Enjoy it."))
        assert "recent: user: I commute by bike" in memory.build_context("how do I get to work?", "kai")
        clock.advance(hours=9)
        later = memory.build_context("how do I get to work?", "kai")
        assert "recent: user: I commute" not in later and "summary:" in later and "12 km each way" in later
        assert "Nice distance" not in later  # the model's unverified words never enter the summary
        # A question of its own after the night does not pick up the last exchange: history too.
        assert "recent:" not in later
        # One that picks it up ("is it ...") has it, as it was left (see below).
        assert "recent: user: lunch is at noon today" in memory.build_context("is it still at noon?", "kai")
        _chat(memory, clock, ("user", "new week, new playlist"))  # may be about the last exchange: it stays
        assert "recent: user: lunch is at noon today" in memory.build_context("how do I get to work?", "kai")
        _chat(memory, clock, ("assistant", "Nice, what's on it?"))  # answered: the new exchange is the last
        now = memory.build_context("how do I get to work?", "kai")
        assert "recent: user: new week, new playlist" in now and "recent: user: lunch" not in now


def test_a_short_pause_keeps_the_conversation(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "I commute by bike, 12 km each way"))
        clock.advance(hours=1)
        assert "recent: user: I commute by bike" in memory.build_context("how do I get to work?", "kai")
    assert CONVERSATION_GAP.total_seconds() == 8 * 3600


def test_a_supposition_is_history_but_not_the_users_story(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "I drive an old Corolla, 200k miles on it"),
              ("user", "if I get the bonus we'll buy an electric Kia"), ("user", "ok, lunch time"))
        assert "electric Kia" in memory.build_context("what car do I drive?", "kai")  # the conversation, verbatim
        clock.advance(days=2)
        later = memory.build_context("what car do I drive?", "kai")
        assert "Corolla" in later and "electric Kia" not in later
        assert "electric Kia" in memory.build_context("the bonus and the electric Kia", "kai")  # found when asked
        entries = {e.record_id: e for e in memory.explain("what car do I drive?", "kai").summary}
        assert [e.reasons for e in entries.values() if not e.shown] == [("hypothetical",)]


def test_what_counts_as_only_supposing():
    assert supposes("如果明年换工作，我就搬去杭州") == ("hypothetical",)
    assert supposes("we'd get a dog if the landlord allowed it") == ("hypothetical",)  # one clause, all supposed
    assert supposes("I love Thai food, if you're ever picking a place") == ()
    assert supposes("I moved to Lyon") == ()
    assert supposes("say hypothetically I won $30k, what would you buy?") == ("hypothetical",)
    # a bound condition beside the user's story supposes only itself: the story stays
    assert supposes("I rent in Leith, my landlord would freak out if I got a dog") == ()


def test_a_number_grouped_by_commas_is_one_clause():
    assert [c.core for c in read_message("rent goes up to $2,150 in May, sadly")] == ["rent goes up to $2,150 in May", "sadly"]
    assert [c.core for c in read_message("我走了12,000步，累死")] == ["我走了12,000步", "累死"]


def test_a_question_to_the_assistant_is_not_the_users_story(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _chat(memory, clock, ("user", "our team ships releases only on Tuesdays"), ("user", "how long do soft-boiled eggs take?"),
              ("user", "remind me to water the ferns on Sundays"), ("user", "ok"), ("user", "thanks"))
        summary = memory.build_context("can we ship the fix on Friday?", "kai")
        assert "Tuesdays" in summary and "ferns" in summary and "soft-boiled" not in summary  # a request stays
        reasons = [e.reasons for e in memory.explain("eggs", "kai").summary if not e.shown]
        assert reasons == [("question",)]
        assert "soft-boiled" in memory.build_context("how long for soft-boiled eggs?", "kai")  # asked again: found


def test_a_doubt_about_oneself_is_a_question_and_what_follows_says_why(clock):
    """"am I …?", "我是不是…", "要不要…" then the reason for asking: the message asks; the answer the
    user found later is the story. A question followed by a plan of the user's stays."""
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _chat(memory, clock, ("user", "am I anemic? I get dizzy every time I stand up"),
              ("user", "我是不是对猫过敏啊，一撸猫就打喷嚏"), ("user", "what time is it? I'm meeting Sam at 5"))
        clock.advance(days=3)
        _chat(memory, clock, ("user", "blood test came back: iron is fine, it's low blood pressure"),
              ("user", "ok"), ("user", "thanks"))
        shown = {e.record_id: e.reasons for e in memory.explain("what did my blood test say?", "kai").summary}
        assert shown[1] == ("question",) and shown[2] == ("question",) and shown[3] == ()
    for text, asks in [("i wonder if i'm lactose intolerant, milk wrecks me", True), ("要不要辞职啊，天天加班", True),
                       ("should I switch to the night shift? it pays 20% more", True),
                       ("I'm lactose intolerant, is oat milk ok?", False), ("do fish sleep? my goldfish never blinks", False)]:
        assert (only_asks(text) == ("question",)) is asks, text


def test_a_hedged_fact_is_the_users_story():
    for text in ("If it helps, I'm allergic to peanuts", "in case it matters, I'm diabetic",
                 "万一你忘了，我对青霉素过敏", "如果没记错的话，我的护照三月到期"):
        assert supposes(text) == (), text


def test_what_picks_up_the_conversation_it_comes_back_to():
    for query in ["tell me more about the second one", "is that place open on Sundays?", "anything else?",
                  "那家店几点关门？", "第二个呢？", "继续", "and the other?"]:
        assert picks_up(query), query
    for query in ["what car do I drive?", "我住在哪一带？", "where do I work now?", "how much is my rent?"]:
        assert not picks_up(query), query


def test_a_question_of_its_own_after_a_night_leaves_the_supposition_it_came_back_to(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "我现在住成都，玉林路那边"), ("assistant", "那边很有生活气息。"),
              ("user", "要是哪天去柏林，我想住十字山区"), ("assistant", "那边很文艺。"))
        assert "十字山" in memory.build_context("我住在哪一带？", "kai")  # the conversation going on: verbatim
        clock.advance(hours=9)
        later = memory.build_context("我住在哪一带？", "kai")
        assert "玉林路" in later and "十字山" not in later  # a supposition is not the user's story
        assert "十字山" in memory.build_context("那边有什么好吃的？", "kai")  # picked up: the exchange stays


def test_an_unshown_reply_still_ends_the_last_exchange(clock):
    """The assistant's last reply, unconfirmed, is not shown in a new session; it still answered
    the user's last turn, so an older exchange (a month old) does not pass for the recent one."""
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "I work out of the Denver office"), ("assistant", "Got it."))
        clock.advance(days=30)
        _chat(memory, clock, ("user", "my sister visits in May"), ("assistant", "Any plans for her visit?"))
        context = memory.build_context("what should we do in May?", "kai", session_id="new")
        assert "recent: user: my sister visits in May" in context and "Any plans" not in context
        assert "recent: user: I work out of the Denver office" not in context


def test_the_last_exchange_survives_a_night(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=6) as memory:
        _chat(memory, clock, ("user", "which laptop for video editing under $2,000?"),
              ("assistant", "Two options: the MacBook Pro 14 at $1,999, or the ProArt P16 at $1,899."),
              ("user", "def f(x):\n    return x * 2"))
        clock.advance(hours=9)
        later = memory.build_context("tell me more about the second option", "kai")
        assert "ProArt P16" in later and "which laptop" in later and "return x * 2" in later


def _days(memory, clock, texts):
    """One message a day: each its own conversation."""
    for text in texts:
        memory.add(Message("user", text, "kai"))
        clock.advance(hours=20)


_ASIDES = ["the new deli on Elm smells of smoked fish", "my cousin's band played last night", "the lift at work is out again",
           "it rained all afternoon", "the neighbours painted their door green", "my jeans shrank in the wash",
           "the park was full of kites", "the train was twelve minutes late", "a pigeon sat on the balcony rail",
           "the bakery ran out of rye", "my phone battery died at lunch"]


def test_of_earlier_conversations_the_summary_keeps_what_the_read_is_about_and_the_newest_asides(clock):
    from v2_memory.governance.track_view import EARLIER_SNIPPETS

    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _days(memory, clock, ["my passport number ends in 4471 and it expires in June"] + _ASIDES)
        entries = memory.explain("do I need to renew my passport soon?", "kai").summary
        left_out = [e.record_id for e in entries if "earlier_conversation" in e.reasons]
        shown = [e.record_id for e in entries if e.shown]
        assert 1 in shown  # about the read: kept however old
        assert left_out and max(left_out) < min(r for r in shown if r != 1)  # the oldest asides go first
        assert len([r for r in shown if r != 1]) <= EARLIER_SNIPPETS
        context = memory.build_context("do I need to renew my passport soon?", "kai")
        assert "smoked fish" not in context and "passport" in context


def test_when_an_earlier_snippet_shares_two_words_other_conversations_stay_out(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _days(memory, clock, ["the book club picked Middlemarch for May, we meet at Priya's"] + _ASIDES[:4]
              + ["my niece's class is reading Matilda this term"] + _ASIDES[4:7])
        query = "what is the book club reading, and where do we meet?"
        entries = memory.explain(query, "kai").summary
        assert [e.record_id for e in entries if e.shown] == [1]  # "reading" alone, another day: not what is asked
        context = memory.build_context(query, "kai")
        assert "Middlemarch" in context and "Matilda" not in context and "smoked fish" not in context


def test_the_exchange_after_what_the_read_found_comes_with_it(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _chat(memory, clock, ("user", "my sister's wedding is in Porto, I need a hotel for three nights"),
              ("assistant", "Would the Ribeira area suit you, near the river?"),
              ("user", "too touristy for me, somewhere quiet in Foz"),  # answers the question: part of the exchange
              ("assistant", "Casa da Foz is small and quiet, about 90 euros a night."),
              ("user", "yes, that one"),  # takes it up: the suggestion is verified
              ("user", "my cousin started a pottery class, she loves it"))  # a new topic
        clock.advance(hours=30)
        _chat(memory, clock, ("user", "the gym reopened after the repairs"))
        clock.advance(hours=30)
        _chat(memory, clock, ("user", "what is a good podcast about history?"), ("assistant", "Try 'The Rest Is History'."))
        context = memory.build_context("which hotel did we settle on for my sister's wedding?", "kai")
        assert "quiet in Foz" in context and "Casa da Foz" in context
        assert "pottery" not in context and "gym reopened" not in context


def test_a_snippet_sharing_one_word_does_not_cut_the_asides_that_may_hold_the_answer(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _days(memory, clock, ["parked in the airport garage, level P4, spot 118"] + _ASIDES[:3]
              + ["watched a silly film on the plane"] + _ASIDES[3:5])
        # "plane" is one shared word: the fact that shares none stays among the newest asides
        context = memory.build_context("just landed, where did I leave the car? I was on the plane all day", "kai")
        assert "level P4" in context


def test_what_only_asks_goes_before_what_states_something(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _days(memory, clock, ["I teach chemistry at a night school"] + [f"write me a limerick about item {n}" for n in range(8)]
              + ["it rained all afternoon"])
        context = memory.build_context("what should I plan for the weekend?", "kai")
        assert "chemistry" in context  # an old statement outlives newer one-off requests
        assert "limerick about item 0" not in context


def test_the_conversation_in_progress_is_recapped_whole(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        for text in ["my passport expires in June"] + _ASIDES:
            memory.add(Message("user", text, "kai"))
            clock.advance(minutes=2)
        entries = memory.explain("when does my passport expire?", "kai").summary
        assert entries and all("earlier_conversation" not in e.reasons for e in entries)


def test_a_memory_line_is_not_repeated_in_the_summary(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        for text in ["the boiler service is booked for the 14th", "I started pottery classes", "lunch", "coffee"]:
            memory.add(Message("user", text, "kai"))
        lines = memory.build_context("when is the boiler service?", "kai").splitlines()
        assert [line for line in lines if "boiler" in line] == ["memory(" + lines[-1].split("(", 1)[1]]
        assert lines[0] == "summary: [1 earlier message] user: I started pottery classes"


def test_a_message_pointing_back_at_what_the_read_found_comes_with_it(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _chat(memory, clock, ("user", "和房东约了周六上午看房"), ("assistant", "好的。"),
              ("user", "他说小区东门进，3号楼"), ("assistant", "记下了。"),  # "他": the landlord
              ("user", "今天的咖啡太苦了"))  # a new topic
        clock.advance(hours=30)
        _chat(memory, clock, ("user", "晚上吃什么好"), ("assistant", "面条吧。"))
        context = memory.build_context("跟房东看房是什么时候，在哪", "kai")
        assert "3号楼" in context and "咖啡" not in context


def test_a_question_sharing_the_querys_words_is_not_what_the_read_found(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=2) as memory:
        _days(memory, clock, ["is Rex's vet appointment on Monday?", "the clinic booked Rex for Thursday at 4"] + _ASIDES[:4])
        # the old question shares three words, the answer one: the question cuts nothing
        context = memory.build_context("when is Rex's vet appointment?", "kai")
        assert "Thursday at 4" in context
