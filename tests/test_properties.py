"""Invariants, checked on random bilingual data with hypothesis.

1. The inverted index returns exactly what a brute-force cosine scan returns.
2. No user's context ever contains another user's text.
3. After erase_user, the secret is in no context, no track and no file.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from v2_memory import JsonVectorStore, MemoryManager, Message, cosine_similarity, tokenize

WORDS = ["memory", "agent", "Agent", "threshold", "coffee", "no", "the", "a/b", "记忆污染", "阈值"]
HANZI = "记忆污染阈值咖啡用户推荐别"
PUNCT = ["，", "。", "：", "？", " "]

word_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
hanzi_text = st.text(alphabet=HANZI, min_size=1, max_size=8)
mixed_text = st.lists(st.one_of(word_text, hanzi_text, st.sampled_from(PUNCT)), min_size=1, max_size=4).map("".join)
content = mixed_text.filter(lambda text: text.strip() != "")
USERS = ["u1", "u10", "u2", "用户"]


def brute_force(records, query, user_id, top_k, threshold):
    """The article's scan: score every record of the user, sort by score then insertion order."""
    scored = [
        (cosine_similarity(tokenize(query), tokenize(r["content"])), position, r)
        for position, r in enumerate(records)
        if r["user_id"] == user_id
    ]
    scored = [item for item in scored if threshold is None or item[0] >= threshold]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(score, r["record_id"]) for score, _, r in scored[:top_k]]


@settings(max_examples=150, deadline=None)
@given(
    corpus=st.lists(st.tuples(st.sampled_from(USERS), content), max_size=40),
    query=mixed_text,
    user=st.sampled_from(USERS),
    top_k=st.integers(1, 12),
    data=st.data(),
)
def test_index_equals_brute_force(corpus, query, user, top_k, data):
    store = JsonVectorStore(None)
    records = [store.add(u, "user", text) for u, text in corpus]
    # Thresholds: none, any number, or exactly a score that occurs (to test ">=" at the edge).
    exact = [cosine_similarity(query, r["content"]) for r in records]
    threshold = data.draw(st.one_of(st.none(), st.floats(0, 1), st.sampled_from(exact or [0.5])))
    got = [(score, r["record_id"]) for score, r in store.search(query, user, top_k, threshold)]
    assert got == brute_force(records, query, user, top_k, threshold)


def _marked(user: str, n: int, text: str) -> str:
    return f"{text} <{user}#{n}>"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=st.lists(st.tuples(st.sampled_from(USERS), st.sampled_from(["user", "assistant"]), content), max_size=30),
    window_size=st.integers(1, 6),
    query=mixed_text,
)
def test_no_context_ever_contains_another_users_text(writes, window_size, query):
    manager = MemoryManager(window_size=window_size, threshold=0.0, store_path=None)
    owned: dict[str, list[str]] = {user: [] for user in USERS}
    for n, (user, role, text) in enumerate(writes):
        marked = _marked(user, n, text)
        owned[user].append(marked)
        manager.add(Message(role, marked, user))
        for reader in USERS:
            context = manager.build_context(query, reader, top_k=10)
            for other in USERS:
                if other != reader:
                    assert f"<{other}#" not in context, (reader, other, context)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=st.lists(st.tuples(st.sampled_from(USERS), content), max_size=25),
    secret_at=st.integers(0, 25),
    window_size=st.integers(1, 5),
    victim=st.sampled_from(USERS),
    store_name=st.sampled_from(["m.json", "m.sqlite3"]),
)
def test_after_erase_the_secret_is_nowhere(writes, secret_at, window_size, victim, store_name):
    """On the JSON backend and on SQLite: every file, byte by byte, and every track."""
    secret = "SECRET-身份证-4471"
    writes = list(writes)
    writes.insert(min(secret_at, len(writes)), (victim, f"记住 {secret} 阈值 memory"))
    # The same secret as a persona fact and an exact identifier: it must leave the SQLite ledger too.
    writes.insert(min(secret_at, len(writes)), (victim, f"我用 {secret} CS9071"))
    with tempfile.TemporaryDirectory() as folder:
        with MemoryManager(window_size=window_size, threshold=0.0, store_path=Path(folder) / store_name) as manager:
            for user, text in writes:
                manager.add(Message("user", text, user))
            manager.build_context(f"{secret} 阈值 memory", victim)  # puts the secret in the read log too
            receipt = manager.erase_user(victim)
            assert receipt.store >= 1
            # Every file the library wrote (store, ledger, write and read logs), byte by byte.
            for file in Path(folder).rglob("*"):
                data = file.read_bytes()
                for fragment in (secret, "身份证", "CS9071"):
                    assert fragment.encode("utf-8") not in data, (file, fragment)
            # Then every track, asked directly (these reads name the secret themselves, so they come last).
            for reader in USERS:
                assert secret not in manager.build_context(f"{secret} 阈值 memory", reader, top_k=50)
                assert secret not in manager.summary(reader)
                assert all(secret not in m.content for m in manager.recent_messages(reader))
                assert all(secret not in r["content"] for r in manager.store.records(reader))


def test_erasure_leaves_no_erased_text_in_the_analysis_caches():
    """Reads memoise each memory's terms and its redacted log form, keyed by the text itself;
    erase_user and forget empty those caches, so an erased secret is not kept in the process."""
    from v2_memory.text.memo import _CACHES

    secret = "体检报告 secret-tx42 记忆污染 阈值"
    with MemoryManager(store_path=None) as memory:
        record_id = memory.add(Message("user", secret, "ann")).record_id
        memory.build_context("记忆污染 阈值", "ann")
        assert any(cache.cache_info().currsize for cache in _CACHES)  # the read did fill them
        memory.forget("ann", record_id)
        assert all(cache.cache_info().currsize == 0 for cache in _CACHES)
        memory.add(Message("user", secret, "bob"))
        memory.build_context("记忆污染 阈值", "bob")
        memory.erase_user("bob")
        assert all(cache.cache_info().currsize == 0 for cache in _CACHES)
