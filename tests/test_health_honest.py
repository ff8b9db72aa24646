"""Health that does not cry wolf: small stores read n/a, quarantine is not pollution, figures name their writes.

Worked by hand:

* a fresh store has nothing to judge: every metric is n/a, and so is the whole report;
* three writes are too few for a share (one write would be 33 %): pollution reads n/a and says
  "needs at least 20 writes, has 3";
* 24 writes, 8 of them model replies kept unverified and rejected by every read: pollution is
  0 / 24 — the quarantine is governance working;
* the same conversation with governance off trusts the 8 replies at write: 8 / 24 = 33.3 % -> bad,
  and the metric names the 8 record ids.
"""
from __future__ import annotations

from datetime import timedelta

import pytest

from v2_memory import MemoryManager, Message
from v2_memory.observe.audit import AuditEvent
from v2_memory.observe.health import HealthMinimums, cross_domain_leakage, pollution_rate

OLD_KEYS = {"name", "value", "unit", "status", "rule", "numerator", "denominator", "shown"}


def _conversation(memory: MemoryManager, clock, turns: int = 8) -> list[int]:
    """``turns`` × (question, model reply, user follow-up): 3 writes per turn, an hour apart.
    Returns the record ids of the model replies."""
    replies = []
    for i in range(turns):
        memory.add(Message("user", f"第{i}个问题：记忆污染 阈值 怎么设"))
        replies.append(memory.add(Message("assistant", f"第{i}个回答：记忆污染 阈值 设为 0.{i + 1}")).record_id)
        memory.add(Message("user", f"第{i}条笔记：阈值 实验 {i}"))
        memory.build_context("记忆污染 阈值")
        clock.advance(hours=1)
    return replies


