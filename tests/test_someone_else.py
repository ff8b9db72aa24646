"""Someone else's story, then the user's own (issue 19): the summary shows the user's.

"My sister is vegan" followed by "I eat everything myself" tells of two people; a later read
about the user ("what do I eat?") should see the user's, not the sister's. Without the user
setting their own against it, or when the query asks about the other person, nothing is left out.
"""
from __future__ import annotations

from v2_memory import MemoryManager, Message


def _chat(memory, clock, *turns, user="ines"):
    for role, text in turns:
        memory.add(Message(role, text, user))
        clock.advance(minutes=1)


def _asides(memory, clock):
    clock.advance(days=3)  # a pause: what came before is an earlier conversation, seen through the summary
    _chat(memory, clock, ("user", "how many ounces in a cup"), ("assistant", "Eight fluid ounces."),
          ("user", "is it going to rain this weekend"), ("assistant", "I can't see forecasts, sorry."))


def _reasons(memory, query, user="ines"):
    return {tuple(e.reasons) for e in memory.explain(query, user).summary if not e.shown}


def test_the_other_persons_story_leaves_the_summary_when_the_user_sets_their_own_against_it(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "my brother Tomas is training for a triathlon this spring"),
              ("assistant", "Big goal!"), ("user", "personally I only do yoga, twice a week"))
        _asides(memory, clock)
        context = memory.build_context("writing a short bio: what exercise do I do?", "ines")
        assert "yoga" in context and "triathlon" not in context
        assert ("someone_else",) in _reasons(memory, "writing a short bio: what exercise do I do?")
        # Asked about the brother, his story is what the read is about: it stays.
        assert "triathlon" in memory.build_context("what is Tomas training for?", "ines")


def test_the_same_in_chinese(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "我爸一直想让我回老家当老师"), ("assistant", "家里人总有想法。"),
              ("user", "我自己准备去深圳做前端开发"))
        _asides(memory, clock)
        context = memory.build_context("帮我写个自我介绍，讲讲我以后的方向", "ines")
        assert "前端开发" in context and "当老师" not in context


def test_without_a_contrast_the_other_persons_story_stays(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "my son is allergic to peanuts"), ("assistant", "Noted."),
              ("user", "I'm planning his birthday party for next month"))
        _asides(memory, clock)
        assert "peanuts" in memory.build_context("help me plan the party menu", "ines")
        assert ("someone_else",) not in _reasons(memory, "help me plan the party menu")


def test_a_pause_between_the_two_messages_breaks_the_contrast(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "my roommate collects vinyl records"))
        clock.advance(days=2)
        _chat(memory, clock, ("user", "actually I collect stamps"))
        _asides(memory, clock)
        assert ("someone_else",) not in _reasons(memory, "what do I collect?")


def test_a_message_that_also_tells_of_the_user_is_not_only_someone_elses(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "my wife runs marathons and I cycle to work"),
              ("user", "I myself prefer short rides though"))
        _asides(memory, clock)
        assert "cycle to work" in memory.build_context("how do I get around?", "ines")


def test_a_read_about_no_one_in_particular_or_a_contrast_without_the_user_keeps_both(clock):
    with MemoryManager(store_path=None, clock=clock, window_size=4) as memory:
        _chat(memory, clock, ("user", "my nephew Sami can't have gluten"), ("user", "personally I can eat anything"))
        _chat(memory, clock, ("user", "my aunt is vegan"), ("user", "my uncle personally drives her to the market"))
        _chat(memory, clock, ("user", "我老板说下周三要我去成都开会"), ("user", "其实我还挺想去的"))
        _asides(memory, clock)
        assert "gluten" in memory.build_context("plan a dinner menu for the family reunion", "ines")
        assert "vegan" in memory.build_context("what should I know before I cook for everyone?", "ines")
        assert "成都开会" in memory.build_context("帮我规划一下下周的行程", "ines")
