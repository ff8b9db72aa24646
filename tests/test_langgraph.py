"""The LangGraph store (``v2_memory.integrations.langgraph``, the ``langgraph`` extra).

The behaviours LangGraph's own store tests check (put / get / delete / search / list_namespaces,
batch ordering, the async API, namespace validation, namespaces matched per segment), ported to
this store; then what only a governed store promises (a corrected fact, another user, an erased
user, the model's own words never come back through ``search``); then a real graph, driven by
langchain_core's fake chat model, that remembers across threads and forgets after erasure.

Skipped, with the reason, when the extra is not installed; ``V2_MEMORY_REQUIRE_LANGGRAPH=1`` (CI
sets it) turns the skip into a failure.
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from v2_memory import MemoryManager, Message, GovernancePolicy

REPO = Path(__file__).resolve().parent.parent
REASON = "the 'langgraph' extra is not installed (pip install -e '.[langgraph]')"


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a half-removed package
        return False


HAVE_LANGGRAPH = _installed("langgraph") and _installed("langchain_core")
if not HAVE_LANGGRAPH and os.environ.get("V2_MEMORY_REQUIRE_LANGGRAPH") == "1":
    raise RuntimeError(f"V2_MEMORY_REQUIRE_LANGGRAPH=1 but {REASON}")
needs_langgraph = pytest.mark.skipif(not HAVE_LANGGRAPH, reason=REASON)

if HAVE_LANGGRAPH:
    # The graph's names too, at module level: LangGraph resolves a node's annotations in its module.
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.store.base import (BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition,
                                      PutOp, SearchItem, SearchOp)

    from v2_memory.integrations.langgraph import V2MemoryStore


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)


# -- the extra is optional -----------------------------------------------------------------------


def test_importing_v2_memory_never_imports_langgraph():
    done = _run("import sys, v2_memory, v2_memory.integrations, v2_memory.cli\n"
                "assert not [m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core')], 'imported'")
    assert done.returncode == 0, done.stderr


def test_without_the_extra_the_import_error_names_it():
    done = _run("import sys\nsys.modules['langgraph'] = None  # as if not installed\n"
                "import v2_memory.integrations.langgraph")
    assert done.returncode != 0
    assert "ImportError: v2_memory.integrations.langgraph needs the 'langgraph' extra" in done.stderr
    assert 'pip install -e ".[langgraph]"' in done.stderr


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def memory(clock):
    with MemoryManager(store_path=None, threshold=0.2, clock=clock) as manager:
        yield manager


@pytest.fixture
def store(memory):
    return V2MemoryStore(memory)


def _keys(items) -> list[str]:
    return [item.key for item in items]


# -- put / get / delete (LangGraph: test_basic_store_ops) ----------------------------------------


@needs_langgraph
def test_put_get_update_delete(store, clock):
    value = {"content": "The quarterly report is due on Friday", "title": "Report", "tags": ["work"]}
    store.put(("ann",), "doc1", value)
    item = store.get(("ann",), "doc1")
    assert isinstance(item, Item) and not isinstance(item, SearchItem)
    assert (item.namespace, item.key, item.value) == (("ann",), "doc1", value)
    assert item.created_at == item.updated_at == clock.now
    assert list(item.value) == ["content", "title", "tags"]  # the value comes back as it was put

    clock.advance(minutes=5)
    store.put(("ann",), "doc1", {"title": "Report v2", "content": "The quarterly report moved to Monday"})
    updated = store.get(("ann",), "doc1")
    assert updated.value == {"title": "Report v2", "content": "The quarterly report moved to Monday"}
    assert updated.created_at == item.created_at and updated.updated_at == clock.now
    # one record stands for the key: the replaced version is forgotten, not kept beside it
    assert [r["content"] for r in store.manager.store.records("ann")] == ["The quarterly report moved to Monday"]

    assert store.get(("ann", "persona"), "doc1") is None  # another namespace, same key
    assert store.get(("bob",), "doc1") is None
    store.delete(("ann",), "doc1")
    assert store.get(("ann",), "doc1") is None
    assert store.search(("ann",)) == [] and store.manager.store.records("ann") == []
    store.delete(("ann",), "never-there")  # deleting a missing key is not an error


@needs_langgraph
def test_the_text_governance_reads_is_content_else_text_else_the_field_index_names(store):
    store.put(("ann",), "a", {"text": "Swimming classes start in May", "content": 3})
    store.put(("ann",), "b", {"note": "Piano lessons on Thursdays"}, index=["note"])
    assert [r["content"] for r in store.manager.store.records("ann")] == [
        "Swimming classes start in May", "Piano lessons on Thursdays"]
    assert store.get(("ann",), "a").value == {"text": "Swimming classes start in May", "content": 3}
    assert _keys(store.search(("ann",), query="piano lessons")) == ["b"]
    for value, index, error in [({"note": "no text field"}, None, ValueError),
                                ({"a": "x y z", "b": "u v w"}, ["a", "b"], ValueError),
                                ({"content": "fine"}, ["missing"], ValueError),
                                ({"content": "ok"}, None, ValueError),  # filler: never a long-term memory
                                ({"content": "x = compute(a);"}, None, ValueError),  # code only
                                ({"content": "   "}, None, ValueError),
                                ({"content": "a", "when": object()}, None, TypeError),
                                ("just text", None, TypeError)]:
        with pytest.raises(error):
            store.put(("ann",), "bad", value, index=index)
    assert len(store.manager.store.records("ann")) == 2 and store.manager.recent_messages("ann")[-1].content.startswith("Piano")


@needs_langgraph
def test_index_false_keeps_an_item_out_of_search_but_not_out_of_get(store):
    store.put(("ann",), "private", {"content": "My diary entry about the garden"}, index=False)
    assert store.get(("ann",), "private").value == {"content": "My diary entry about the garden"}
    assert store.search(("ann",), query="diary garden") == [] and store.search(("ann",)) == []


@needs_langgraph
def test_ttl_is_refused_not_ignored(store):
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("ann",), "k", {"content": "Lunch with Sam on Tuesday"}, ttl=5)
    with pytest.raises(NotImplementedError):
        store.batch([PutOp(("ann",), "k", {"content": "Lunch with Sam on Tuesday"}, ttl=5.0)])
    assert store.get(("ann",), "k") is None


# -- namespaces (LangGraph: test_cannot_put_empty_namespace, segment-boundary tests) -------------


@needs_langgraph
@pytest.mark.parametrize("namespace", [(), ("ann", "persona", "extra"), ("memories", "ann"), ("ann", "notes"),
                                       ("the", "thing.about"), ("ann", ""), ("",), ("an\x00n",), (1,),
                                       ("langgraph",), ("13800138000",)])
def test_namespaces_of_another_shape_are_a_clear_error_and_change_nothing(store, namespace):
    with pytest.raises((InvalidNamespaceError, ValueError)):
        store.put(namespace, "k", {"content": "Lunch with Sam on Tuesday"})
    assert store.manager.store.all_records() == []
    if namespace == ("langgraph",):  # reserved by LangGraph's put() only; its batch API may use it
        return
    with pytest.raises((InvalidNamespaceError, ValueError)):
        store.batch([PutOp(namespace, "k", {"content": "Lunch with Sam on Tuesday"})])
    with pytest.raises((InvalidNamespaceError, ValueError)):
        store.search(namespace, query="lunch")
    with pytest.raises((InvalidNamespaceError, ValueError)):
        store.get(namespace, "k")
    assert store.manager.store.all_records() == []


@needs_langgraph
def test_the_mapping_error_says_what_a_namespace_is(store):
    with pytest.raises(InvalidNamespaceError, match=r"\(user,\) or \(user, domain\).*tenant_id"):
        store.put(("memories", "ann"), "k", {"content": "Lunch with Sam on Tuesday"})
    with pytest.raises(InvalidNamespaceError, match="never|user"):
        store.search((), query="lunch")  # an empty prefix would be every user: refused, never "all"


@needs_langgraph
def test_namespaces_match_exactly_per_segment(store):
    """The prefix bug LangGraph fixed: ("u1",) must never see ("u10",), nor "user_1" see "userX1"."""
    for user in ["u1", "u10", "u1x", "user_1", "userX1", "a%b", "axxb", "Foo", "foo", "star*", "starX"]:
        store.put((user,), "k", {"content": f"The meeting room for {user} is Orion"})
        store.put((user, "persona"), "k", {"content": f"The favourite colour of {user} is teal"})
    for user in ["u1", "user_1", "a%b", "foo", "Foo", "star*"]:
        found = store.search((user,), query="meeting room favourite colour", limit=100)
        assert {item.namespace for item in found} == {(user,), (user, "persona")}, user
        assert {item.namespace for item in store.search((user,), limit=100)} == {(user,), (user, "persona")}
        assert store.get((user,), "k").value["content"].endswith(f"{user} is Orion")
        assert set(store.list_namespaces(prefix=(user,))) == {(user,), (user, "persona")}
    assert store.search(("u",), query="meeting room") == [] and store.list_namespaces(prefix=("u",)) == []


@needs_langgraph
def test_a_tenant_is_fixed_by_the_store_and_unreachable_by_namespace(memory):
    acme, globex = V2MemoryStore(memory, tenant_id="acme"), V2MemoryStore(memory, tenant_id="globex")
    acme.put(("ann",), "k", {"content": "The launch code name is Bluebird"})
    assert globex.get(("ann",), "k") is None and globex.search(("ann",), query="launch code name") == []
    assert globex.list_namespaces() == [] and acme.list_namespaces() == [("ann",)]
    assert V2MemoryStore(memory).get(("ann",), "k") is None  # no tenant is a scope of its own
    assert memory.retrieve("launch code name", "ann", tenant_id="acme")[0].record["content"].endswith("Bluebird")
    with pytest.raises(ValueError):
        V2MemoryStore(memory, tenant_id="someone@example.com")
    with pytest.raises(TypeError):
        V2MemoryStore("memory.json")


# -- search (LangGraph: test_search, test_search_items, filters, pagination) ---------------------


@needs_langgraph
def test_search_by_prefix_filter_and_pages(store):
    data = [(("ann",), "doc1", {"content": "First doc about the budget", "author": "Alice", "tags": ["important"], "n": 1}),
            (("ann",), "doc2", {"content": "Second doc about the budget", "author": "Bob", "tags": ["draft"], "n": 2}),
            (("ann", "persona"), "img1", {"content": "I prefer dark mode", "author": "Alice", "tags": ["final"], "n": 3})]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    assert _keys(store.search(("ann",))) == ["doc1", "doc2", "img1"]  # no query: oldest first
    assert _keys(store.search(("ann", "persona"))) == ["img1"]
    assert _keys(store.search(("ann",), filter={"author": "Alice"})) == ["doc1", "img1"]
    assert _keys(store.search(("ann",), filter={"tags": ["draft"]})) == ["doc2"]
    assert _keys(store.search(("ann",), filter={"n": {"$gte": 2}})) == ["doc2", "img1"]
    assert _keys(store.search(("ann",), filter={"n": {"$gt": 1, "$lt": 3}, "author": {"$ne": "Alice"}})) == ["doc2"]
    assert _keys(store.search(("ann",), filter={"author": {"$gt": 3}})) == []  # incomparable: no match
    with pytest.raises(ValueError, match="operator"):
        store.search(("ann",), filter={"n": {"$regex": "1"}})
    with pytest.raises(TypeError, match="query"):
        store.batch([PutOp(("ann",), "late", {"content": "A put before a bad search"}), SearchOp(("ann",), query=5)])
    assert store.get(("ann",), "late") is None
    first, second = store.search(("ann",), limit=2), store.search(("ann",), limit=2, offset=2)
    assert _keys(first) == ["doc1", "doc2"] and _keys(second) == ["img1"]
    assert store.search(("ann",), limit=0) == []
    for bad in [{"limit": -1}, {"offset": -1}, {"limit": True}]:
        with pytest.raises(ValueError):
            store.search(("ann",), **bad)

    hits = store.search(("ann",), query="budget doc", limit=10)
    assert _keys(hits) == ["doc1", "doc2"] and all(isinstance(hit.score, float) for hit in hits)
    assert hits[0].score >= hits[1].score > 0
    assert _keys(store.search(("ann",), query="budget doc", limit=1, offset=1)) == ["doc2"]
    assert _keys(store.search(("ann",), query="budget doc", filter={"author": "Bob"})) == ["doc2"]
    assert store.search(("ann", "persona"), query="budget doc") == []


@needs_langgraph
def test_search_scores_are_the_governed_similarity(store, memory):
    store.put(("ann",), "k", {"content": "The spare key is under the blue flowerpot"})
    memory.add(Message("user", "Unrelated chatter about the spare tyre", user_id="ann"))  # not an item: never returned
    [hit] = store.search(("ann",), query="where is the spare key")
    admitted = [a for a in memory.explain("where is the spare key", "ann") if a.admitted]
    assert hit.score == pytest.approx(next(a.similarity for a in admitted if a.record["content"].endswith("flowerpot")))


# -- batch (LangGraph: test_batch_order, test_batch_*_ops) ---------------------------------------


@needs_langgraph
def test_batch_results_follow_the_ops_in_order(store):
    store.put(("test",), "key1", {"content": "value one of the test data", "data": "value1"})
    store.put(("test", "persona"), "key2", {"content": "value two of the test data", "data": "value2"})
    results = store.batch([
        GetOp(("test",), "key1"),
        PutOp(("test", "persona"), "key2", {"content": "value two of the test data", "data": "value2"}),
        SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(("test",), "key3"),
        PutOp(("test",), "key3", {"content": "value three of the test data", "data": "value3"}),
        GetOp(("test",), "key3"),  # sees the put before it
        PutOp(("test",), "key1", None),  # a delete
        GetOp(("test",), "key1"),
    ])
    assert len(results) == 9
    assert results[0].value == {"content": "value one of the test data", "data": "value1"}
    assert results[1] is None and results[5] is None and results[7] is None
    assert _keys(results[2]) == ["key1"]
    assert results[3] == [("test",), ("test", "persona")]
    assert results[4] is None and results[6].value["data"] == "value3" and results[8] is None
    assert store.get(("test",), "key3").value["data"] == "value3"


@needs_langgraph
def test_a_batch_with_one_bad_op_changes_nothing(store):
    store.put(("ann",), "keep", {"content": "The garage code changed in March"})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("ann",), "new", {"content": "Dinner at eight with Lee"}),
                     PutOp(("ann",), "keep", None),
                     PutOp(("ann", "notes"), "x", {"content": "Bad namespace"})])
    with pytest.raises(TypeError):
        store.batch([PutOp(("ann",), "new", {"content": "Dinner at eight with Lee"}), "not an op"])
    assert _keys(store.search(("ann",))) == ["keep"]


@needs_langgraph
def test_batch_search_and_list_ops(store):
    for namespace, key, tag in [(("test",), "key1", "a"), (("test", "persona"), "key2", "a"), (("other",), "key3", "b")]:
        store.put(namespace, key, {"content": f"The {key} note for the team", "tag": tag})
    results = store.batch([SearchOp(("test",), filter={"tag": "a"}), SearchOp(("test",), limit=1),
                           SearchOp(("test", "persona")), SearchOp(("other",), query="team note"),
                           ListNamespacesOp(max_depth=1), ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("persona",)),))])
    assert [_keys(r) for r in results[:4]] == [["key1", "key2"], ["key1"], ["key2"], ["key3"]]
    assert results[4] == [("other",), ("test",)] and results[5] == [("test", "persona")]


# -- async (LangGraph: the a* variants) ----------------------------------------------------------


@needs_langgraph
def test_the_async_api_does_what_the_sync_one_does(store):
    async def scenario():
        await store.aput(("ann",), "k1", {"content": "The dentist appointment is on Thursday"})
        await store.aput(("ann", "persona"), "k2", {"content": "I prefer morning appointments"})
        got = await store.aget(("ann",), "k1")
        found = await store.asearch(("ann",), query="dentist appointment")
        listed = await store.alist_namespaces(prefix=("ann",))
        batched = await store.abatch([GetOp(("ann", "persona"), "k2"), PutOp(("ann",), "k1", None), GetOp(("ann",), "k1")])
        await store.adelete(("ann", "persona"), "k2")
        with pytest.raises(InvalidNamespaceError):
            await store.aput(("ann", "x", "y"), "k", {"content": "Too deep a namespace"})
        return got, found, listed, batched, await store.asearch(("ann",))

    got, found, listed, batched, after = asyncio.run(scenario())
    assert got.value["content"].endswith("Thursday") and _keys(found)[0] == "k1"
    assert listed == [("ann",), ("ann", "persona")]
    assert batched[0].key == "k2" and batched[1] is None and batched[2] is None
    assert after == []


@needs_langgraph
def test_concurrent_async_puts_lose_nothing(store):
    async def scenario():
        await asyncio.gather(*(store.aput(("ann",), f"k{i}", {"content": f"Reminder number {i} about the garden"})
                               for i in range(12)))
        return await store.asearch(("ann",), limit=100)

    assert sorted(_keys(asyncio.run(scenario()))) == sorted(f"k{i}" for i in range(12))


# -- list_namespaces (LangGraph: test_list_namespaces_*) -----------------------------------------


@needs_langgraph
def test_list_namespaces_prefix_suffix_wildcards_depth_and_pages(store):
    assert store.list_namespaces() == []
    for user in ["a", "b", "c"]:
        store.put((user,), "k", {"content": f"The plan for {user} is ready"})
    for user, domain in [("a", "persona"), ("b", "persona"), ("c", "task")]:
        value = {"content": f"The {domain} note for {user}"}
        store.put((user, domain), "k", {**value, "task_id": "t1"} if domain == "task" else value)
    everything = [("a",), ("a", "persona"), ("b",), ("b", "persona"), ("c",), ("c", "task")]
    assert store.list_namespaces() == everything
    assert store.list_namespaces(prefix=("a",)) == [("a",), ("a", "persona")]
    assert store.list_namespaces(suffix=("persona",)) == [("a", "persona"), ("b", "persona")]
    assert store.list_namespaces(prefix=("*", "persona")) == [("a", "persona"), ("b", "persona")]
    assert store.list_namespaces(prefix=("b",), suffix=("persona",)) == [("b", "persona")]
    assert store.list_namespaces(suffix=("*", "task")) == [("c", "task")]
    assert store.list_namespaces(prefix=("a", "persona", "deeper")) == []
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",), ("c",)]
    assert store.list_namespaces(limit=2) == everything[:2] and store.list_namespaces(offset=4) == everything[4:]
    assert store.list_namespaces(limit=2, offset=2) == everything[2:4]
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("a.b",))


# -- restart -------------------------------------------------------------------------------------


@needs_langgraph
@pytest.mark.parametrize("name", ["memory_store.json", "memory.sqlite3"])
def test_keys_and_values_survive_a_restart(tmp_path, name):
    path = tmp_path / name
    value = {"content": "The wifi password hint is the cat's name", "room": "study", "n": [1, 2]}
    with MemoryManager(store_path=path) as memory:
        store = V2MemoryStore(memory)
        store.put(("ann",), "wifi", value)
        store.put(("ann", "persona"), "tea", {"content": "I drink green tea"})
        store.put(("ann",), "gone", {"content": "Temporary note about parking"})
        store.delete(("ann",), "gone")
        before = store.get(("ann",), "wifi")
    with MemoryManager(store_path=path) as memory:
        store = V2MemoryStore(memory)
        assert store.get(("ann",), "wifi") == before and store.get(("ann",), "gone") is None
        assert _keys(store.search(("ann",), query="wifi password hint")) == ["wifi"]
        assert store.list_namespaces() == [("ann",), ("ann", "persona")]
        store.put(("ann",), "wifi", {"content": "The wifi password hint is the dog's name"})
    with MemoryManager(store_path=path) as memory:
        assert V2MemoryStore(memory).get(("ann",), "wifi").value == {"content": "The wifi password hint is the dog's name"}
        assert V2MemoryStore(memory).get(("ann",), "wifi").created_at == before.created_at


@needs_langgraph
def test_replacing_a_key_does_not_rebuild_the_file_but_deleting_it_does(tmp_path):
    """A graph updates a profile key on every turn. Each replacement used to scrub the file
    (``VACUUM``: the whole store's cost, a quarter second at 100,000 records); it still forgets the
    old version from every track and log, and the next delete scrubs what it left in free pages."""
    path = tmp_path / "agent.sqlite3"
    with MemoryManager(store_path=path) as memory:
        scrubs = []
        real_scrub = memory.storage.db.scrub
        memory.storage.db.scrub = lambda: (scrubs.append(1), real_scrub())
        store = V2MemoryStore(memory)
        for n in range(3):
            store.put(("ann",), "profile", {"content": f"Ann prefers oolong tea, version marker{n}"})
            store.search(("ann",), query="oolong tea")  # a read logs the current version
        assert scrubs == []
        assert [r["content"] for r in memory.store.records("ann")] == ["Ann prefers oolong tea, version marker2"]
        logged = json.dumps([e.data for e in memory.audit.writes() + memory.audit.reads()], ensure_ascii=False)
        assert "marker2" in logged and "marker0" not in logged and "marker1" not in logged
        store.delete(("ann",), "profile")
        assert scrubs == [1]
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"oolong" not in on_disk


# -- governance ----------------------------------------------------------------------------------


@needs_langgraph
def test_a_corrected_fact_is_not_returned_by_search(store):
    store.put(("ann",), "dentist", {"content": "The dentist appointment is Wednesday at 3pm"})
    store.put(("ann",), "fix", {"content": "Sorry, I was wrong: the dentist appointment is Thursday, not Wednesday"})
    for found in (store.search(("ann",), query="when is the dentist appointment"), store.search(("ann",))):
        assert all("Wednesday at 3pm" not in item.value["content"] for item in found), found
        assert "fix" in _keys(found)
    # get is a lookup of what was put under the key: the history stays traceable
    assert store.get(("ann",), "dentist").value["content"] == "The dentist appointment is Wednesday at 3pm"


@needs_langgraph
def test_another_users_namespace_sees_nothing(store):
    store.put(("ann",), "k", {"content": "My private note about the budget"})
    store.put(("ann", "persona"), "k", {"content": "I prefer the budget in euros"})
    assert store.search(("bob",), query="private note budget euros") == []
    assert store.search(("bob",)) == [] and store.get(("bob",), "k") is None
    assert store.search(("bob", "persona"), query="budget euros") == []


@needs_langgraph
def test_after_erase_user_nothing_comes_back(store, memory):
    store.put(("ann",), "k1", {"content": "My allergy list includes peanuts"})
    store.put(("ann", "persona"), "k2", {"content": "I prefer aisle seats"})
    store.put(("bob",), "k1", {"content": "Bob's allergy list includes shellfish"})
    receipt = memory.erase_user("ann")
    assert receipt.store == 2
    assert store.search(("ann",), query="allergy list peanuts") == [] and store.search(("ann",)) == []
    assert store.get(("ann",), "k1") is None and store.get(("ann", "persona"), "k2") is None
    assert store.list_namespaces() == [("bob",)]
    assert _keys(store.search(("bob",), query="allergy list")) == ["k1"]


@needs_langgraph
def test_the_models_own_words_are_stored_but_never_searched(store):
    store.put(("ann",), "said", {"content": "The user's flight leaves from gate B21", "role": "assistant"})
    assert store.search(("ann",), query="flight gate") == [] and store.search(("ann",)) == []
    assert store.get(("ann",), "said").value["role"] == "assistant"  # kept, and says who said it
    record = store.manager.store.records("ann")[0]
    assert store.manager.verify(record["record_id"], user_id="ann")  # a user confirmed it
    assert _keys(store.search(("ann",), query="flight gate")) == ["said"]


@needs_langgraph
def test_a_confirmed_statement_reaches_prompts_as_its_fact_as_in_retrieve(store, memory):
    store.put(("ann",), "laptop", {"content": "I use a Mac for work"})
    assert _keys(store.search(("ann",), query="what laptop do I use for work")) == ["laptop"]  # pending: its words
    memory.confirm_fact("ann", "device")
    for found in (store.search(("ann",), query="what laptop do I use for work"), store.search(("ann",))):
        assert found == [] and memory.retrieve("what laptop do I use for work", "ann") == []
    assert memory.build_context("what laptop do I use", "ann").splitlines()[0] == "persona:device = Mac"
    assert store.get(("ann",), "laptop").value == {"content": "I use a Mac for work"}


@needs_langgraph
def test_personal_data_is_redacted_in_the_text_and_refused_elsewhere(clock):
    with MemoryManager(store_path=None, threshold=0.2, clock=clock) as memory:
        store = V2MemoryStore(memory)
        store.put(("ann",), "call", {"content": "Call the clinic on 13800138000 about the results"})
        assert "13800138000" not in str(store.get(("ann",), "call").value)
        assert "13800138000" not in str(store.search(("ann",), query="clinic results"))
        with pytest.raises(ValueError, match=r"value\['phone'\] holds personal data"):
            store.put(("ann",), "x", {"content": "Clinic details", "phone": "13800138000"})
        with pytest.raises(ValueError, match="key holds personal data"):
            store.put(("ann",), "someone@example.com", {"content": "Clinic details"})
        assert _keys(store.search(("ann",))) == ["call"]
    isolate = GovernancePolicy(sensitive_policy="isolate")
    with MemoryManager(store_path=None, threshold=0.2, clock=clock, governance=isolate) as memory:
        store = V2MemoryStore(memory)
        store.put(("ann",), "call", {"content": "Call the clinic on 13800138000 about the results"})
        assert store.search(("ann",), query="clinic results") == [] and store.search(("ann",)) == []
        assert "13800138000" not in str(store.get(("ann",), "call").value)


@needs_langgraph
def test_session_memories_need_their_session_and_end_with_it(store, memory):
    store.put(("ann", "session"), "trip", {"content": "Today's trip notes: gate B21", "session_id": "s1"})
    with pytest.raises(ValueError, match="session_id"):
        store.put(("ann", "session"), "nosession", {"content": "Notes without a session"})
    assert store.search(("ann",), query="trip notes gate") == []  # another session's: not this read's
    assert _keys(store.search(("ann",), query="trip notes gate", filter={"session_id": "s1"})) == ["trip"]
    assert _keys(store.search(("ann", "session"), filter={"session_id": "s1"})) == ["trip"]
    memory.end_session("ann", "s1")
    assert store.search(("ann",), query="trip notes gate", filter={"session_id": "s1"}) == []
    assert store.search(("ann", "session"), filter={"session_id": "s1"}) == []


@needs_langgraph
def test_a_lookup_reads_only_that_users_records(store, memory, monkeypatch):
    for user in ["ann", "bob", "cat"]:
        for i in range(5):
            store.put((user,), f"k{i}", {"content": f"Reminder {i} for {user} about the garden"})
    asked = []
    real = memory.store.records
    monkeypatch.setattr(memory.store, "records", lambda user_id, **kw: asked.append(user_id) or real(user_id, **kw))
    monkeypatch.setattr(memory.store, "all_records", lambda: pytest.fail("a lookup read every record"))
    store.get(("ann",), "k3")
    store.search(("ann",), query="garden reminder")
    store.search(("ann",))
    store.put(("ann",), "k9", {"content": "Reminder 9 for ann about the garden"})
    store.delete(("ann",), "k9")
    assert set(asked) == {"ann"}


# -- a graph ---------------------------------------------------------------------------------------


@needs_langgraph
def test_a_graph_remembers_across_threads_and_forgets_after_erasure(tmp_path):
    class Prompts(BaseCallbackHandler):
        """What reached the model: the system message of each call."""

        def __init__(self) -> None:
            self.seen: list[str] = []

        def on_chat_model_start(self, serialized, messages, **kwargs) -> None:
            self.seen.append(messages[0][0].content)

    model = GenericFakeChatModel(messages=iter([AIMessage(f"reply {i}") for i in range(4)]))

    def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        user, thread = config["configurable"]["user_id"], config["configurable"]["thread_id"]
        said = state["messages"][-1].content
        memories = store.search((user,), query=said, limit=3)
        system = SystemMessage("Memories:\n" + "\n".join(m.value["content"] for m in memories))
        reply = model.invoke([system, *state["messages"]], config)
        if said.startswith("Remember"):
            store.put((user,), f"{thread}-user", {"content": said})
        store.put((user,), f"{thread}-reply", {"content": f"The assistant said {reply.content} about dinner",
                                               "role": "assistant"})  # stored, unverified: never searched
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", END)
    prompts = Prompts()
    with MemoryManager(store_path=tmp_path / "agent.sqlite3", threshold=0.2) as memory:
        app = graph.compile(checkpointer=InMemorySaver(), store=V2MemoryStore(memory))

        def ask(text: str, thread: str, user: str = "ann") -> None:
            config = {"configurable": {"thread_id": thread, "user_id": user}, "callbacks": [prompts]}
            app.invoke({"messages": [HumanMessage(text)]}, config)

        ask("Remember that I am vegetarian and cook dinner at home", "t1")
        ask("What should I cook for dinner tonight?", "t2")  # a new thread: no shared messages
        ask("What should I cook for dinner tonight?", "t3", user="bob")
        memory.erase_user("ann")
        ask("What should I cook for dinner tonight?", "t4")
    assert "vegetarian" not in prompts.seen[0]
    assert "I am vegetarian and cook dinner at home" in prompts.seen[1]  # remembered across threads
    assert "assistant said" not in prompts.seen[1]  # the model's own reply did not come back as a fact
    assert prompts.seen[2] == "Memories:\n"  # bob sees nothing of ann
    assert prompts.seen[3] == "Memories:\n"  # forgotten after erasure


# -- the README ------------------------------------------------------------------------------------


@needs_langgraph
def test_the_readme_section_runs_and_prints_what_its_comments_say(tmp_path, monkeypatch):
    readme = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    start = readme.index("## Use it as a LangGraph store")
    end = readme.find("\n## ", start + 3)
    section = readme[start:end if end != -1 else len(readme)]
    blocks = re.findall(r"```py\n(.*?)```", section, re.S)
    assert blocks and "(user,)" in section and "(user, domain)" in section and "tenant_id" in section
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "docs/agents.md", "exec"), {})
        printed = out.getvalue().splitlines()
        expected = [line.strip()[2:] for line in block.splitlines() if line.strip().startswith("# ")]
        assert expected and all(line in printed for line in expected), (expected, printed)


# -- against LangGraph's own InMemoryStore -----------------------------------------------------------


if HAVE_LANGGRAPH:
    from hypothesis import given, settings, strategies as st

    _NAMESPACES = [("u1",), ("u10",), ("u1", "persona"), ("u10", "persona"), ("u2",)]
    _OPS = st.lists(st.tuples(st.sampled_from(["put", "delete"]), st.sampled_from(_NAMESPACES),
                              st.sampled_from(["a", "b", "c"]), st.sampled_from(["fern", "cactus", "orchid"])),
                    max_size=25)

    @settings(max_examples=25, deadline=None)
    @given(_OPS)
    def test_keys_namespaces_and_listings_agree_with_langgraphs_in_memory_store(ops):
        """Where governance has nothing to say (distinct, neutral reminders), this store holds
        exactly what LangGraph's reference store holds: every get, namespace and no-query listing."""
        from langgraph.store.memory import InMemoryStore

        reference = InMemoryStore()
        with MemoryManager(store_path=None, threshold=0.2) as manager:
            store = V2MemoryStore(manager)
            for n, (kind, namespace, key, plant) in enumerate(ops):
                value = {"content": f"Reminder {n}: water the {plant}", "n": n}
                for target in (store, reference):
                    target.put(namespace, key, value) if kind == "put" else target.delete(namespace, key)
            # (the reference keeps listing a namespace once it was touched, even emptied: count held items)
            assert store.list_namespaces() == sorted(ns for ns, items in reference._data.items() if items)
            for namespace in _NAMESPACES:
                for key in ["a", "b", "c"]:
                    mine, theirs = store.get(namespace, key), reference.get(namespace, key)
                    assert (mine and mine.value) == (theirs and theirs.value), (namespace, key)
            for prefix in [("u1",), ("u10",), ("u1", "persona"), ("u2",)]:
                mine = {(i.namespace, i.key, i.value["n"]) for i in store.search(prefix, limit=100)}
                theirs = {(i.namespace, i.key, i.value["n"]) for i in reference.search(prefix, limit=100)}
                assert mine == theirs, prefix
