"""JsonVectorStore: the article's facade, exact search, durable and honest files."""
from __future__ import annotations

import json
import math
import warnings

import pytest

from v2_memory import (
    JsonVectorStore,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StorePathError,
    TornRecordWarning,
    UnsupportedFormatError,
    VectorStore,
)


@pytest.fixture(params=["memory", "file"])
def store(request, tmp_path):
    """Every behaviour test runs on the in-memory and the file-backed store."""
    path = None if request.param == "memory" else tmp_path / "store.json"
    with JsonVectorStore(path) as store:
        yield store


def test_is_a_vector_store(store):
    assert isinstance(store, VectorStore)


def test_add_returns_record_with_increasing_ids(store):
    first = store.add("alice", "user", "hello", topic="greeting")
    second = store.add("bob", "user", "hi")
    assert first == {"record_id": 1, "user_id": "alice", "role": "user", "content": "hello", "topic": "greeting"}
    assert second["record_id"] == 2


def test_search_sees_only_the_asked_user(store):
    store.add("alice", "user", "coffee every morning")
    store.add("bob", "user", "coffee every morning")
    hits = store.search("coffee", "alice", top_k=10)
    assert [record["user_id"] for _, record in hits] == ["alice"]
    assert store.search("coffee", "carol") == []


def test_ids_match_exactly_never_by_prefix(store):
    store.add("u10", "user", "secret of u10")
    assert store.search("secret", "u1", top_k=5) == []


def test_ties_keep_insertion_order_and_threshold_is_inclusive(store):
    for text in ["b a", "a b", "a c"]:
        store.add("u", "user", text)
    hits = store.search("a b", "u", top_k=3)
    # "b a" and "a b" both score 1.0: the earlier one first. "a c" scores 1/2.
    assert [r["record_id"] for _, r in hits] == [1, 2, 3]
    assert [s for s, _ in hits] == [pytest.approx(1.0), pytest.approx(1.0), pytest.approx(0.5)]
    exact = hits[2][0]
    assert [r["record_id"] for _, r in store.search("a b", "u", top_k=3, threshold=exact)] == [1, 2, 3]


def test_blind_search_fills_with_zero_scores_like_brute_force(store):
    store.add("u", "user", "apple")
    store.add("u", "user", "banana")
    store.add("u", "user", "cherry")
    hits = store.search("banana", "u", top_k=3)
    assert [(round(s, 3), r["content"]) for s, r in hits] == [(1.0, "banana"), (0.0, "apple"), (0.0, "cherry")]
    assert [r["content"] for _, r in store.search("banana", "u", top_k=3, threshold=0.01)] == ["banana"]


def test_returned_records_are_copies(store):
    store.add("u", "user", "keep me")
    _, record = store.search("keep", "u")[0]
    record["content"] = "tampered"
    assert store.records("u")[0]["content"] == "keep me"


def test_erase_user_removes_records_and_never_reuses_ids(store):
    store.add("guest", "user", "private note")
    store.add("alice", "user", "public note")
    assert store.erase_user("guest") == 1
    assert store.records("guest") == [] and store.search("note", "guest") == []
    assert store.add("alice", "user", "later")["record_id"] == 3


def test_delete_one_record(store):
    store.add("u", "user", "first words")
    store.add("u", "user", "second words")
    assert store.delete(1)["content"] == "first words"
    assert [r["content"] for _, r in store.search("words", "u")] == ["second words"]
    assert store.delete(1) is None


