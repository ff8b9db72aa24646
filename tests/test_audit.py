"""Audit logs: round trips, rotation, torn and corrupt lines, erasure."""
from __future__ import annotations

import json
import warnings

import pytest

from v2_memory import MemoryManager, Message, StoreCorruptError
from v2_memory.observe.audit import AuditEvent, AuditLog, TornLogLineWarning, user_hash


def event(n: int, user: str = "u1") -> AuditEvent:
    return AuditEvent("write", f"2026-01-01T00:00:{n:02d}+00:00", user, None, "s1", {"n": n, "content": f"第{n}条 记忆"})


def test_events_round_trip_through_the_file(tmp_path):
    log = AuditLog(tmp_path)
    for n in range(3):
        log.log_write(event(n))
    log.log_read(AuditEvent("read", "2026-01-01T00:01:00+00:00", "u1", data={"query": "记忆"}))
    assert AuditLog(tmp_path).writes() == [event(n) for n in range(3)]
    assert [e.data["query"] for e in AuditLog(tmp_path).reads()] == ["记忆"]
    line = (tmp_path / "memory_store.writes.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(line)["content"] == "第0条 记忆" and "第0条" in line  # UTF-8, not \\u escapes


def test_rotation_keeps_order_and_drops_only_the_oldest(tmp_path):
    log = AuditLog(tmp_path, max_bytes=1024, backups=2)
    for n in range(40):
        log.log_write(event(n))
    kept = [e.data["n"] for e in log.writes()]
    assert kept == list(range(40 - len(kept), 40)) and 10 < len(kept) < 40
    assert {p.name for p in log.files()} == {"memory_store.writes.2.jsonl", "memory_store.writes.1.jsonl",
                                             "memory_store.writes.jsonl"}


def test_a_torn_last_line_is_reported_and_skipped(tmp_path):
    log = AuditLog(tmp_path)
    log.log_write(event(1))
    with open(tmp_path / "memory_store.writes.jsonl", "ab") as handle:
        handle.write(b'{"kind":"write","time":"2026')  # a crash mid-append
    with pytest.warns(TornLogLineWarning, match="incomplete last line"):
        assert log.writes() == [event(1)]


def test_a_damaged_line_in_the_middle_is_an_error_not_a_silent_drop(tmp_path):
    log = AuditLog(tmp_path)
    log.log_write(event(1))
    with open(tmp_path / "memory_store.writes.jsonl", "ab") as handle:
        handle.write(b"garbage\n")
    log.log_write(event(2))
    with pytest.raises(StoreCorruptError) as caught:
        log.writes()
    assert caught.value.line == 2 and caught.value.path.name == "memory_store.writes.jsonl"


def test_erase_removes_the_users_events_everywhere_and_says_it_happened(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        memory.add(Message("user", "guest 的私人笔记：体检报告", "guest", session_id="s9"))
        memory.build_context("体检报告", "guest")
        memory.add(Message("user", "公开的笔记", "alice"))
        memory.end_session("guest", "s9")
        memory.erase_user("guest")
        writes = memory.audit.writes()
    for path in tmp_path.glob("*.jsonl"):
        assert "体检报告".encode("utf-8") not in path.read_bytes()
        assert b'"guest"' not in path.read_bytes()
    assert [e.kind for e in writes] == ["write", "erasure"]
    assert writes[1].data["user_hash"] == user_hash("guest") and writes[1].data["removed"]["logs"] == 3


def test_manager_logs_writes_reads_and_lifecycle(clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        reply = memory.add(Message("assistant", "ReLU 是循环神经元", session_id="s1"))
        memory.verify(reply.record_id)
        memory.start_task("default", "t1")
        memory.build_context("ReLU", session_id="s1")
        writes, reads = memory.audit.writes(), memory.audit.reads()
    assert [e.kind for e in writes] == ["write", "verify", "start_task"]
    assert (writes[0].data["source"], writes[0].data["verified"], writes[0].data["weight"]) == ("llm_response", False, 0.01)
    read = reads[0]
    assert read.session_id == "s1" and read.data["call"] == "build_context"
    assert read.data["candidates"][0]["admitted"] is True and read.data["context_tokens"] > 0


def test_sensitive_values_never_reach_a_log(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        memory.add(Message("user", "我的手机 13912345678"))
        memory.build_context("手机 13912345678")  # even a query naming it: the read log keeps the query
    text = (tmp_path / "memory_store.writes.jsonl").read_text(encoding="utf-8")
    assert "13912345678" not in text and "139*****678" not in text and '"sensitive":["mobile"]' in text
    reads = (tmp_path / "memory_store.reads.jsonl").read_text(encoding="utf-8")
    assert "13912345678" not in reads and "手机 [mobile]" in reads


def test_the_logged_context_is_the_context_with_each_memory_redacted(tmp_path, clock):
    # The article's mode stores and shows raw text, so only the read log's redaction stands between
    # a raw value and the log: each line's memory text is redacted, a memory split over lines whole.
    secret = "我的密码是\nhunter2"  # cue and value on two lines of one memory
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock, window_size=1, governance=False) as memory:
        memory.add(Message("user", f"{secret} 手机 13912345678"))
        memory.add(Message("user", "今天天气 密码"))
        context = memory.build_context("密码 手机", top_k=3)
        read = memory.audit.reads()[-1]
    assert "hunter2" in context and "13912345678" in context  # the article's mode: nothing redacted
    assert "hunter2" not in read.data["context"] and "13912345678" not in read.data["context"]
    assert read.data["context"].count("\n") == context.count("\n")
    assert read.data["context"] == context.replace("hunter2", "[secret]").replace("13912345678", "[mobile]")
    assert read.data["context_chars"] == len(context)


def test_in_memory_or_off(clock):
    with MemoryManager(store_path=None, clock=clock, audit=False) as memory:
        memory.add(Message("user", "hello"))
        assert memory.audit is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert AuditLog(None).writes() == []


def test_forget_scrubs_the_record_from_the_logs(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        secret = memory.add(Message("user", "我的病历 糖尿病")).record_id
        memory.add(Message("user", "今天天气"))
        memory.build_context("病历")
        memory.build_context("天气")
        assert memory.forget("default", secret)
    for path in tmp_path.glob("*.jsonl"):
        assert "糖尿病".encode("utf-8") not in path.read_bytes(), path
    assert "今天天气".encode("utf-8") in (tmp_path / "memory_store.writes.jsonl").read_bytes()  # others stay


def test_the_next_writer_repairs_a_torn_tail_instead_of_burying_it(tmp_path):
    log = AuditLog(tmp_path)
    log.log_write(event(1))
    with open(tmp_path / "memory_store.writes.jsonl", "ab") as handle:
        handle.write(b'{"kind":"write","ti')  # killed mid-append
    with pytest.warns(TornLogLineWarning, match="dropped an incomplete last line"):
        AuditLog(tmp_path).log_write(event(2))  # a new process appends
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert AuditLog(tmp_path).writes() == [event(1), event(2)]


def test_forget_finds_reads_that_showed_only_a_clipped_summary_snippet(tmp_path, clock):
    """The summary clips each message to 40 characters, so the forgotten text is not in the
    context verbatim; the read log lists the record ids a context showed, and those are matched."""
    long = "My therapist Dr Zhang says my panic attacks started in spring"
    with MemoryManager(window_size=1, store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        secret = memory.add(Message("user", long)).record_id
        memory.add(Message("user", "weather is fine"))
        memory.build_context("weather")  # the summary shows a clipped snippet of the secret
        memory.audit.reads()  # the read's event waits for the next write, or this look at the log
        assert b"therapist" in (tmp_path / "memory_store.reads.jsonl").read_bytes()  # on disk before the forget
        memory.forget("default", secret)
    reads = (tmp_path / "memory_store.reads.jsonl").read_bytes()
    assert b"therapist" not in reads and b"panic" not in reads


def test_erasure_also_drops_a_torn_tail_holding_the_users_text(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        memory.add(Message("user", "guest lives at 12 Elm Street", "guest"))
        memory.add(Message("user", "hello", "alice"))
        memory.build_context("hello", "alice")
    with open(tmp_path / "memory_store.reads.jsonl", "ab") as handle:
        handle.write('{"kind":"read","user_id":"guest","query":"12 Elm Street'.encode())  # killed mid-append
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLogLineWarning)
        with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
            memory.erase_user("guest")
    for path in tmp_path.glob("*.jsonl"):
        assert b"Elm Street" not in path.read_bytes(), path


def test_a_rejected_candidate_is_logged_by_its_numbers_and_shown_with_its_text(clock):
    from v2_memory.observe.inspector import session_turns

    with MemoryManager(store_path=None, clock=clock) as memory:
        memory.add(Message("user", "the ferry to Hvar leaves at 7", session_id="s1"))
        memory.add(Message("user", "my ferry pass is in the blue folder, for the island trip in June", session_id="s1"))
        memory.add(Message("user", "an unrelated note", session_id="s2"))
        memory.build_context("ferry Hvar", session_id="s2")
        writes, reads = memory.audit.writes(), memory.audit.reads()
    candidates = reads[-1].data["candidates"]
    rejected = [c for c in candidates if not c["admitted"]]
    admitted = [c for c in candidates if c["admitted"]]
    assert rejected and all("content" not in c and c["reasons"] for c in rejected)  # numbers, verdict, id: no text
    assert admitted and all(c["content"] for c in admitted)
    shown = session_turns(writes, reads, "s2")[-1].read.data["candidates"]
    assert all(c["content"] for c in shown)  # the inspector fills the text in from the write log
