"""MemoryManager: three tracks per user, thresholds, erasure receipts, bad input."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from v2_memory import DecayRates, ExtractiveSummarizer, MemoryManager, Message, Summary


@pytest.fixture
def manager(clock):
    with MemoryManager(window_size=2, threshold=0.2, store_path=None, clock=clock) as manager:
        yield manager


def test_windows_and_summaries_are_per_user(manager):
    manager.add(Message("user", "alice one", "alice"))
    for n in range(5):
        manager.add(Message("user", f"bob chatter {n}", "bob"))
    # Bob's chatter never pushes Alice's message out of her window or into anybody's summary.
    assert [m.content for m in manager.recent_messages("alice")] == ["alice one"]
    assert manager.summary("alice") == ""
    assert [m.content for m in manager.recent_messages("bob")] == ["bob chatter 3", "bob chatter 4"]
    assert manager.summary("bob").startswith("[3 earlier messages] user: bob chatter 0")


def test_threshold_filters_what_blind_top_k_lets_through(manager):
    manager.add(Message("user", "memory pollution threshold"))
    manager.add(Message("user", "lunch and coffee"))
    blind = manager.retrieve_without_threshold("memory threshold", top_k=2)
    kept = manager.retrieve("memory threshold", top_k=2)
    assert [r["content"] for _, r in blind] == ["memory pollution threshold", "lunch and coffee"]
    assert [r["content"] for _, r in kept] == ["memory pollution threshold"]


def test_build_context_layout_and_no_repeats(manager):
    """q = {memory, pollution, threshold}, |q| = sqrt 3.
    "memory pollution is noise": 4 tokens, |d| = 2, shares 2 -> 2 / (2 sqrt 3) = 0.577.
    "threshold beats top-k": 3 tokens, |d| = sqrt 3, shares 1 -> 1 / 3 = 0.333.
    Each thing is said once: what a memory line shows leaves the summary, what the window shows
    is no memory line."""
    for text in ["memory pollution is noise", "threshold beats top-k", "the cat sleeps", "lunch", "coffee"]:
        manager.add(Message("user", text))
    context = manager.build_context("memory pollution threshold", top_k=3)
    assert context.splitlines() == [
        "summary: [1 earlier message] user: the cat sleeps",
        "recent: user: lunch",
        "recent: user: coffee",
        "memory(0.577×1.00): user: memory pollution is noise",
        "memory(0.333×1.00): user: threshold beats top-k",
    ]
    assert manager.build_context("coffee", top_k=3).splitlines()[-1] == "recent: user: coffee"


def test_timestamps_come_from_the_clock_in_utc(manager, clock):
    def created_at(message):
        return manager.store.get(manager.add(message).record_id)["created_at"]

    assert created_at(Message("user", "hello")) == "2026-01-01T00:00:00+00:00"
    clock.advance(hours=1)
    tokyo = timezone(timedelta(hours=9))
    assert created_at(Message("user", "hi there", timestamp=datetime(2026, 1, 1, 9, tzinfo=tokyo))) == "2026-01-01T00:00:00+00:00"
    assert created_at(Message("user", "later on")) == "2026-01-01T01:00:00+00:00"


def test_erase_user_receipt_counts_every_track(tmp_path, clock):
    with MemoryManager(window_size=2, store_path=tmp_path / "m.json", clock=clock) as manager:
        for n in range(5):
            manager.add(Message("user", f"guest secret {n}", "guest"))
        manager.add(Message("user", "default stays"))
        receipt = manager.erase_user("guest")
        assert receipt.to_dict() == {
            "user_id": "guest",
            "tenant_id": None,
            "removed": {"window": 2, "summary": 3, "store": 5, "ledger": 5, "state": 0, "logs": 5},
            "files_rewritten": [str(tmp_path / name) for name in ("m.json", "m.governance.sqlite3", "m.writes.jsonl")],
                "damaged_log_lines": [],
        }
        assert manager.users() == ["default"]
        assert manager.erase_user("guest").total == 0
    assert b"guest secret" not in (tmp_path / "m.json").read_bytes()


def test_forget_rebuilds_the_summary_without_the_record(manager):
    ids = [manager.add(Message("user", text)).record_id for text in ["alpha", "beta", "gamma", "delta"]]
    assert "alpha" in manager.summary() and "beta" in manager.summary()
    assert manager.forget("default", ids[0]) is True
    assert "alpha" not in manager.summary() and manager.summary().startswith("[1 earlier message] user: beta")
    assert manager.forget("default", ids[3]) is True
    assert [m.content for m in manager.recent_messages()] == ["gamma"]
    assert manager.forget("someone-else", ids[1]) is False  # never another user's record


def test_the_summary_is_bounded():
    summarizer = ExtractiveSummarizer(max_chars=80, snippet_chars=20)
    summary = Summary()
    for n in range(1000):
        summary = summarizer.fold(summary, Message("user", f"message number {n} " * 5), n)
    assert summary.text.startswith("[1000 earlier messages]")
    assert len(summary.text) <= 80 + len("[1000 earlier messages] ")
    assert len(summary.covers) == 1000


def test_a_custom_summarizer_plugs_in(clock):
    class Counting:
        def fold(self, summary, message, record_id):
            covers = summary.covers + (record_id,)
            return Summary(f"{len(covers)} old", covers)

    with MemoryManager(window_size=1, store_path=None, summarizer=Counting(), clock=clock) as manager:
        for text in "abc":
            manager.add(Message("user", text))
        assert manager.summary() == "2 old"


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: Message("user", ""), ValueError),
        (lambda: Message("", "x"), ValueError),
        (lambda: Message("user", "x", ""), ValueError),
        (lambda: Message("user", "x", None), TypeError),
        (lambda: Message("user", 42), TypeError),
        (lambda: Message("user", "x", timestamp=datetime(2026, 1, 1)), ValueError),
        (lambda: MemoryManager(threshold=math.nan, store_path=None), ValueError),
        (lambda: MemoryManager(threshold=2, store_path=None), ValueError),
        (lambda: MemoryManager(window_size=0, store_path=None), ValueError),
        (lambda: DecayRates(usage_reinforce=math.nan), ValueError),
        (lambda: DecayRates(usage_reinforce=math.inf), ValueError),
        (lambda: DecayRates(tau_hours={"session": math.inf}), ValueError),
        (lambda: DecayRates(usage_hit=math.nan), ValueError),
        (lambda: DecayRates(miss_streak=2.5), ValueError),
        (lambda: DecayRates(miss_streak=math.nan), ValueError),
    ],
)
def test_bad_construction_is_refused(make, error):
    with pytest.raises(error):
        make()


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda m: m.add("just a string"), TypeError),
        (lambda m: m.retrieve("q", user_id=""), ValueError),
        (lambda m: m.retrieve("q", top_k=0), ValueError),
        (lambda m: m.build_context("q", user_id=None), TypeError),
        (lambda m: m.build_context("q", top_k=-1), ValueError),
        (lambda m: m.erase_user(""), ValueError),
    ],
)
def test_bad_calls_change_nothing(manager, call, error):
    manager.add(Message("user", "memory"))
    before = (manager.build_context("memory"), manager.store.records("default"))
    with pytest.raises(error):
        call(manager)
    assert (manager.build_context("memory"), manager.store.records("default")) == before


def test_a_summary_fold_reads_only_the_new_snippet(monkeypatch):
    """Whether a snippet only asks is read once, when it is made: a fold does not re-read the
    summary's other snippets (it did, every fold: the summary's cost grew with its length)."""
    from v2_memory.tracks import summarizer as module
    from v2_memory.tracks.summarizer import ExtractiveSummarizer, Summary

    read = []
    real = module.asks_only
    monkeypatch.setattr(module, "asks_only", lambda text: read.append(text) or real(text))
    folder, summary = ExtractiveSummarizer(max_chars=200, snippet_chars=40), Summary()
    for n in range(60):
        text = f"what time does shop {n} open?" if n % 3 == 0 else f"I visited shop number {n} today"
        summary = folder.fold(summary, Message("user", text), n)
    assert len(read) == 60
    assert all("?" not in part for part in summary.parts[:-1])  # the questions went first, as before
    reloaded = Summary(summary.text, summary.covers, summary.parts, summary.shows)  # as read back from storage
    read.clear()
    folder.fold(reloaded, Message("user", "one more"), 60)
    assert len(read) == len(summary.parts) + 1  # read again once after a reload, then carried along