def test_batch_writes_once_at_the_end(store):
    with store.batch():
        store.add("u", "user", "one")
        store.add("u", "user", "two")
    assert [r["content"] for r in store.records("u")] == ["one", "two"]


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda s: s.add("", "user", "x"), ValueError),
        (lambda s: s.add("u", "", "x"), ValueError),
        (lambda s: s.add("u", "user", "   "), ValueError),
        (lambda s: s.add(3, "user", "x"), TypeError),
        (lambda s: s.add("u", None, "x"), TypeError),
        (lambda s: s.add("u", "user", "x", record_id=9), ValueError),
        (lambda s: s.add("u", "user", "x", when=object()), TypeError),
        (lambda s: s.add("u", "user", "x", score=math.nan), ValueError),
        (lambda s: s.search("x", "u", top_k=0), ValueError),
        (lambda s: s.search("x", "u", top_k=True), TypeError),
        (lambda s: s.search("x", "u", threshold=math.nan), ValueError),
        (lambda s: s.search("x", "u", threshold=1.5), ValueError),
        (lambda s: s.search("x", "u", threshold=-0.1), ValueError),
        (lambda s: s.search("x", ""), ValueError),
        (lambda s: s.search(None, "u"), TypeError),
        (lambda s: s.erase_user(""), ValueError),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(store, call, error):
    store.add("u", "user", "x marks the spot")
    before = (store.records("u"), store.path.read_bytes() if store.path else None)
    with pytest.raises(error):
        call(store)
    assert (store.records("u"), store.path.read_bytes() if store.path else None) == before
    assert store.add("u", "user", "next")["record_id"] == 2


# -- persistence ---------------------------------------------------------------------------------


def test_reopen_gives_the_same_answers(tmp_path):
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as store:
        for i, text in enumerate(["记忆污染 阈值", "如何治理记忆污染", "天气不错", "阈值 Agent"]):
            store.add("u" if i % 2 else "v", "user", text, n=i)
        before = {u: store.search("记忆污染 阈值 Agent", u, top_k=5) for u in ["u", "v"]}
    with JsonVectorStore(path) as store:
        assert {u: store.search("记忆污染 阈值 Agent", u, top_k=5) for u in ["u", "v"]} == before
        assert store.add("u", "user", "new")["record_id"] == 5


def test_file_is_a_versioned_utf8_log(tmp_path):
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as store:
        store.add("u", "user", "记忆")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format": "v2_memory.json_store", "version": 1, "next_id": 1}
    assert "记忆" in lines[1]  # ensure_ascii=False: readable UTF-8, not \\u escapes


def test_add_appends_instead_of_rewriting(tmp_path):
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as store:
        store.add("u", "user", "one")
        inode = path.stat().st_ino
        head = path.read_bytes()
        store.add("u", "user", "two")
        assert path.stat().st_ino == inode and path.read_bytes().startswith(head)


def test_erase_rewrites_the_file_without_a_byte_of_the_user(tmp_path):
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as store:
        store.add("guest", "user", "身份证 secret-42")
        store.add("alice", "user", "hello")
        store.erase_user("guest")
    assert "secret-42".encode() not in path.read_bytes()
    assert "身份证".encode("utf-8") not in path.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".s.json.lock", "s.json"]  # no temp file left behind
    assert (tmp_path / ".s.json.lock").read_bytes() == b""  # the writer's lock holds no data
    with JsonVectorStore(path) as store:
        assert store.add("alice", "user", "x")["record_id"] == 3  # next_id survived the rewrite


def test_directory_path_is_refused(tmp_path):
    with pytest.raises(StorePathError, match=str(tmp_path)):
        JsonVectorStore(tmp_path)


def _write(path, *lines: str, tail: bytes = b"") -> bytes:
    data = "".join(line + "\n" for line in lines).encode("utf-8") + tail
    path.write_bytes(data)
    return data


HEADER = '{"format":"v2_memory.json_store","version":1,"next_id":1}'
REC = '{"record_id":%d,"user_id":"u","role":"user","content":"c%d"}'


@pytest.mark.parametrize(
    "lines, line_no",
    [
        ([HEADER, REC % (1, 1), "{not json", REC % (3, 3)], 3),
        ([HEADER, REC % (1, 1), REC % (1, 1)], 3),
        ([HEADER, '{"record_id":1,"user_id":"u","role":"user"}'], 2),
        ([HEADER, "[1, 2]"], 2),
        (['{"hello": "world"}'], 1),
        (["not a store at all"], 1),
    ],
)
def test_corrupt_file_raises_names_the_file_and_is_not_touched(tmp_path, lines, line_no):
    path = tmp_path / "s.json"
    data = _write(path, *lines)
    with pytest.raises(StoreCorruptError) as caught:
        JsonVectorStore(path)
    assert caught.value.path == path and caught.value.line == line_no
    assert str(path) in str(caught.value)
    assert path.read_bytes() == data


