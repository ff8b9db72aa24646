"""The habits an agent developer brings: a scoped handle, a loud default user, chat-message input,
an async manager, and diagnostics routed through ``logging``."""
from __future__ import annotations

import asyncio
import logging
import threading
import time
import warnings

import pytest

from v2_memory import AsyncMemoryManager, DefaultUserWarning, MemoryManager, Message, ScopedMemory, TornRecordWarning


@pytest.fixture(params=["json", "sqlite"])
def store_path(request, tmp_path):
    return tmp_path / ("memory_store.json" if request.param == "json" else "memory.sqlite3")


# -- the scoped handle ---------------------------------------------------------------------------

def test_a_handle_writes_and_reads_only_its_own_scope(store_path):
    with MemoryManager(store_path=store_path) as memory:
        alice, bob = memory.for_user("alice", session_id="s1"), memory.for_user("bob")
        alice.add("我对花生过敏")
        bob.add("我的车牌尾号是 7731")
        assert isinstance(alice, ScopedMemory) and alice.user_id == "alice" and alice.session_id == "s1"
        assert [h.record["content"] for h in alice.retrieve("花生 过敏")] == ["我对花生过敏"]
        assert bob.retrieve("花生 过敏") == [] and "花生" not in bob.build_context("花生 过敏")
        assert "7731" not in alice.build_context("车牌 尾号") and "7731" in bob.build_context("车牌 尾号")
        assert [m.content for m in alice.recent_messages()] == ["我对花生过敏"]
        assert memory.recent_messages("alice")[0].session_id == "s1"  # the handle filled the session in
        assert [e.record_id for e in alice.explain("花生 过敏")] == [1]


def test_a_tenant_handle_never_sees_the_same_user_name_elsewhere(store_path):
    with MemoryManager(store_path=store_path) as memory:
        memory.for_user("ann", tenant_id="acme").add("acme budget is 4000")
        memory.for_user("ann").add("personal budget is 900")
        assert "4000" in memory.for_user("ann", tenant_id="acme").build_context("budget")
        assert "900" not in memory.for_user("ann", tenant_id="acme").build_context("budget")
        assert "4000" not in memory.for_user("ann").build_context("budget")


def test_a_handle_cannot_be_told_another_scope():
    with MemoryManager(store_path=None) as memory:
        alice = memory.for_user("alice")
        for field in ("user_id", "tenant_id", "session_id", "task_id"):
            with pytest.raises(TypeError, match="scope is fixed"):
                alice.add("hello there", **{field: "mallory"})
        with pytest.raises(ValueError):
            memory.for_user("")
        with pytest.raises(ValueError, match="no session_id"):
            alice.end_session()
        assert memory.users() == []  # nothing was written by the refused calls


def test_a_handle_forgets_verifies_and_erases_only_its_own_user():
    with MemoryManager(store_path=None) as memory:
        alice, bob = memory.for_user("alice"), memory.for_user("bob")
        mine = alice.add("the spare key is under the blue pot").record_id
        reply = alice.add("The key is under the blue pot.", role="assistant").record_id
        assert bob.forget(mine) is False and bob.verify(reply) is False
        assert alice.verify(reply) is True
        assert alice.forget(mine) is True and alice.retrieve("spare key blue pot") != []  # the verified reply stays
        bob.add("bob's note about pots")
        assert alice.erase().store == 1 and memory.users() == ["bob"]


def test_within_keeps_the_user_and_changes_the_session_or_task():
    with MemoryManager(store_path=None) as memory:
        alice = memory.for_user("alice", tenant_id="t")
        trip = alice.within(task_id="trip")
        assert (trip.user_id, trip.tenant_id, trip.task_id, trip.session_id) == ("alice", "t", "trip", None)
        assert repr(trip) == "ScopedMemory(user_id='alice', tenant_id='t', task_id='trip')"


# -- the implicit default user -------------------------------------------------------------------

def test_forgetting_user_id_on_a_store_with_named_users_warns_once():
    with MemoryManager(store_path=None) as memory:
        memory.add(Message("user", "alice likes green tea", "alice"))
        with pytest.warns(DefaultUserWarning, match="named no user_id"):
            memory.build_context("green tea")  # forgot user_id=
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            memory.retrieve("green tea")  # said once per manager
            memory.add(Message("user", "a note", "default"))  # "default" typed on purpose is a name


