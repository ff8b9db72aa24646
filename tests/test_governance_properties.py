"""Governance invariants on random histories (hypothesis).

Whatever users write — declarations, corrections, negations, model replies, session and task
memories — and whatever sessions end or tasks finish:
  * no admitted memory is from another user, another task, or an ended or other session;
  * a superseded memory is never admitted;
  * a pending persona fact never appears in a context.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.governance.persona import render_fact

USERS = ["u1", "u10", "u2"]
TEXTS = [
    "我用安卓手机", "刚才说错了，应该是Mac", "记住我不吃香菜", "别推荐咖啡", "推荐咖啡 记忆", "不是周三，是周五",
    "组会在周三 记忆", "CS201 作业 周五截止", "CS202 作业 周三截止", "记忆污染 阈值 过滤", "好的", "I use a Mac",
    "actually, I meant Friday", "PPT 大纲 记忆", "记忆 任务 进度",
]
QUERIES = ["记忆", "推荐咖啡", "CS201 作业", "手机 Mac 安卓", "周三 周五 组会", "PPT 大纲", "香菜"]

write = st.tuples(
    st.just("write"), st.sampled_from(USERS), st.sampled_from(["user", "user", "assistant"]), st.sampled_from(TEXTS),
    st.sampled_from([None, "session", "task"]), st.sampled_from(["s1", "s2"]), st.sampled_from(["t1", "t2"]),
)
control = st.tuples(st.sampled_from(["end_session", "finish_task", "confirm", "verify"]), st.sampled_from(USERS),
                    st.sampled_from(["s1", "s2", "t1", "t2", "device", "diet", "recommend"]), st.integers(1, 40))


def _apply(memory: MemoryManager, step: tuple) -> None:
    if step[0] == "write":
        _, user, role, text, domain, session, task = step
        memory.add(Message(role, text, user, domain=domain,
                           session_id=session if domain == "session" else None, task_id=task if domain == "task" else None))
    elif step[0] == "end_session":
        memory.end_session(step[1], step[2])
    elif step[0] == "finish_task" and memory.task(step[1], step[2]):
        memory.finish_task(step[1], step[2])
    elif step[0] == "confirm":
        memory.confirm_fact(step[1], step[2])
    elif step[0] == "verify":
        memory.verify(step[3])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.one_of(write, control), max_size=40), reader=st.sampled_from(USERS),
       query=st.sampled_from(QUERIES), session=st.sampled_from([None, "s1", "s2"]), task=st.sampled_from([None, "t1", "t2"]))
def test_admission_invariants(steps, reader, query, session, task):
    with MemoryManager(threshold=0.1, store_path=None, window_size=3) as memory:
        for user in USERS:
            for task_id in ("t1", "t2"):
                memory.start_task(user, task_id)
        for step in steps:
            _apply(memory, step)
        explanation = memory.explain(query, reader, top_k=10, session_id=session, task_id=task)
        states = memory.ledger.states(a.record_id for a in explanation.admitted)
        for admitted in explanation.admitted:
            record = admitted.record
            assert record["user_id"] == reader
            assert states[admitted.record_id].superseded_by is None
            if record.get("domain") == "task":
                assert record["task_id"] == task
            if record.get("domain") == "session":
                assert record["session_id"] == session
                assert memory.governor.state.session_status((None, reader), session) == "active"
        # Persona lines in a context come only from the reader's confirmed facts.
        confirmed = {render_fact(f.key, f.value, f.polarity) for f in memory.facts(reader, status="confirmed")}
        context = memory.build_context(query, reader, top_k=10, session_id=session, task_id=task)
        for line in context.splitlines():
            if line.startswith("persona:"):
                assert line in confirmed
        for fact in memory.facts(reader, status="pending"):
            assert render_fact(fact.key, fact.value, fact.polarity) not in context
