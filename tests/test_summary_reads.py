"""A read's summary costs what the summary shows, not the user's history.

The summary covers every message that left the window; it shows a few snippets. A read judges the
records behind those snippets, and only when one of them is hidden from it (corrected, another
session, ...) judges the covered history (bounded) and refolds what it may see.
"""
from __future__ import annotations

import pytest

from conftest import FakeClock
from v2_memory import MemoryManager, Message
from v2_memory.governance.governor import SUMMARY_HORIZON

TOPICS = ["地铁很挤", "牛肉面", "看电影", "橘猫打翻杯子", "新键盘", "跑步五公里", "读完一本书", "修好自行车"]


def _chat(memory: MemoryManager, turns: int, user: str = "ann", **scope) -> None:
    for n in range(turns):
        memory.add(Message("user", f"第{n}天：{TOPICS[n % len(TOPICS)]} 记录{n}", user, **scope))


def _judged(memory: MemoryManager, monkeypatch) -> list[int]:
    """How many covered memories each summary judgement of a read looks at."""
    sizes: list[int] = []
    judge = memory.governor.view.summary_entries

    def counted(covers, scope, **kwargs):
        sizes.append(len(covers))
        return judge(covers, scope, **kwargs)

    monkeypatch.setattr(memory.governor.view, "summary_entries", counted)
    return sizes


def test_a_long_history_read_judges_only_the_records_its_summary_shows(monkeypatch):
    with MemoryManager(store_path=None, window_size=3, clock=FakeClock()) as memory:
        _chat(memory, 2 * SUMMARY_HORIZON)
        stored = memory.summaries.get((None, "ann"))
        assert len(stored.covers) == 2 * SUMMARY_HORIZON - 3 and stored.shows and len(stored.shows) == len(stored.parts)
        sizes = _judged(memory, monkeypatch)
        for n in range(5):  # a chat: the summary changes with every turn
            context = memory.build_context("记录", "ann")
            assert f"summary: {memory.summaries.get((None, 'ann')).text}" in context
            memory.add(Message("user", f"又去跑步 记录x{n}", "ann"))
        assert sizes and max(sizes) < 64  # the snippets shown (a few dozen at most), never the covered history


def test_a_hidden_snippet_makes_the_read_refold_what_it_may_see(monkeypatch):
    with MemoryManager(store_path=None, window_size=2, clock=FakeClock()) as memory:
        _chat(memory, 40)
        memory.add(Message("user", "会话笔记：正在改简历", "ann", session_id="s1", domain="session"))
        _chat(memory, 2)
        assert "简历" in memory.summaries.get((None, "ann")).text  # the stored fold shows it ...
        sizes = _judged(memory, monkeypatch)
        context = memory.build_context("记录", "ann", session_id="s2")
        assert "简历" not in context and "summary: [" in context  # ... a read in another session does not
        assert sizes[-1] == len(memory.summaries.get((None, "ann")).covers)  # the history, judged once
        assert "简历" in memory.build_context("记录", "ann", session_id="s1")


def test_what_each_snippet_shows_survives_a_restart(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path, window_size=2, clock=FakeClock()) as memory:
        _chat(memory, 30)
        before = memory.summaries.get((None, "ann"))
        context = memory.build_context("记录", "ann")
    with MemoryManager(store_path=path, window_size=2, clock=FakeClock()) as memory:
        assert memory.build_context("记录", "ann") == context
        assert memory.summaries.get((None, "ann")) == before and before.shows


def test_a_summary_saved_without_record_ids_still_reads_right(tmp_path):
    """An older release saved the snippets alone: reads judge the history until they are gone."""
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path, window_size=2, clock=FakeClock()) as memory:
        _chat(memory, 12)
        stale = memory.add(Message("user", "体检是下周四上午", "ann")).record_id
        _chat(memory, 2)
        parts = list(memory.summaries.get((None, "ann")).parts)
        with memory.storage.transaction():
            memory.storage.db.execute("UPDATE summaries SET parts = ?", (__import__("json").dumps(parts, ensure_ascii=False),))
    with MemoryManager(store_path=path, window_size=2, clock=FakeClock()) as memory:
        assert memory.summaries.get((None, "ann")).shows is None
        assert "下周四" in memory.summary("ann")
        memory.add(Message("user", "哦不对，我搞错了，体检是周五上午", "ann"))
        assert memory.ledger.states([stale])[stale].superseded_by is not None
        assert "下周四" not in memory.summary("ann") and "下周四" not in memory.build_context("体检", "ann")


@pytest.mark.parametrize("governed", [True, False])
def test_a_message_kept_out_of_the_store_is_kept_out_of_the_summary(governed):
    """Filler never had a record to judge, so no governed read could show it: it is not folded.
    The article's mode keeps the article's summary of everything."""
    with MemoryManager(store_path=None, window_size=1, clock=FakeClock(), governance=governed) as memory:
        filler = memory.add(Message("user", "好的", "ann"))
        memory.add(Message("user", "我养了一只橘猫 记录", "ann"))
        memory.add(Message("user", "周末想看电影 记录", "ann"))
        assert (filler.record_id is None) is governed
        assert ("好的" in memory.summary("ann")) is not governed


def test_a_read_logs_every_record_an_older_releases_snippets_quote(tmp_path):
    """Snippets saved without their record ids: the read log names every covered record, so a
    later forget still finds (and removes) the read that quoted it."""
    import json

    path = tmp_path / "memory_store.json"
    with MemoryManager(store_path=path, window_size=1, clock=FakeClock()) as memory:
        ids = [memory.add(Message("user", f"我喜欢第{n}种水果 叫做果{n}号", "ann")).record_id for n in range(5)]
        parts = list(memory.summaries.get((None, "ann")).parts)
        with memory.storage.transaction():
            memory.storage.db.execute("UPDATE summaries SET parts = ?", (json.dumps(parts, ensure_ascii=False),))
    with MemoryManager(store_path=path, window_size=1, clock=FakeClock()) as memory:
        memory.add(Message("user", "今天天气不错 记录", "ann"))  # one more fold: the old snippets stay unknown
        assert None in memory.summaries.get((None, "ann")).shows
        assert "果0号" in memory.build_context("水果", "ann")
        assert set(ids[:4]) <= set(memory.audit.reads()[-1].data["shown"])
        memory.forget("ann", ids[0])
        assert not any("果0号" in json.dumps(e.data, ensure_ascii=False) for e in memory.audit.reads())


def test_erasure_empties_the_refolded_summary_kept_in_memory():
    with MemoryManager(store_path=None, window_size=1, clock=FakeClock()) as memory:
        memory.add(Message("user", "会话笔记：正在改简历 walrus", "ann", session_id="s1", domain="session"))
        _chat(memory, 3)
        memory.build_context("记录", "ann", session_id="s2")  # hides the session note: a refold, memoised
        assert (None, "ann") in memory._tracks.refolded
        memory.erase_user("ann")
        assert (None, "ann") not in memory._tracks.refolded