def test_newer_format_version_is_refused_untouched(tmp_path):
    path = tmp_path / "s.json"
    data = _write(path, '{"format":"v2_memory.json_store","version":99,"next_id":1}')
    with pytest.raises(UnsupportedFormatError, match="version 99"):
        JsonVectorStore(path)
    assert path.read_bytes() == data


def test_torn_last_record_is_dropped_with_a_warning(tmp_path):
    path = tmp_path / "s.json"
    _write(path, HEADER, REC % (1, 1), tail=b'{"record_id":2,"user_id":"u","ro')
    with pytest.warns(TornRecordWarning, match="incomplete last record"):
        store = JsonVectorStore(path)
    with store:
        assert store.dropped_bytes == len(b'{"record_id":2,"user_id":"u","ro')
        assert [r["content"] for r in store.records("u")] == ["c1"]
        store.add("u", "user", "after")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with JsonVectorStore(path) as store:
            assert [r["content"] for r in store.records("u")] == ["c1", "after"]


def test_tenants_are_separate_people(store):
    store.add("alice", "user", "tenant a secret", tenant_id="a")
    store.add("alice", "user", "tenant b secret", tenant_id="b")
    store.add("alice", "user", "no tenant secret")
    assert [r["content"] for _, r in store.search("secret", "alice", tenant_id="a")] == ["tenant a secret"]
    assert [r["content"] for _, r in store.search("secret", "alice")] == ["no tenant secret"]
    assert store.erase_user("alice", tenant_id="a") == 1
    assert store.records("alice", tenant_id="b")[0]["tenant_id"] == "b"
    assert store.users() == ["alice"] and store.users(tenant_id="b") == ["alice"]
    with pytest.raises(ValueError):
        store.search("secret", "alice", tenant_id="")
    with pytest.raises(ValueError):
        store.add("alice", "user", "x", tenant_id="  ")


def test_a_failed_rewrite_erases_nothing(tmp_path, monkeypatch):
    """Disk full during erasure: the records stay, in memory and on disk, and the error says so."""
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as store:
        store.add("guest", "user", "note")

        def disk_full(*args, **kwargs):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("v2_memory.storage.record_log.atomic_write_bytes", disk_full)
        with pytest.raises(OSError, match="No space"):
            store.erase_user("guest")
        assert [r["content"] for r in store.records("guest")] == ["note"]
        with pytest.raises(OSError):
            store.delete(1)
        assert store.get(1) is not None


def test_one_writer_per_store_file(tmp_path):
    path = tmp_path / "s.json"
    with JsonVectorStore(path) as writer:
        writer.add("u", "user", "hello")
        with pytest.raises(StoreLockedError, match="another writer"):
            JsonVectorStore(path)
        with JsonVectorStore(path, read_only=True) as reader:  # inspection needs no lock
            assert [r["content"] for r in reader.records("u")] == ["hello"]
            with pytest.raises(StoreError, match="read-only"):
                reader.add("u", "user", "no")
    with JsonVectorStore(path) as next_writer:  # the lock went with the first writer
        assert next_writer.add("u", "user", "again")["record_id"] == 2


def test_read_only_leaves_a_torn_file_as_it_is(tmp_path):
    path = tmp_path / "s.json"
    data = _write(path, HEADER, REC % (1, 1), tail=b'{"record_id":2')
    with pytest.warns(TornRecordWarning):
        with JsonVectorStore(path, read_only=True) as reader:
            assert len(reader) == 1
    assert path.read_bytes() == data
    with pytest.raises(StorePathError, match="no store file"):
        JsonVectorStore(tmp_path / "missing.json", read_only=True)