def test_the_articles_single_user_api_stays_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with MemoryManager(store_path=None) as memory:
            memory.add(Message("user", "如何治理记忆污染？"))
            assert memory.retrieve("记忆污染") and memory.build_context("记忆污染")


def test_as_an_error_the_warning_stops_every_such_write_before_anything_is_stored():
    with MemoryManager(store_path=None) as memory:
        memory.add(Message("user", "alice likes green tea", "alice"))
        with warnings.catch_warnings():
            warnings.simplefilter("error", DefaultUserWarning)
            for attempt in range(3):  # not only the first: said once means once, never "let through after"
                with pytest.raises(DefaultUserWarning):
                    memory.add(Message("user", f"whose is this? {attempt}"))
                with pytest.raises(DefaultUserWarning):
                    memory.build_context("green tea")
        assert memory.users() == ["alice"]


def test_a_tenants_named_users_make_the_warning_fire_in_that_tenant():
    with MemoryManager(store_path=None) as memory:
        memory.add(Message("user", "acme's ann likes green tea", "ann", tenant_id="acme"))
        with pytest.warns(DefaultUserWarning, match="tenant 'acme'"):
            memory.add(Message("user", "a note with no user", tenant_id="acme"))
    with MemoryManager(store_path=None) as memory, warnings.catch_warnings():
        memory.add(Message("user", "acme's ann likes green tea", "ann", tenant_id="acme"))
        warnings.simplefilter("error")
        memory.add(Message("user", "the untenanted default user's note"))  # that partition has no named user


def test_a_store_reopened_with_named_users_warns_too(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "alice likes green tea", "alice"))
    with MemoryManager(store_path=path) as memory, pytest.warns(DefaultUserWarning):
        memory.retrieve("green tea")


# -- chat-message input --------------------------------------------------------------------------

def test_openai_style_messages_are_stored_in_order_with_their_roles():
    chat = [
        {"role": "system", "content": "You are a helpful travel agent."},
        {"role": "user", "content": "I'm flying to Lisbon on May 3rd."},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted: Lisbon, May 3rd."}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "content": "flight TP1351 departs 07:40", "tool_call_id": "c1"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
    ]
    with MemoryManager(store_path=None) as memory:
        results = memory.add_messages(chat, user_id="ann", session_id="s1")
        assert [r is None for r in results] == [True, False, False, True, False, True]
        assert [r.source for r in results if r] == ["user_input", "llm_response", "tool"]
        assert [r.record_id for r in results if r] == [1, 2, 3]  # in order
        assert results[2].verified is False  # model output waits for the user's confirmation
        stored = memory.store.records("ann")
        assert [r["content"] for r in stored][0] == "I'm flying to Lisbon on May 3rd."
        assert all(r.get("session_id") == "s1" for r in stored)
        assert "helpful travel agent" not in memory.build_context("travel agent", user_id="ann", session_id="s1")


def test_a_bad_message_in_a_transcript_stores_none_of_it(tmp_path):
    with MemoryManager(store_path=tmp_path / "m.sqlite3") as memory:
        with pytest.raises(ValueError, match="unknown chat role 'narrator'"):
            memory.add_messages([{"role": "user", "content": "first"}, {"role": "narrator", "content": "x"}],
                                user_id="ann")
        with pytest.raises(TypeError, match="list of chat messages"):
            memory.add_messages({"role": "user", "content": "one"}, user_id="ann")
        with pytest.raises(TypeError, match="LangChain message"):
            memory.add_messages([42], user_id="ann")
        with pytest.raises(TypeError):
            memory.add_messages([{"role": "user", "content": "x"}])  # user_id is required here
        assert memory.users() == []


def test_a_refused_message_stores_none_of_the_transcript_inside_a_callers_batch_too():
    from v2_memory import GovernancePolicy, SensitiveDataError

    chat = [{"role": "user", "content": "I like green tea"}, {"role": "user", "content": "my phone is 13912345678"}]
    with MemoryManager(store_path=None, governance=GovernancePolicy(sensitive_policy="refuse")) as memory:
        with memory.batch():
            with pytest.raises(SensitiveDataError):
                memory.add_messages(chat, user_id="ann")
            memory.add(Message("user", "the batch goes on", "bob"))
        assert memory.users() == ["bob"]


