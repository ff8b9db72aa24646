"""Bounded caches (issue 23, item 3): a process that touches every user keeps at most
``cache_users`` of them cached — tracks in the manager, records and indexes in the database
backends — and a user read back from storage after eviction answers exactly as before."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message

USERS = [f"user{n:02d}" for n in range(24)]


def _said(user: str, n: int) -> str:
    return f"{user} note {n} about tulip bulbs"


@pytest.mark.parametrize("name", ["memory_store.json", "memory.sqlite3"])
def test_touching_every_user_keeps_the_caches_flat_and_the_answers_right(tmp_path, clock, name):
    path = tmp_path / name
    with MemoryManager(store_path=path, clock=clock, window_size=2, cache_users=4) as memory:
        for round_ in range(3):  # each user is evicted and read back between its own writes
            for user in USERS:
                memory.add(Message("user", _said(user, round_), user))
                clock.advance(minutes=1)
        for user in USERS:
            assert [m.content for m in memory.recent_messages(user)] == [_said(user, 1), _said(user, 2)]
            assert memory.summary(user) == f"[1 earlier message] user: {_said(user, 0)}"
            hits = memory.retrieve("tulip bulbs note", user, top_k=5)
            assert sorted(h.record["content"] for h in hits) == sorted(_said(user, n) for n in range(3))
        cached = [len(memory._tracks._fresh), len(memory.window.users()), len(memory.summaries.users()),
                  len(memory.storage.tracks._saved), len(memory.governor.memo.users())]
        if name.endswith(".sqlite3"):
            cached.append(len(memory.store._cache))
        assert max(cached) <= 4, cached
    with MemoryManager(store_path=path, clock=clock, window_size=2) as reopened:  # and storage has it all
        assert all([m.content for m in reopened.recent_messages(u)] == [_said(u, 1), _said(u, 2)] for u in USERS)


def test_a_batch_keeps_its_users_cached_until_it_ends(clock):
    with MemoryManager(store_path=None, clock=clock, cache_users=2) as memory:
        with memory.batch():
            for user in USERS[:6]:
                memory.add(Message("user", _said(user, 0), user))
            assert len(memory._tracks._fresh) == 6  # unsaved tracks are the truth: never evicted mid-batch
        assert sorted(memory.users()) == sorted(USERS[:6])
        assert all(memory.recent_messages(u)[0].content == _said(u, 0) for u in USERS[:6])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_a_cache_size_is_a_whole_number_of_users(bad):
    with pytest.raises(ValueError, match="cache size"):
        MemoryManager(store_path=None, cache_users=bad)


def test_a_text_cache_keeps_a_bounded_number_of_characters_not_only_of_entries():
    from v2_memory.text.memo import text_cache

    @text_cache(maxsize=1_000, max_chars=50, max_total=100)
    def length(text):
        return len(text)

    for n in range(20):
        assert length(f"{n:02d}" + "x" * 28) == 30  # 30 characters each: three fit in 100
    info = length.cache_info()
    assert (info.currsize, info.chars) == (3, 90)
    assert length("y" * 51) == 51 and length.cache_info().currsize == 3  # over max_chars: computed, not kept
    assert length(f"{19:02d}" + "x" * 28) == 30 and length.cache_info().hits == 1  # the newest stayed


def test_erasing_a_user_empties_the_readings_kept_of_their_memories(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "m.sqlite3", clock=clock, window_size=1) as memory:
        for n in range(4):
            memory.add(Message("user", f"my locker code is behind the {n} tulip bulbs", "ann"))
            memory.add(Message("user", f"bob keeps {n} tulip bulbs too", "bob"))
        memory.build_context("where are the tulip bulbs", "ann")
        memory.build_context("where are the tulip bulbs", "bob")
        assert set(memory.governor.memo.users()) == {(None, "ann"), (None, "bob")}
        memory.erase_user("ann")
        assert memory.governor.memo.users() == []  # every reading keyed by an erased text is gone
        assert "tulip" in memory.build_context("where are the tulip bulbs", "bob")


def test_an_answer_computed_across_an_erasure_is_not_kept():
    from v2_memory.text.memo import UserMemo, forget_texts, text_cache

    @text_cache(maxsize=8)
    def erased_meanwhile(text):
        forget_texts()  # an erasure in another thread lands while this text is analysed
        return text.upper()

    assert erased_meanwhile("my PIN is 4471") == "MY PIN IS 4471"
    assert erased_meanwhile.cache_info().currsize == 0
    memo, computed = UserMemo(), []

    def count(text):
        computed.append(text)
        return text

    assert memo.reading(("t", "ann"), "kind", "my PIN is 4471", lambda t: (forget_texts(), t)[1]) == "my PIN is 4471"
    memo.reading(("t", "ann"), "kind", "my PIN is 4471", count)
    memo.reading(("t", "ann"), "kind", "my PIN is 4471", count)
    assert computed == ["my PIN is 4471"]  # not kept across the erasure; kept once computed cleanly


def test_a_reads_readings_of_one_user_are_not_answered_after_an_erasure():
    from v2_memory.text.memo import UserMemo, forget_texts

    memo, computed = UserMemo(), []

    def count(text):
        computed.append(text)
        return len(text)

    readings = memo.of(("t", "ann"))
    assert readings.reading("kind", "my PIN is 4471", count) == 14
    assert readings.reading("kind", "my PIN is 4471", count) == 14 and len(computed) == 1  # kept: a lookup
    assert memo.reading(("t", "ann"), "kind", "my PIN is 4471", count) == 14 and len(computed) == 1  # the same store
    forget_texts()
    assert readings.reading("kind", "my PIN is 4471", count) == 14 and len(computed) == 2  # asked again, not the old dict
    assert memo.users() == [("t", "ann")]  # kept again in the memo's new dictionary, not the old one
