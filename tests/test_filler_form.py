"""Filler by its form, not by a list of messages.

The form: a message made only of acknowledgement / interjection units (ok, thx, lol, 嗯, 好的,
哈, 收到 ...), in any number, repeated, elongated, in any case, with any punctuation or emoji —
or of emoji and punctuation alone. Such a message stays in the recent window and never reaches
the long-term store. Hypothesis builds the variants; the counterexamples put one real word or a
digit among the filler, and then the message is content and is stored.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.governance.policy import is_filler, not_embedded_reason

FILLER = ["好嘞好嘞", "嗯呢", "ok ok", "thx!", "lol", "哈哈哈", "👍👍", "okk", "嗯嗯嗯嗯", "好的好的~", "OKAY!!!", "Thank you~",
          "got it 👍", "收到收到", "知道了", "好滴～", "hahaha", "yesss", "哦哦，好的", "kk", "😂😂😂", "……", "没问题！"]
CONTENT = ["周五", "OK, book it for Friday", "不要香菜", "ok 3pm", "好的，周五见", "thanks, the gate is B12", "no",
           "嗯，我对花生过敏", "yes please book it", "哈哈 我升职了", "lol my cat ate my homework", "不"]


@pytest.mark.parametrize("text", FILLER)
def test_filler_stays_in_the_window_only(text, clock):
    assert not_embedded_reason(text) in ("filler", "symbols_only")
    with MemoryManager(store_path=None, clock=clock) as memory:
        result = memory.add(Message("user", text))
        assert result.record_id is None and result.stored_in[0] == "window"
        assert memory.store.records("default") == []
        assert [m.content for m in memory.recent_messages()] == [text]


@pytest.mark.parametrize("text", CONTENT)
def test_short_real_content_is_stored(text, clock):
    with MemoryManager(store_path=None, clock=clock) as memory:
        result = memory.add(Message("user", text))
        assert result.record_id is not None, text
        assert memory.store.get(result.record_id)["content"] == text


# -- generated variants ---------------------------------------------------------------------------

EN_UNITS = ["ok", "okay", "k", "thx", "thanks", "lol", "haha", "yes", "yep", "sure", "cool", "nice", "got it", "thank you",
            "hmm", "wow", "noted", "lmao"]
ZH_UNITS = ["好", "好的", "嗯", "嗯呢", "哦", "哈", "嘞", "收到", "谢谢", "对", "是的", "行", "可以", "明白", "了", "啊", "呀"]
DECOR = ["", "!", "~", "～", "。", "，", "...", "👍", "😂", " ", "?", "！！"]


def _elongate(unit: str, times: int) -> str:
    """"ok" → "okkk": the last letter repeated, as people type it."""
    return unit + unit[-1] * times if unit.isascii() else unit


unit = st.one_of(
    st.tuples(st.sampled_from(EN_UNITS), st.integers(0, 3), st.sampled_from([str.lower, str.upper, str.capitalize]))
    .map(lambda t: t[2](_elongate(t[0], t[1]))),
    st.sampled_from(ZH_UNITS),
)
filler_message = st.lists(st.tuples(unit, st.integers(1, 3), st.sampled_from(DECOR)), min_size=1, max_size=5).map(
    lambda parts: "".join(u * n + d for u, n, d in parts) if all(not u.isascii() for u, _, _ in parts)
    else " ".join(u + d for u, n, d in parts for _ in range(n)))
content_word = st.sampled_from(["周五", "香菜", "Friday", "book", "医生", "3pm", "B12", "meeting", "过敏", "7", "Denver"])


@settings(max_examples=300, deadline=None)
@given(text=filler_message)
def test_any_repetition_elongation_or_decoration_of_filler_is_filler(text):
    assert is_filler(text), text


@settings(max_examples=300, deadline=None)
@given(text=filler_message, word=content_word, where=st.integers(0, 2))
def test_one_real_word_or_digit_among_filler_makes_it_content(text, word, where):
    message = [f"{word} {text}", f"{text} {word}", f"{text}，{word}"][where]
    assert not is_filler(message), message
    assert not_embedded_reason(message) is None


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("!?.,~～…。，！？ 👍😂🙏❤️🎉-*"), min_size=1, max_size=12))
def test_emoji_and_punctuation_alone_are_kept_out(text):
    if text.strip():
        assert not_embedded_reason(text) == "symbols_only"
