"""A synthetic bilingual chat corpus for benchmarks: deterministic, Zipf-like, English and Chinese.

Real chat words come first in each ranked vocabulary and invented words make the long tail, so a
few words are everywhere and most are rare — the shape that makes inverted indexes pay off.
Messages are 40 % English, 40 % Chinese (clauses joined by "，"), 20 % code-switched, and always
5–30 tokens long. The same seed gives the same corpus, and a smaller corpus is a prefix of a
larger one.
"""
from __future__ import annotations

import itertools
import random
from typing import Callable, Sequence

from ..text.tokenizer import tokenize

__all__ = ["generate_messages", "generate_queries"]


# Everyday chat words, most frequent first; invented words make the long tail after them.
_ENGLISH_HEAD = (
    "i you the to a it is and that what do can my we this for in of be have not ok so just please"
    " help me how about with on agent memory search store user when should your threshold context"
    " prompt model tool query index record vector data time today need want know think make use"
    " get like try again now new file test bug fix run code meeting plan next week tomorrow coffee"
    " lunch report draft review summary note remind project deadline budget team email call doc"
).split()
_SYLLABLES = "ba be bi bo ka ke ki ko ra re ri ro ta te ti to na ne ni no la le li lo ma me mi mo sa se".split()
_CHINESE_HEAD = (
    "我 你 的 是 了 不 在 有 我们 这个 什么 怎么 可以 一下 今天 明天 现在 已经 还是 因为 所以 但是"
    " 如果 需要 知道 觉得 应该 可能 没有 时候 问题 工作 项目 会议 计划 文章 记忆 污染 检索 阈值 模型"
    " 用户 数据 代码 测试 修改 发现 错误 帮我 看看 记得 提醒 安排 准备 完成 开始 结束 继续 讨论 总结"
    " 下周 周末 晚上 早上 中午 吃饭 咖啡 喝茶 朋友 同事 老师 孩子 电话 邮件 消息 天气 下雨 旅行 电影"
    " 音乐 跑步 睡觉 身体 医院 报告 预算 客户 方案 文档 版本 上线 部署 接口 服务器 日志 备份 密码 账号"
    " 地址 时间 地方 东西 事情 一起 真的 好的 谢谢 麻烦"
).split()
# Characters the invented Chinese words are made of (duplicates dropped).
_HANZI = "".join(dict.fromkeys(
    "的我你是了不在有这个人们他她好吗呢吧啊就都也还要会能想说看做去来到上下时候今天明后年月日点分"
    "早晚饭吃喝水茶咖啡工作项目会议计划文章记忆检索阈值模型问题答案用户数据代码测试修改发现错误需要"
    "可以应该已经现在然后因为所以但是如果什么怎么为哪里多少些一二三四五六七八九十百千万第次再又很太"
    "最真对错新旧大小长短高低快慢开关进出回家学校公司朋友老师同事孩子妈爸电话邮件消息周末假期旅行天"
    "气下雨热冷买卖钱书写读听音乐电影运动跑步睡觉起床身体健康医院记得忘别提醒安排准备完成开始结束"
))


def _zipf_cumulative(size: int, exponent: float = 1.07) -> list[float]:
    """Cumulative weights where rank r has weight 1 / r**exponent: a few words are everywhere."""
    return list(itertools.accumulate(1.0 / rank**exponent for rank in range(1, size + 1)))


def _grow(head: Sequence[str], size: int, invent: Callable[[], str]) -> list[str]:
    """``head`` followed by new invented words until there are ``size`` distinct words."""
    words = dict.fromkeys(head)
    while len(words) < size:
        words[invent()] = None
    return list(words)


class _Vocabulary:
    """Ranked English and Chinese word lists (6,000 each), sampled by Zipf over the ranks."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(f"{seed}/vocabulary")
        # Ranks follow creation order: the real chat words first, the invented rarer ones after.
        self.english = _grow(_ENGLISH_HEAD, 6000, lambda: "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 3))))
        self.chinese = _grow(_CHINESE_HEAD, 6000, lambda: "".join(rng.choices(_HANZI, k=rng.choice((2, 2, 3)))))
        self.english_weights = _zipf_cumulative(len(self.english))
        self.chinese_weights = _zipf_cumulative(len(self.chinese))

    def message(self, rng: random.Random) -> str:
        """One chat message of 5-30 tokens: 40 % English, 40 % Chinese, 20 % code-switched."""
        while True:  # redraw the rare message outside the range, so lengths stay chat-like
            text = self._compose(rng)
            if 5 <= len(tokenize(text)) <= 30:
                return text

    def _compose(self, rng: random.Random) -> str:
        style = rng.random()
        if style < 0.4:
            return " ".join(self._english(rng, rng.randint(5, 30))) + rng.choice(("", "", "?", "."))
        if style < 0.8:
            # Chinese is written without spaces; clauses are split by "，" (a tokenizer separator).
            clauses = ["".join(self._chinese(rng, rng.randint(2, 5))) for _ in range(rng.randint(1, 3))]
            return "，".join(clauses) + rng.choice(("。", "？", "", "！"))
        # Code-switched: Chinese words with English ones between them, as in "帮我 check 一下 agent".
        pick = lambda: self._chinese(rng, 1) if rng.random() < 0.6 else self._english(rng, 1)  # noqa: E731
        return " ".join(word for _ in range(rng.randint(4, 12)) for word in pick())

    def _english(self, rng: random.Random, count: int) -> list[str]:
        return rng.choices(self.english, cum_weights=self.english_weights, k=count)

    def _chinese(self, rng: random.Random, count: int) -> list[str]:
        return rng.choices(self.chinese, cum_weights=self.chinese_weights, k=count)


def generate_messages(count: int, users: int = 100, seed: int = 0) -> list[tuple[str, str, str]]:
    """``count`` messages as ``(user_id, role, content)``, spread uniformly over ``user-000``...

    Deterministic for a seed, and prefix-stable: the first 1,000 of 10,000 messages are the
    1,000-message corpus.
    """
    vocabulary = _Vocabulary(seed)
    rng = random.Random(f"{seed}/messages")
    roles = ("user", "assistant")
    return [(f"user-{rng.randrange(users):03d}", rng.choice(roles), vocabulary.message(rng)) for _ in range(count)]


def generate_queries(count: int, users: int = 100, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` searches as ``(user_id, query)``; the queries come from the message generator."""
    vocabulary = _Vocabulary(seed)
    rng = random.Random(f"{seed}/queries")
    return [(f"user-{rng.randrange(users):03d}", vocabulary.message(rng)) for _ in range(count)]
