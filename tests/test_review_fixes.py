"""Regression tests for problems an independent review found (each once reproduced as a bug)."""
from __future__ import annotations

import pytest

from v2_memory.errors import StoreInconsistentError

from v2_memory import GovernancePolicy, MemoryManager, Message
from v2_memory.governance.state import UnknownTaskError


def test_a_ledger_that_outlives_its_store_is_an_error_not_a_reset(tmp_path, clock):
    """The ledger persists, the in-memory store would restart its ids (record 1 would change
    owner): opening refuses, names the file, and says how to repair."""
    ledger = tmp_path / "ledger.sqlite3"
    with MemoryManager(store_path=None, ledger_path=ledger, clock=clock) as first_run:
        first_run.add(Message("user", "CS201 作业 周五截止", "alice"))
    with pytest.raises(StoreInconsistentError, match="remembers 1 records.*Restore the store file"):
        MemoryManager(store_path=None, ledger_path=ledger, clock=clock)


def test_a_store_without_its_ledger_is_an_error_unless_adopted(tmp_path, clock):
    """A deleted ledger is never silently recreated; a store that never had one is adopted on
    request, and its records are then trusted only as far as their source."""
    path = tmp_path / "m.json"
    with MemoryManager(store_path=path, clock=clock, governance=False) as article:
        article.add(Message("assistant", "记忆污染 阈值 的答案是这样"))
    (tmp_path / "m.governance.sqlite3").unlink()  # lost, or never written
    for _ in range(2):  # the failed open left nothing behind that would let a second one pass
        with pytest.raises(StoreInconsistentError, match="holds 1 records.*adopt_store=True"):
            MemoryManager(store_path=path, clock=clock)
    with MemoryManager(store_path=path, clock=clock, adopt_store=True) as governed:
        assert governed.explain("记忆污染 阈值")[0].reasons == ("unverified_model_output",)


def test_isolated_personal_data_stays_out_of_rebuilt_summaries_and_blind_hits(clock):
    policy = GovernancePolicy(sensitive_policy="isolate")
    with MemoryManager(window_size=1, store_path=None, clock=clock, governance=policy) as memory:
        memory.add(Message("user", "我的手机 13800138000"))
        other = memory.add(Message("user", "记一下周报")).record_id
        memory.add(Message("user", "好的"))
        memory.forget("default", other)  # rebuilds the summary from the store
        assert "13800138000" not in memory.summary() and "[mobile]" in memory.summary()
        assert all("13800138000" not in r["content"] for _, r in memory.retrieve_without_threshold("手机", top_k=5))


def test_corrections_never_carry_raw_personal_data_into_facts(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我用安卓手机"))
        memory.add(Message("user", "刚才说错了，应该是 tom.lee@example.com"))
        assert all("tom.lee" not in fact.value for fact in memory.facts())


def test_a_corrected_negative_fact_stays_negative(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我不吃香菜"))
        memory.add(Message("user", "不是香菜，是葱"))
        pending = memory.facts(status="pending")
        assert [(f.key, f.value, f.polarity) for f in pending] == [("diet", "葱", -1)]


def test_a_corrected_message_leaves_the_recent_window(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我用安卓手机"))
        memory.add(Message("user", "刚才说错了，应该是Mac"))
        assert "安卓" not in memory.build_context("手机")


def test_verify_checks_the_owner_and_the_type(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        reply = memory.add(Message("assistant", "bob 的回答", "bob")).record_id
        assert memory.verify(reply, user_id="alice") is False
        assert memory.explain("回答", "bob")[0].reasons == ("unverified_model_output",)
        with pytest.raises(TypeError):
            memory.verify(True)
        assert memory.verify(reply, user_id="bob") is True


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda m: m.set_task_progress("default", "never-started", 0.5), UnknownTaskError),
        (lambda m: m.set_task_progress("default", "t", True), ValueError),
        (lambda m: m.start_task("default", "t2", ttl=__import__("datetime").timedelta(hours=-1)), ValueError),
        (lambda m: m.explain("q", domain="bogus"), ValueError),
        (lambda m: m.add(Message("user", "bad \ud800 text")), ValueError),
    ],
)
def test_more_bad_input_is_refused(clock, call, error):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.start_task("default", "t")
        with pytest.raises(error):
            call(memory)


def test_a_refused_write_does_not_start_a_session(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        with pytest.raises(ValueError):
            memory.add(Message("user", "x marks", session_id="s1", metadata={"n": float("nan")}))
        assert memory.session("default", "s1") is None


def test_facts_repeat_flip_and_replace_as_a_user_would_expect(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "我叫张三"))
        memory.confirm_fact("default", "name")
        memory.add(Message("user", "我叫张三"))  # said again: still confirmed
        assert "persona:name = 张三" in memory.build_context("名字")
        memory.add(Message("user", "我叫李四"))  # pending: the confirmed name stays until confirmed
        assert "persona:name = 张三" in memory.build_context("名字")
        memory.confirm_fact("default", "name")
        assert [(f.value, f.status) for f in memory.facts(status="confirmed")] == [("李四", "confirmed")]
        memory.add(Message("user", "我喜欢猫"))
        memory.confirm_fact("default", "likes")
        memory.add(Message("user", "我不喜欢猫"))  # the polarity flipped: pending again, and never shown as a like
        assert "persona:likes" not in memory.build_context("猫")


@pytest.mark.parametrize(
    "text, kind",
    [("不是，是这样的", None), ("不是很懂，是什么意思？", None), ("纠正一下我的发音", None), ("I meant to ask about pricing", None),
     ("不对，应该是周五", "correction"), ("应该是周五，不是周三", "correction"), ("我记错了，是周五", "correction"),
     ("Wait, I meant Friday", "correction"), ("我叫个车", None), ("我用了三天时间", None), ("我喜欢你", None), ("我是新用户", None),
     ("记住：我不吃香菜", "fact"), ("以后别给我推荐咖啡", "fact"), ("我对花生过敏", "fact"), ("I'm allergic to peanuts", "fact")],
)
def test_realistic_chat_is_read_as_a_user_means_it(clock, text, kind):
    with MemoryManager(store_path=None, clock=clock) as memory:
        result = memory.add(Message("user", text))
        found = "correction" if "correction" in result.reasons else "fact" if result.fact else None
        assert found == kind


@pytest.mark.parametrize("text", ["for dinner: I want sushi", "return it to me by Friday", "评分 4.5 分，明天 3.15 见 ^_^"])
def test_prose_with_code_like_bits_is_still_memory(clock, text):
    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", text))
        assert memory.explain(text)[0].admitted  # embedded, and no identifier turned exact matching on