def test_every_langchain_chunk_type_is_read_as_its_message():
    from types import SimpleNamespace as Chunk

    chunks = [Chunk(type=t, content="some text here") for t in
              ("AIMessageChunk", "HumanMessageChunk", "ToolMessageChunk", "FunctionMessageChunk", "SystemMessageChunk")]
    chunks.append(Chunk(type="ChatMessageChunk", role="user", content="a chat chunk from the user"))
    with MemoryManager(store_path=None) as memory:
        results = memory.add_messages(chunks, user_id="ann")
    assert [r.source if r else None for r in results] == [
        "llm_response", "user_input", "tool", "tool", None, "user_input"]


def test_a_handle_adds_a_transcript_in_its_scope():
    with MemoryManager(store_path=None) as memory:
        memory.for_user("ann", task_id="trip").add_messages([{"role": "user", "content": "budget 5k for the trip"}])
        assert memory.store.records("ann")[0]["task_id"] == "trip"


def test_langchain_messages_are_read_by_their_type():
    messages = pytest.importorskip("langchain_core.messages", reason="the langgraph extra (langchain-core) is not installed")
    chat = [messages.SystemMessage("be brief"), messages.HumanMessage("My dog is called Pixel."),
            messages.AIMessage("Pixel is a lovely name."), messages.ToolMessage("ok", tool_call_id="t1")]
    with MemoryManager(store_path=None) as memory:
        results = memory.add_messages(chat, user_id="ann")
        assert results[0] is None and [r.source for r in results[1:]] == ["user_input", "llm_response", "tool"]


# -- the async manager ---------------------------------------------------------------------------

def test_async_calls_gathered_at_once_all_land_and_stay_apart(store_path):
    async def main() -> tuple[str, str, int]:
        async with AsyncMemoryManager(store_path=store_path) as memory:
            await asyncio.gather(*[memory.add(Message("user", f"{who} note {n} about tulips", who))
                                   for n in range(10) for who in ("alice", "bob")])
            alice, bob = await asyncio.gather(memory.build_context("tulips", user_id="alice"),
                                              memory.build_context("tulips", user_id="bob"))
            return alice, bob, len(await memory.retrieve("tulips", user_id="alice", top_k=20))
    alice, bob, hits = asyncio.run(main())
    assert "alice note" in alice and "bob note" not in alice and "alice note" not in bob
    assert hits == 10
    with MemoryManager(store_path=store_path) as memory:  # everything was committed and closed
        assert len(memory.store.records("alice")) == len(memory.store.records("bob")) == 10


def test_the_event_loop_keeps_running_while_a_call_works(monkeypatch):
    """A slow store call runs on the worker thread: a heartbeat on the loop beats meanwhile."""
    slow = threading.Event()

    def slow_context(self, query, user_id="default", top_k=3, **scope):
        slow.set()
        time.sleep(0.3)
        return "context"

    monkeypatch.setattr(MemoryManager, "build_context", slow_context)

    async def main() -> tuple[str, int]:
        beats = 0

        async def heartbeat() -> None:
            nonlocal beats
            while True:
                await asyncio.sleep(0.01)
                beats += slow.is_set()

        beating = asyncio.create_task(heartbeat())
        async with AsyncMemoryManager(store_path=None) as memory:
            context = await memory.build_context("q", user_id="ann")
        beating.cancel()
        return context, beats

    context, beats = asyncio.run(main())
    assert context == "context" and beats >= 3


def test_every_call_runs_on_one_worker_thread_in_the_order_made(monkeypatch):
    seen: list[tuple[str, int]] = []
    real_add = MemoryManager.add

    def add(self, message):
        seen.append((message.content, threading.get_ident()))
        return real_add(self, message)

    monkeypatch.setattr(MemoryManager, "add", add)

    async def main() -> None:
        async with AsyncMemoryManager(store_path=None) as memory:
            await asyncio.gather(*[memory.add(Message("user", f"note number {n}", "ann")) for n in range(8)])

    asyncio.run(main())
    assert [content for content, _ in seen] == [f"note number {n}" for n in range(8)]
    assert len({thread for _, thread in seen}) == 1 and seen[0][1] != threading.get_ident()


