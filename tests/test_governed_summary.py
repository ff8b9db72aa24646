"""The summary is a track like the others: what it shows for a read passes that read's admission."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FakeClock
from v2_memory import MemoryManager, Message

FILLER = ["今天下雨了 地铁很挤", "中午吃了牛肉面", "周末想看电影", "猫又把杯子打翻了", "新买的键盘很好用"]


def _push_out(memory: MemoryManager, user: str = "ann", **scope) -> None:
    """Enough later messages that everything before has left the window (size 2)."""
    for text in FILLER:
        memory.add(Message("user", text, user, **scope))


def test_a_corrected_fact_leaves_the_summary_and_explain_says_why(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        stale = memory.add(Message("user", "体检是下周四上午", "ann")).record_id
        memory.add(Message("user", "哦不对，我搞错了，体检是周五上午", "ann"))
        _push_out(memory)
        assert "下周四" not in memory.summary("ann") and "周五上午" in memory.summary("ann")
        context = memory.build_context("体检什么时候", "ann")
        assert "下周四" not in context
        entry = next(e for e in memory.explain("体检什么时候", "ann").summary if e.record_id == stale)
        assert not entry.shown and "superseded" in entry.reasons


def test_other_sessions_and_tasks_and_ended_ones_stay_out(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        memory.start_task("ann", "paper")
        memory.add(Message("user", "会话一：正在改简历", "ann", session_id="s1", domain="session"))
        memory.add(Message("user", "任务笔记：第三章要重写", "ann", task_id="paper", domain="task"))
        memory.add(Message("user", "我养了一只橘猫", "ann"))
        _push_out(memory)
        assert "简历" in memory.summary("ann", session_id="s1")
        assert "简历" not in memory.summary("ann", session_id="s2")
        assert "第三章" in memory.summary("ann", task_id="paper") and "第三章" not in memory.summary("ann")
        assert "橘猫" in memory.summary("ann", session_id="s2")  # ordinary memory: every read of ann's
        memory.end_session("ann", "s1")
        memory.finish_task("ann", "paper")
        assert "简历" not in memory.summary("ann", session_id="s1")
        assert "第三章" not in memory.summary("ann", task_id="paper")
        reasons = {e.record_id: e.reasons for e in memory.explain("简历", "ann", session_id="s1", task_id="paper").summary}
        assert ("session_ended",) in reasons.values() and any("task_finished" in r for r in reasons.values())


def test_unverified_model_output_never_enters_the_summary(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        memory.add(Message("assistant", "您的航班是 CA1234，明早八点起飞", "ann"))
        _push_out(memory)
        assert "CA1234" not in memory.summary("ann")
        assert "CA1234" not in memory.build_context("明早的航班", "ann")


def test_article_mode_keeps_the_article_summary(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock, governance=False) as memory:
        memory.add(Message("user", "体检是下周四上午", "ann"))
        memory.add(Message("user", "哦不对，体检是周五上午", "ann"))
        _push_out(memory)
        assert "下周四" in memory.summary("ann")


USERS = ["u1", "u2"]
TEXTS = ["体检是周四上午", "不对，体检是周五上午", "我用安卓手机", "刚才说错了，应该是Mac", "CS201 作业 周五截止",
         "记忆污染 阈值", "好的", "今天下雨", "I use a Mac", "actually, I meant Friday"]
step = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(USERS), st.sampled_from(["user", "user", "assistant"]),
              st.sampled_from(TEXTS), st.sampled_from([None, "session", "task"]), st.sampled_from(["s1", "s2"]),
              st.sampled_from(["t1", "t2"])),
    st.tuples(st.sampled_from(["end_session", "finish_task"]), st.sampled_from(USERS), st.sampled_from(["s1", "s2"]),
              st.sampled_from(["t1", "t2"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, max_size=30), reader=st.sampled_from(USERS), session=st.sampled_from([None, "s1", "s2"]),
       task=st.sampled_from([None, "t1", "t2"]))
def test_what_the_summary_shows_for_a_scope_is_admissible_for_that_scope(steps, reader, session, task):
    clock = FakeClock()
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        for user in USERS:
            for task_id in ("t1", "t2"):
                memory.start_task(user, task_id)
        for op in steps:
            if op[0] == "add":
                _, user, role, text, domain, sid, tid = op
                memory.add(Message(role, text, user, domain=domain, session_id=sid if domain == "session" else None,
                                   task_id=tid if domain == "task" else None))
            elif op[0] == "end_session":
                memory.end_session(op[1], op[2])
            else:
                memory.finish_task(op[1], op[3])
        explanation = memory.explain("记忆", reader, session_id=session, task_id=task)
        for entry in explanation.summary:
            if not entry.shown:
                continue
            record = memory.store.get(entry.record_id)
            state = memory.ledger.states([entry.record_id]).get(entry.record_id)
            assert record["user_id"] == reader
            assert state is None or (state.superseded_by is None and state.verified)
            if record.get("domain") == "session":
                assert record["session_id"] == session and memory.session(reader, session).status(clock()) == "active"
            if record.get("domain") == "task":
                assert record["task_id"] == task and memory.task(reader, task).status(clock()) == "active"


def test_a_read_naming_an_identifier_sees_no_look_alike_in_the_summary(clock):
    with MemoryManager(window_size=2, store_path=None, clock=clock) as memory:
        memory.add(Message("user", "CS202 作业周三截止", "ann"))
        memory.add(Message("user", "CS201 作业周五截止", "ann"))
        memory.add(Message("user", "我养了一只橘猫", "ann"))
        _push_out(memory)
        context = memory.build_context("CS201 作业什么时候截止", "ann")
        assert "CS202" not in context and "周五截止" in context and "橘猫" in context
        assert "CS202" in memory.summary("ann")  # a read that names no identifier still sees it


def test_a_read_with_personal_data_as_its_session_id_is_refused(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "记忆", "ann"))
        for call in (lambda: memory.build_context("记忆", "ann", session_id="13800138000"),
                     lambda: memory.explain("记忆", "ann", task_id="ann@example.com")):
            try:
                call()
            except ValueError as error:
                assert "13800138000" not in str(error) and "example.com" not in str(error)
            else:
                raise AssertionError("personal data as an id was accepted")
        assert memory.audit.reads() == []


def test_a_reads_summary_costs_a_bounded_number_of_lookups_however_long_the_history(clock, monkeypatch):
    from v2_memory.governance.governor import SUMMARY_HORIZON

    with MemoryManager(window_size=2, store_path=None, clock=clock, audit=False) as memory:
        for n in range(3 * SUMMARY_HORIZON):
            memory.add(Message("user", f"第{n}条 日记 记忆", "ann"))
        calls = {"get": 0}
        real_get = memory.store.get

        def get(record_id):  # type: ignore[no-untyped-def]
            calls["get"] += 1
            return real_get(record_id)

        monkeypatch.setattr(memory.store, "get", get)
        explanation = memory.explain("日记", "ann")
        assert len(explanation.summary) == SUMMARY_HORIZON
        assert calls["get"] <= SUMMARY_HORIZON + 100  # the horizon, plus the lexical candidates
        assert f"第{3 * SUMMARY_HORIZON - 3}条" in memory.summary("ann")