def test_a_fresh_store_is_not_bad(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        report = memory.health()
    assert report.status == "n/a" and {m.status for m in report.metrics} == {"n/a"}
    assert all(m.note for m in report.metrics)


def test_a_small_store_reads_na_and_says_what_it_needs(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我在写 Agent 专栏"))
        memory.add(Message("assistant", "好的，我记住了你在写专栏。"))
        memory.add(Message("user", "下周交稿"))
        report = memory.health()
    pollution = report["pollution_rate"]
    assert (pollution.status, pollution.minimum, pollution.note) == ("n/a", 20, "needs at least 20 writes, has 3")
    assert report["decay_efficiency"].status == report["high_weight_share"].status == "n/a"
    assert report.status != "bad"


def test_quarantined_model_output_is_not_pollution(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        replies = _conversation(memory, clock)
        explanation = memory.explain("记忆污染 阈值")
        assert all("unverified_model_output" in a.reasons for a in explanation if a.record_id in replies)
        pollution = memory.health()["pollution_rate"]
    assert (pollution.numerator, pollution.denominator, pollution.status, pollution.record_ids) == (0, 24, "ok", ())


def test_trusted_model_output_is_pollution_and_the_figure_names_the_writes(clock):
    with MemoryManager(store_path=None, clock=clock, governance=False) as memory:
        replies = _conversation(memory, clock)
        pollution = memory.health()["pollution_rate"]
    assert (pollution.numerator, pollution.denominator, round(pollution.value, 3), pollution.status) == (8, 24, 0.333, "bad")
    assert pollution.record_ids == tuple(replies)


def test_model_output_labelled_as_user_input_is_pollution_with_its_ids(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        _conversation(memory, clock, turns=7)
        echo = memory.add(Message("assistant", "ReLU 是循环神经元", source="user_input")).record_id
        report = memory.health()
    assert report["pollution_rate"].record_ids == (echo,)
    assert report["model_output_as_user_input"].record_ids == (echo,)


def _write(record_id: int) -> AuditEvent:
    return AuditEvent("write", "2026-01-01T00:00:00+00:00", "u1", None, None,
                      {"record_id": record_id, "source": "llm_response", "role": "assistant", "verified": False})


def _read(time: str, record_id: int) -> AuditEvent:
    return AuditEvent("read", time, "u1", None, None,
                      {"candidates": [{"record_id": record_id, "admitted": True, "source": "llm_response"}]})


def test_model_output_admitted_before_a_user_verified_it_is_pollution():
    """Record 1 was admitted at 10:00 and verified at 11:00 (admitted while unverified: counts);
    record 2 was verified at 09:00 and admitted at 10:00 (the user's knowledge by then: does not)."""
    writes = [_write(1), _write(2)]
    reads = [_read("2026-01-01T10:00:00+00:00", 1), _read("2026-01-01T10:00:00+00:00", 2)]
    verified_at = {1: "2026-01-01T11:00:00+00:00", 2: "2026-01-01T09:00:00+00:00"}
    metric = pollution_rate(writes, reads, verified_at)
    assert (metric.numerator, metric.record_ids) == (1, (1,))


def test_a_leak_is_bad_however_small_the_store():
    leak = AuditEvent("read", "t", "u1", None, None,
                      {"domain": "persona", "candidates": [{"record_id": 7, "admitted": True, "domain": "session"}]})
    metric = cross_domain_leakage([leak])
    assert (metric.value, metric.status, metric.record_ids) == (1, "bad", (7,))
    assert cross_domain_leakage([]).status == "n/a"


def test_weight_metrics_wait_for_history_to_decay(clock):
    """30 records within two hours: enough records, too little time for decay to mean anything."""
    with MemoryManager(store_path=None, clock=clock) as memory:
        for i in range(30):
            memory.add(Message("user", f"笔记 {i}: 阈值实验", domain="persona"))
            clock.advance(minutes=4)
        young = memory.health()["high_weight_share"]
        clock.advance(days=6)
        memory.add(Message("user", "又一条笔记"))
        week = memory.health()["high_weight_share"]
        clock.advance(days=2)
        memory.add(Message("user", "再一条笔记"))
        grown = memory.health()["high_weight_share"]
    assert young.status == week.status == "n/a" and "7 days" in young.note
    assert grown.status != "n/a" and grown.note == ""


def test_every_metric_keeps_its_old_keys_and_adds_the_new_ones(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "hello there"))
        report = memory.health().to_dict()
    for metric in report["metrics"]:
        assert OLD_KEYS <= set(metric) and {"record_ids", "minimum", "note"} <= set(metric)


def test_minimums_are_a_setting():
    assert HealthMinimums().writes == 20 and HealthMinimums().span == timedelta(days=7)
    assert HealthMinimums.none() == HealthMinimums(0, 0, timedelta(0))


def _agent_loop(memory: MemoryManager, clock, days: int) -> None:
    """The README's loop, as an agent runs it for ``days``: the user's turn, the context, the
    model's reply stored unverified (none verified), ten turns a day, a self-introduction first."""
    turns = ["Hi, I'm Ann. I live in Lyon, I'm vegetarian, I work as a nurse and I have a dog named Pixel.",
             "Can you suggest a quick dinner?", "Something with lentils maybe",
             "What time does the market open on Saturday?", "The vet appointment is on Thursday at 10",
             "How long should I boil eggs?", "I started learning Portuguese last month",
             "What's a good podcast for beginners?", "My sister Clara visits next weekend",
             "Any ideas for a rainy day with a dog?"]
    ann = memory.for_user("ann", session_id="s1")
    for day in range(days):
        for said in turns:
            ann.add(said if day == 0 else f"{said} (day {day})")
            ann.build_context(said)
            ann.add(f"Here is what I suggest about {said[:24]}", role="assistant")
            clock.advance(minutes=7)
        clock.advance(hours=20)


@pytest.mark.parametrize("days", [4, 21, 35])
def test_the_readmes_agent_loop_reads_healthy(clock, days):
    """Replies kept in quarantine are not pollution, a self-introduction is not a flood, and a
    young store's weights are not judged before they had time to decay: no metric cries wolf.
    (Three weeks in, how far usage has decayed the old turns may still read "warn": 26 % of the
    records below 0.3 where the manual's target starts at 30 %; five weeks in it is inside it.)"""
    with MemoryManager(store_path=None, clock=clock) as memory:
        _agent_loop(memory, clock, days)
        report = memory.health()
    assert report.status == ("warn" if days == 21 else "ok"), [(m.name, m.shown(), m.status) for m in report.metrics]
    assert report["pollution_rate"].value == 0.0 and report["unverified_low_confidence"].value == 0.0


def test_the_cli_and_the_page_read_the_same_store_alike(tmp_path, capsys):
    """The demo's page shows ``memory.health()`` at the demo's clock; the CLI reads the same store
    at its newest logged event: the same statuses and figures."""
    import json

    from v2_memory.cli import main
    from v2_memory.main import run_demo

    trace = run_demo(out_dir=tmp_path)
    assert main(["health", "--store", str(tmp_path), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    page = trace["health"]
    assert [(m["name"], m["status"], m["shown"]) for m in cli["metrics"]] == [
        (m["name"], m["status"], m["shown"]) for m in page["metrics"]]
    assert main(["health", "--store", str(tmp_path), "--now", "yesterday"]) == 1
    assert "--now must be an ISO 8601 time" in capsys.readouterr().err