def test_async_errors_surface_at_the_await_and_a_closed_manager_says_so(tmp_path):
    async def main() -> None:
        memory = AsyncMemoryManager(store_path=tmp_path / "m.sqlite3")
        with pytest.raises(ValueError):
            await memory.add(Message("user", "hi there", "ann", domain="session"))  # no session_id
        with pytest.raises(TypeError):
            await memory.build_context(42, user_id="ann")
        handle = memory.for_user("ann")
        assert (await handle.add("I live in Porto")).record_id == 1
        assert "Porto" in await handle.build_context("where do I live")
        await memory.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await memory.retrieve("Porto", user_id="ann")

    asyncio.run(main())


def test_closing_while_calls_are_queued_closes_the_store_they_opened_and_refuses_later_ones():
    manager_box = []

    async def main() -> None:
        memory = AsyncMemoryManager(store_path=None)
        add = asyncio.ensure_future(memory.add(Message("user", "queued before the close", "ann")))
        await asyncio.sleep(0)  # the add is queued on the worker first
        await memory.aclose()
        assert (await add).record_id == 1  # it ran, on a store opened for it ...
        manager_box.append(memory._manager)
        with pytest.raises(RuntimeError, match="closed"):
            await memory.retrieve("queued", user_id="ann")
        with pytest.raises(TypeError, match="list of chat messages"):
            await memory.add_messages({"role": "user", "content": "one"}, user_id="ann")

    asyncio.run(main())
    assert manager_box[0].closed  # ... and closed by aclose, not left open


def test_wrap_adopts_an_open_manager_and_closing_closes_it():
    manager = MemoryManager(store_path=None)

    async def main() -> int:
        memory = AsyncMemoryManager.wrap(manager)
        await memory.add(Message("user", "the wifi password hint is 'blue'", "ann"))
        receipt = await memory.erase_user("ann")
        await memory.close()
        return receipt.store

    assert asyncio.run(main()) == 1 and manager.storage.closed
    with pytest.raises(TypeError):
        AsyncMemoryManager.wrap("memory.json")  # type: ignore[arg-type]


@pytest.mark.server
def test_async_gather_on_postgres(pg_schema):
    async def main() -> str:
        async with AsyncMemoryManager(store_path=pg_schema.url) as memory:
            await asyncio.gather(*[memory.add(Message("user", f"{who} note {n} about tulips", who))
                                   for n in range(5) for who in ("alice", "bob")])
            return await memory.build_context("tulips", user_id="alice")
    context = asyncio.run(main())
    assert "alice note" in context and "bob note" not in context


# -- diagnostics through logging -----------------------------------------------------------------

def test_the_package_logger_is_silent_until_the_application_routes_it():
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("v2_memory").handlers)


def test_a_repair_is_a_warning_and_a_log_record(tmp_path, caplog):
    path = tmp_path / "memory_store.json"
    with MemoryManager(store_path=path) as memory:
        memory.add(Message("user", "a note worth keeping", "ann"))
    with open(path, "ab") as handle:
        handle.write(b'{"record_id": 2, "user_id": "ann", "con')  # a crash cut the last line short
    with caplog.at_level(logging.WARNING, logger="v2_memory"), pytest.warns(TornRecordWarning):
        MemoryManager(store_path=path).close()
    records = [r for r in caplog.records if r.name == "v2_memory.storage"]
    assert records and "TornRecordWarning" in records[0].getMessage() and "incomplete last record" in records[0].getMessage()


def test_a_refused_message_is_logged_without_its_value(caplog):
    from v2_memory import GovernancePolicy, SensitiveDataError

    with MemoryManager(store_path=None, governance=GovernancePolicy(sensitive_policy="refuse")) as memory:
        with caplog.at_level(logging.INFO, logger="v2_memory"), pytest.raises(SensitiveDataError):
            memory.add(Message("user", "my phone is 13912345678", "ann"))
    (record,) = [r for r in caplog.records if r.name == "v2_memory.governance"]
    assert "refused" in record.getMessage() and "13912345678" not in record.getMessage()


# -- reprs name only what the value has ----------------------------------------------------------

