"""Health metrics on a hand-built history; every expected number is worked out in the docstring."""
from __future__ import annotations

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.observe.audit import AuditEvent
from v2_memory.observe.health import (HealthMinimums, cross_domain_leakage, decay_efficiency, ended_sessions_holding_state,
                                      health_report, unverified_low_confidence)


def judged(memory):
    """``memory.health()`` with every minimum sample off, so an eight-write history is judged
    (``tests/test_health_honest.py`` checks what the minimums do)."""
    records = memory.store.all_records()
    return health_report(records, memory.ledger.states(r["record_id"] for r in records), memory.audit.writes(),
                         memory.audit.reads(), rates=memory.policy.rates, now=memory.clock(), minimums=HealthMinimums.none())


@pytest.fixture
def history(clock):
    """Eight writes by u1, ten minutes apart (the last two 20 and 5 minutes later):

        t+0   记住我不吃香菜             user   fact diet NOT 香菜
        t+10  我用安卓手机               user   fact device 安卓手机
        t+20  我喜欢猫                   user   fact likes 猫
        t+30  I like coffee, not tea     user   fact likes coffee (+): has a negation -> suspicious
        t+40  好，已记住你的偏好。       assistant  weight 0.01, never verified
        t+50  ReLU 是循环神经元          assistant  weight 0.01, then verified -> 1.0
        t+70  今天天气不错               user
        t+75  好的                       user   filler: logged, not stored
    """
    memory = MemoryManager(store_path=None, clock=clock)
    texts = [("user", "记住我不吃香菜", 10), ("user", "我用安卓手机", 10), ("user", "我喜欢猫", 10),
             ("user", "I like coffee, not tea", 10), ("assistant", "好，已记住你的偏好。", 10),
             ("assistant", "ReLU 是循环神经元", 20), ("user", "今天天气不错", 5), ("user", "好的", 5)]
    for role, text, gap in texts:
        result = memory.add(Message(role, text, "u1"))
        if text.startswith("ReLU"):
            memory.verify(result.record_id)
        clock.advance(minutes=gap)
    yield memory
    memory.close()


def test_pollution_rate(history):
    """2 of the 8 writes are model output, and neither polluted: the first is kept in quarantine
    (unverified, never admitted), the second a user verified. 0 / 8 -> ok."""
    metric = judged(history)["pollution_rate"]
    assert (metric.numerator, metric.denominator, metric.value, metric.status) == (0, 8, 0.0, "ok")


def test_unverified_low_confidence(history):
    """One model write (weight 0.01) was never verified, but no read admitted it: it stayed in
    quarantine, which is governance working. 0 / 8 -> ok. Once a read admits it (a caller that
    reads with governance's weight ignored is simulated by a read event), 1 / 8 = 12.5 % -> warn."""
    metric = judged(history)["unverified_low_confidence"]
    assert (metric.numerator, metric.value, metric.status) == (0, 0.0, "ok")
    reply = next(r for r in history.store.all_records() if r["content"].startswith("好，已记住"))
    leak = AuditEvent("read", "2026-01-01T02:00:00+00:00", "u1", None, None,
                      {"candidates": [{"record_id": reply["record_id"], "admitted": True, "source": "llm_response"}]})
    writes = history.audit.writes()
    metric = unverified_low_confidence([e for e in writes if e.kind == "write"], [leak], {})
    assert (metric.numerator, metric.value, metric.status) == (1, 0.125, "warn")


def test_negated_input_stored_as_positive(history):
    """"I like coffee, not tea" became likes=coffee (+) while it says "not": 1 -> bad."""
    metric = history.health()["negated_stored_positive"]
    assert (metric.value, metric.status) == (1, "bad")


def test_persona_writes_per_user_hour(history, clock):
    """Four facts at t+0, 10, 20, 30 minutes, but of three keys (diet, device, likes ×2): a user
    introducing themselves, not a flood -> the most of one key is 2 -> ok. The same preference
    written four times within the hour is the manual's "反复确认同一偏好" -> 4 > 3 -> bad."""
    metric = history.health()["persona_writes_per_user_hour"]
    assert (metric.value, metric.status) == (2, "ok")
    for _ in range(4):
        history.add(Message("user", "我用苹果手机", "u2"))
        clock.advance(minutes=5)
    metric = history.health()["persona_writes_per_user_hour"]
    assert (metric.value, metric.status) == (4, "bad")


def test_weight_distribution(history):
    """Seven stored records (the filler is not): six weigh 1.0, the unverified reply 0.01 — left
    out, since a quarantined reply never had weight to lose. Below 0.3: 0 / 6 -> bad (nothing
    decayed). Above 0.9: 6 / 6 = 100 % > 80 % -> bad."""
    health = judged(history)
    low, high = health["decay_efficiency"], health["high_weight_share"]
    assert (low.numerator, low.denominator, low.value, low.status) == (0, 6, 0.0, "bad")
    assert (high.numerator, high.denominator, high.value, high.status) == (6, 6, 1.0, "bad")
    assert health.status == "bad"


def test_decay_efficiency_bands():
    """30–50 % is healthy, 15–70 % a warning, anything else bad."""
    assert [decay_efficiency([0.1] * low + [1.0] * (10 - low)).status for low in (0, 2, 3, 5, 6, 8)] == \
        ["bad", "warn", "ok", "ok", "warn", "bad"]
    assert decay_efficiency([]).status == "n/a"


def _read(time, domain, candidates, user="u1"):
    return AuditEvent("read", time, user, None, None, {"domain": domain, "candidates": candidates})


def test_cross_domain_leakage_counts_persona_reads_answered_with_session_memory():
    leak = {"admitted": True, "domain": "session", "session_id": "s1"}
    fine = {"admitted": True, "domain": "persona"}
    reads = [_read("t1", "persona", [fine, leak]), _read("t2", "persona", [fine]), _read("t3", None, [leak])]
    assert cross_domain_leakage(reads).value == 1 and cross_domain_leakage(reads).status == "bad"


def test_ended_sessions_holding_state():
    ended = AuditEvent("end_session", "2026-01-01T10:00:00+00:00", "u1", None, "s1")
    before = _read("2026-01-01T09:00:00+00:00", None, [{"admitted": True, "domain": "session", "session_id": "s1"}])
    after = _read("2026-01-01T11:00:00+00:00", None, [{"admitted": True, "domain": "session", "session_id": "s1"}])
    assert ended_sessions_holding_state([ended], [before]).value == 0
    assert ended_sessions_holding_state([ended], [before, after]).value == 1


def test_governance_keeps_the_leak_metrics_at_zero(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "PPT大纲 封面页", session_id="s1", domain="session"))
        memory.end_session("default", "s1")
        memory.build_context("PPT大纲", session_id="s1")
        memory.build_context("PPT大纲", domain="persona")
        health = memory.health()
    assert health["cross_domain_leakage"].value == 0 and health["ended_sessions_holding_state"].value == 0
