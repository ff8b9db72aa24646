"""Two recorded sessions for the inspector: the same lesson, once clean and once polluted.

A learner asks what ReLU is. In session ``s-clean`` the tutor answers correctly and its replies
are written as what they are, model output. In ``s-polluted`` the tutor's first answer is wrong
("循环神经元") *and* the integration writes every reply with ``source="user_input"`` — the kind of
write-side bug the troubleshooting manual says causes most "the agent got dumber" reports. The
wrong answer is then trusted, and three turns later it comes back from long-term memory.

``python -m v2_memory diff --store DIR --session-id s-clean --session-id s-polluted`` points at
that write; ``inspect`` shows the turn where it re-entered the context.
"""
from __future__ import annotations

from ..manager import MemoryManager
from ..messages import Message

__all__ = ["CLEAN", "POLLUTED", "record_sessions"]

CLEAN, POLLUTED = "s-clean", "s-polluted"
# (what the learner says, the tutor's reply in s-clean, the tutor's reply in s-polluted)
LESSON = [
    ("ReLU 是什么激活函数？", "ReLU 是线性整流函数，输出 max(0, x)。", "ReLU 是循环神经元，用于记忆序列。"),
    ("它常用在哪里？", "常用在卷积网络的隐藏层。", "常用在卷积网络的隐藏层。"),
    ("和 sigmoid 比有什么好处？", "计算简单，能缓解梯度消失。", "计算简单，能缓解梯度消失。"),
    ("ReLU 是什么神经元？", "ReLU 不是一种神经元，而是激活函数。", "ReLU 是循环神经元。"),
]


def record_sessions(manager: MemoryManager) -> dict[str, str]:
    """Play the lesson twice, as two learners in two sessions; return {session_id: user_id}."""
    learners = {CLEAN: "learner-a", POLLUTED: "learner-b"}
    for session_id, user_id in learners.items():
        for question, clean_reply, polluted_reply in LESSON:
            manager.add(Message("user", question, user_id, session_id=session_id))
            manager.build_context(question, user_id, session_id=session_id)  # the tutor reads its memory
            if session_id == CLEAN:
                manager.add(Message("assistant", clean_reply, user_id, session_id=session_id))
            else:  # the bug: model output labelled as the user's own words
                manager.add(Message("assistant", polluted_reply, user_id, session_id=session_id, source="user_input"))
    return learners