def test_every_field_a_repr_shows_is_an_attribute_of_the_value():
    """``Admission(..., content=...)`` once showed a field that ``a.content`` could not read."""
    with MemoryManager(store_path=None) as memory:
        written = memory.add(Message("user", "我对花生过敏，电话 13912345678", "ann"))
        memory.add(Message("assistant", "好的，记住了：花生过敏。", "ann"))
        explanation = memory.explain("花生 过敏", "ann")
        health = memory.health()
        values = [memory, written, explanation, *explanation.admissions, health, *health.metrics,
                  memory.erase_user("ann")]
        for value in values:
            for name, _ in value._shown().fields:
                assert hasattr(value, name), f"{type(value).__name__} shows {name!r}, which it does not have"
        admission = explanation.admissions[0]
        assert (admission.content, admission.role, admission.source) == (
            admission.record["content"], "user", "user_input")
        assert (memory.backend, memory.path, memory.scorer, memory.governance, memory.closed) == (
            "json", "in memory", "article", "on", False)
    assert memory.closed is True and memory.closed_reason == "it was closed"


# -- no silent amnesia ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, says", [
    ("nope/memory.sqlite3", "folder .*nope does not exist"),
    ("nope/memory_store.json", "folder .*nope does not exist"),
    ("mem.txt", "unknown store file extension '.txt'"),
    ("memory", "unknown store file extension '\\(none\\)'"),
    ("   ", "unknown store file extension"),
])
def test_a_mistyped_store_path_is_an_error_not_an_empty_memory(tmp_path, name, says):
    from v2_memory import StorePathError

    with pytest.raises(StorePathError, match=says):
        MemoryManager(store_path=tmp_path / name)
    assert list(tmp_path.iterdir()) == []  # no folder, no file made


@pytest.mark.parametrize("name", ["memory_store.json", "memory.sqlite3"])
def test_create_false_opens_only_a_store_that_exists(tmp_path, name):
    from v2_memory import StorePathError

    with pytest.raises(StorePathError, match="no store here"):
        MemoryManager(store_path=tmp_path / name, create=False)
    assert list(tmp_path.iterdir()) == []
    with MemoryManager(store_path=tmp_path / name) as memory:  # the default creates it
        memory.add(Message("user", "first memory ever", "ann"))
    with MemoryManager(store_path=tmp_path / name, create=False) as memory:
        assert memory.users() == ["ann"]
    with pytest.raises(TypeError):
        MemoryManager(store_path=tmp_path / name, create="no")  # type: ignore[arg-type]


@pytest.mark.server
def test_create_false_on_a_server_needs_a_schema_that_holds_a_store(pg_schema):
    from v2_memory import StorePathError

    with pytest.raises(StorePathError, match="no v2_memory store in this database"):
        MemoryManager(store_path=pg_schema.url, create=False)
    MemoryManager(store_path=pg_schema.url).close()
    MemoryManager(store_path=pg_schema.url, create=False).close()


def test_an_existing_store_opens_whatever_its_name(tmp_path):
    """The extension rule is for new stores: one an older release made as 'memory' or a restored
    'memory_store.json.bak' still opens."""
    from v2_memory import JsonVectorStore

    for name in ("memory", "mem.txt", "memory_store.json.bak"):
        with JsonVectorStore(tmp_path / name) as store:  # the article's facade names any file
            store.add("ann", "user", "an old memory about tulips")
        with MemoryManager(store_path=tmp_path / name, create=False, adopt_store=True) as memory:
            assert memory.retrieve("tulips", "ann")


def test_a_dangling_symlink_into_a_missing_folder_is_refused(tmp_path):
    from v2_memory import StorePathError

    link = tmp_path / "memory.json"
    link.symlink_to(tmp_path / "missing" / "x.json")
    with pytest.raises(StorePathError, match="does not exist"):
        MemoryManager(store_path=link)
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("chat, says", [
    ({"role": "user", "text": "I am allergic to peanuts."}, "needs a 'content' key"),
    ({"role": "user", "contents": "I am allergic to peanuts."}, "needs a 'content' key"),
    ({"role": "user", "content": None}, "user message needs text"),
    ({"role": "user", "content": "   "}, "user message needs text"),
])
def test_a_users_turn_is_never_dropped_in_silence(chat, says):
    with MemoryManager(store_path=None) as memory:
        with pytest.raises(ValueError, match=says):
            memory.add_messages([{"role": "user", "content": "first"}, chat], user_id="ann")
        assert memory.users() == []


def test_a_handle_says_how_to_add_a_message_value():
    with MemoryManager(store_path=None) as memory, pytest.raises(TypeError, match="takes the text"):
        memory.for_user("ann").add(Message("user", "hello there", "ann"))
