"""Short scripted scenes: one pollution each, watched without governance and stopped with it.

Each scene replays a few messages into two fresh in-memory managers — the article's
(``governance=False``) and the governed one — asks the same query of both, and records every
candidate's admission with its reasons. The demo puts them in the trace; the page shows them.

    >>> scene = run_scene(SCENES[2])
    >>> [a["reasons"] for a in scene["with_governance"]["admissions"] if "CS202" in a["content"]]
    [['identifier_mismatch']]
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from ..manager import MemoryManager
from ..messages import Message

__all__ = ["Scene", "SCENES", "run_scene", "run_scenes"]


@dataclass(frozen=True)
class Scene:
    key: str
    title: str  # Chinese, with English alongside
    messages: tuple[Message, ...]
    query: str
    read_scope: dict[str, Any] = field(default_factory=dict)
    then: Callable[[MemoryManager], None] = lambda memory: None  # what the user does before the query
    then_label: str = ""  # the same, as the reader should see it


def _confirm(key: str) -> Callable[[MemoryManager], None]:
    return lambda memory: memory.confirm_fact("default", key)


SCENES = (
    Scene("correction", "纠正覆盖旧事实 / A correction supersedes the old fact",
          (Message("user", "我用安卓手机"), Message("user", "刚才说错了，应该是Mac")),
          "我的手机是安卓还是Mac", then=_confirm("device"), then_label='confirm_fact("default", "device")'),
    Scene("negation", "否定偏好不被反转 / A negated preference is never flipped",
          (Message("user", "别推荐咖啡"), Message("user", "我喜欢茶")),
          "推荐一杯咖啡吧", then=_confirm("recommend"), then_label='confirm_fact("default", "recommend")'),
    Scene("identifier", "CS201 不召回 CS202 / CS201 never recalls CS202",
          (Message("user", "CS202 第三次作业 周三截止"), Message("user", "CS201 第三次作业 周五截止")),
          "CS201 第三次作业截止时间"),
    Scene("ended_session", "已结束会话不再泄漏 / An ended session does not leak",
          (Message("user", "PPT大纲：已完成封面页，下一步写目录", session_id="s1", domain="session"),),
          "PPT大纲 下一步", read_scope={"session_id": "s2"},
          then=lambda memory: (memory.end_session("default", "s1"), None)[1], then_label='end_session("default", "s1")'),
    Scene("echo", "模型回声未经确认不入上下文 / Unverified model echoes stay out",
          (Message("user", "ReLU 是什么？"), Message("assistant", "ReLU 是循环神经元，一种激活函数。")),
          "ReLU 是什么激活函数"),
)


def _clock() -> Callable[[], datetime]:
    ticks = itertools.count()
    start = datetime(2026, 6, 22, tzinfo=timezone.utc)
    return lambda: start + timedelta(minutes=next(ticks))


def _replay(scene: Scene, governed: bool, threshold: float) -> dict[str, Any]:
    with MemoryManager(window_size=1, threshold=threshold, store_path=None, clock=_clock(), governance=governed) as memory:
        # A closing "好的" fills the one-message window: everything else must come from long-term memory.
        messages = scene.messages + (Message("user", "好的"),)
        writes = [{"role": m.role, "content": m.content, "session_id": m.session_id, "domain": m.domain,
                   "result": memory.add(m).to_dict()} for m in messages]
        scene.then(memory)
        explanation = memory.explain(scene.query, top_k=5, **scene.read_scope)
        return {
            "writes": writes,
            "route": explanation.route.to_dict(),
            "admissions": [a.to_dict() for a in explanation.admissions],
            # What long-term memory and persona facts add to the prompt (the window is shared by both).
            "memory_lines": [line for line in memory.build_context(scene.query, top_k=5, **scene.read_scope).splitlines()
                             if line.startswith(("memory(", "persona:"))],
        }


def run_scene(scene: Scene, threshold: float = 0.2) -> dict[str, Any]:
    """The scene without and with governance, side by side."""
    return {
        "key": scene.key,
        "title": scene.title,
        "query": scene.query,
        "read_scope": dict(scene.read_scope),
        "then": scene.then_label,
        "without_governance": _replay(scene, False, threshold),
        "with_governance": _replay(scene, True, threshold),
    }


def run_scenes(threshold: float = 0.2) -> list[dict[str, Any]]:
    return [run_scene(scene, threshold) for scene in SCENES]
